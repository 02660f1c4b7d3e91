import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  MAX_AMOUNT_CENTAVOS,
  centavosToNumber,
  formatCentavos,
  numberToCentavos,
  parseDecimal,
  parseDecimal2,
} from './money.ts';

const RUNS = { numRuns: 1000 };
const centavos = fc.bigInt({ min: 0n, max: MAX_AMOUNT_CENTAVOS });
/** Small amounts are where rounding errors of floats show; weight them in. */
const amounts = fc.oneof(centavos, fc.bigInt({ min: 0n, max: 100_000n }));

describe('parseDecimal', () => {
  test('reads integers, one and two decimals', () => {
    assert.equal(parseDecimal('0'), 0n);
    assert.equal(parseDecimal('12'), 1200n);
    assert.equal(parseDecimal('12.5'), 1250n);
    assert.equal(parseDecimal('12.50'), 1250n);
    assert.equal(parseDecimal('0.01'), 1n);
    assert.equal(parseDecimal('0.10'), 10n);
    assert.equal(parseDecimal('1234.56'), 123456n);
    assert.equal(parseDecimal('1000000000000.00'), MAX_AMOUNT_CENTAVOS);
  });

  test('refuses malformed text', () => {
    for (const text of [
      '', ' ', '.', '12.', '.5', '012', '00.5', '+1', '-1', '-0.01', '1e3', '1E3', ' 1', '1 ', '12.345',
      '1,50', '1_000', '0x10', 'Infinity', 'NaN', '١٢', '12.5a', '1.2.3',
    ]) {
      assert.equal(parseDecimal(text), null, JSON.stringify(text));
    }
  });

  test('refuses amounts above MAX_AMOUNT_CENTAVOS', () => {
    assert.equal(parseDecimal('1000000000000.01'), null);
    assert.equal(parseDecimal('9999999999999999.99'), null);
  });

  test('formatCentavos and centavosToNumber: the integer-double fast path gives what BigInt arithmetic and the decimal text give', () => {
    const reference = (c: bigint) => {
      const abs = c < 0n ? -c : c;
      const text = `${abs / 100n}.${(abs % 100n).toString().padStart(2, '0')}`;
      return c < 0n ? `-${text}` : text;
    };
    const safe = BigInt(Number.MAX_SAFE_INTEGER);
    const any = fc.oneof(
      fc.bigInt({ min: -(2n ** 60n), max: 2n ** 60n }),
      fc.bigInt({ min: -1_000n, max: 1_000n }),
      fc.bigInt({ min: safe - 1_000n, max: safe + 1_000n }),
      fc.bigInt({ min: -safe - 1_000n, max: -safe + 1_000n }),
    );
    fc.assert(
      fc.property(any, (c) => {
        assert.equal(formatCentavos(c), reference(c));
        assert.equal(centavosToNumber(c), Number(reference(c)));
      }),
      { numRuns: 20_000 },
    );
  });

  test('round trip: parseDecimal(formatCentavos(c)) === c for every amount in range', () => {
    fc.assert(fc.property(amounts, (c) => parseDecimal(formatCentavos(c)) === c), RUNS);
  });

  test('one decimal means tens of centavos, no decimals means whole reais', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 999_999_999_999n }), fc.integer({ min: 0, max: 9 }), (reais, tenth) => {
        assert.equal(parseDecimal(`${reais}`), reais * 100n);
        assert.equal(parseDecimal(`${reais}.${tenth}`), reais * 100n + BigInt(tenth) * 10n);
      }),
      RUNS,
    );
  });

  test('anything accepted is a plain decimal in range', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'0123456789.-+e '), maxLength: 20 }), (text) => {
        const value = parseDecimal(text);
        if (value === null) return;
        assert.match(text, /^\d+(\.\d{1,2})?$/);
        assert.ok(value >= 0n && value <= MAX_AMOUNT_CENTAVOS);
      }),
      RUNS,
    );
  });
});

describe('parseDecimal2', () => {
  test('accepts exactly two decimals only', () => {
    assert.equal(parseDecimal2('12.50'), 1250n);
    assert.equal(parseDecimal2('0.01'), 1n);
    assert.equal(parseDecimal2('0.00'), 0n);
    for (const text of ['12', '12.5', '12.500', '.50', '012.50', '-1.00', '1e2.00', '12.5 ']) {
      assert.equal(parseDecimal2(text), null, text);
    }
  });

  test('every formatted amount is accepted and read back exactly', () => {
    fc.assert(fc.property(amounts, (c) => parseDecimal2(formatCentavos(c)) === c), RUNS);
  });

  test('zero, one or three decimals are refused', () => {
    fc.assert(
      fc.property(centavos, fc.integer({ min: 0, max: 9 }), (c, extra) => {
        const text = formatCentavos(c);
        assert.equal(parseDecimal2(text.slice(0, -3)), null); // "12"
        assert.equal(parseDecimal2(text.slice(0, -1)), null); // "12.5"
        assert.equal(parseDecimal2(`${text}${extra}`), null); // "12.505"
      }),
      RUNS,
    );
  });

  test('anything accepted has exactly two decimals and agrees with parseDecimal', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'0123456789.'), maxLength: 18 }), (text) => {
        const value = parseDecimal2(text);
        if (value === null) return;
        assert.match(text, /^\d+\.\d{2}$/);
        assert.equal(value, parseDecimal(text));
      }),
      RUNS,
    );
  });
});

describe('numberToCentavos', () => {
  test('examples', () => {
    assert.equal(numberToCentavos(0.1), 10n);
    assert.equal(numberToCentavos(0.01), 1n);
    assert.equal(numberToCentavos(1), 100n);
    assert.equal(numberToCentavos(1234.5), 123450n);
    assert.equal(numberToCentavos(1234.56), 123456n);
    assert.equal(numberToCentavos(19.99), 1999n);
    assert.equal(numberToCentavos(0), 0n);
    assert.equal(numberToCentavos(1e12), MAX_AMOUNT_CENTAVOS);
  });

  test('refuses negatives, non-finite numbers, extra decimals and exponent forms', () => {
    for (const value of [
      -1, -0.01, -1234.5, -0, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 0.001, 1.005, 12.345,
      0.1 + 0.2, 1e21, 1e-7, 5e-324, Number.MIN_VALUE, Number.EPSILON,
    ]) {
      assert.equal(numberToCentavos(value), null, String(value));
    }
  });

  test('refuses amounts above the limit, where doubles stop being exact', () => {
    assert.equal(numberToCentavos(1e12 + 0.01), null);
    // As JSON, 1000000000000000.01 parses to the double 1000000000000000: reading it would lose
    // the centavo, and 9007199254740993 reads as ...992.
    assert.equal(numberToCentavos(JSON.parse('1000000000000000.01') as number), null);
    assert.equal(numberToCentavos(Number.MAX_SAFE_INTEGER), null);
    assert.equal(numberToCentavos(JSON.parse('9007199254740993') as number), null);
    assert.equal(numberToCentavos(Number.MAX_VALUE), null);
  });

  test('round trip: numberToCentavos(centavosToNumber(c)) === c for every amount in range', () => {
    fc.assert(fc.property(amounts, (c) => numberToCentavos(centavosToNumber(c)) === c), RUNS);
  });

  test('a third decimal digit is always refused', () => {
    fc.assert(
      fc.property(centavos, fc.integer({ min: 1, max: 9 }), (c, third) => {
        assert.equal(numberToCentavos(Number(`${formatCentavos(c)}${third}`)), null);
      }),
      RUNS,
    );
  });

  test('for any double, an accepted value is the exact amount the number denotes', () => {
    fc.assert(
      fc.property(fc.oneof(fc.double(), fc.double({ min: 0, max: 1e13 }), fc.integer({ min: -1e6, max: 1e6 }).map((n) => n / 100)), (value) => {
        const result = numberToCentavos(value);
        if (result === null) return;
        assert.ok(value >= 0 && !Object.is(value, -0), `accepted negative ${value}`);
        assert.ok(result <= MAX_AMOUNT_CENTAVOS);
        assert.equal(centavosToNumber(result), value);
      }),
      RUNS,
    );
  });

  test('sums computed in floating point are refused rather than rounded', () => {
    assert.equal(numberToCentavos(0.1 + 0.2), null);
    assert.equal(numberToCentavos(1.1 * 3), null); // 3.3000000000000003
    assert.equal(numberToCentavos(0.07 * 100), null); // 7.000000000000001
  });
});

describe('formatCentavos', () => {
  test('examples', () => {
    assert.equal(formatCentavos(0n), '0.00');
    assert.equal(formatCentavos(5n), '0.05');
    assert.equal(formatCentavos(10n), '0.10');
    assert.equal(formatCentavos(100n), '1.00');
    assert.equal(formatCentavos(12345n), '123.45');
    assert.equal(formatCentavos(-5n), '-0.05');
    assert.equal(formatCentavos(-12345n), '-123.45');
    assert.equal(formatCentavos(MAX_AMOUNT_CENTAVOS), '1000000000000.00');
  });

  test('any bigint, even beyond the limit, prints as a canonical 2-decimal string of the same value', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), (c) => {
        const text = formatCentavos(c);
        assert.match(text, /^-?(0|[1-9]\d*)\.\d{2}$/);
        assert.equal(text.startsWith('-'), c < 0n);
        assert.equal(BigInt(text.replace('.', '')), c);
      }),
      RUNS,
    );
  });
});

describe('centavosToNumber', () => {
  test('examples', () => {
    assert.equal(centavosToNumber(0n), 0);
    assert.equal(centavosToNumber(10n), 0.1);
    assert.equal(centavosToNumber(12345n), 123.45);
    assert.equal(centavosToNumber(-5n), -0.05);
    assert.equal(centavosToNumber(MAX_AMOUNT_CENTAVOS), 1e12);
  });

  test('the number prints back as the 2-decimal amount (what JSON.stringify sends)', () => {
    fc.assert(
      fc.property(amounts, (c) => {
        const printed = JSON.stringify(centavosToNumber(c));
        assert.equal(parseDecimal(printed), c);
      }),
      RUNS,
    );
  });
});
