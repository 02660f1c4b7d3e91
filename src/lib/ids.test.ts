import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import fc from 'fast-check';
import { AssertionFailed } from './assert.ts';
import { PIX_IDENTIFIER, pixIdentifier, randomAlphanumeric, randomToken } from './ids.ts';

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const utcMinute = (d: Date) =>
  `${pad(d.getUTCFullYear(), 4)}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}`;

describe('pixIdentifier', () => {
  const at = new Date('2026-11-22T12:34:56.789Z');

  test('end-to-end id: E, ISPB, yyyyMMddHHmm in UTC, 11 alphanumerics: 32 characters', () => {
    const id = pixIdentifier('E', '99999999', at);
    assert.equal(id.length, 32);
    assert.match(id, /^E99999999\d{12}[A-Za-z0-9]{11}$/);
    assert.equal(id.slice(9, 21), '202611221234');
    assert.match(id, PIX_IDENTIFIER);
  });

  test('refund ids start with D', () => {
    const id = pixIdentifier('D', '12345678', at);
    assert.match(id, /^D12345678202611221234[A-Za-z0-9]{11}$/);
  });

  test('the minute is taken in UTC, not local time', () => {
    // 23:59 on 31 Dec in São Paulo is already 1 Jan in UTC.
    const id = pixIdentifier('E', '99999999', new Date('2026-12-31T23:59:00-03:00'));
    assert.equal(id.slice(9, 21), '202701010259');
  });

  test('any date from 1970 to 9999 is embedded as its UTC minute', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true }), (date) => {
        const id = pixIdentifier('E', '00000000', date);
        assert.equal(id.length, 32);
        assert.equal(id.slice(9, 21), utcMinute(date));
      }),
      { numRuns: 500 },
    );
  });

  test('many ids of the same minute are all distinct', () => {
    const ids = new Set(Array.from({ length: 5000 }, () => pixIdentifier('E', '99999999', at)));
    assert.equal(ids.size, 5000);
  });

  test('the random part uses upper case, lower case and digits, and nothing else', () => {
    const tails = Array.from({ length: 500 }, () => pixIdentifier('E', '99999999', at).slice(21)).join('');
    assert.match(tails, /^[A-Za-z0-9]+$/);
    assert.match(tails, /[A-Z]/);
    assert.match(tails, /[a-z]/);
    assert.match(tails, /[0-9]/);
  });

  test('an ISPB that is not 8 digits or capital letters, or a date past year 9999, is refused, not turned into a malformed id', () => {
    assert.match(pixIdentifier('E', '1234ABCD', at), /^E1234ABCD\d{12}[A-Za-z0-9]{11}$/);
    for (const ispb of ['', '1234567', '123456789', '1234567a', '1234-567', '１２３４５６７８']) {
      assert.throws(() => pixIdentifier('E', ispb, at), AssertionFailed, ispb);
    }
    assert.throws(() => pixIdentifier('E', '99999999', new Date('+010000-01-01T00:00:00Z')), AssertionFailed);
    assert.throws(() => pixIdentifier('E', '99999999', new Date(Number.NaN)), RangeError);
  });
});

describe('PIX_IDENTIFIER', () => {
  test('exactly 32 alphanumerics', () => {
    assert.match('E9999999920261122123400000000000', PIX_IDENTIFIER);
    assert.doesNotMatch('E999999992026112212340000000000', PIX_IDENTIFIER);
    assert.doesNotMatch('E99999999202611221234000000000000', PIX_IDENTIFIER);
    assert.doesNotMatch('E999999992026112212340000000000-', PIX_IDENTIFIER);
  });
});

describe('randomAlphanumeric and randomToken', () => {
  test('randomAlphanumeric has the requested length', () => {
    for (const length of [0, 1, 11, 64]) {
      const value = randomAlphanumeric(length);
      assert.equal(value.length, length);
      assert.match(value, /^[A-Za-z0-9]*$/);
    }
  });

  test('randomAlphanumeric draws every character equally often (no modulo bias)', () => {
    const counts = new Map<string, number>();
    for (const c of randomAlphanumeric(200_000)) counts.set(c, (counts.get(c) ?? 0) + 1);
    assert.equal(counts.size, 62);
    // Expected 3,226 each (standard deviation 56). Bytes taken modulo 62 without dropping 248..255
    // would give the first eight characters 5/4 of the others' share: over 4,000.
    for (const [c, n] of counts) assert.ok(n > 2_900 && n < 3_550, `${c} drawn ${n} times`);
  });

  test('randomToken is base64url of the requested number of random bytes', () => {
    const token = randomToken();
    assert.equal(Buffer.from(token, 'base64url').length, 32);
    assert.match(token, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(Buffer.from(randomToken(24), 'base64url').length, 24);
    assert.notEqual(randomToken(), randomToken());
  });
});
