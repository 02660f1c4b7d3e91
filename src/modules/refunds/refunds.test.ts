import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createClient, randomCpf, requestToken, type TestClient } from '../../../test/factories.ts';
import { adminHeaders, onPostgres, startTestApp, type TestApp } from '../../../test/harness.ts';
import { assertLedgerInvariants } from '../../../test/ledger.ts';
import { onlyEvent, outboxOf } from '../../../test/events.ts';
import { errorMessage } from '../../../test/assertions.ts';
import { REASON_EXPIRED, REASON_REFUND_REJECTED } from '../settlement/service.ts';
import { REFUND_EXPIRATION_MS } from './service.ts';

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const PAYER = { name: 'Pagador Externo', document: '12345678909' };

interface Received {
  endToEndId: string;
  transactionId: number;
}
interface RefundBody {
  id: string;
  rtrId: string;
  valor: string;
  natureza: string;
  descricao?: string;
  horario: { solicitacao: string; liquidacao?: string };
  status: string;
  motivo?: string;
}
interface Balance {
  available: number;
  blocked: number;
}

describe('refunds (devolucao)', () => {
  let t: TestApp;
  let holder: TestClient;
  let holderKey: string;
  let stranger: TestClient;
  let strangerKey: string;

  async function admin<T>(url: string, payload: object, status = 201): Promise<T> {
    const res = await t.app.inject({ method: 'POST', url, headers: adminHeaders, payload });
    assert.equal(res.statusCode, status, `${url}: ${res.body}`);
    return res.json<T>();
  }
  const ownKey = async (client: TestClient) => (await admin<{ key: string }>(`/admin/accounts/${client.accountId}/pix-keys`, { type: 'evp' })).key;
  /** A PIX from another institution to `pixKey`, received `agoMs` before the clock's now. */
  const receive = (amount: string, options: { pixKey?: string; agoMs?: number; payer?: Record<string, string> } = {}) =>
    admin<Received>('/sandbox/pix/incoming', {
      pixKey: options.pixKey ?? holderKey,
      amount,
      payer: options.payer ?? PAYER,
      ...(options.agoMs !== undefined ? { receivedAt: new Date(t.clock.now().getTime() - options.agoMs).toISOString() } : {}),
    });
  const settle = () => admin<{ settled: number; failed: number }>('/sandbox/settle', {}, 200);

  const put = (e2eid: string, id: string, body: unknown, client: TestClient = holder) =>
    t.app.inject({ method: 'PUT', url: `/pix/${e2eid}/devolucao/${id}`, headers: client.headers, payload: body as object });
  const get = (e2eid: string, id: string, client: TestClient = holder) =>
    t.app.inject({ method: 'GET', url: `/pix/${e2eid}/devolucao/${id}`, headers: client.headers });

  async function created(e2eid: string, id: string, body: Record<string, unknown>, client: TestClient = holder): Promise<RefundBody> {
    const res = await put(e2eid, id, body, client);
    assert.equal(res.statusCode, 201, res.body);
    return res.json<RefundBody>();
  }

  async function balance(client: TestClient = holder): Promise<Balance> {
    const res = await t.app.inject({ method: 'GET', url: '/accounts/balances', headers: client.headers });
    assert.equal(res.statusCode, 200, res.body);
    const { available, blocked } = res.json<{ data: { balanceAmount: Balance }[] }>().data[0]!.balanceAmount;
    return { available, blocked };
  }

  const refundRows = (originalId: number) =>
    t.db.selectFrom('refunds').selectAll().where('original_transaction_id', '=', BigInt(originalId)).orderBy('id').execute();
  const refundTransactions = (originalId: number) =>
    t.db.selectFrom('transactions').selectAll().where('original_transaction_id', '=', BigInt(originalId)).where('type', '=', 'REFUND_IN').execute();
  /** The REFUND_IN transaction of a refund. */
  async function refundTransactionId(originalId: number | bigint, refundId: string): Promise<bigint> {
    const row = await t.db.selectFrom('refunds').select('transaction_id').where('original_transaction_id', '=', BigInt(originalId)).where('refund_id', '=', refundId).executeTakeFirstOrThrow();
    return row.transaction_id;
  }

  /** Runs `body` with the clock moved forward, with a token valid at that time; then moves it back. */
  async function later<T>(ms: number, body: (headers: TestClient) => Promise<T>): Promise<T> {
    t.clock.advance(ms);
    try {
      const token = await requestToken(t, holder, holder.cert);
      return await body({ ...holder, token, headers: { ...holder.headers, authorization: `Bearer ${token}` } });
    } finally {
      t.clock.advance(-ms);
    }
  }

  /** Ends each group: the ledger is consistent after it. */
  const ledgerHolds = () => it('the ledger stays consistent', () => assertLedgerInvariants(t.db));

  before(async () => {
    t = await startTestApp();
    holder = await createClient(t, { name: 'Loja Titular' });
    holderKey = await ownKey(holder);
    stranger = await createClient(t, { name: 'Outra Conta' });
    strangerKey = await ownKey(stranger);
  });
  after(() => t?.close());

  describe('validation', () => {
    let pix: Received;
    before(async () => {
      pix = await receive('50.00');
    });

    it('400 for an e2eid that is not exactly 32 alphanumerics, or a refund id that is not 1 to 35 alphanumerics', async () => {
      const ok = { valor: '1.00' };
      const cases: [string, string, RegExp][] = [
        [pix.endToEndId.slice(0, 31), 'r1', /^params: e2eid must/],
        [`${pix.endToEndId}a`, 'r1', /^params: e2eid must/],
        [`${pix.endToEndId.slice(0, 31)}-`, 'r1', /^params: e2eid must/],
        [`${pix.endToEndId.slice(0, 31)}_`, 'r1', /^params: e2eid must/],
        [pix.endToEndId, 'a'.repeat(36), /^params: id must/],
        [pix.endToEndId, 'abc-def', /^params: id must/],
        [pix.endToEndId, 'abc_def', /^params: id must/],
        [pix.endToEndId, 'abc%20def', /^params: id must/],
        [pix.endToEndId, '', /^params: id must/],
      ];
      for (const [e2eid, id, message] of cases) {
        assert.match(errorMessage(await put(e2eid, id, ok), 400), message, `${e2eid} ${id}`);
      }
      // 35 characters is the limit, and it is fine.
      assert.equal((await put(pix.endToEndId, 'b'.repeat(35), ok)).statusCode, 201);
    });

    it('400 for a valor that is not a positive 2-decimal string, a natureza the client cannot choose, a long descricao or unknown fields', async () => {
      const before = await balance();
      const cases: [unknown, RegExp][] = [
        [{ valor: 1 }, /valor/],
        [{ valor: 1.5 }, /valor/],
        [{ valor: '1.0' }, /valor/],
        [{ valor: '1.000' }, /valor/],
        [{ valor: '1' }, /valor/],
        [{ valor: '0.00' }, /valor/],
        [{ valor: '-1.00' }, /valor/],
        [{ valor: '00.50' }, /valor/],
        [{ valor: '1,00' }, /valor/],
        [{}, /valor is required/],
        [{ descricao: 'sem valor' }, /valor is required/],
        [{ valor: '1.00', natureza: 'MED_FRAUDE' }, /natureza/],
        [{ valor: '1.00', natureza: 'MED_OPERACIONAL' }, /natureza/],
        [{ valor: '1.00', natureza: 'OUTRA' }, /natureza/],
        [{ valor: '1.00', natureza: 'original' }, /natureza/],
        [{ valor: '1.00', descricao: 'x'.repeat(141) }, /descricao/],
        [{ valor: '1.00', descricao: 12 }, /descricao/],
        [{ valor: '1.00', motivo: 'x' }, /motivo is not an allowed property/],
        [{ valor: '1.00', id: 'r2' }, /id is not an allowed property/],
      ];
      for (const [body, message] of cases) {
        assert.match(errorMessage(await put(pix.endToEndId, 'v1', body), 400), message, JSON.stringify(body));
      }
      assert.deepEqual(await balance(), before);
      assert.deepEqual((await refundRows(pix.transactionId)).map((r) => r.refund_id), ['b'.repeat(35)]);
      // 140 characters is the limit, and it is fine.
      const long = await created(pix.endToEndId, 'v1', { valor: '1.00', descricao: 'x'.repeat(140) });
      assert.equal(long.descricao, 'x'.repeat(140));
    });

    it('401 without a token', async () => {
      const res = await t.app.inject({ method: 'PUT', url: `/pix/${pix.endToEndId}/devolucao/r401`, payload: { valor: '1.00' } });
      errorMessage(res, 401);
      errorMessage(await t.app.inject({ method: 'GET', url: `/pix/${pix.endToEndId}/devolucao/v1` }), 401);
    });
    ledgerHolds();
  });

  describe('what can be refunded', () => {
    it('404 for an unknown e2eid, a transfer the account sent, and a PIX another account received', async () => {
      await settle();
      const payment = await receive('20.00');
      const before = await balance();
      assert.match(errorMessage(await put(`E12345678${'2'.repeat(12)}abcdefghijk`, 'n1', { valor: '1.00' }), 404), /endToEndId/);

      // A WITHDRAW of the account: sent to a key of another account of ours, and settled.
      const sent = await t.app.inject({
        method: 'POST',
        url: '/dict/pix',
        headers: { ...holder.headers, 'x-idempotency-key': randomUUID() },
        payload: { pixKey: strangerKey, payment: { currency: 'BRL', amount: 5 } },
      });
      assert.equal(sent.statusCode, 201, sent.body);
      await settle();
      const withdraw = sent.json<{ endToEndId: string }>().endToEndId;
      errorMessage(await put(withdraw, 'n2', { valor: '1.00' }), 404);

      // The stranger received that transfer: the holder cannot refund it, and the stranger
      // cannot refund the holder's PIX either.
      errorMessage(await put(payment.endToEndId, 'n3', { valor: '1.00' }, stranger), 404);
      const strangerPix = await receive('10.00', { pixKey: strangerKey });
      errorMessage(await put(strangerPix.endToEndId, 'n4', { valor: '1.00' }), 404);
      assert.deepEqual(await balance(), { available: before.available - 5, blocked: before.blocked });
      assert.deepEqual(await refundRows(payment.transactionId), []);
      assert.deepEqual(await refundRows(strangerPix.transactionId), []);
      await assertLedgerInvariants(t.db);
    });
    ledgerHolds();
  });

  describe('request and repeat', () => {
    it('201 with exactly the refund fields, EM_PROCESSAMENTO; available falls and blocked rises at once', async () => {
      const pix = await receive('100.00');
      const before = await balance();
      const res = await put(pix.endToEndId, 'dev001', { valor: '30.00', natureza: 'RETIRADA', descricao: 'Troco devolvido' });
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json<RefundBody>();
      assert.deepEqual(Object.keys(body).sort(), ['descricao', 'horario', 'id', 'natureza', 'rtrId', 'status', 'valor']);
      assert.deepEqual(Object.keys(body.horario), ['solicitacao']);
      assert.equal(body.id, 'dev001');
      assert.equal(body.rtrId.length, 32);
      assert.match(body.rtrId, new RegExp(`^D${t.config.pspIspb}\\d{12}[a-zA-Z0-9]{11}$`));
      assert.deepEqual(
        [body.valor, body.natureza, body.descricao, body.status, body.horario.solicitacao],
        ['30.00', 'RETIRADA', 'Troco devolvido', 'EM_PROCESSAMENTO', t.clock.now().toISOString()],
      );
      assert.match(body.horario.solicitacao, RFC3339_MS);
      assert.deepEqual(await balance(), { available: before.available - 30, blocked: before.blocked + 30 });

      // natureza defaults to ORIGINAL; without descricao there is none.
      const plain = await created(pix.endToEndId, 'dev002', { valor: '0.01' });
      assert.deepEqual(Object.keys(plain).sort(), ['horario', 'id', 'natureza', 'rtrId', 'status', 'valor']);
      assert.equal(plain.natureza, 'ORIGINAL');
      assert.notEqual(plain.rtrId, body.rtrId);
      // The same refund id on another PIX is another refund.
      const other = await receive('5.00');
      assert.equal((await created(other.endToEndId, 'dev001', { valor: '5.00' })).valor, '5.00');
      await settle();
    });

    it('200 with the current state for an identical repeat, creating nothing; 409 for the same id with another body', async () => {
      const pix = await receive('40.00');
      const first = await created(pix.endToEndId, 'rep1', { valor: '10.00', descricao: 'parcial' });
      const before = await balance();
      t.clock.advance(1000);
      const again = await put(pix.endToEndId, 'rep1', { valor: '10.00', descricao: 'parcial' });
      assert.equal(again.statusCode, 200, again.body);
      assert.deepEqual(again.json(), first);
      // natureza ORIGINAL said out loud is the same request as natureza left out.
      const explicit = await put(pix.endToEndId, 'rep1', { valor: '10.00', natureza: 'ORIGINAL', descricao: 'parcial' });
      assert.equal(explicit.statusCode, 200, explicit.body);
      assert.deepEqual(await balance(), before);
      assert.equal((await refundRows(pix.transactionId)).length, 1);
      assert.equal((await refundTransactions(pix.transactionId)).length, 1);

      for (const body of [{ valor: '10.01', descricao: 'parcial' }, { valor: '10.00' }, { valor: '10.00', descricao: 'outra' }, { valor: '10.00', natureza: 'RETIRADA', descricao: 'parcial' }]) {
        assert.match(errorMessage(await put(pix.endToEndId, 'rep1', body), 409), /refund id/, JSON.stringify(body));
      }
      assert.deepEqual(await balance(), before);
      assert.equal((await refundRows(pix.transactionId)).length, 1);

      // After settlement the repeat shows the refund as it is now.
      await settle();
      const settled = await put(pix.endToEndId, 'rep1', { valor: '10.00', descricao: 'parcial' });
      assert.equal(settled.statusCode, 200);
      assert.equal(settled.json<RefundBody>().status, 'DEVOLVIDO');
      assert.equal(settled.json<RefundBody>().horario.liquidacao, t.clock.now().toISOString());
      t.clock.advance(-1000);
    });

    it('partial refunds may add up to exactly the original; one centavo more is 400', async () => {
      const pix = await receive('100.00');
      await created(pix.endToEndId, 'p1', { valor: '33.33' });
      await created(pix.endToEndId, 'p2', { valor: '33.33' });
      const before = await balance();
      assert.match(errorMessage(await put(pix.endToEndId, 'p3', { valor: '33.35' }), 400), /valor.*33\.34/);
      assert.deepEqual(await balance(), before);
      await settle();
      await created(pix.endToEndId, 'p3', { valor: '33.34' });
      assert.match(errorMessage(await put(pix.endToEndId, 'p4', { valor: '0.01' }), 400), /refundable/);
      const rows = await refundRows(pix.transactionId);
      assert.deepEqual(rows.map((r) => r.amount_centavos), [3333n, 3333n, 3334n]);
      // A refund larger than the whole PIX is 400 too.
      const small = await receive('1.00');
      errorMessage(await put(small.endToEndId, 'big', { valor: '1.01' }), 400);
      await settle();
    });

    it('422 when the account has not the money available, and nothing is written', async () => {
      const client = await createClient(t, { name: 'Conta Sem Saldo' });
      const key = await ownKey(client);
      const pix = await receive('20.00', { pixKey: key });
      // Most of it leaves the account.
      const sent = await t.app.inject({
        method: 'POST',
        url: '/dict/pix',
        headers: { ...client.headers, 'x-idempotency-key': randomUUID() },
        payload: { pixKey: holderKey, payment: { currency: 'BRL', amount: 15 } },
      });
      assert.equal(sent.statusCode, 201, sent.body);
      await settle();
      const before = await balance(client);
      assert.deepEqual(before, { available: 5, blocked: 0 });
      const outboxBefore = await t.db.selectFrom('outbox').select('id').where('account_id', '=', BigInt(client.accountId)).execute();
      assert.match(errorMessage(await put(pix.endToEndId, 'nomoney', { valor: '5.01' }, client), 422), /balance/i);
      assert.deepEqual(await balance(client), before);
      assert.deepEqual(await refundRows(pix.transactionId), []);
      assert.deepEqual(await refundTransactions(pix.transactionId), []);
      assert.equal((await t.db.selectFrom('outbox').select('id').where('account_id', '=', BigInt(client.accountId)).execute()).length, outboxBefore.length);
      // What is available can be refunded.
      await created(pix.endToEndId, 'nomoney', { valor: '5.00' }, client);
      assert.deepEqual(await balance(client), { available: 0, blocked: 5 });
      await settle();
      assert.deepEqual(await balance(client), { available: 0, blocked: 0 });
    });
    ledgerHolds();
  });

  describe('the 89-day window', () => {
    it('a PIX received 89 days less a minute ago can be refunded; 89 days and a minute ago, 422', async () => {
      const inside = await receive('10.00', { agoMs: 89 * DAY_MS - MINUTE_MS });
      const outside = await receive('10.00', { agoMs: 89 * DAY_MS + MINUTE_MS });
      const before = await balance();
      assert.match(errorMessage(await put(outside.endToEndId, 'late', { valor: '1.00' }), 422), /89 days/);
      assert.deepEqual(await balance(), before);
      assert.deepEqual(await refundRows(outside.transactionId), []);
      const res = await created(inside.endToEndId, 'intime', { valor: '10.00' });
      assert.equal(res.status, 'EM_PROCESSAMENTO');
      await settle();
    });

    it('moving the clock: exactly 89 days after receipt is still in time, a millisecond later is not', async () => {
      const pix = await receive('10.00');
      await later(89 * DAY_MS, async (client) => {
        assert.equal((await put(pix.endToEndId, 'day89', { valor: '4.00' }, client)).statusCode, 201);
      });
      await later(89 * DAY_MS + 1, async (client) => {
        assert.match(errorMessage(await put(pix.endToEndId, 'day89b', { valor: '4.00' }, client), 422), /expired/);
        // A repeat of a refund made in time still answers with it.
        assert.equal((await put(pix.endToEndId, 'day89', { valor: '4.00' }, client)).statusCode, 200);
      });
      await later(120 * DAY_MS, async (client) => {
        errorMessage(await put(pix.endToEndId, 'day120', { valor: '1.00' }, client), 422);
      });
      assert.deepEqual((await refundRows(pix.transactionId)).map((r) => r.refund_id), ['day89']);
      await settle();
    });
    ledgerHolds();
  });

  describe('GET /pix/{e2eid}/devolucao/{id}', () => {
    it('200 with the refund; 404 for an unknown id, another PIX, or another account', async () => {
      const pix = await receive('12.00');
      const other = await receive('12.00');
      const body = await created(pix.endToEndId, 'read1', { valor: '2.00', descricao: 'leitura' });
      const res = await get(pix.endToEndId, 'read1');
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), body);
      assert.match(errorMessage(await get(pix.endToEndId, 'nope'), 404), /Refund not found/);
      errorMessage(await get(other.endToEndId, 'read1'), 404);
      errorMessage(await get(pix.endToEndId, 'read1', stranger), 404);
      errorMessage(await get(pix.endToEndId.slice(1), 'read1'), 400);
      await settle();
    });
    ledgerHolds();
  });

  describe('settlement', () => {
    it('DEVOLVIDO with horario.liquidacao, a refund_in REFUND notification, and the REFUND_IN in the transaction views', async () => {
      const pix = await receive('80.00');
      const before = await balance();
      const body = await created(pix.endToEndId, 'liq1', { valor: '25.50', descricao: 'Produto devolvido' });
      assert.deepEqual(await balance(), { available: before.available - 25.5, blocked: before.blocked + 25.5 });
      t.clock.advance(2000);
      const settledAt = t.clock.now().toISOString();
      assert.deepEqual(await settle(), { settled: 1, failed: 0 });
      t.clock.advance(-2000);
      assert.deepEqual(await balance(), { available: before.available - 25.5, blocked: before.blocked });

      const read = (await get(pix.endToEndId, 'liq1')).json<RefundBody>();
      assert.deepEqual(read, { ...body, status: 'DEVOLVIDO', horario: { solicitacao: body.horario.solicitacao, liquidacao: settledAt } });

      const txId = await refundTransactionId(pix.transactionId, 'liq1');
      assert.deepEqual(await onlyEvent(t.db, txId, 'refund_in', holder.accountId), {
        type: 'REFUND',
        data: {
          id: Number(txId),
          txId: pix.endToEndId,
          status: 'REFUNDED',
          payment: { amount: '80.00', currency: 'BRL' },
          refunds: [{ status: 'LIQUIDATED', payment: { amount: 25.5, currency: 'BRL' }, endToEndId: body.rtrId, eventDate: settledAt, information: 'Produto devolvido' }],
          endToEndId: pix.endToEndId,
          creditDebitType: 'DEBIT',
        },
      });

      const list = await t.app.inject({ method: 'GET', url: '/api/transactions?externalId=liq1', headers: holder.headers });
      assert.equal(list.statusCode, 200, list.body);
      const items = list.json<{ data: Record<string, unknown>[] }>().data;
      assert.equal(items.length, 1);
      assert.deepEqual(
        [items[0]!.transactionId, items[0]!.operationType, items[0]!.movementType, items[0]!.status, items[0]!.externalId, items[0]!.endToEndId, items[0]!.originalAmount, items[0]!.finalAmount],
        [txId.toString(), 'Refund in', 'DEBIT', 'Confirmado', 'liq1', body.rtrId, 25.5, 25.5],
      );
      const byType = await t.app.inject({ method: 'GET', url: '/api/transactions?type=REFUND_IN', headers: holder.headers });
      assert.ok(byType.json<{ data: { transactionId: string }[] }>().data.some((i) => i.transactionId === txId.toString()));

      const status = await t.app.inject({ method: 'GET', url: `/api/pix/transaction/${txId}`, headers: holder.headers });
      assert.equal(status.statusCode, 200, status.body);
      const view = status.json<Record<string, unknown>>();
      assert.deepEqual(
        [view.type, view.status, view.externalId, view.e2eId, view.originalAmount, view.processedAt],
        ['REFUND_IN', 'CONFIRMED', 'liq1', body.rtrId, '25.50', settledAt],
      );
      errorMessage(await t.app.inject({ method: 'GET', url: `/api/pix/transaction/${txId}`, headers: stranger.headers }), 404);
    });

    it('refused by the payer\'s institution: NAO_REALIZADO with motivo, the money back in available, and the amount refundable again', async () => {
      // A sandbox payer whose institution refuses refunds of this PIX.
      const pix = await receive('60.00', { payer: { ...PAYER, behavior: 'reject' } });
      const before = await balance();
      const body = await created(pix.endToEndId, 'rej1', { valor: '60.00' });
      assert.deepEqual(await balance(), { available: before.available - 60, blocked: before.blocked + 60 });
      errorMessage(await put(pix.endToEndId, 'rej2', { valor: '0.01' }), 400);
      assert.deepEqual(await settle(), { settled: 0, failed: 1 });
      assert.deepEqual(await balance(), before);
      const read = (await get(pix.endToEndId, 'rej1')).json<RefundBody>();
      assert.deepEqual(read, { ...body, status: 'NAO_REALIZADO', motivo: REASON_REFUND_REJECTED });

      const txId = await refundTransactionId(pix.transactionId, 'rej1');
      const [event] = await outboxOf(t.db, txId);
      assert.equal(event?.event_type, 'refund_in');
      assert.equal(event.payload.data.status, 'ERROR');
      assert.equal(event.payload.data.errorReason, REASON_REFUND_REJECTED);
      const status = await t.app.inject({ method: 'GET', url: `/api/pix/transaction/${txId}`, headers: holder.headers });
      assert.equal(status.json<{ status: string }>().status, 'ERROR');

      // The failed refund no longer counts: the whole amount can be refunded again (and is
      // refused again by the same institution).
      await created(pix.endToEndId, 'rej3', { valor: '60.00' });
      assert.deepEqual(await balance(), { available: before.available - 60, blocked: before.blocked + 60 });
      assert.deepEqual(await settle(), { settled: 0, failed: 1 });
      assert.equal((await get(pix.endToEndId, 'rej3')).json<RefundBody>().status, 'NAO_REALIZADO');
      assert.deepEqual(await balance(), before);
    });

    it('a refund that failed frees its amount: after it, a refund of the whole PIX settles', async () => {
      const pix = await receive('60.00');
      const before = await balance();
      await created(pix.endToEndId, 'free1', { valor: '60.00' });
      // The payer's institution refuses this one (set on the refund's own row).
      const txId = await refundTransactionId(pix.transactionId, 'free1');
      await t.db.updateTable('transactions').set({ counterpart_behavior: 'reject' }).where('id', '=', txId).execute();
      assert.deepEqual(await settle(), { settled: 0, failed: 1 });
      assert.deepEqual(await balance(), before);
      await created(pix.endToEndId, 'free2', { valor: '60.00' });
      assert.deepEqual(await settle(), { settled: 1, failed: 0 });
      assert.equal((await get(pix.endToEndId, 'free1')).json<RefundBody>().status, 'NAO_REALIZADO');
      assert.equal((await get(pix.endToEndId, 'free2')).json<RefundBody>().status, 'DEVOLVIDO');
      assert.deepEqual(await balance(), { available: before.available - 60, blocked: before.blocked });
      errorMessage(await put(pix.endToEndId, 'free3', { valor: '0.01' }), 400);
    });

    it('a refund the network has not settled in 3 hours is NAO_REALIZADO and its money comes back', async () => {
      const pix = await receive('9.00');
      const before = await balance();
      await created(pix.endToEndId, 'exp1', { valor: '9.00' });
      t.clock.advance(REFUND_EXPIRATION_MS);
      try {
        assert.deepEqual(await settle(), { settled: 0, failed: 1 });
      } finally {
        t.clock.advance(-REFUND_EXPIRATION_MS);
      }
      assert.deepEqual(await balance(), before);
      const read = (await get(pix.endToEndId, 'exp1')).json<RefundBody>();
      assert.deepEqual([read.status, read.motivo], ['NAO_REALIZADO', REASON_EXPIRED]);
    });

    it('a PIX from another account of this service: the refund settles internally, the payer sees a Refund out CREDIT and gets refund_out', async () => {
      const payer = await createClient(t, { name: 'Pagadora Interna', document: randomCpf() });
      const payerKey = await ownKey(payer);
      await receive('200.00', { pixKey: payerKey });
      const sent = await t.app.inject({
        method: 'POST',
        url: '/dict/pix',
        headers: { ...payer.headers, 'x-idempotency-key': randomUUID() },
        payload: { pixKey: holderKey, payment: { currency: 'BRL', amount: 50 } },
      });
      assert.equal(sent.statusCode, 201, sent.body);
      const transfer = sent.json<{ id: number; endToEndId: string }>();
      await settle();
      const payment = await t.db.selectFrom('transactions').selectAll().where('end_to_end_id', '=', transfer.endToEndId).where('type', '=', 'PAYMENT').executeTakeFirstOrThrow();
      assert.equal(Number(payment.account_id), holder.accountId);

      const holderBefore = await balance();
      assert.deepEqual(await balance(payer), { available: 150, blocked: 0 });
      const body = await created(transfer.endToEndId, 'int1', { valor: '20.00', descricao: 'devolvendo' });
      assert.deepEqual(await settle(), { settled: 1, failed: 0 });
      assert.deepEqual(await balance(), { available: holderBefore.available - 20, blocked: holderBefore.blocked });
      assert.deepEqual(await balance(payer), { available: 170, blocked: 0 });
      assert.equal((await get(transfer.endToEndId, 'int1')).json<RefundBody>().status, 'DEVOLVIDO');

      const list = await t.app.inject({ method: 'GET', url: '/api/transactions?type=REFUND_OUT', headers: payer.headers });
      assert.equal(list.statusCode, 200, list.body);
      const items = list.json<{ data: Record<string, unknown>[] }>().data;
      assert.equal(items.length, 1);
      const item = items[0]!;
      assert.deepEqual(
        [item.operationType, item.movementType, item.status, item.endToEndId, item.originalAmount],
        ['Refund out', 'CREDIT', 'Confirmado', body.rtrId, 20],
      );
      assert.equal((item.counterpart as { name: string }).name, 'Loja Titular');

      assert.deepEqual(await onlyEvent(t.db, BigInt(item.transactionId as string), 'refund_out', payer.accountId), {
        type: 'REFUND',
        data: {
          id: Number(item.transactionId),
          txId: transfer.endToEndId,
          status: 'REFUNDED',
          payment: { amount: '50.00', currency: 'BRL' },
          refunds: [{ status: 'LIQUIDATED', payment: { amount: 20, currency: 'BRL' }, endToEndId: body.rtrId, eventDate: t.clock.now().toISOString(), information: 'devolvendo' }],
          endToEndId: transfer.endToEndId,
          creditDebitType: 'CREDIT',
        },
      });
      // The payer's REFUND_OUT refers to its own transfer.
      const refundOut = await t.db.selectFrom('transactions').selectAll().where('id', '=', BigInt(item.transactionId as string)).executeTakeFirstOrThrow();
      assert.equal(Number(refundOut.original_transaction_id), transfer.id);
      const [holderEvent] = await outboxOf(t.db, await refundTransactionId(payment.id, 'int1'));
      assert.equal(holderEvent?.event_type, 'refund_in');
      assert.equal(holderEvent.payload.data.creditDebitType, 'DEBIT');
    });
    ledgerHolds();
  });

  describe('concurrency (PostgreSQL)', { skip: onPostgres ? false : 'row locks under real concurrency need PostgreSQL (PGlite runs one transaction at a time)' }, () => {
    it('20 concurrent refunds of 10.00 against a 100.00 PIX: exactly 10 succeed, the rest are 400', async () => {
      const client = await createClient(t, { name: 'Conta Concorrente' });
      const key = await ownKey(client);
      const pix = await receive('100.00', { pixKey: key });
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => put(pix.endToEndId, `conc${i}`, { valor: '10.00' }, client)));
      const statuses = answers.map((r) => r.statusCode).sort();
      assert.deepEqual(statuses, [...Array(10).fill(201), ...Array(10).fill(400)], answers.map((r) => r.body).join('\n'));
      const rows = await refundRows(pix.transactionId);
      assert.equal(rows.length, 10);
      assert.equal(rows.reduce((sum, r) => sum + r.amount_centavos, 0n), 10_000n);
      assert.deepEqual(await balance(client), { available: 0, blocked: 100 });
      await settle();
      assert.deepEqual(await balance(client), { available: 0, blocked: 0 });
    });

    it('10 concurrent identical refunds: one 201, nine 200, a single refund', async () => {
      const client = await createClient(t, { name: 'Conta Repetida' });
      const key = await ownKey(client);
      const pix = await receive('30.00', { pixKey: key });
      const answers = await Promise.all(Array.from({ length: 10 }, () => put(pix.endToEndId, 'same1', { valor: '12.00', descricao: 'uma vez' }, client)));
      const statuses = answers.map((r) => r.statusCode).sort();
      assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200, 200, 200, 200, 201], answers.map((r) => r.body).join('\n'));
      assert.equal(new Set(answers.map((r) => r.json<RefundBody>().rtrId)).size, 1);
      assert.equal((await refundRows(pix.transactionId)).length, 1);
      assert.equal((await refundTransactions(pix.transactionId)).length, 1);
      assert.deepEqual(await balance(client), { available: 18, blocked: 12 });
      await settle();
    });

    it('refunds of many PIX of one account while it sends transfers and settlement runs: no deadlock, no overdraft', async () => {
      const client = await createClient(t, { name: 'Conta Movimentada' });
      const key = await ownKey(client);
      const received = await Promise.all(Array.from({ length: 12 }, () => receive('10.00', { pixKey: key })));
      const transfer = () =>
        t.app.inject({
          method: 'POST',
          url: '/dict/pix',
          headers: { ...client.headers, 'x-idempotency-key': randomUUID() },
          payload: { pixKey: holderKey, payment: { currency: 'BRL', amount: 5 } },
        });
      const answers = await Promise.all([
        ...received.map((pix, i) => put(pix.endToEndId, `mix${i}`, { valor: '8.00' }, client)),
        ...Array.from({ length: 6 }, transfer),
        ...Array.from({ length: 4 }, () => t.app.inject({ method: 'POST', url: '/sandbox/settle', headers: adminHeaders })),
      ]);
      const statuses = answers.map((r) => r.statusCode);
      // 120.00 in: 12 refunds of 8.00 and 6 transfers of 5.00 ask for 126.00, so some are refused for balance.
      assert.ok(statuses.every((s) => s === 200 || s === 201 || s === 422), answers.map((r) => r.body).join('\n'));
      const refunded = statuses.slice(0, 12).filter((s) => s === 201).length;
      const sent = statuses.slice(12, 18).filter((s) => s === 201).length;
      assert.ok(refunded * 8 + sent * 5 <= 120);
      await settle();
      assert.deepEqual(await balance(client), { available: 120 - refunded * 8 - sent * 5, blocked: 0 });
    });
    ledgerHolds();
  });

  it('the ledger stays consistent after all of the above', async () => {
    await assertLedgerInvariants(t.db);
  });
});
