import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { cnpjCheckDigits, cpfCheckDigits } from './document.ts';
import { PIX_KEY_MAX_LENGTH, detectPixKeyType, isValidPixKey, type PixKeyType } from './pix-key.ts';

const RUNS = { numRuns: 500 };
const TYPES: readonly PixKeyType[] = ['CPF', 'CNPJ', 'EMAIL', 'PHONE', 'EVP'];
const DIGITS = '0123456789';
const ALNUM = `${DIGITS}ABCDEFGHIJKLMNOPQRSTUVWXYZ`;

const chars = (alphabet: string, min: number, max = min) =>
  fc.string({ unit: fc.constantFrom(...alphabet), minLength: min, maxLength: max });
const notRepeated = (s: string) => !/^(.)\1*$/.test(s);

const cpfKey = chars(DIGITS, 9).filter(notRepeated).map((base) => `${base}${cpfCheckDigits(base)}`);
const cnpjKey = fc.oneof(chars(DIGITS, 12), chars(ALNUM, 12)).filter(notRepeated).map((base) => `${base}${cnpjCheckDigits(base)}`);
const emailKey = fc.emailAddress().filter((email) => email.length <= PIX_KEY_MAX_LENGTH);
/** +55, a 2-digit area code (no leading 0), then 8 digits (landline) or 9 then 8 digits (mobile). */
const phoneKey = fc
  .tuple(chars('123456789', 1), chars(DIGITS, 1), fc.boolean(), chars(DIGITS, 8))
  .map(([a, b, mobile, number]) => `+55${a}${b}${mobile ? '9' : ''}${number}`);
const evpKey = fc.uuid();

const keysByType: Record<PixKeyType, fc.Arbitrary<string>> = { CPF: cpfKey, CNPJ: cnpjKey, EMAIL: emailKey, PHONE: phoneKey, EVP: evpKey };

describe('detectPixKeyType', () => {
  test('documents', () => {
    assert.equal(detectPixKeyType('52998224725'), 'CPF');
    assert.equal(detectPixKeyType('11222333000181'), 'CNPJ');
    assert.equal(detectPixKeyType('12ABC34501DE35'), 'CNPJ');
    assert.equal(detectPixKeyType('52998224726'), null);
    assert.equal(detectPixKeyType('11222333000182'), null);
    assert.equal(detectPixKeyType('11111111111'), null);
    assert.equal(detectPixKeyType('529.982.247-25'), null);
  });

  test('e-mail', () => {
    assert.equal(detectPixKeyType('fulano@example.com'), 'EMAIL');
    assert.equal(detectPixKeyType('fulano.de.tal+pix@mail.example.com.br'), 'EMAIL');
    assert.equal(detectPixKeyType('Fulano@Example.COM'), 'EMAIL');
    // Phones start with '+', but so may an e-mail's local part: the '@' decides.
    assert.equal(detectPixKeyType('+news@example.com'), 'EMAIL');
    assert.equal(detectPixKeyType('+5511987654321@example.com'), 'EMAIL');
    for (const key of ['fulano@', '@example.com', 'fulano@example', 'fulano@@example.com', 'ful ano@example.com', 'fulano@-example.com', 'fulano@example..com']) {
      assert.equal(detectPixKeyType(key), null, key);
    }
  });

  test('phone: +55, area code, 8 or 9 digits', () => {
    assert.equal(detectPixKeyType('+5511987654321'), 'PHONE');
    assert.equal(detectPixKeyType('+551187654321'), 'PHONE');
    assert.equal(detectPixKeyType('+5561987654321'), 'PHONE');
    for (const key of [
      '11987654321', // no +
      '5511987654321', // no +
      '+15551234567', // not Brazil
      '+1 5551234567',
      '+55 11 98765-4321',
      '+550187654321', // area code starting with 0
      '+55119876543210', // too long
      '+5511876543', // too short
      '+55',
      '+',
    ]) {
      assert.equal(detectPixKeyType(key), null, key);
    }
  });

  test('EVP: a lower-case UUID', () => {
    const evp = randomUUID();
    assert.equal(detectPixKeyType(evp), 'EVP');
    assert.equal(detectPixKeyType('123e4567-e89b-12d3-a456-426614174000'), 'EVP');
    assert.equal(detectPixKeyType(evp.toUpperCase()), null);
    assert.equal(detectPixKeyType(evp.replaceAll('-', '')), null);
    assert.equal(detectPixKeyType(`{${evp}}`), null);
    assert.equal(detectPixKeyType('123e4567-e89b-12d3-a456-42661417400g'), null);
  });

  test('empty and over-long keys are null', () => {
    const domain = '@example.com';
    const longest = `${'a'.repeat(PIX_KEY_MAX_LENGTH - domain.length)}${domain}`;
    assert.equal(PIX_KEY_MAX_LENGTH, 77);
    assert.equal(longest.length, 77);
    assert.equal(detectPixKeyType(longest), 'EMAIL');
    assert.equal(detectPixKeyType(`a${longest}`), null);
    assert.equal(detectPixKeyType(''), null);
    assert.equal(detectPixKeyType('x'.repeat(500)), null);
  });

  test('every well-formed key is detected as its own type', () => {
    for (const type of TYPES) {
      fc.assert(fc.property(keysByType[type], (key) => detectPixKeyType(key) === type), RUNS);
    }
  });

  test('any string is either null or a key valid for the type detected', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 90 }), ...TYPES.map((t) => keysByType[t])), (key) => {
        const type = detectPixKeyType(key);
        if (type !== null) assert.equal(isValidPixKey(type, key), true, `${key} as ${type}`);
      }),
      RUNS,
    );
  });
});

describe('isValidPixKey', () => {
  test('examples', () => {
    assert.equal(isValidPixKey('CPF', '52998224725'), true);
    assert.equal(isValidPixKey('CNPJ', '12ABC34501DE35'), true);
    assert.equal(isValidPixKey('EMAIL', 'fulano@example.com'), true);
    assert.equal(isValidPixKey('PHONE', '+5511987654321'), true);
    assert.equal(isValidPixKey('PHONE', '+551187654321'), true);
    assert.equal(isValidPixKey('EVP', '123e4567-e89b-12d3-a456-426614174000'), true);
    assert.equal(isValidPixKey('PHONE', '11987654321'), false);
    assert.equal(isValidPixKey('PHONE', '+15551234567'), false);
    assert.equal(isValidPixKey('CPF', '52998224726'), false);
    assert.equal(isValidPixKey('CNPJ', '12abc34501de35'), false);
    assert.equal(isValidPixKey('EVP', '123E4567-E89B-12D3-A456-426614174000'), false);
  });

  test('a key is valid for its own type and no other: the formats do not overlap', () => {
    for (const type of TYPES) {
      fc.assert(
        fc.property(keysByType[type], (key) => {
          for (const other of TYPES) assert.equal(isValidPixKey(other, key), other === type, `${key} as ${other}`);
        }),
        RUNS,
      );
    }
  });

  test('an e-mail over 77 characters is refused', () => {
    const domain = '@example.com';
    const local = 'a'.repeat(PIX_KEY_MAX_LENGTH - domain.length);
    assert.equal(isValidPixKey('EMAIL', `${local}${domain}`), true);
    assert.equal(isValidPixKey('EMAIL', `${local}a${domain}`), false);
  });
});
