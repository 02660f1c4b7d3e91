/**
 * The payer PSP's rules of Pix Automático, one row each, on the test clock: this service is the
 * payer's institution of an account holder, and the sandbox plays another institution's
 * receiver (POST /sandbox/automatico/...), so that only the payer's side acts. Each row starts
 * from a fresh payer and today's date on the clock, and reads what the payer sees
 * (/api/automatico/*), its notifications, its balance and the ledger.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createClient, creditAccount, type TestClient } from './factories.ts';
import { startTestApp, type TestApp } from './harness.ts';
import { assertLedgerInvariants } from './ledger.ts';
import { Automatico, type Json } from './support/automatico.ts';
import { addDays, saoPauloHour } from '../src/modules/recurrences/cycle.ts';

interface Row {
  rule: string;
  run: (p: PayerSide) => Promise<void>;
}

/** One payer's side of a row: its recurrence, asked by the sandbox's receiver, and the charges sent to it. */
class PayerSide {
  readonly auto: Automatico;
  readonly payer: TestClient;
  idRec = '';
  constructor(auto: Automatico, payer: TestClient) {
    this.auto = auto;
    this.payer = payer;
  }

  get t(): TestApp {
    return this.auto.t;
  }

  /** The sandbox's receiver asks; the solicitation reaches the payer (PENDING). */
  async ask(terms: Json = {}): Promise<string> {
    const res = await this.auto.admin('POST', '/sandbox/automatico/recurrences', {
      payerAccountId: this.payer.accountId,
      contract: `REGRA-${Math.random().toString(36).slice(2, 10)}`,
      frequency: 'MENSAL',
      startDate: this.auto.day(0),
      fixedAmount: '10.00',
      ...terms,
    });
    assert.equal(res.statusCode, 201, res.body);
    this.idRec = String(res.json<Json>().idRec);
    await this.auto.advance({ seconds: 5 });
    assert.equal((await this.authorization()).status, 'PENDING');
    return this.idRec;
  }

  async approve(body: Json = {}): Promise<Json> {
    const res = await this.call('POST', `/api/automatico/authorizations/${this.idRec}/approve`, body);
    assert.equal(res.statusCode, 200, res.body);
    return res.json<Json>();
  }

  async authorization(): Promise<Json> {
    const res = await this.call('GET', `/api/automatico/authorizations/${this.idRec}`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json<Json>();
  }

  /** The receiver sends a charge due in `days` (checked as a receiver here would, unless `unchecked`). */
  async send(days: number, amount = '10.00', extra: Json = {}): Promise<number> {
    const res = await this.auto.admin('POST', `/sandbox/automatico/recurrences/${this.idRec}/charges`, { dueDate: this.auto.day(days), amount, ...extra });
    assert.equal(res.statusCode, 201, res.body);
    return Number(res.json<Json>().id);
  }

  /** The day a charge's first attempt settles (its due date, or the next business day). */
  async settles(id: number): Promise<string> {
    return String((await this.charge(id)).settlementDate);
  }

  /** The minute after which the payer's PSP has answered what arrived (it answers after one). */
  answered(): Promise<Json> {
    return this.auto.advance({ seconds: 61 });
  }

  async charge(id: number): Promise<Json> {
    const res = await this.call('GET', `/api/automatico/charges/${id}`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json<Json>();
  }

  call(method: 'GET' | 'POST', url: string, body?: unknown) {
    return this.auto.req(method, url, body, this.payer);
  }

  async balance(): Promise<number> {
    return (await this.call('GET', '/balance')).json<{ netBalance: number }>().netBalance;
  }

  /** The payer's notifications of one event type, oldest first (their payloads). */
  async events(eventType: string): Promise<Json[]> {
    const rows = await this.t.db.selectFrom('outbox').select('payload').where('account_id', '=', BigInt(this.payer.accountId)).where('event_type', '=', eventType).orderBy('id').execute();
    return rows.map((r) => (r.payload as { data: Json }).data);
  }

  /** Moves the clock to `hhmm` (São Paulo) of the day `days` from the one the row started. */
  at(day: string, hour: number, minute = 0): Promise<Json> {
    return this.auto.advance({ to: new Date(saoPauloHour(day, hour).getTime() + minute * 60_000).toISOString() });
  }

  /** The charge's attempts as `[type, BCB status, rejection code]`. */
  static attempts(charge: Json): [string, string, string | null][] {
    return (charge.attempts as Json[]).map((a) => [String(a.type), String(a.status), ((a.rejection as Json | null)?.code as string | undefined) ?? null]);
  }
}

const ROWS: Row[] = [
  {
    rule: 'an instruction is answered within 2 hours of arriving: scheduled (SCHEDULED), the payer told',
    async run(p) {
      await p.ask();
      await p.approve();
      const id = await p.send(5);
      assert.equal((await p.charge(id)).status, 'RECEIVED');
      await p.answered();
      const scheduled = await p.charge(id);
      assert.equal(scheduled.status, 'SCHEDULED');
      const [first] = scheduled.attempts as Json[];
      const history = first!.history as { status: string; at: string }[];
      assert.ok(Date.parse(history[1]!.at) - Date.parse(history[0]!.at) <= 2 * 3_600_000, 'within 2 hours');
      assert.deepEqual((await p.events('recurring_charge_scheduled')).map((e) => e.id), [id]);
    },
  },
  {
    rule: "an amount above the payer's maximum is refused: AM02, the attempt REJEITADA and the charge, without retries, EXPIRED",
    async run(p) {
      await p.ask({ fixedAmount: undefined, minimumAmount: '10.00' });
      const approved = await p.approve({ maximumAmount: 30 });
      assert.equal((approved.amount as Json).payerMaximum, '30.00');
      const id = await p.send(5, '40.00');
      await p.answered();
      const refused = await p.charge(id);
      assert.deepEqual(PayerSide.attempts(refused), [['AGND', 'REJEITADA', 'AM02']]);
      const [failed] = await p.events('recurring_charge_failed');
      assert.deepEqual(failed?.failure, { code: 'AM02', description: 'Valor da cobrança ultrapassa o valor máximo estabelecido pelo usuário pagador', retryAt: null });
      await p.auto.advance({ seconds: 5 });
      assert.equal((await p.charge(id)).status, 'EXPIRED');
    },
  },
  {
    rule: 'a recurrence the payer has not approved: MSUC, the whole charge REJECTED',
    async run(p) {
      await p.ask();
      const id = await p.send(5, '10.00', { unchecked: true });
      await p.answered();
      const refused = await p.charge(id);
      assert.equal(refused.status, 'REJECTED');
      assert.deepEqual(PayerSide.attempts(refused), [['AGND', 'REJEITADA', 'MSUC']]);
    },
  },
  {
    rule: "an amount other than the recurrence's fixed one: AM09, the whole charge REJECTED",
    async run(p) {
      await p.ask();
      await p.approve();
      const id = await p.send(5, '12.00', { unchecked: true });
      await p.answered();
      assert.deepEqual(PayerSide.attempts(await p.charge(id)), [['AGND', 'REJEITADA', 'AM09']]);
      assert.equal((await p.charge(id)).status, 'REJECTED');
    },
  },
  {
    rule: "a due date past the recurrence's end: DTED, the whole charge REJECTED",
    async run(p) {
      await p.ask({ endDate: p.auto.day(4) });
      await p.approve();
      const id = await p.send(5, '10.00', { unchecked: true });
      await p.answered();
      assert.deepEqual(PayerSide.attempts(await p.charge(id)), [['AGND', 'REJEITADA', 'DTED']]);
    },
  },
  {
    rule: "the payer's account blocked: AC06 for the attempt; closed: AC05 for the whole charge",
    async run(p) {
      const first = await p.ask();
      await p.approve();
      const second = await p.ask();
      await p.approve();
      await p.t.db.updateTable('accounts').set({ status: 'BLOCKED' }).where('id', '=', BigInt(p.payer.accountId)).execute();
      p.idRec = first;
      const blocked = await p.send(5);
      await p.answered();
      assert.deepEqual(PayerSide.attempts(await p.charge(blocked)), [['AGND', 'REJEITADA', 'AC06']]);
      await p.t.db.updateTable('accounts').set({ status: 'CLOSED' }).where('id', '=', BigInt(p.payer.accountId)).execute();
      p.idRec = second;
      const closed = await p.send(5);
      await p.answered();
      const refused = await p.charge(closed);
      assert.deepEqual([refused.status, PayerSide.attempts(refused)], ['REJECTED', [['AGND', 'REJEITADA', 'AC05']]]);
    },
  },
  {
    rule: 'a scheduled charge is debited on its due date from 00:00 (not at 23:59 the day before): one Pix out with its end-to-end id',
    async run(p) {
      await creditAccount(p.t.db, p.payer.accountId, 5_000n);
      await p.ask();
      await p.approve();
      const id = await p.send(5);
      const due = await p.settles(id);
      await p.answered();
      await p.at(addDays(due, -1), 23, 59);
      assert.equal((await p.charge(id)).status, 'SCHEDULED');
      assert.equal(await p.balance(), 50);
      await p.at(due, 0);
      const paid = await p.charge(id);
      assert.equal(paid.status, 'PAID');
      assert.equal(await p.balance(), 40);
      const debits = await p.t.db.selectFrom('transactions').selectAll().where('account_id', '=', BigInt(p.payer.accountId)).where('type', '=', 'WITHDRAW').execute();
      assert.deepEqual(
        debits.map((d) => [Number(d.id), d.end_to_end_id, d.status, d.amount_centavos, d.txid]),
        [[paid.transactionId, paid.endToEndId, 'CONFIRMED', 1000n, paid.txid]],
      );
      const [told] = await p.events('recurring_charge_paid');
      assert.equal(told?.transactionId, paid.transactionId);
      const [out] = await p.events('cash_out');
      assert.equal(out?.endToEndId, paid.endToEndId);
    },
  },
  {
    rule: 'without funds the morning attempt fails (AM04) and runs once more from 18:00 the same day: paid then',
    async run(p) {
      await p.ask();
      await p.approve();
      const id = await p.send(5);
      const due = await p.settles(id);
      await p.answered();
      await p.at(due, 0);
      const failed = await p.charge(id);
      assert.equal(failed.status, 'SCHEDULED', 'the same attempt waits for the evening');
      const [told] = await p.events('recurring_charge_failed');
      assert.deepEqual(told?.failure, { code: 'AM04', description: 'Saldo insuficiente na conta transacional do usuário pagador', retryAt: saoPauloHour(due, 18).toISOString() });
      await creditAccount(p.t.db, p.payer.accountId, 1_000n);
      await p.at(due, 17, 59);
      assert.equal((await p.charge(id)).status, 'SCHEDULED');
      await p.at(due, 18);
      const paid = await p.charge(id);
      assert.deepEqual([paid.status, PayerSide.attempts(paid)], ['PAID', [['AGND', 'PAGA', null]]]);
      assert.equal(await p.balance(), 0);
    },
  },
  {
    rule: 'without funds in the evening too: the attempt EXPIRADA, and without retries the charge EXPIRED; nothing debited',
    async run(p) {
      await p.ask();
      await p.approve();
      const id = await p.send(5);
      const due = await p.settles(id);
      await p.answered();
      await p.at(due, 0);
      await p.at(due, 18);
      await p.auto.advance({ seconds: 5 });
      const expired = await p.charge(id);
      assert.deepEqual([expired.status, PayerSide.attempts(expired)], ['EXPIRED', [['AGND', 'EXPIRADA', null]]]);
      assert.equal((await p.events('recurring_charge_failed')).length, 2);
      assert.equal(await p.balance(), 0);
    },
  },
  {
    rule: "the receiver's retries are honoured (PERMITE_3R_7D): the failed charge waits (FAILED), a retry is scheduled and debited on its day",
    async run(p) {
      await p.ask({ retryPolicy: 'PERMITE_3R_7D' });
      await p.approve();
      const id = await p.send(5);
      const due = await p.settles(id);
      await p.answered();
      await p.at(due, 21, 1);
      const waiting = await p.charge(id);
      assert.deepEqual([waiting.status, PayerSide.attempts(waiting)], ['FAILED', [['AGND', 'EXPIRADA', null]]]);
      const retried = await p.auto.admin('POST', `/sandbox/automatico/charges/${String(waiting.txid)}/retry`, { date: addDays(due, 2) });
      assert.equal(retried.statusCode, 200, retried.body);
      await p.answered();
      assert.equal((await p.charge(id)).status, 'SCHEDULED');
      await creditAccount(p.t.db, p.payer.accountId, 1_000n);
      await p.at(addDays(due, 2), 0, 1);
      const paid = await p.charge(id);
      assert.deepEqual([paid.status, PayerSide.attempts(paid)], ['PAID', [['AGND', 'EXPIRADA', null], ['NTAG', 'PAGA', null]]]);
    },
  },
  {
    rule: 'the payer cancels a scheduled charge until 23:59 of the day before: CANCELLED by USUARIO_PAGADOR (SLBD), nothing debited',
    async run(p) {
      await creditAccount(p.t.db, p.payer.accountId, 1_000n);
      await p.ask();
      await p.approve();
      const id = await p.send(5);
      const due = await p.settles(id);
      await p.answered();
      assert.equal((await p.charge(id)).cancellableUntil, new Date(saoPauloHour(due, 0).getTime() - 1).toISOString());
      await p.at(addDays(due, -1), 23, 59);
      const res = await p.call('POST', `/api/automatico/charges/${id}/cancel`);
      assert.equal(res.statusCode, 200, res.body);
      const cancelled = res.json<Json>();
      assert.deepEqual([cancelled.status, cancelled.cancellation], ['CANCELLED', { requestedBy: 'USUARIO_PAGADOR', code: 'SLBD', description: 'Cancelamento de agendamento solicitado pelo usuário pagador' }]);
      await p.at(due, 8);
      assert.equal(await p.balance(), 10);
      assert.equal((await p.events('recurring_charge_cancelled')).length, 1);
      // The receiver's side sees it too: the charge CANCELADA at its PSP.
      const row = await p.t.db.selectFrom('recurring_charges').select(['status', 'encerramento']).where('id', '=', BigInt(id)).executeTakeFirstOrThrow();
      assert.deepEqual([row.status, (row.encerramento as { cancelamento: Json }).cancelamento.solicitante], ['CANCELADA', 'USUARIO_PAGADOR']);
    },
  },
  {
    rule: 'not from 00:00 of the day it settles: 422 CANCELLATION_TOO_LATE, the charge unchanged',
    async run(p) {
      await p.ask();
      await p.approve();
      const id = await p.send(5);
      const due = await p.settles(id);
      await p.answered();
      await p.at(due, 0, 0);
      const res = await p.call('POST', `/api/automatico/charges/${id}/cancel`);
      assert.equal(res.statusCode, 422, res.body);
      assert.equal(res.json<Json>().code, 'CANCELLATION_TOO_LATE');
      assert.equal((await p.charge(id)).status, 'SCHEDULED', 'its evening retry is still to come');
    },
  },
  {
    rule: 'the payer cancels its authorization (SLDB): its scheduled charges are cancelled with it (CCLD), nothing more is debited',
    async run(p) {
      await creditAccount(p.t.db, p.payer.accountId, 1_000n);
      await p.ask();
      await p.approve();
      const id = await p.send(5);
      await p.answered();
      const res = await p.call('POST', `/api/automatico/authorizations/${p.idRec}/cancel`);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual((res.json<Json>().cancellation as Json).code, 'SLDB');
      const charge = await p.charge(id);
      assert.deepEqual([charge.status, (charge.cancellation as Json).code], ['CANCELLED', 'CCLD']);
      assert.equal((await p.events('authorization_cancelled')).length, 1);
      await p.at(p.auto.day(6), 8);
      assert.equal(await p.balance(), 10);
    },
  },
  {
    rule: 'a PENDING authorization is answered once: approved, then neither approved nor rejected again (422); another account sees none of it (404)',
    async run(p) {
      await p.ask();
      await p.approve();
      const again = await p.call('POST', `/api/automatico/authorizations/${p.idRec}/reject`);
      assert.equal(again.statusCode, 422, again.body);
      assert.equal(again.json<Json>().code, 'AUTHORIZATION_NOT_PENDING');
      const other = await createClient(p.t);
      const foreign = await p.auto.req('GET', `/api/automatico/authorizations/${p.idRec}`, undefined, other);
      assert.equal(foreign.statusCode, 404, foreign.body);
    },
  },
];

describe("Pix Automático: the payer PSP's rules, one row each, on the test clock", () => {
  let t: TestApp;
  let auto: Automatico;

  before(async () => {
    t = await startTestApp();
    auto = new Automatico(t, await createClient(t));
  });
  after(() => t.close());

  for (const row of ROWS) {
    it(row.rule, async () => {
      const payer = await createClient(t, { name: 'Pagador das Regras' });
      await row.run(new PayerSide(auto, payer));
      await assertLedgerInvariants(t.db);
    });
  }
});
