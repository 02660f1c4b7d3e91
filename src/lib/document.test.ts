import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  cnpjCheckDigits,
  cpfCheckDigits,
  documentType,
  isValidCnpj,
  isValidCpf,
  maskDocument,
  normalizeDocument,
} from './document.ts';

const RUNS = { numRuns: 500 };
const DIGITS = '0123456789';
const ALNUM = `${DIGITS}ABCDEFGHIJKLMNOPQRSTUVWXYZ`;

const chars = (alphabet: string, length: number) =>
  fc.string({ unit: fc.constantFrom(...alphabet), minLength: length, maxLength: length });
const notRepeated = (s: string) => !/^(.)\1*$/.test(s);

/** Valid CPFs: 9 random digits (not all equal, which is never issued) and their check digits. */
const validCpf = chars(DIGITS, 9).filter(notRepeated).map((base) => `${base}${cpfCheckDigits(base)}`);
const validNumericCnpj = chars(DIGITS, 12).filter(notRepeated).map((base) => `${base}${cnpjCheckDigits(base)}`);
const validAlnumCnpj = chars(ALNUM, 12).filter(notRepeated).map((base) => `${base}${cnpjCheckDigits(base)}`);

/**
 * Reference implementations written from the published algorithms, in their textbook form
 * (CPF: sum × 10 mod 11, 10 → 0; CNPJ: weights cycling 2..9 from the right, character value =
 * ASCII code − 48 as the Receita Federal defines for the alphanumeric CNPJ).
 */
function referenceCpf(cpf: string): boolean {
  if (!/^\d{11}$/.test(cpf) || /^(\d)\1+$/.test(cpf)) return false;
  const digit = (length: number) => {
    let sum = 0;
    for (let i = 0; i < length; i++) sum += Number(cpf[i]) * (length + 1 - i);
    return ((sum * 10) % 11) % 10;
  };
  return digit(9) === Number(cpf[9]) && digit(10) === Number(cpf[10]);
}

function referenceCnpj(cnpj: string): boolean {
  if (!/^[0-9A-Z]{12}[0-9]{2}$/.test(cnpj) || /^(\d)\1+$/.test(cnpj)) return false;
  const digit = (length: number) => {
    let sum = 0;
    let weight = 2;
    for (let i = length - 1; i >= 0; i--) {
      sum += (cnpj.charCodeAt(i) - 48) * weight;
      weight = weight === 9 ? 2 : weight + 1;
    }
    const rest = sum % 11;
    return rest < 2 ? 0 : 11 - rest;
  };
  return digit(12) === Number(cnpj[12]) && digit(13) === Number(cnpj[13]);
}

/** Every string that differs from `value` in exactly one position, with characters of `alphabet`. */
function singleChanges(value: string, alphabet: string): { position: number; changed: string }[] {
  const out: { position: number; changed: string }[] = [];
  for (let position = 0; position < value.length; position++) {
    for (const c of alphabet) {
      if (c !== value[position]) out.push({ position, changed: `${value.slice(0, position)}${c}${value.slice(position + 1)}` });
    }
  }
  return out;
}

describe('CPF', () => {
  test('known documents', () => {
    assert.equal(cpfCheckDigits('529982247'), '25');
    assert.equal(isValidCpf('52998224725'), true);
    assert.equal(isValidCpf('12345678909'), true);
    assert.equal(isValidCpf('52998224726'), false);
    assert.equal(isValidCpf('52998224715'), false);
    assert.equal(isValidCpf('12345678900'), false);
  });

  test('repeated digits are invalid even though their check digits add up', () => {
    for (const d of DIGITS) {
      const cpf = d.repeat(11);
      assert.equal(`${d.repeat(9)}${cpfCheckDigits(d.repeat(9))}`, cpf);
      assert.equal(isValidCpf(cpf), false, cpf);
    }
  });

  test('only 11 plain digits are accepted', () => {
    for (const value of ['', '5299822472', '529982247250', '529.982.247-25', '5299822472a', ' 52998224725', '５２９９８２２４７２５']) {
      assert.equal(isValidCpf(value), false, value);
    }
  });

  test('generated CPFs are valid', () => {
    fc.assert(fc.property(validCpf, (cpf) => isValidCpf(cpf)), RUNS);
  });

  test('agrees with a reference implementation on any 11 digits', () => {
    const anyDigits = chars(DIGITS, 11);
    fc.assert(fc.property(fc.oneof(anyDigits, validCpf), (cpf) => isValidCpf(cpf) === referenceCpf(cpf)), RUNS);
  });

  test('changing either check digit makes a valid CPF invalid', () => {
    fc.assert(
      fc.property(validCpf, (cpf) => {
        for (const { position, changed } of singleChanges(cpf, DIGITS)) {
          if (position >= 9) assert.equal(isValidCpf(changed), false, `${cpf} -> ${changed}`);
        }
      }),
      RUNS,
    );
  });

  // Both remainders 0 and 1 give check digit 0, so when the first check digit is 0 the official
  // algorithm misses a few single-digit changes (see the example below). Otherwise it misses none.
  test('changing any single digit makes a valid CPF invalid when its first check digit is not 0', () => {
    fc.assert(
      fc.property(validCpf.filter((cpf) => cpf[9] !== '0'), (cpf) => {
        for (const { changed } of singleChanges(cpf, DIGITS)) assert.equal(isValidCpf(changed), false, `${cpf} -> ${changed}`);
      }),
      RUNS,
    );
  });

  test('a single-digit change the official algorithm cannot see is accepted, as the Receita accepts it', () => {
    // 9 → 8 in front moves the first remainder from 0 to 1 (check digit 0 either way) and the
    // second sum by 11: both documents are valid CPFs.
    assert.equal(isValidCpf('96500724704'), true);
    assert.equal(isValidCpf('86500724704'), true);
    assert.equal(referenceCpf('86500724704'), true);
  });
});

describe('CNPJ', () => {
  test('known documents, numeric and alphanumeric', () => {
    assert.equal(cnpjCheckDigits('112223330001'), '81');
    assert.equal(isValidCnpj('11222333000181'), true);
    assert.equal(isValidCnpj('12345678000195'), true);
    assert.equal(isValidCnpj('11222333000182'), false);
    // The Receita Federal's example of the alphanumeric CNPJ: 12.ABC.345/01DE-35.
    assert.equal(cnpjCheckDigits('12ABC34501DE'), '35');
    assert.equal(isValidCnpj('12ABC34501DE35'), true);
    assert.equal(isValidCnpj('12ABC34501DE36'), false);
    assert.equal(isValidCnpj('12ABC34501DF35'), false);
  });

  test('repeated digits are invalid', () => {
    for (const d of DIGITS) assert.equal(isValidCnpj(d.repeat(14)), false, d.repeat(14));
  });

  test('only 14 characters, upper case, ending in 2 digits are accepted', () => {
    for (const value of [
      '', '1122233300018', '112223330001810', '11.222.333/0001-81', '12abc34501de35', '12ABC34501DE3A', '12ABC34501DEAA',
      '12ABC3450-DE35', '12ÁBC34501DE35',
    ]) {
      assert.equal(isValidCnpj(value), false, value);
    }
  });

  test('generated numeric and alphanumeric CNPJs are valid', () => {
    fc.assert(fc.property(fc.oneof(validNumericCnpj, validAlnumCnpj), (cnpj) => isValidCnpj(cnpj)), RUNS);
  });

  test('agrees with a reference implementation on any 14 characters', () => {
    const any = fc.tuple(chars(ALNUM, 12), chars(DIGITS, 2)).map(([a, b]) => `${a}${b}`);
    fc.assert(
      fc.property(fc.oneof(any, chars(DIGITS, 14), validNumericCnpj, validAlnumCnpj), (cnpj) => isValidCnpj(cnpj) === referenceCnpj(cnpj)),
      RUNS,
    );
  });

  test('changing any single digit of a numeric CNPJ makes it invalid when its first check digit is not 0', () => {
    fc.assert(
      fc.property(validNumericCnpj.filter((cnpj) => cnpj[12] !== '0'), (cnpj) => {
        for (const { changed } of singleChanges(cnpj, DIGITS)) assert.equal(isValidCnpj(changed), false, `${cnpj} -> ${changed}`);
      }),
      RUNS,
    );
  });

  test('changing a check digit always makes a CNPJ invalid', () => {
    fc.assert(
      fc.property(fc.oneof(validNumericCnpj, validAlnumCnpj), (cnpj) => {
        for (const { position, changed } of singleChanges(cnpj, ALNUM)) {
          if (position >= 12) assert.equal(isValidCnpj(changed), false, `${cnpj} -> ${changed}`);
        }
      }),
      RUNS,
    );
  });

  // Letters are worth their ASCII code − 48 (A = 17 ... Z = 42), so two characters can differ by
  // 11, 22 or 33 ('6' and 'A', 'A' and 'L'), which a modulo-11 sum cannot tell apart. That is the
  // official algorithm; every other single change is caught when the first check digit is not 0.
  test('changing any single character of an alphanumeric CNPJ makes it invalid, except changes by a multiple of 11', () => {
    fc.assert(
      fc.property(validAlnumCnpj.filter((cnpj) => cnpj[12] !== '0'), (cnpj) => {
        for (const { position, changed } of singleChanges(cnpj, ALNUM)) {
          if (position >= 12) continue;
          const blind = (changed.charCodeAt(position) - cnpj.charCodeAt(position)) % 11 === 0;
          assert.equal(isValidCnpj(changed), blind, `${cnpj} -> ${changed}`);
        }
      }),
      { numRuns: 200 },
    );
  });

  test('a change by 11 is invisible to the official algorithm: 12ABC34501DE35 and 12LBC34501DE35', () => {
    assert.equal(isValidCnpj('12LBC34501DE35'), true);
    assert.equal(referenceCnpj('12LBC34501DE35'), true);
  });
});

describe('normalizeDocument and documentType', () => {
  test('strips the usual punctuation and upper-cases', () => {
    assert.equal(normalizeDocument('529.982.247-25'), '52998224725');
    assert.equal(normalizeDocument('11.222.333/0001-81'), '11222333000181');
    assert.equal(normalizeDocument('12.abc.345/01de-35'), '12ABC34501DE35');
    assert.equal(normalizeDocument(' 529 982 247 25\t'), '52998224725');
    assert.equal(normalizeDocument('52998224725'), '52998224725');
  });

  test('a formatted document normalizes back to the plain one, and its type is found', () => {
    const cpfMask = (s: string) => `${s.slice(0, 3)}.${s.slice(3, 6)}.${s.slice(6, 9)}-${s.slice(9)}`;
    const cnpjMask = (s: string) => `${s.slice(0, 2)}.${s.slice(2, 5)}.${s.slice(5, 8)}/${s.slice(8, 12)}-${s.slice(12)}`;
    fc.assert(
      fc.property(validCpf, fc.oneof(validNumericCnpj, validAlnumCnpj), fc.boolean(), (cpf, cnpj, lower) => {
        const formattedCnpj = lower ? cnpjMask(cnpj).toLowerCase() : cnpjMask(cnpj);
        assert.equal(normalizeDocument(cpfMask(cpf)), cpf);
        assert.equal(normalizeDocument(formattedCnpj), cnpj);
        assert.equal(documentType(normalizeDocument(cpfMask(cpf))), 'CPF');
        assert.equal(documentType(normalizeDocument(formattedCnpj)), 'CNPJ');
      }),
      RUNS,
    );
  });

  test('documentType of invalid documents is null', () => {
    for (const value of ['', '52998224726', '11111111111', '11222333000182', '12ABC34501DE36', 'abc', '529.982.247-25']) {
      assert.equal(documentType(value), null, value);
    }
  });
});

describe('maskDocument', () => {
  test('CPF shows digits 4 to 9, CNPJ its first 8 characters', () => {
    assert.equal(maskDocument('12345678909'), '***.456.789-**');
    assert.equal(maskDocument('52998224725'), '***.982.247-**');
    assert.equal(maskDocument('12345678000195'), '12.345.678/****-**');
    assert.equal(maskDocument('12ABC34501DE35'), '12.ABC.345/****-**');
  });

  test('nothing to mask gives null; an unknown shape hides everything', () => {
    assert.equal(maskDocument(null), null);
    assert.equal(maskDocument(undefined), null);
    assert.equal(maskDocument(''), null);
    assert.equal(maskDocument('123'), '***');
    assert.equal(maskDocument('123456789012'), '***');
  });

  test('a masked CPF never shows its first 3 digits nor its check digits', () => {
    fc.assert(
      fc.property(validCpf, (cpf) => {
        const masked = maskDocument(cpf);
        assert.match(masked ?? '', /^\*{3}\.\d{3}\.\d{3}-\*{2}$/);
        assert.equal(masked?.replace(/[.*-]/g, ''), cpf.slice(3, 9));
      }),
      RUNS,
    );
  });

  test('a masked CNPJ shows the 8-character root and hides branch and check digits', () => {
    fc.assert(
      fc.property(fc.oneof(validNumericCnpj, validAlnumCnpj), (cnpj) => {
        const masked = maskDocument(cnpj);
        assert.match(masked ?? '', /^[0-9A-Z]{2}\.[0-9A-Z]{3}\.[0-9A-Z]{3}\/\*{4}-\*{2}$/);
        assert.equal(masked?.replace(/[./*-]/g, ''), cnpj.slice(0, 8));
      }),
      RUNS,
    );
  });
});
