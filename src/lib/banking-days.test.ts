import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  bankingDaysBetween,
  easterDay,
  formatDay,
  holidays,
  isBankingDay,
  nextBankingDay,
  parseDay,
} from './banking-days.ts';

const day = (text: string): number => {
  const parsed = parseDay(text);
  assert.notEqual(parsed, null, text);
  return parsed!;
};

describe('parseDay and formatDay', () => {
  test('round-trip real days and refuse others', () => {
    for (const text of ['1970-01-01', '2024-02-29', '2026-12-31', '1969-12-31']) {
      assert.equal(formatDay(day(text)), text);
    }
    assert.equal(parseDay('1970-01-01'), 0);
    for (const text of ['2026-02-30', '2025-02-29', '2026-13-01', '2026-1-01', '20260101', '', '2026-01-01T00:00Z']) {
      assert.equal(parseDay(text), null, text);
    }
  });
});

describe('easterDay', () => {
  test('known Easter Sundays', () => {
    const table: Array<[number, string]> = [
      [2020, '2020-04-12'], [2021, '2021-04-04'], [2024, '2024-03-31'], [2025, '2025-04-20'],
      [2026, '2026-04-05'], [2027, '2027-03-28'], [2038, '2038-04-25'], [2285, '2285-03-22'],
    ];
    for (const [year, easter] of table) assert.equal(formatDay(easterDay(year)), easter, String(year));
  });
});

describe('holidays', () => {
  // Moveable dates as ANBIMA's calendar lists them.
  const table: Array<[number, string[]]> = [
    [2025, [
      '2025-01-01', '2025-03-03', '2025-03-04', '2025-04-18', '2025-04-21', '2025-05-01', '2025-06-19',
      '2025-09-07', '2025-10-12', '2025-11-02', '2025-11-15', '2025-11-20', '2025-12-25',
    ]],
    [2026, [
      '2026-01-01', '2026-02-16', '2026-02-17', '2026-04-03', '2026-04-21', '2026-05-01', '2026-06-04',
      '2026-09-07', '2026-10-12', '2026-11-02', '2026-11-15', '2026-11-20', '2026-12-25',
    ]],
    [2027, [
      '2027-01-01', '2027-02-08', '2027-02-09', '2027-03-26', '2027-04-21', '2027-05-01', '2027-05-27',
      '2027-09-07', '2027-10-12', '2027-11-02', '2027-11-15', '2027-11-20', '2027-12-25',
    ]],
  ];
  for (const [year, expected] of table) {
    test(`the national holidays of ${year}`, () => {
      assert.deepEqual([...holidays(year)].sort((a, b) => a - b).map(formatDay), expected);
    });
  }

  test('November 20th is a holiday from 2024 on', () => {
    assert.equal(holidays(2023).has(day('2023-11-20')), false);
    assert.equal(holidays(2024).has(day('2024-11-20')), true);
  });
});

describe('isBankingDay and nextBankingDay', () => {
  const table: Array<[date: string, banking: boolean, next: string]> = [
    ['2026-02-13', true, '2026-02-13'], // Friday before Carnival
    ['2026-02-14', false, '2026-02-18'], // Saturday: Carnival Monday and Tuesday follow, Ash Wednesday opens
    ['2026-02-16', false, '2026-02-18'],
    ['2026-02-17', false, '2026-02-18'],
    ['2026-02-18', true, '2026-02-18'], // Ash Wednesday is a banking day
    ['2026-04-03', false, '2026-04-06'], // Good Friday
    ['2026-06-04', false, '2026-06-05'], // Corpus Christi
    ['2025-12-24', true, '2025-12-24'],
    ['2025-12-25', false, '2025-12-26'],
    ['2025-12-31', true, '2025-12-31'],
    ['2027-01-01', false, '2027-01-04'], // Friday holiday then a weekend
    ['2020-12-25', false, '2020-12-28'], // BCB's validadeAposVencimento examples B to E
    ['2021-08-28', false, '2021-08-30'], // example G
    ['2021-09-06', true, '2021-09-06'],
    ['2021-09-07', false, '2021-09-08'],
  ];
  for (const [date, banking, next] of table) {
    test(`${date}: ${banking ? 'banking' : 'not banking'}, next ${next}`, () => {
      assert.equal(isBankingDay(day(date)), banking);
      assert.equal(formatDay(nextBankingDay(day(date))), next);
    });
  }
});

describe('bankingDaysBetween', () => {
  test('worked ranges (from, to]', () => {
    const table: Array<[from: string, to: string, count: number]> = [
      ['2026-02-13', '2026-02-13', 0],
      ['2026-02-13', '2026-02-12', 0],
      ['2026-02-13', '2026-02-18', 1], // weekend and Carnival skipped
      ['2026-02-12', '2026-02-13', 1],
      ['2026-04-01', '2026-04-07', 3], // Thursday, Monday, Tuesday: Good Friday skipped
      ['2025-12-31', '2026-12-31', 249], // 261 weekdays less 12 weekday holidays
      ['2026-01-01', '2026-01-31', 21],
      ['1969-12-25', '1970-01-05', 6],
    ];
    for (const [from, to, count] of table) {
      assert.equal(bankingDaysBetween(day(from), day(to)), count, `${from} -> ${to}`);
    }
  });

  test('agrees with walking day by day over a decade of random ranges', () => {
    const walk = (from: number, to: number) => {
      let count = 0;
      for (let d = from + 1; d <= to; d++) if (isBankingDay(d)) count++;
      return count;
    };
    let seed = 20260216;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed;
    };
    const start = day('2018-01-01');
    for (let i = 0; i < 500; i++) {
      const from = start + (next() % 3650);
      const to = from + (next() % 800) - 50;
      assert.equal(bankingDaysBetween(from, to), walk(from, to), `${formatDay(from)} -> ${formatDay(to)}`);
    }
  });
});
