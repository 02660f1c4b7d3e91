import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { formatDay, parseDay } from '../../lib/banking-days.ts';
import { cobvAmount, type CobvAmount, type CobvValor } from './amount.ts';

/** Fixed seed: a failure reproduces; fast-check prints the counterexample. */
const RUNS = { numRuns: 2000, seed: 31 };

const amount = (valor: CobvValor, dataDeVencimento: string, dataDePagamento: string, validadeAposVencimento = 30) =>
  cobvAmount({ valor, dataDeVencimento, dataDePagamento, validadeAposVencimento });

type Parts = Pick<CobvAmount, 'abatimentoCentavos' | 'descontoCentavos' | 'jurosCentavos' | 'multaCentavos' | 'finalCentavos'>;
const parts = (a: CobvAmount): Parts => ({
  abatimentoCentavos: a.abatimentoCentavos,
  descontoCentavos: a.descontoCentavos,
  jurosCentavos: a.jurosCentavos,
  multaCentavos: a.multaCentavos,
  finalCentavos: a.finalCentavos,
});
const only = (field: keyof Parts, centavos: bigint, originalCentavos: bigint): Parts => {
  const p: Parts = { abatimentoCentavos: 0n, descontoCentavos: 0n, jurosCentavos: 0n, multaCentavos: 0n, finalCentavos: 0n };
  p[field] = centavos;
  p.finalCentavos = field === 'jurosCentavos' || field === 'multaCentavos' ? originalCentavos + centavos : originalCentavos - centavos;
  return p;
};

describe('validity: BCB examples A to G of calendario.validadeAposVencimento', () => {
  const table: Array<[example: string, due: string, validade: number, lastPayable: string, firstRefused: string]> = [
    ['A', '2020-10-20', 4, '2020-10-26', '2020-10-27'],
    ['B', '2020-12-25', 0, '2020-12-28', '2020-12-29'],
    ['C', '2020-12-25', 1, '2020-12-29', '2020-12-30'],
    ['D', '2020-12-25', 3, '2020-12-31', '2021-01-01'],
    ['E', '2020-12-25', 4, '2021-01-04', '2021-01-05'],
    ['F', '2021-08-27', 5, '2021-09-01', '2021-09-02'],
    ['G', '2021-08-28', 5, '2021-09-06', '2021-09-07'],
  ];
  for (const [example, due, validade, lastPayable, firstRefused] of table) {
    test(`example ${example}: due ${due} + ${validade} days, payable until ${lastPayable}`, () => {
      const valor = { originalCentavos: 10_000n };
      assert.equal(amount(valor, due, due, validade).payable, true);
      const last = amount(valor, due, lastPayable, validade);
      assert.equal(last.payable, true);
      assert.equal(last.ultimoDiaPagavel, lastPayable);
      assert.equal(amount(valor, due, firstRefused, validade).payable, false);
    });
  }
});

describe('multa', () => {
  const table: Array<[name: string, valor: CobvValor, due: string, paid: string, multa: bigint]> = [
    ['fixed, paid on the due date', { originalCentavos: 10_000n, multa: { modalidade: 1, valorPercHundredths: 500n } }, '2026-03-10', '2026-03-10', 0n],
    ['fixed, a day late', { originalCentavos: 10_000n, multa: { modalidade: 1, valorPercHundredths: 500n } }, '2026-03-10', '2026-03-11', 500n],
    ['fixed, once however late', { originalCentavos: 10_000n, multa: { modalidade: 1, valorPercHundredths: 500n } }, '2026-03-10', '2026-04-01', 500n],
    ['2%', { originalCentavos: 10_000n, multa: { modalidade: 2, valorPercHundredths: 200n } }, '2026-03-10', '2026-03-11', 200n],
    ['15% of 123.45 = 18.5175, half up', { originalCentavos: 12_345n, multa: { modalidade: 2, valorPercHundredths: 1500n } }, '2026-03-10', '2026-03-11', 1852n],
    ['due on a Saturday, paid the Monday after: not late', { originalCentavos: 10_000n, multa: { modalidade: 1, valorPercHundredths: 500n } }, '2021-08-28', '2021-08-30', 0n],
    ['due on a Saturday, paid the Tuesday after', { originalCentavos: 10_000n, multa: { modalidade: 1, valorPercHundredths: 500n } }, '2021-08-28', '2021-08-31', 500n],
    ['due on Good Friday, paid Saturday: not late', { originalCentavos: 10_000n, multa: { modalidade: 2, valorPercHundredths: 200n } }, '2026-04-03', '2026-04-04', 0n],
  ];
  for (const [name, valor, due, paid, multa] of table) {
    test(name, () => assert.deepEqual(parts(amount(valor, due, paid)), only('multaCentavos', multa, valor.originalCentavos)));
  }
});

describe('juros', () => {
  // Due Friday 2026-02-13, paid Wednesday 2026-02-18: 5 calendar days late, 1 banking day (Carnival between).
  const due = '2026-02-13';
  const paid = '2026-02-18';
  const table: Array<[name: string, modalidade: 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8, rate: bigint, juros: bigint]> = [
    ['1: 1.00 per calendar day x 5', 1, 100n, 500n],
    ['2: 0.10% per calendar day x 5', 2, 10n, 50n],
    ['3: 1.00% a month x 5/30 = 16.67', 3, 100n, 17n],
    ['4: 12.00% a year x 5/365 = 16.44', 4, 1200n, 16n],
    ['5: 1.00 per banking day x 1', 5, 100n, 100n],
    ['6: 0.10% per banking day x 1', 6, 10n, 10n],
    ['7: 2.10% a month x 1/21', 7, 210n, 10n],
    ['8: 25.20% a year x 1/252', 8, 2520n, 10n],
  ];
  for (const [name, modalidade, rate, juros] of table) {
    test(name, () => {
      const valor: CobvValor = { originalCentavos: 10_000n, juros: { modalidade, valorPercHundredths: rate } };
      assert.deepEqual(parts(amount(valor, due, paid)), only('jurosCentavos', juros, 10_000n));
      assert.equal(amount(valor, due, due).jurosCentavos, 0n);
    });
  }

  test('a half centavo rounds up: 0.50% of 1.00 for one day', () => {
    const valor: CobvValor = { originalCentavos: 100n, juros: { modalidade: 2, valorPercHundredths: 50n } };
    assert.equal(amount(valor, '2026-03-10', '2026-03-11').jurosCentavos, 1n);
  });

  test('rounded once over the days, not per day: 0.40% of 1.00 for 5 days is 2 centavos, not 0', () => {
    const valor: CobvValor = { originalCentavos: 100n, juros: { modalidade: 2, valorPercHundredths: 40n } };
    assert.equal(amount(valor, '2026-03-10', '2026-03-15').jurosCentavos, 2n);
  });

  test('counted from the moved due date: due Saturday 2021-08-28, paid Wednesday 09-01 is 2 days late', () => {
    const valor: CobvValor = { originalCentavos: 10_000n, juros: { modalidade: 1, valorPercHundredths: 100n } };
    assert.equal(amount(valor, '2021-08-28', '2021-09-01').jurosCentavos, 200n);
  });

  test('banking days: paid on a Saturday after a Friday due date is late but earns no interest', () => {
    const valor: CobvValor = {
      originalCentavos: 10_000n,
      juros: { modalidade: 5, valorPercHundredths: 100n },
      multa: { modalidade: 1, valorPercHundredths: 300n },
    };
    const a = amount(valor, '2026-03-13', '2026-03-14');
    assert.equal(a.jurosCentavos, 0n);
    assert.equal(a.multaCentavos, 300n);
  });
});

describe('abatimento', () => {
  const table: Array<[name: string, valor: CobvValor, paid: string, abatimento: bigint]> = [
    ['fixed, before the due date', { originalCentavos: 10_000n, abatimento: { modalidade: 1, valorPercHundredths: 1000n } }, '2026-03-01', 1000n],
    ['fixed, after the due date', { originalCentavos: 10_000n, abatimento: { modalidade: 1, valorPercHundredths: 1000n } }, '2026-03-20', 1000n],
    ['5% of 123.45 = 6.1725', { originalCentavos: 12_345n, abatimento: { modalidade: 2, valorPercHundredths: 500n } }, '2026-03-10', 617n],
    ['2.50% of 1.00 = 0.025, half up', { originalCentavos: 100n, abatimento: { modalidade: 2, valorPercHundredths: 250n } }, '2026-03-10', 3n],
  ];
  for (const [name, valor, paid, abatimento] of table) {
    test(name, () => assert.deepEqual(parts(amount(valor, '2026-03-10', paid)), only('abatimentoCentavos', abatimento, valor.originalCentavos)));
  }
});

describe('desconto until fixed dates (modalidades 1 and 2)', () => {
  const dates = (first: bigint, second: bigint) => [
    { data: '2026-03-10', valorPercHundredths: first },
    { data: '2026-03-20', valorPercHundredths: second },
  ];
  const due = '2026-03-31';
  const table: Array<[paid: string, fixed: bigint, percent: bigint]> = [
    ['2026-03-05', 300n, 500n],
    ['2026-03-10', 300n, 500n],
    ['2026-03-11', 200n, 250n],
    ['2026-03-20', 200n, 250n],
    ['2026-03-21', 0n, 0n],
    ['2026-03-31', 0n, 0n],
  ];
  for (const [paid, fixed, percent] of table) {
    test(`paid ${paid}: ${fixed} fixed, ${percent} at 5%/2.5% of 100.00`, () => {
      const byValue: CobvValor = { originalCentavos: 10_000n, desconto: { modalidade: 1, descontoDataFixa: dates(300n, 200n) } };
      const byPercent: CobvValor = { originalCentavos: 10_000n, desconto: { modalidade: 2, descontoDataFixa: dates(500n, 250n) } };
      assert.deepEqual(parts(amount(byValue, due, paid)), only('descontoCentavos', fixed, 10_000n));
      assert.deepEqual(parts(amount(byPercent, due, paid)), only('descontoCentavos', percent, 10_000n));
    });
  }

  test('a discount dated on a due date that falls on Saturday follows the due date to Monday', () => {
    const valor: CobvValor = {
      originalCentavos: 10_000n,
      desconto: { modalidade: 1, descontoDataFixa: [{ data: '2026-04-04', valorPercHundredths: 100n }] },
    };
    assert.equal(amount(valor, '2026-04-04', '2026-04-06').descontoCentavos, 100n);
    assert.equal(amount(valor, '2026-04-04', '2026-04-07').descontoCentavos, 0n);
  });

  test("BCB's example charge (cobBody1): 123.45, 30.00 off until 2020-11-30, 15% fine, 2% a day, due 2020-12-31", () => {
    const valor: CobvValor = {
      originalCentavos: 12_345n,
      multa: { modalidade: 2, valorPercHundredths: 1500n },
      juros: { modalidade: 2, valorPercHundredths: 200n },
      desconto: { modalidade: 1, descontoDataFixa: [{ data: '2020-11-30', valorPercHundredths: 3000n }] },
    };
    const early = amount(valor, '2020-12-31', '2020-11-30');
    assert.deepEqual(parts(early), only('descontoCentavos', 3000n, 12_345n));
    assert.equal(amount(valor, '2020-12-31', '2020-12-31').finalCentavos, 12_345n);
    // Four calendar days late: 2% x 4 of 123.45 = 9.876, and the fine 18.5175.
    assert.deepEqual(parts(amount(valor, '2020-12-31', '2021-01-04')), {
      abatimentoCentavos: 0n, descontoCentavos: 0n, jurosCentavos: 988n, multaCentavos: 1852n, finalCentavos: 15_185n,
    });
  });
});

describe('desconto per day of anticipation (modalidades 3 to 6)', () => {
  // Paid Friday 2026-02-13, due Friday 2026-02-20: 7 calendar days early, 3 banking days
  // (the 13th, 18th and 19th; Carnival Monday and Tuesday are not banking days).
  const table: Array<[name: string, modalidade: 3 | 4 | 5 | 6, rate: bigint, desconto: bigint]> = [
    ['3: 0.50 per calendar day x 7', 3, 50n, 350n],
    ['4: 0.50 per banking day x 3', 4, 50n, 150n],
    ['5: 1.00% per calendar day x 7', 5, 100n, 700n],
    ['6: 1.00% per banking day x 3', 6, 100n, 300n],
  ];
  for (const [name, modalidade, rate, desconto] of table) {
    test(name, () => {
      const valor: CobvValor = { originalCentavos: 10_000n, desconto: { modalidade, valorPercHundredths: rate } };
      assert.deepEqual(parts(amount(valor, '2026-02-20', '2026-02-13')), only('descontoCentavos', desconto, 10_000n));
      assert.equal(amount(valor, '2026-02-20', '2026-02-20').descontoCentavos, 0n);
      assert.equal(amount(valor, '2026-02-20', '2026-02-23').descontoCentavos, 0n);
    });
  }

  test('the discount is cut to what the abatement leaves: the amount never goes below zero', () => {
    const valor: CobvValor = {
      originalCentavos: 10_000n,
      abatimento: { modalidade: 1, valorPercHundredths: 1000n },
      desconto: { modalidade: 3, valorPercHundredths: 5000n },
    };
    const a = amount(valor, '2026-03-31', '2026-03-01');
    assert.equal(a.descontoCentavos, 9000n);
    assert.equal(a.finalCentavos, 0n);
  });
});

describe('properties', () => {
  const hundredths = fc.bigInt({ min: 0n, max: 20_000n });
  const dayNumber = fc.integer({ min: parseDay('2024-01-01')!, max: parseDay('2028-12-31')! });
  const multa = fc.record({ modalidade: fc.constantFrom(1 as const, 2 as const), valorPercHundredths: hundredths });
  const juros = fc.record({ modalidade: fc.constantFrom(1 as const, 2 as const, 3 as const, 4 as const, 5 as const, 6 as const, 7 as const, 8 as const), valorPercHundredths: hundredths });
  const abatimento = fc.record({ modalidade: fc.constantFrom(1 as const, 2 as const), valorPercHundredths: hundredths });
  const fixa = (due: number) => fc.record({
    modalidade: fc.constantFrom(1 as const, 2 as const),
    descontoDataFixa: fc.array(
      fc.record({ data: fc.integer({ min: due - 60, max: due }).map(formatDay), valorPercHundredths: hundredths }),
      { minLength: 1, maxLength: 3 },
    ),
  });
  const antecipacao = fc.record({ modalidade: fc.constantFrom(3 as const, 4 as const, 5 as const, 6 as const), valorPercHundredths: hundredths });
  const charge = dayNumber.chain((due) => fc.record({
    due: fc.constant(due),
    validade: fc.integer({ min: 0, max: 60 }),
    valor: fc.record({
      originalCentavos: fc.bigInt({ min: 1n, max: 100_000_000n }),
      multa: fc.option(multa, { nil: undefined }),
      juros: fc.option(juros, { nil: undefined }),
      abatimento: fc.option(abatimento, { nil: undefined }),
      desconto: fc.option(fc.oneof(fixa(due), antecipacao), { nil: undefined }),
    }),
  }));
  const offset = fc.integer({ min: -90, max: 120 });

  test('the amount due and every part are never negative, and the parts add up', () => {
    fc.assert(fc.property(charge, offset, ({ due, validade, valor }, days) => {
      const a = amount(valor, formatDay(due), formatDay(due + days), validade);
      for (const part of Object.values(parts(a))) assert.ok(part >= 0n);
      const sum = a.originalCentavos - a.abatimentoCentavos - a.descontoCentavos + a.jurosCentavos + a.multaCentavos;
      assert.equal(a.finalCentavos, sum > 0n ? sum : 0n);
    }), RUNS);
  });

  test('without a discount the amount due never falls as the days pass', () => {
    fc.assert(fc.property(charge, offset, fc.integer({ min: 1, max: 40 }), ({ due, validade, valor }, days, more) => {
      const noDiscount = { ...valor, desconto: undefined };
      const before = amount(noDiscount, formatDay(due), formatDay(due + days), validade);
      const after = amount(noDiscount, formatDay(due), formatDay(due + days + more), validade);
      assert.ok(after.finalCentavos >= before.finalCentavos);
    }), RUNS);
  });

  test('on the due date, without discount or abatement, the amount due is the original', () => {
    fc.assert(fc.property(charge, ({ due, validade, valor }) => {
      const plain = { ...valor, desconto: undefined, abatimento: undefined };
      const a = amount(plain, formatDay(due), formatDay(due), validade);
      assert.equal(a.finalCentavos, valor.originalCentavos);
      assert.equal(a.payable, true);
    }), RUNS);
  });

  test('payable exactly up to the last payable day, which is a banking day on or after due + validade', () => {
    fc.assert(fc.property(charge, offset, ({ due, validade, valor }, days) => {
      const a = amount(valor, formatDay(due), formatDay(due + days), validade);
      const last = parseDay(a.ultimoDiaPagavel)!;
      assert.ok(last >= due + validade);
      assert.equal(a.payable, due + days <= last);
    }), RUNS);
  });
});
