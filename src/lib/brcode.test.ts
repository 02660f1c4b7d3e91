import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { hasError, isStaticPix, parsePix } from 'pix-utils';
import {
  BRCODE_MAX_AMOUNT_CENTAVOS,
  BrCodeError,
  brCodeDescriptionRoom,
  buildBrCode,
  buildRecurrenceBrCode,
  parseAnyBrCode,
  crc16Ccitt,
  normalizeBrCodeText,
  parseBrCode,
  type BrCodeInput,
} from './brcode.ts';
import { numberToCentavos } from './money.ts';

const RUNS = { numRuns: 300 };
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const HEX = '0123456789ABCDEF';
const PRINTABLE = Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i));

/** The example of BCB's manual: a static code with an EVP key, no amount and no txid. */
const BCB_EXAMPLE =
  '00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D';
const EVP = '123e4567-e12b-12d1-a456-426655440000';
const BASE = { key: 'pix@example.com', merchantName: 'Loja Exemplo', merchantCity: 'Curitiba' };

/** Bit by bit, straight from the definition, to check the table-driven implementation. */
function referenceCrc(text: string): string {
  let crc = 0xffff;
  for (const byte of new TextEncoder().encode(text)) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

/** A hand-written payload closed with its CRC, to test the parser on codes we would not build. */
function withCrc(body: string): string {
  return `${body}6304${crc16Ccitt(`${body}6304`)}`;
}

const text = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: fc.constantFrom(...'aãáàâçéêíóôõúüñÃÇÉ ABCxyz-.\t'), maxLength: 40 }),
);
const nameText = (max: number) => text.filter((value) => normalizeBrCodeText(value, max).length > 0);
const key = fc.string({ unit: fc.constantFrom(...PRINTABLE.slice(1)), minLength: 1, maxLength: 77 });
const inputs: fc.Arbitrary<BrCodeInput> = fc
  .record({
    key,
    amountCentavos: fc.option(fc.oneof(fc.bigInt({ min: 1n, max: 100_000n }), fc.bigInt({ min: 1n, max: BRCODE_MAX_AMOUNT_CENTAVOS })), { nil: undefined }),
    merchantName: nameText(25),
    merchantCity: nameText(15),
    txid: fc.option(fc.string({ unit: fc.constantFrom(...ALNUM), minLength: 1, maxLength: 35 }), { nil: undefined }),
    description: fc.option(text, { nil: undefined }),
  })
  .map((input) => {
    // Descriptions are cut to the room beside the key, so that every generated input is valid.
    const description = normalizeBrCodeText(input.description ?? '', brCodeDescriptionRoom(input.key));
    return { ...input, description: description || undefined };
  });

describe('crc16Ccitt', () => {
  test('known CCITT-FALSE check values', () => {
    assert.equal(crc16Ccitt('123456789'), '29B1');
    assert.equal(crc16Ccitt(''), 'FFFF');
    assert.equal(crc16Ccitt('A'), 'B915');
    assert.equal(crc16Ccitt(BCB_EXAMPLE.slice(0, -4)), '1D3D');
  });

  test('agrees with a bit-by-bit implementation and always prints 4 upper-case hex digits', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 64 }), fc.string({ unit: 'grapheme', maxLength: 64 })), (value) => {
        const crc = crc16Ccitt(value);
        assert.match(crc, /^[0-9A-F]{4}$/);
        assert.equal(crc, referenceCrc(value));
      }),
      { numRuns: 500 },
    );
  });
});

describe('buildBrCode', () => {
  test("reproduces the BCB manual's example byte for byte", () => {
    assert.equal(buildBrCode({ key: EVP, merchantName: 'Fulano de Tal', merchantCity: 'BRASILIA' }), BCB_EXAMPLE);
  });

  test("reproduces pix-utils' README example (amount, description, accented city)", () => {
    const payload = buildBrCode({
      key: 'nubank@thalesog.com',
      amountCentavos: 100n,
      merchantName: 'Thales Ogliari',
      merchantCity: 'São Paulo',
      description: 'Gerado por Pix-Utils',
    });
    assert.equal(
      payload,
      '00020126650014br.gov.bcb.pix0119nubank@thalesog.com0220Gerado por Pix-Utils52040000530398654041.005802BR5914Thales Ogliari6009Sao Paulo62070503***63046069',
    );
  });

  test('a charge is a use-once code (01 = "12") carrying its txid in 62-05', () => {
    const txid = 'a'.repeat(26) + '012345678';
    const payload = buildBrCode({ ...BASE, amountCentavos: 123456n, txid });
    const fields = [
      '000201', '010212', '2637', '0014br.gov.bcb.pix', '0115pix@example.com', '52040000', '5303986',
      '54071234.56', '5802BR', '5912Loja Exemplo', '6008Curitiba', '6239', `0535${txid}`,
    ];
    assert.equal(payload, withCrc(fields.join('')));
  });

  test('without a txid the code is reusable: no field 01 and txid "***"', () => {
    const payload = buildBrCode(BASE);
    assert.ok(payload.startsWith('00020126'), payload);
    assert.ok(payload.includes('62070503***6304'), payload);
    assert.ok(!payload.includes('5404'), 'no amount field');
  });

  test('amounts are written with 2 decimals from bigint centavos', () => {
    for (const [amountCentavos, field] of [
      [1n, '54040.01'],
      [1000n, '540510.00'],
      [123456n, '54071234.56'],
      [BRCODE_MAX_AMOUNT_CENTAVOS, '54139999999999.99'],
    ] as const) {
      const payload = buildBrCode({ ...BASE, amountCentavos });
      assert.ok(payload.includes(`5303986${field}5802BR`), `${amountCentavos}: ${payload}`);
      assert.equal(parseBrCode(payload).amountCentavos, amountCentavos);
    }
  });

  test('refuses zero, negative and over-long amounts', () => {
    for (const amountCentavos of [0n, -1n, BRCODE_MAX_AMOUNT_CENTAVOS + 1n]) {
      assert.throws(() => buildBrCode({ ...BASE, amountCentavos }), BrCodeError, String(amountCentavos));
    }
  });

  test('name and city lose diacritics, keep their case and are cut to 25 and 15 characters', () => {
    const parsed = parseBrCode(
      buildBrCode({ ...BASE, merchantName: '  Padaria  São João\tdo Açaí Ltda ME ', merchantCity: 'São Paulo' }),
    );
    assert.equal(parsed.merchantName, 'Padaria Sao Joao do Acai');
    assert.equal(parsed.merchantCity, 'Sao Paulo');
    assert.equal(parseBrCode(buildBrCode({ ...BASE, merchantCity: 'São José dos Campos' })).merchantCity, 'Sao Jose dos Ca');
    // Cut before a space: no trailing blank is left behind.
    assert.equal(parseBrCode(buildBrCode({ ...BASE, merchantCity: 'Rio de Janeiro  X' })).merchantCity, 'Rio de Janeiro');
  });

  test('characters without an ASCII base are dropped; a name left empty is an error', () => {
    assert.equal(normalizeBrCodeText('Café ☕ Ørsted 😀 Straße', 25), 'Cafe rsted Strae');
    assert.equal(normalizeBrCodeText('ÂÊÎÔÛ ãõ ç Ç ñ ü', 25), 'AEIOU ao c C n u');
    assert.throws(() => buildBrCode({ ...BASE, merchantName: '😀 ☕' }), /merchant name is empty/);
    assert.throws(() => buildBrCode({ ...BASE, merchantCity: '   ' }), /merchant city is empty/);
  });

  test('normalised text is printable ASCII, trimmed, single-spaced and within the limit', () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 99 }), (value, max) => {
        const normalized = normalizeBrCodeText(value, max);
        assert.match(normalized, /^([\x21-\x7e]( ?[\x21-\x7e])*)?$/);
        assert.ok(normalized.length <= max);
      }),
      RUNS,
    );
  });

  test('keys: up to 77 printable characters; longer, empty, blank or non-ASCII keys are refused', () => {
    const longest = 'k'.repeat(77);
    const payload = buildBrCode({ ...BASE, key: longest });
    assert.ok(payload.includes(`2699`), 'field 26 is exactly 99 characters');
    assert.equal(parseBrCode(payload).key, longest);
    for (const bad of ['k'.repeat(78), '', 'a b@example.com', 'açaí@example.com']) {
      assert.throws(() => buildBrCode({ ...BASE, key: bad }), /key must be/, bad);
    }
  });

  test('the description must fit beside the key in field 26', () => {
    assert.equal(brCodeDescriptionRoom('pix@example.com'), 58);
    assert.equal(brCodeDescriptionRoom('k'.repeat(77)), 0);
    const fits = 'd'.repeat(58);
    assert.equal(parseBrCode(buildBrCode({ ...BASE, description: fits })).description, fits);
    assert.throws(() => buildBrCode({ ...BASE, description: `${fits}d` }), /description is 59 characters; 58 fit/);
    assert.throws(() => buildBrCode({ ...BASE, key: 'k'.repeat(77), description: 'x' }), /0 fit/);
  });

  test('txids: up to 35 alphanumerics', () => {
    assert.equal(parseBrCode(buildBrCode({ ...BASE, txid: 'A'.repeat(35) })).txid, 'A'.repeat(35));
    for (const bad of ['A'.repeat(36), '', 'abc-123', 'abc 123', '***']) {
      assert.throws(() => buildBrCode({ ...BASE, txid: bad }), /txid must be/, bad);
    }
  });
});

describe('parseBrCode', () => {
  test("reads the BCB manual's example", () => {
    assert.deepEqual(parseBrCode(BCB_EXAMPLE), {
      key: EVP,
      amountCentavos: null,
      merchantName: 'Fulano de Tal',
      merchantCity: 'BRASILIA',
      txid: null,
      description: null,
      oneTime: false,
    });
  });

  test('round trip: buildBrCode -> parseBrCode gives back the (normalised) fields', () => {
    fc.assert(
      fc.property(inputs, (input) => {
        const payload = buildBrCode(input);
        assert.deepEqual(parseBrCode(payload), {
          key: input.key,
          amountCentavos: input.amountCentavos ?? null,
          merchantName: normalizeBrCodeText(input.merchantName, 25),
          merchantCity: normalizeBrCodeText(input.merchantCity, 15),
          txid: input.txid ?? null,
          description: input.description ?? null,
          oneTime: input.txid !== undefined,
        });
      }),
      RUNS,
    );
  });

  test('the last 4 characters are the CRC of everything before them, "6304" included', () => {
    fc.assert(
      fc.property(inputs, (input) => {
        const payload = buildBrCode(input);
        assert.equal(payload.slice(-8, -4), '6304');
        assert.equal(payload.slice(-4), crc16Ccitt(payload.slice(0, -4)));
      }),
      RUNS,
    );
  });

  test('changing any one character breaks the CRC check', () => {
    const flips = inputs.chain((input) => {
      const payload = buildBrCode(input);
      return fc.tuple(fc.constant(payload), fc.nat({ max: payload.length - 1 })).chain(([p, at]) =>
        // A CRC digit is replaced by another hex digit, anything else by any printable character.
        fc.tuple(fc.constant(p), fc.constant(at), fc.constantFrom(...(at >= p.length - 4 ? HEX : PRINTABLE.join('')))),
      );
    });
    fc.assert(
      fc.property(flips, ([payload, at, char]) => {
        fc.pre(payload[at] !== char);
        const flipped = payload.slice(0, at) + char + payload.slice(at + 1);
        assert.throws(() => parseBrCode(flipped), (error: unknown) => error instanceof BrCodeError && /CRC mismatch/.test(error.message));
      }),
      RUNS,
    );
  });

  test('reads codes from other generators: upper-case GUI, fields we ignore, no field 62', () => {
    const parsed = parseBrCode(
      withCrc('00020126360014BR.GOV.BCB.PIX0114+5511943214321520400005303986540566.665802BR5907EMPRESA6008BRASILIA61087000000080050001X'),
    );
    assert.equal(parsed.key, '+5511943214321');
    assert.equal(parsed.amountCentavos, 6666n);
    assert.equal(parsed.txid, null);
  });

  test('refuses malformed payloads with a reason', () => {
    const good = buildBrCode({ ...BASE, amountCentavos: 1000n, txid: 'abc123' });
    const body = good.slice(0, -8);
    const cases: [string, RegExp][] = [
      ['', /printable ASCII/],
      [good.replace('Loja', 'Lojã'), /printable ASCII/],
      [`${good.slice(0, -4)}abcd`, /upper-case hex/],
      [good.slice(0, -1), /upper-case hex|CRC mismatch/],
      [withCrc(body.replace('000201', '000202')), /payload format/],
      [withCrc(body.replace('br.gov.bcb.pix', 'br.gov.bcb.xyz')), /not a Pix account/],
      [withCrc(body.replace('5303986', '5303840')), /currency must be 986/],
      [withCrc(body.replace('5802BR', '5802US')), /country must be BR/],
      [withCrc(body.replace('540510.00', '540510,00')), /not a decimal/],
      [withCrc(body.replace('5912Loja Exemplo', '')), /field 59 is missing/],
      [withCrc(`${body}5802BR`), /field 58 is repeated/],
      [withCrc(`${body}5899BR`), /bad length/],
      [withCrc(`${body}5X02BR`), /malformed field header/],
      [`${body}6305X${crc16Ccitt(`${body}6305X`)}`, /must end with the CRC field 63/],
      [withCrc('00020101021226400014br.gov.bcb.pix2518pix.example.com/qr52040000530398658' + '02BR5907EMPRESA6008BRASILIA62070503***'), /no Pix key/],
    ];
    for (const [payload, reason] of cases) {
      assert.throws(() => parseBrCode(payload), (error: unknown) => error instanceof BrCodeError && reason.test(error.message), payload);
    }
  });
});

describe('pix-utils reads our payloads', () => {
  test('same key, amount, merchant, city, txid and description', () => {
    fc.assert(
      fc.property(inputs, (input) => {
        const payload = buildBrCode(input);
        const pix = parsePix(payload);
        assert.ok(!hasError(pix), hasError(pix) ? pix.message : '');
        assert.ok(isStaticPix(pix), 'a key-carrying code is static for pix-utils');
        assert.equal(pix.pixKey, input.key);
        // pix-utils reads the amount as a number (0 when absent); read it back exactly.
        assert.equal(numberToCentavos(pix.transactionAmount ?? Number.NaN), input.amountCentavos ?? 0n);
        assert.equal(pix.merchantName, normalizeBrCodeText(input.merchantName, 25));
        assert.equal(pix.merchantCity, normalizeBrCodeText(input.merchantCity, 15));
        assert.equal(pix.txid, input.txid ?? '***');
        assert.equal(pix.infoAdicional, input.description);
      }),
      { numRuns: 200 },
    );
  });

  test('pix-utils also refuses a payload with a wrong CRC', () => {
    const payload = buildBrCode({ ...BASE, txid: 'abc123' });
    const wrong = payload.slice(0, -4) + (payload.endsWith('0000') ? '0001' : '0000');
    const pix = parsePix(wrong);
    assert.ok(hasError(pix) && pix.message === 'invalid crc');
  });
});

describe('buildRecurrenceBrCode', () => {
  // API Pix 2.9's own examples of dadosQR.pixCopiaECola (recResponse3, 6 and 7): journeys 2, 3 and 4.
  const REC = 'pix.example.com/qr/v2/rec/';
  const merchant = { merchantName: 'Fulano de Tal', merchantCity: 'BRASILIA' };

  test("journey 2, the recurrence alone: BCB's example, byte for byte", () => {
    assert.equal(
      buildRecurrenceBrCode({ recLocation: `${REC}2353c790eefb11eaadc10242ac120002`, ...merchant }),
      '00020126180014br.gov.bcb.pix5204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***80800014br.gov.bcb.pix2558pix.example.com/qr/v2/rec/2353c790eefb11eaadc10242ac120002630462C9',
    );
  });

  test("journeys 3 and 4, composite with a cob's or a cobv's location: BCB's examples, byte for byte", () => {
    assert.equal(
      buildRecurrenceBrCode({ recLocation: `${REC}94ed2badcbc04c15b0bb7fa353194890`, chargeLocation: 'pix.example.com/qr/v2/8b3da2f39a4140d1a91abd93113bd441', ...merchant }),
      '00020101021226760014br.gov.bcb.pix2554pix.example.com/qr/v2/8b3da2f39a4140d1a91abd93113bd4415204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***80800014br.gov.bcb.pix2558pix.example.com/qr/v2/rec/94ed2badcbc04c15b0bb7fa35319489063047741',
    );
    assert.equal(
      buildRecurrenceBrCode({ recLocation: `${REC}3ffa640fa4f14080adccb949fa2dc0d0`, chargeLocation: 'pix.example.com/qr/v2/cobv/1e6c54d3ec9449b7a7fc53b6b0f998e7', ...merchant }),
      '00020101021226810014br.gov.bcb.pix2559pix.example.com/qr/v2/cobv/1e6c54d3ec9449b7a7fc53b6b0f998e75204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***80800014br.gov.bcb.pix2558pix.example.com/qr/v2/rec/3ffa640fa4f14080adccb949fa2dc0d06304A441',
    );
  });

  test('read back: the recurrence alone, and the composite code as a dynamic one offering it', () => {
    const recLocation = `${REC}2353c790eefb11eaadc10242ac120002`;
    assert.deepEqual(parseAnyBrCode(buildRecurrenceBrCode({ recLocation, ...merchant })), { kind: 'recurrence', recurrence: recLocation, ...merchant });
    const chargeLocation = 'pix.example.com/qr/v2/8b3da2f39a4140d1a91abd93113bd441';
    assert.deepEqual(parseAnyBrCode(buildRecurrenceBrCode({ recLocation, chargeLocation, ...merchant })), {
      kind: 'dynamic',
      location: chargeLocation,
      ...merchant,
      oneTime: true,
      recurrence: recLocation,
    });
    // Field 80 of another GUI, or without its location, is not a recurrence.
    const tlv = (id: string, value: string) => `${id}${String(value.length).padStart(2, '0')}${value}`;
    for (const template of [tlv('00', 'br.gov.bcb.xx') + tlv('25', recLocation), tlv('00', 'br.gov.bcb.pix')]) {
      const body = `00020126180014br.gov.bcb.pix5204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***${tlv('80', template)}6304`;
      assert.throws(() => parseAnyBrCode(body + crc16Ccitt(body)), /field 80/);
    }
  });

  test('a location with a scheme, or too long, is refused', () => {
    assert.throws(() => buildRecurrenceBrCode({ recLocation: `https://${REC}x`, ...merchant }), BrCodeError);
    assert.throws(() => buildRecurrenceBrCode({ recLocation: `${REC}${'a'.repeat(60)}`, ...merchant }), BrCodeError);
    assert.throws(() => buildRecurrenceBrCode({ recLocation: `${REC}x`, chargeLocation: 'http://x', ...merchant }), BrCodeError);
  });
});
