/**
 * The cycle rules of Pix Automático's recurring charges on the test clock, one row a rule of the
 * contract (../shared/spec/pix-automatico.md): the window's edges, the payer PSP's answer and its
 * 2 hours, the morning's slot and the evening's retry, the receiver's retries, the cut-offs,
 * the refusals that end the whole charge against those that end one attempt, ajusteDiaUtil,
 * dataFinal and the expiry. Each row runs on a sandbox of its own (the clock and the faults are
 * the sandbox's), through the API, on the embedded database or TEST_DATABASE_URL's.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createClient, randomCnpj } from './factories.ts';
import { startTestApp } from './harness.ts';
import { Automatico, type Json } from './support/automatico.ts';
import { assertBcbAnswer, assertBcbProblem } from './support/bcb-schemas.ts';
import { addDays } from '../src/modules/recurrences/cycle.ts';

interface Row {
  rule: string;
  env?: Record<string, string>;
  run(auto: Automatico): Promise<void>;
}

const at = (day: string, hhmm: string) => new Date(`${day}T${hhmm}:00.000-03:00`).toISOString();
const attempts = Automatico.attempts;

/** A charge created through the API: its status, or the problem's. */
async function send(auto: Automatico, rec: Json, due: string, extra: Json = {}) {
  return auto.req('PUT', `/v2/cobr/${'t'.repeat(6)}${Math.random().toString(36).slice(2, 14).padEnd(26, '0')}`, auto.cobrBody(rec, due, extra));
}

const ROWS: Row[] = [
  {
    rule: 'the window opens at D-10 of the settlement day and closes at D-2 (calendar days by default)',
    async run(auto) {
      const rec = await auto.approvedRec();
      assertBcbProblem(await send(auto, rec, auto.day(11)), 400, 'CobROperacaoInvalida');
      assert.equal((await send(auto, rec, auto.day(10))).statusCode, 201, 'D-10');
      const other = await auto.approvedRec();
      assertBcbProblem(await send(auto, other, auto.day(1)), 400, 'CobROperacaoInvalida');
      assert.equal((await send(auto, other, auto.day(2))).statusCode, 201, 'D-2');
    },
  },
  {
    rule: 'AUTOMATICO_WINDOW_DAYS=business counts the window in business days',
    env: { AUTOMATICO_WINDOW_DAYS: 'business' },
    async run(auto) {
      // Monday 2027-03-01: the charge settling Monday 2027-03-15 is 10 business days ahead (14 calendar days).
      await auto.advance({ to: at('2027-03-01', '10:00') });
      const rec = await auto.approvedRec({ calendario: { dataInicial: '2027-03-01', periodicidade: 'MENSAL' } });
      assert.equal((await send(auto, rec, '2027-03-15')).statusCode, 201);
      const other = await auto.approvedRec({ calendario: { dataInicial: '2027-03-01', periodicidade: 'MENSAL' } });
      assertBcbProblem(await send(auto, other, '2027-03-16'), 400, 'CobROperacaoInvalida');
    },
  },
  {
    rule: 'one charge per cycle that is neither REJEITADA nor CANCELADA: a cancelled one frees the cycle',
    async run(auto) {
      const rec = await auto.approvedRec();
      const first = await auto.newCobr(rec, auto.day(5));
      assertBcbProblem(await send(auto, rec, auto.day(6)), 400, 'CobROperacaoInvalida');
      await auto.req('PATCH', `/v2/cobr/${String(first.txid)}`, { status: 'CANCELADA' });
      assert.equal((await send(auto, rec, auto.day(6))).statusCode, 201);
    },
  },
  {
    rule: "the payer's PSP answers within 2 hours: it schedules the charge (AGENDADA, ATIVA)",
    async run(auto) {
      const cobr = await auto.newCobr(await auto.approvedRec(), auto.day(4));
      const answered = await auto.next('charge-answered');
      assert.ok(Date.parse(String((answered.event as Json).at)) - Date.parse(String((cobr.atualizacao as Json[])[0]!.data)) <= 2 * 3_600_000);
      const scheduled = await auto.getCobr(String(cobr.txid));
      assert.equal(scheduled.status, 'ATIVA');
      assert.deepEqual(attempts(scheduled), [['AGND', 'AGENDADA']]);
    },
  },
  {
    rule: 'a payer PSP that does not answer within 2 hours (fault late): the attempt EXPIRADA, and the charge with no retry left EXPIRADA',
    async run(auto) {
      await auto.fault({ effect: 'late', stage: 'scheduling', count: 1 });
      const cobr = await auto.newCobr(await auto.approvedRec({ politicaRetentativa: 'NAO_PERMITE' }), auto.day(4));
      await auto.next('charge-answered');
      assert.deepEqual(attempts(await auto.getCobr(String(cobr.txid))), [['AGND', 'SOLICITADA']]);
      const overdue = await auto.next('charge-answer-overdue');
      assert.equal(Date.parse(String((overdue.event as Json).at)) - Date.parse(String((cobr.atualizacao as Json[])[0]!.data)), 2 * 3_600_000);
      const lapsed = await auto.getCobr(String(cobr.txid));
      assert.deepEqual(attempts(lapsed), [['AGND', 'EXPIRADA']]);
      assert.equal(lapsed.status, 'EXPIRADA');
    },
  },
  {
    rule: "settlement in the morning's slot: at 00:00 in São Paulo on the settlement day, PAGA and CONCLUIDA",
    async run(auto) {
      const due = auto.day(3);
      const cobr = await auto.newCobr(await auto.approvedRec(), due);
      await auto.next('charge-answered');
      await auto.advance({ to: at(addDays(due, -1), '23:59') });
      assert.equal((await auto.getCobr(String(cobr.txid))).status, 'ATIVA', 'not before 00:00');
      const slot = await auto.next('settlement-slot');
      assert.equal((slot.event as Json).at, at(due, '00:00'));
      const paid = await auto.getCobr(String(cobr.txid));
      assert.equal(paid.status, 'CONCLUIDA');
      assert.equal(((paid.pix as Json[])[0]!).horario, at(due, '00:00'));
    },
  },
  {
    rule: "no funds in the morning (AM04): one more attempt in the evening's slot (18:00), the same attempt, paid",
    async run(auto) {
      await auto.fault({ effect: 'reject', stage: 'attempt', reason: 'AM04', count: 1 });
      const due = auto.day(3);
      const cobr = await auto.newCobr(await auto.approvedRec(), due);
      await auto.advance({ to: at(due, '17:59') });
      assert.deepEqual(attempts(await auto.getCobr(String(cobr.txid))), [['AGND', 'AGENDADA']]);
      const evening = await auto.next('intraday-retry');
      assert.equal((evening.event as Json).at, at(due, '18:00'));
      const paid = await auto.getCobr(String(cobr.txid));
      assert.deepEqual(attempts(paid), [['AGND', 'PAGA']]);
      assert.equal(paid.status, 'CONCLUIDA');
    },
  },
  {
    rule: 'no funds in the evening either: the attempt EXPIRADA (no rejeicao); without retries the charge EXPIRADA at once',
    async run(auto) {
      await auto.fault({ effect: 'reject', stage: 'attempt', reason: 'AM04', count: 2 });
      const due = auto.day(3);
      const cobr = await auto.newCobr(await auto.approvedRec({ politicaRetentativa: 'NAO_PERMITE' }), due);
      await auto.advance({ to: at(due, '18:00') });
      const failed = await auto.getCobr(String(cobr.txid));
      assert.deepEqual(attempts(failed), [['AGND', 'EXPIRADA']]);
      assert.equal(((failed.tentativas as Json[])[0]!).rejeicao, undefined);
      assert.equal(failed.status, 'EXPIRADA');
      assertBcbProblem(await auto.req('POST', `/v2/cobr/${String(cobr.txid)}/retentativa/${addDays(due, 1)}`), 400, 'CobROperacaoInvalida');
    },
  },
  {
    rule: 'PERMITE_3R_7D: the receiver asks for retries (NTAG) on distinct future dates within 7 days, at most 3; refused while one is under way',
    async run(auto) {
      await auto.fault({ effect: 'reject', stage: 'attempt', reason: 'AM04', count: 8 });
      const due = auto.day(3);
      const cobr = await auto.newCobr(await auto.approvedRec(), due);
      const txid = String(cobr.txid);
      const retry = (day: string) => auto.req('POST', `/v2/cobr/${txid}/retentativa/${day}`);
      assertBcbProblem(await retry(addDays(due, 1)), 400, 'CobROperacaoInvalida');
      await auto.advance({ to: at(due, '18:00') });
      assert.equal((await auto.getCobr(txid)).status, 'ATIVA', 'retries left: it waits for them');
      assertBcbProblem(await retry(due), 400, 'CobROperacaoInvalida');
      assertBcbProblem(await retry(addDays(due, 8)), 400, 'CobROperacaoInvalida');
      for (const [n, day] of [[1, addDays(due, 1)], [2, addDays(due, 3)], [3, addDays(due, 7)]] as const) {
        const asked = await retry(day);
        assert.equal(asked.statusCode, 201, asked.body);
        assertBcbAnswer('POST /cobr/{txid}/retentativa/{data}', asked);
        assert.equal(attempts(asked.json<Json>()).at(-1)![0], 'NTAG');
        assertBcbProblem(await retry(addDays(day, 1)), 400, 'CobROperacaoInvalida');
        await auto.advance({ to: at(day, '18:00') });
        assert.equal(attempts(await auto.getCobr(txid)).length, n + 1);
      }
      const exhausted = await auto.getCobr(txid);
      assert.deepEqual(attempts(exhausted), [['AGND', 'EXPIRADA'], ['NTAG', 'EXPIRADA'], ['NTAG', 'EXPIRADA'], ['NTAG', 'EXPIRADA']]);
      assert.equal(exhausted.status, 'EXPIRADA', 'three retries used');
    },
  },
  {
    rule: 'NAO_PERMITE: a retry is refused',
    async run(auto) {
      const cobr = await auto.newCobr(await auto.approvedRec({ politicaRetentativa: 'NAO_PERMITE' }), auto.day(3));
      const refused = assertBcbProblem(await auto.req('POST', `/v2/cobr/${String(cobr.txid)}/retentativa/${auto.day(4)}`), 400, 'CobROperacaoInvalida');
      assert.match(String(refused.detail), /não permite retentativa/);
    },
  },
  {
    rule: 'with retries and none asked for, the charge expires when its 7th day after the due date ends',
    async run(auto) {
      await auto.fault({ effect: 'reject', stage: 'attempt', reason: 'AM04', count: 2 });
      const due = auto.day(3);
      const cobr = await auto.newCobr(await auto.approvedRec(), due);
      await auto.advance({ to: at(addDays(due, 7), '23:59') });
      assert.equal((await auto.getCobr(String(cobr.txid))).status, 'ATIVA');
      const expiry = await auto.next('charge-expiry');
      assert.equal((expiry.event as Json).at, at(addDays(due, 8), '00:00'));
      assert.equal((await auto.getCobr(String(cobr.txid))).status, 'EXPIRADA');
    },
  },
  {
    rule: 'a refusal of the whole charge (MSUC) at scheduling: the attempt and the charge REJEITADA, encerramento.rejeicao',
    async run(auto) {
      await auto.fault({ effect: 'reject', stage: 'scheduling', reason: 'MSUC', count: 1 });
      const cobr = await auto.newCobr(await auto.approvedRec(), auto.day(4));
      await auto.next('charge-answered');
      const rejected = await auto.getCobr(String(cobr.txid));
      assert.deepEqual(attempts(rejected), [['AGND', 'REJEITADA']]);
      assert.equal(rejected.status, 'REJEITADA');
      assert.equal(((rejected.encerramento as Json).rejeicao as Json).codigo, 'MSUC');
      // A rejected charge frees its cycle.
      assert.equal((await send(auto, await auto.getRec(String(cobr.idRec)), auto.day(5))).statusCode, 201);
    },
  },
  {
    rule: "a refusal of one attempt (AM02, above the payer's maximum): the attempt REJEITADA with its rejeicao, the charge still open",
    async run(auto) {
      await auto.fault({ effect: 'reject', stage: 'scheduling', reason: 'AM02', count: 1 });
      const cobr = await auto.newCobr(await auto.approvedRec(), auto.day(4));
      await auto.next('charge-answered');
      const refused = await auto.getCobr(String(cobr.txid));
      assert.deepEqual(attempts(refused), [['AGND', 'REJEITADA']]);
      assert.equal(((refused.tentativas as Json[])[0]!.rejeicao as Json).codigo, 'AM02');
      assert.equal(refused.status, 'CRIADA');
      assert.equal(refused.encerramento, undefined);
    },
  },
  {
    rule: "an error at the payer's PSP at settlement (AB10): the receiver's PSP sends the instruction again the same day (RIFL), paid",
    async run(auto) {
      await auto.fault({ effect: 'reject', stage: 'attempt', reason: 'AB10', count: 1 });
      const due = auto.day(3);
      const cobr = await auto.newCobr(await auto.approvedRec(), due);
      await auto.advance({ to: at(due, '00:10') });
      const resent = await auto.getCobr(String(cobr.txid));
      assert.deepEqual(attempts(resent), [['AGND', 'REJEITADA'], ['RIFL', 'PAGA']]);
      assert.equal(((resent.tentativas as Json[])[1]!).dataLiquidacao, due);
      assert.equal(resent.status, 'CONCLUIDA');
    },
  },
  {
    rule: "the receiver cancels until the day before the first attempt's day (D-1), not on it",
    async run(auto) {
      const due = auto.day(3);
      const rec = await auto.approvedRec();
      const cobr = await auto.newCobr(rec, due);
      await auto.advance({ to: at(addDays(due, -1), '23:59') });
      assert.equal((await auto.req('PATCH', `/v2/cobr/${String(cobr.txid)}`, { status: 'CANCELADA' })).statusCode, 200, 'D-1');
      await auto.fault({ effect: 'reject', stage: 'attempt', reason: 'AM04', count: 1 });
      const other = await auto.newCobr(await auto.approvedRec(), addDays(due, 2));
      await auto.advance({ to: at(addDays(due, 2), '09:00') });
      assertBcbProblem(await auto.req('PATCH', `/v2/cobr/${String(other.txid)}`, { status: 'CANCELADA' }), 400, 'CobROperacaoInvalida');
    },
  },
  {
    rule: 'ajusteDiaUtil: a due date on a weekend settles on the next business day; without it, on the day',
    async run(auto) {
      // Business time on Friday 2027-03-05: Saturday the 13th and Monday the 15th are within the window.
      await auto.advance({ to: at('2027-03-05', '10:00') });
      const moved = await auto.newCobr(await auto.approvedRec({ calendario: { dataInicial: '2027-03-05', periodicidade: 'MENSAL' } }), '2027-03-13', { ajusteDiaUtil: true });
      assert.equal(((await auto.getCobr(String(moved.txid))).tentativas as Json[])[0]!.dataLiquidacao, '2027-03-15');
      const kept = await auto.newCobr(await auto.approvedRec({ calendario: { dataInicial: '2027-03-05', periodicidade: 'MENSAL' } }), '2027-03-13', { ajusteDiaUtil: false });
      assert.equal(((await auto.getCobr(String(kept.txid))).tentativas as Json[])[0]!.dataLiquidacao, '2027-03-13');
    },
  },
  {
    rule: "dataFinal: a recurrence takes no charge due after its last day",
    async run(auto) {
      const rec = await auto.approvedRec({ calendario: { dataInicial: auto.day(0), dataFinal: auto.day(4), periodicidade: 'SEMANAL' } });
      assert.equal((await send(auto, rec, auto.day(4))).statusCode, 201);
      const after = assertBcbProblem(await send(auto, rec, auto.day(8)), 400, 'CobROperacaoInvalida');
      assert.match(String(after.detail), /fim da recorrência/);
    },
  },
];

describe("Pix Automático's cycle on the test clock, rule by rule", () => {
  for (const row of ROWS) {
    it(row.rule, async (ctx) => {
      const t = await startTestApp(row.env ? { env: row.env } : {});
      ctx.after(() => t.close());
      await row.run(new Automatico(t, await createClient(t, { name: 'Academia Forte', document: randomCnpj() })));
    });
  }
});
