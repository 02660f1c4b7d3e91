import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WHOLE_CHARGE_REJECTIONS, CHARGE_REJECTIONS } from './catalog.ts';
import {
  cycleOf,
  cycleStart,
  lastAttemptDay,
  payerMayCancel,
  receiverMayCancel,
  retryAt,
  retryRefusal,
  sendingWindow,
  settlementAt,
  settlementDate,
} from './cycle.ts';

/** The calendar of Pix Automático's recurring charges, rule by rule (pure: the clock-driven table is test/automatico-cycle.test.ts). */
describe("Pix Automático's calendar", () => {
  const windows: [string, 'calendar' | 'business', string, string][] = [
    // [settlement day, days, opens (D-10), closes (D-2)]
    ['2027-03-15', 'calendar', '2027-03-05', '2027-03-13'],
    ['2027-03-15', 'business', '2027-03-01', '2027-03-11'],
    // Carnival (2027-02-08 and 09) and the weekend are not business days.
    ['2027-02-12', 'business', '2027-01-27', '2027-02-10'],
    ['2027-01-01', 'calendar', '2026-12-22', '2026-12-30'],
  ];
  for (const [settles, days, opens, closes] of windows) {
    it(`a charge settling on ${settles} is sent from ${opens} to ${closes} (${days} days)`, () => {
      assert.deepEqual(sendingWindow(settles, days), { opens, closes });
    });
  }

  const adjustments: [string, boolean, string, string][] = [
    ['2027-03-13', true, '2027-03-15', 'a Saturday moves to Monday'],
    ['2027-03-13', false, '2027-03-13', 'without ajusteDiaUtil it stays'],
    ['2026-12-25', true, '2026-12-28', 'Christmas (a Friday) moves past the weekend'],
    ['2027-02-08', true, '2027-02-10', 'Carnival Monday and Tuesday'],
    ['2027-03-16', true, '2027-03-16', 'a business day stays'],
  ];
  for (const [due, ajuste, settles, what] of adjustments) {
    it(`ajusteDiaUtil: ${what} (${due} -> ${settles})`, () => assert.equal(settlementDate(due, ajuste), settles));
  }

  it('cycles count whole periods from the first day; a month past the 28th turns on its last day', () => {
    const rows: [string, 'SEMANAL' | 'MENSAL' | 'TRIMESTRAL' | 'SEMESTRAL' | 'ANUAL', string, number | null][] = [
      ['2027-01-10', 'MENSAL', '2027-01-09', null],
      ['2027-01-10', 'MENSAL', '2027-01-10', 0],
      ['2027-01-10', 'MENSAL', '2027-02-09', 0],
      ['2027-01-10', 'MENSAL', '2027-02-10', 1],
      ['2027-01-31', 'MENSAL', '2027-02-28', 1],
      ['2027-01-31', 'MENSAL', '2027-02-27', 0],
      ['2027-01-10', 'SEMANAL', '2027-01-16', 0],
      ['2027-01-10', 'SEMANAL', '2027-01-17', 1],
      ['2027-01-10', 'TRIMESTRAL', '2027-04-09', 0],
      ['2027-01-10', 'TRIMESTRAL', '2027-04-10', 1],
      ['2027-01-10', 'SEMESTRAL', '2027-07-10', 1],
      ['2027-01-10', 'ANUAL', '2028-01-09', 0],
      ['2027-01-10', 'ANUAL', '2028-01-10', 1],
    ];
    for (const [start, period, due, cycle] of rows) assert.equal(cycleOf(start, period, due), cycle, `${period} from ${start}: ${due}`);
    assert.equal(cycleStart('2027-01-31', 'MENSAL', 1), '2027-02-28');
    assert.equal(cycleStart('2027-01-31', 'MENSAL', 2), '2027-03-31');
    assert.equal(cycleStart('2027-01-10', 'SEMANAL', 2), '2027-01-24');
  });

  it("the morning's slot opens at 00:00 and the evening's retry at 18:00, in São Paulo", () => {
    assert.equal(settlementAt('2027-03-15').toISOString(), '2027-03-15T03:00:00.000Z');
    assert.equal(retryAt('2027-03-15').toISOString(), '2027-03-15T21:00:00.000Z');
  });

  it('retries: a future date, within D+1..D+7 of the due date, one no attempt took, at most 3', () => {
    const base = { today: '2027-03-16', dueDate: '2027-03-15', takenDates: ['2027-03-15'], retriesUsed: 0 };
    assert.equal(retryRefusal({ ...base, date: '2027-03-17' }), null);
    assert.equal(retryRefusal({ ...base, date: '2027-03-22' }), null, 'D+7');
    assert.match(retryRefusal({ ...base, date: '2027-03-23' })!, /outside the 7 days/, 'D+8');
    assert.match(retryRefusal({ ...base, date: '2027-03-16' })!, /not a future date/, 'today');
    assert.match(retryRefusal({ ...base, date: '2027-03-17', takenDates: ['2027-03-17'] })!, /already has an attempt/);
    assert.equal(retryRefusal({ ...base, date: '2027-03-17', retriesUsed: 2 }), null, 'the third');
    assert.match(retryRefusal({ ...base, date: '2027-03-17', retriesUsed: 3 })!, /3 retries/, 'a fourth');
  });

  it("an attempt's last day: the settlement day, or with retries the 7th after the due date", () => {
    assert.equal(lastAttemptDay({ due_date: '2027-03-13', settlement_date: '2027-03-15' }, false), '2027-03-15');
    assert.equal(lastAttemptDay({ due_date: '2027-03-13', settlement_date: '2027-03-15' }, true), '2027-03-20');
  });

  it('cut-offs: the receiver cancels before the first attempt\'s day; the payer until 23:59:59 of the day before', () => {
    assert.equal(receiverMayCancel('2027-03-14', '2027-03-15'), true);
    assert.equal(receiverMayCancel('2027-03-15', '2027-03-15'), false);
    assert.equal(payerMayCancel(new Date('2027-03-15T02:59:59.999Z'), '2027-03-15'), true, '23:59:59.999 in São Paulo');
    assert.equal(payerMayCancel(new Date('2027-03-15T03:00:00.000Z'), '2027-03-15'), false, '00:00 of the day');
  });

  it("the refusals that end the whole charge are BCB's list; the others end one attempt", () => {
    assert.deepEqual([...WHOLE_CHARGE_REJECTIONS].sort(), ['AC05', 'AM09', 'DENC', 'DS27', 'DTED', 'MIDI', 'MSUC', 'NITX', 'RC09']);
    for (const code of WHOLE_CHARGE_REJECTIONS) assert.ok(code in CHARGE_REJECTIONS);
    assert.equal(Object.keys(CHARGE_REJECTIONS).length, 19);
  });
});
