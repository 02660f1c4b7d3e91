import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createClient, type TestClient } from '../../../test/factories.ts';
import { adminHeaders, onPostgres, startTestApp, type TestApp } from '../../../test/harness.ts';
import { assertLedgerInvariants } from '../../../test/ledger.ts';
import { onlyEvent } from '../../../test/events.ts';
import { errorMessage } from '../../../test/assertions.ts';

const PAYER = { name: 'Pagador Contestante', document: '12345678909' };

interface Received {
  endToEndId: string;
  transactionId: number;
}
interface Balance {
  available: number;
  blocked: number;
}
interface MedRefund {
  id: string;
  rtrId: string;
  natureza: string;
  status: string;
}
interface MedView {
  id: number;
  endToEndId: string;
  transactionId: number;
  amount: string;
  currency: string;
  reason: string;
  details: string | null;
  status: string;
  createdAt: string;
  closedAt: string | null;
  refund: MedRefund | null;
}

describe('MED (sandbox)', () => {
  let t: TestApp;
  let holder: TestClient;
  let holderKey: string;

  const post = (url: string, payload?: object, headers: Record<string, string> = adminHeaders) =>
    t.app.inject({ method: 'POST', url, headers, ...(payload ? { payload } : {}) });
  async function admin<T>(url: string, payload: object, status = 201): Promise<T> {
    const res = await post(url, payload);
    assert.equal(res.statusCode, status, `${url}: ${res.body}`);
    return res.json<T>();
  }
  const ownKey = async (client: TestClient) => (await admin<{ key: string }>(`/admin/accounts/${client.accountId}/pix-keys`, { type: 'evp' })).key;
  const receive = (amount: string, pixKey = holderKey) => admin<Received>('/sandbox/pix/incoming', { pixKey, amount, payer: PAYER });
  const settle = () => admin<{ settled: number; failed: number }>('/sandbox/settle', {}, 200);

  const open = (endToEndId: string, reason = 'FRAUD', extra: Record<string, unknown> = {}) => post('/sandbox/med', { endToEndId, reason, ...extra });
  async function opened(endToEndId: string, reason = 'FRAUD', extra: Record<string, unknown> = {}): Promise<number> {
    const res = await open(endToEndId, reason, extra);
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json<{ medId: number }>();
    assert.deepEqual(Object.keys(body), ['medId']);
    assert.ok(Number.isSafeInteger(body.medId));
    return body.medId;
  }
  const close = (medId: number | string, decision: 'accept' | 'reject') => post(`/sandbox/med/${medId}/${decision}`);
  async function closed(medId: number, decision: 'accept' | 'reject'): Promise<MedView> {
    const res = await close(medId, decision);
    assert.equal(res.statusCode, 200, res.body);
    return res.json<MedView>();
  }

  const putRefund = (e2eid: string, id: string, body: object, client: TestClient = holder) =>
    t.app.inject({ method: 'PUT', url: `/pix/${e2eid}/devolucao/${id}`, headers: client.headers, payload: body });
  const getRefund = (e2eid: string, id: string, client: TestClient = holder) =>
    t.app.inject({ method: 'GET', url: `/pix/${e2eid}/devolucao/${id}`, headers: client.headers });

  async function balance(client: TestClient = holder): Promise<Balance> {
    const res = await t.app.inject({ method: 'GET', url: '/accounts/balances', headers: client.headers });
    assert.equal(res.statusCode, 200, res.body);
    const { available, blocked } = res.json<{ data: { balanceAmount: Balance }[] }>().data[0]!.balanceAmount;
    return { available, blocked };
  }

  /** The MED notifications of a received PIX, oldest first. */
  const medEvents = (transactionId: number) =>
    t.db.selectFrom('outbox').selectAll().where('transaction_id', '=', BigInt(transactionId)).where('event_type', 'like', 'med_%').orderBy('id').execute();
  const medRow = (medId: number) => t.db.selectFrom('meds').selectAll().where('id', '=', BigInt(medId)).executeTakeFirstOrThrow();

  /** A fresh account with its own key, so that its balance is exactly what a test puts in. */
  async function freshAccount(name: string): Promise<{ client: TestClient; key: string }> {
    const client = await createClient(t, { name });
    return { client, key: await ownKey(client) };
  }

  async function spend(client: TestClient, amount: number) {
    const res = await t.app.inject({
      method: 'POST',
      url: '/dict/pix',
      headers: { ...client.headers, 'x-idempotency-key': randomUUID() },
      payload: { pixKey: holderKey, payment: { currency: 'BRL', amount } },
    });
    assert.equal(res.statusCode, 201, res.body);
    await settle();
  }

  const ledgerHolds = () => it('the ledger stays consistent', () => assertLedgerInvariants(t.db));

  before(async () => {
    t = await startTestApp();
    holder = await createClient(t, { name: 'Loja Contestada' });
    holderKey = await ownKey(holder);
  });
  after(() => t?.close());

  describe('POST /sandbox/med', () => {
    it('201 {medId}: blocks the whole PIX (available -> blocked) and sends med_created', async () => {
      const pix = await receive('100.00');
      const before = await balance();
      const medId = await opened(pix.endToEndId, 'FRAUD', { details: 'Golpe do falso parente' });
      assert.deepEqual(await balance(), { available: before.available - 100, blocked: before.blocked + 100 });
      const row = await medRow(medId);
      assert.deepEqual([Number(row.account_id), Number(row.transaction_id), row.amount_centavos, row.status, row.reason], [holder.accountId, pix.transactionId, 10_000n, 'OPEN', 'FRAUD']);

      const events = await medEvents(pix.transactionId);
      assert.equal(events.length, 1);
      assert.equal(events[0]!.event_type, 'med_created');
      assert.equal(Number(events[0]!.account_id), holder.accountId);
      assert.deepEqual(events[0]!.payload, {
        type: 'MED',
        data: {
          id: medId,
          endToEndId: pix.endToEndId,
          transactionId: pix.transactionId,
          amount: '100.00',
          currency: 'BRL',
          reason: 'FRAUD',
          details: 'Golpe do falso parente',
          status: 'OPEN',
          createdAt: t.clock.now().toISOString(),
          closedAt: null,
          refund: null,
        },
      });
      await closed(medId, 'reject');
      // Without details, details is null.
      const again = await opened(pix.endToEndId, 'OPERATIONAL_FLAW');
      const last = (await medEvents(pix.transactionId)).at(-1)!;
      assert.deepEqual([last.event_type, last.payload.data.id, last.payload.data.details, last.payload.data.reason], ['med_created', again, null, 'OPERATIONAL_FLAW']);
      await closed(again, 'reject');
    });

    it('blocks only what is still refundable when part of the PIX was refunded', async () => {
      const pix = await receive('50.00');
      assert.equal((await putRefund(pix.endToEndId, 'antes1', { valor: '20.00' })).statusCode, 201);
      await settle();
      assert.equal((await putRefund(pix.endToEndId, 'antes2', { valor: '5.00' })).statusCode, 201);
      const before = await balance();
      const medId = await opened(pix.endToEndId);
      assert.equal((await medRow(medId)).amount_centavos, 2500n);
      assert.deepEqual(await balance(), { available: before.available - 25, blocked: before.blocked + 25 });
      assert.equal((await medEvents(pix.transactionId)).at(-1)!.payload.data.amount, '25.00');
      await settle();
      await closed(medId, 'reject');
    });

    it('blocks only what the account has available when it spent part of the money', async () => {
      const { client, key } = await freshAccount('Conta Gastadora');
      const pix = await receive('40.00', key);
      await spend(client, 25);
      assert.deepEqual(await balance(client), { available: 15, blocked: 0 });
      const medId = await opened(pix.endToEndId);
      assert.equal((await medRow(medId)).amount_centavos, 1500n);
      assert.deepEqual(await balance(client), { available: 0, blocked: 15 });
      // Nothing left to block: the money the MED holds cannot be spent or refunded meanwhile.
      assert.match(errorMessage(await putRefund(pix.endToEndId, 'semsaldo', { valor: '1.00' }, client), 422), /balance/i);
      const view = await closed(medId, 'accept');
      assert.equal(view.amount, '15.00');
      await settle();
      assert.deepEqual(await balance(client), { available: 0, blocked: 0 });
      // The 25.00 not taken by the MED can still be refunded, once there is money for it.
      await receive('30.00', key);
      assert.equal((await putRefund(pix.endToEndId, 'resto', { valor: '25.01' }, client)).statusCode, 400);
      assert.equal((await putRefund(pix.endToEndId, 'resto', { valor: '25.00' }, client)).statusCode, 201);
      await settle();
    });

    it('404 for a PIX no account of ours received: unknown, or one of our transfers', async () => {
      assert.match(errorMessage(await open(`E12345678${'2'.repeat(12)}abcdefghijk`), 404), /endToEndId/);
      const { client, key } = await freshAccount('Conta Pagadora');
      await receive('10.00', key);
      // Sent to another institution's key: a WITHDRAW, not a PIX we received.
      const external = { key: `${randomUUID()}@example.com`, name: 'Externo', document: PAYER.document, ispb: '87654321' };
      await admin('/sandbox/dict/keys', external);
      const res = await t.app.inject({
        method: 'POST',
        url: '/dict/pix',
        headers: { ...client.headers, 'x-idempotency-key': randomUUID() },
        payload: { pixKey: external.key, payment: { currency: 'BRL', amount: 3 } },
      });
      assert.equal(res.statusCode, 201, res.body);
      await settle();
      errorMessage(await open(res.json<{ endToEndId: string }>().endToEndId), 404);
    });

    it('409 while a MED is open against the PIX; another may be opened once it is closed', async () => {
      const pix = await receive('10.00');
      const medId = await opened(pix.endToEndId);
      const before = await balance();
      assert.match(errorMessage(await open(pix.endToEndId, 'OPERATIONAL_FLAW'), 409), /already open/);
      assert.deepEqual(await balance(), before);
      assert.equal((await medEvents(pix.transactionId)).length, 1);
      await closed(medId, 'reject');
      const second = await opened(pix.endToEndId, 'OPERATIONAL_FLAW');
      assert.notEqual(second, medId);
      await closed(second, 'reject');
    });

    it('422 when nothing is left to refund, or the account has no available balance', async () => {
      const pix = await receive('8.00');
      assert.equal((await putRefund(pix.endToEndId, 'tudo', { valor: '8.00' })).statusCode, 201);
      assert.match(errorMessage(await open(pix.endToEndId), 422), /refunded/);
      await settle();
      errorMessage(await open(pix.endToEndId), 422);

      const { client, key } = await freshAccount('Conta Vazia');
      const spent = await receive('6.00', key);
      await spend(client, 6);
      assert.match(errorMessage(await open(spent.endToEndId), 422), /available balance/);
      assert.deepEqual(await balance(client), { available: 0, blocked: 0 });
      assert.deepEqual(await medEvents(spent.transactionId), []);
    });

    it('400 for a bad reason, a bad endToEndId, long details or unknown fields; 401 without the admin token', async () => {
      const pix = await receive('1.00');
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ endToEndId: pix.endToEndId, reason: 'THEFT' }, /reason/],
        [{ endToEndId: pix.endToEndId, reason: 'fraud' }, /reason/],
        [{ endToEndId: pix.endToEndId }, /reason is required/],
        [{ endToEndId: pix.endToEndId.slice(1), reason: 'FRAUD' }, /endToEndId/],
        [{ endToEndId: `${pix.endToEndId}A`, reason: 'FRAUD' }, /endToEndId/],
        [{ endToEndId: `${pix.endToEndId.slice(1)}-`, reason: 'FRAUD' }, /endToEndId/],
        [{ reason: 'FRAUD' }, /endToEndId is required/],
        [{ endToEndId: pix.endToEndId, reason: 'FRAUD', details: 'x'.repeat(2001) }, /details/],
        [{ endToEndId: pix.endToEndId, reason: 'FRAUD', amount: '1.00' }, /amount is not an allowed property/],
      ];
      for (const [body, message] of cases) {
        assert.match(errorMessage(await post('/sandbox/med', body), 400), message, JSON.stringify(body));
      }
      assert.deepEqual(await medEvents(pix.transactionId), []);
      errorMessage(await post('/sandbox/med', { endToEndId: pix.endToEndId, reason: 'FRAUD' }, {}), 401);
      errorMessage(await post('/sandbox/med', { endToEndId: pix.endToEndId, reason: 'FRAUD' }, holder.headers), 401);
      errorMessage(await post('/sandbox/med/1/accept', undefined, holder.headers), 401);
    });

    it('while a MED is open, refunds may take only what it does not hold', async () => {
      const pix = await receive('30.00');
      assert.equal((await putRefund(pix.endToEndId, 'm1', { valor: '10.00' })).statusCode, 201);
      const medId = await opened(pix.endToEndId);
      assert.equal((await medRow(medId)).amount_centavos, 2000n);
      assert.match(errorMessage(await putRefund(pix.endToEndId, 'm2', { valor: '0.01' }), 400), /refundable/);
      await settle();
      await closed(medId, 'reject');
      assert.equal((await putRefund(pix.endToEndId, 'm2', { valor: '20.01' })).statusCode, 400);
      assert.equal((await putRefund(pix.endToEndId, 'm2', { valor: '20.00' })).statusCode, 201);
      await settle();
    });
    ledgerHolds();
  });

  describe('POST /sandbox/med/{medId}/accept', () => {
    for (const [reason, natureza] of [
      ['FRAUD', 'MED_FRAUDE'],
      ['OPERATIONAL_FLAW', 'MED_OPERACIONAL'],
    ] as const) {
      it(`${reason}: 200 with the MED, a refund MED-{id} (${natureza}), med_accepted, then DEVOLVIDO and a REFUND on settlement`, async () => {
        const pix = await receive('70.00');
        const before = await balance();
        const medId = await opened(pix.endToEndId, reason, { details: 'contestacao' });
        const createdAt = t.clock.now().toISOString();
        t.clock.advance(1000);
        const view = await closed(medId, 'accept');
        const refundId = `MED-${medId}`;
        assert.deepEqual(Object.keys(view).sort(), ['amount', 'closedAt', 'createdAt', 'currency', 'details', 'endToEndId', 'id', 'reason', 'refund', 'status', 'transactionId']);
        assert.match(view.refund?.rtrId ?? '', new RegExp(`^D${t.config.pspIspb}\\d{12}[a-zA-Z0-9]{11}$`));
        const expected: MedView = {
          id: medId,
          endToEndId: pix.endToEndId,
          transactionId: pix.transactionId,
          amount: '70.00',
          currency: 'BRL',
          reason,
          details: 'contestacao',
          status: 'ACCEPTED',
          createdAt,
          closedAt: t.clock.now().toISOString(),
          refund: { id: refundId, rtrId: view.refund!.rtrId, natureza, status: 'EM_PROCESSAMENTO' },
        };
        assert.deepEqual(view, expected);
        // The money stays blocked until the refund settles.
        assert.deepEqual(await balance(), { available: before.available - 70, blocked: before.blocked + 70 });

        const refund = await getRefund(pix.endToEndId, refundId);
        assert.equal(refund.statusCode, 200, refund.body);
        assert.deepEqual(refund.json(), {
          id: refundId,
          rtrId: view.refund!.rtrId,
          valor: '70.00',
          natureza,
          descricao: `MED ${medId}`,
          horario: { solicitacao: t.clock.now().toISOString() },
          status: 'EM_PROCESSAMENTO',
        });
        errorMessage(await getRefund(pix.endToEndId, refundId, await createClient(t)), 404);

        const events = await medEvents(pix.transactionId);
        assert.deepEqual(events.map((e) => e.event_type), ['med_created', 'med_accepted']);
        assert.deepEqual(events[1]!.payload, { type: 'MED', data: expected });

        assert.deepEqual(await settle(), { settled: 1, failed: 0 });
        assert.deepEqual(await balance(), { available: before.available - 70, blocked: before.blocked });
        const settled = (await getRefund(pix.endToEndId, refundId)).json<{ status: string; horario: { liquidacao?: string } }>();
        assert.equal(settled.status, 'DEVOLVIDO');
        assert.equal(settled.horario.liquidacao, t.clock.now().toISOString());

        const row = await t.db.selectFrom('refunds').selectAll().where('original_transaction_id', '=', BigInt(pix.transactionId)).where('refund_id', '=', refundId).executeTakeFirstOrThrow();
        assert.equal(Number((await medRow(medId)).refund_id), Number(row.id));
        assert.deepEqual(await onlyEvent(t.db, row.transaction_id, 'refund_in'), {
          type: 'REFUND',
          data: {
            id: Number(row.transaction_id),
            txId: pix.endToEndId,
            status: 'REFUNDED',
            payment: { amount: '70.00', currency: 'BRL' },
            refunds: [{ status: 'LIQUIDATED', payment: { amount: 70, currency: 'BRL' }, endToEndId: view.refund!.rtrId, eventDate: t.clock.now().toISOString(), information: `MED ${medId}` }],
            endToEndId: pix.endToEndId,
            creditDebitType: 'DEBIT',
          },
        });
        const tx = await t.app.inject({ method: 'GET', url: `/api/pix/transaction/${row.transaction_id}`, headers: holder.headers });
        assert.deepEqual([tx.json().type, tx.json().status, tx.json().externalId], ['REFUND_IN', 'CONFIRMED', refundId]);
        // Refunded in full by the MED: nothing more can be refunded.
        errorMessage(await putRefund(pix.endToEndId, 'depois', { valor: '0.01' }), 400);
        t.clock.advance(-1000);
      });
    }

    it('against a PIX from another account of ours: the refund settles internally to the payer (Refund out, refund_out)', async () => {
      const { client: payer, key: payerKey } = await freshAccount('Pagadora Enganada');
      await receive('100.00', payerKey);
      const res = await t.app.inject({
        method: 'POST',
        url: '/dict/pix',
        headers: { ...payer.headers, 'x-idempotency-key': randomUUID() },
        payload: { pixKey: holderKey, payment: { currency: 'BRL', amount: 40 } },
      });
      assert.equal(res.statusCode, 201, res.body);
      const transfer = res.json<{ id: number; endToEndId: string }>();
      await settle();
      const before = await balance();
      const medId = await opened(transfer.endToEndId);
      const view = await closed(medId, 'accept');
      assert.equal(view.amount, '40.00');
      assert.deepEqual(await settle(), { settled: 1, failed: 0 });
      assert.deepEqual(await balance(), { available: before.available - 40, blocked: before.blocked });
      assert.deepEqual(await balance(payer), { available: 100, blocked: 0 });
      const list = await t.app.inject({ method: 'GET', url: '/api/transactions?type=REFUND_OUT', headers: payer.headers });
      const [item] = list.json<{ data: { transactionId: string; operationType: string; movementType: string; endToEndId: string }[] }>().data;
      assert.deepEqual([item?.operationType, item?.movementType, item?.endToEndId], ['Refund out', 'CREDIT', view.refund!.rtrId]);
      const [event] = await t.db.selectFrom('outbox').selectAll().where('transaction_id', '=', BigInt(item!.transactionId)).execute();
      assert.equal(event?.event_type, 'refund_out');
      assert.deepEqual([event.payload.data.creditDebitType, event.payload.data.endToEndId, (event.payload.data.refunds as { payment: unknown }[])[0]!.payment], ['CREDIT', transfer.endToEndId, { amount: 40, currency: 'BRL' }]);
    });

    it('a MED refund id cannot be chosen by a client', async () => {
      const pix = await receive('2.00');
      errorMessage(await putRefund(pix.endToEndId, 'MED-1', { valor: '1.00' }), 400);
    });
    ledgerHolds();
  });

  describe('POST /sandbox/med/{medId}/reject', () => {
    it('200 with the MED REJECTED: the block returns to available and med_rejected is sent', async () => {
      const pix = await receive('45.00');
      const before = await balance();
      const medId = await opened(pix.endToEndId, 'OPERATIONAL_FLAW');
      assert.deepEqual(await balance(), { available: before.available - 45, blocked: before.blocked + 45 });
      const view = await closed(medId, 'reject');
      assert.deepEqual(view, {
        id: medId,
        endToEndId: pix.endToEndId,
        transactionId: pix.transactionId,
        amount: '45.00',
        currency: 'BRL',
        reason: 'OPERATIONAL_FLAW',
        details: null,
        status: 'REJECTED',
        createdAt: t.clock.now().toISOString(),
        closedAt: t.clock.now().toISOString(),
        refund: null,
      });
      assert.deepEqual(await balance(), before);
      const events = await medEvents(pix.transactionId);
      assert.deepEqual(events.map((e) => e.event_type), ['med_created', 'med_rejected']);
      assert.deepEqual(events[1]!.payload, { type: 'MED', data: view });
      assert.equal(await t.db.selectFrom('refunds').select('id').where('original_transaction_id', '=', BigInt(pix.transactionId)).executeTakeFirst(), undefined);
      // The whole PIX is refundable again.
      assert.equal((await putRefund(pix.endToEndId, 'livre', { valor: '45.00' })).statusCode, 201);
      await settle();
    });
    ledgerHolds();
  });

  describe('concurrency (PostgreSQL)', { skip: onPostgres ? false : 'row locks under real concurrency need PostgreSQL (PGlite runs one transaction at a time)' }, () => {
    it('rejecting MEDs while the same account opens MEDs, refunds other PIX and sends transfers: every call succeeds, no deadlock', async () => {
      const { client, key } = await freshAccount('Conta Concorrida');
      for (let round = 0; round < 5; round++) {
        const disputed = await Promise.all(Array.from({ length: 6 }, () => receive('10.00', key)));
        const others = await Promise.all(Array.from({ length: 6 }, () => receive('10.00', key)));
        const toOpen = await Promise.all(Array.from({ length: 6 }, () => receive('10.00', key)));
        const medIds = [];
        for (const pix of disputed) medIds.push(await opened(pix.endToEndId));
        const answers = await Promise.all([
          ...medIds.map((medId) => close(medId, 'reject')),
          ...others.map((pix, i) => putRefund(pix.endToEndId, `r${round}x${i}`, { valor: '10.00' }, client)),
          ...toOpen.map((pix) => open(pix.endToEndId)),
          ...Array.from({ length: 3 }, () =>
            t.app.inject({
              method: 'POST',
              url: '/dict/pix',
              headers: { ...client.headers, 'x-idempotency-key': randomUUID() },
              payload: { pixKey: holderKey, payment: { currency: 'BRL', amount: 1 } },
            }),
          ),
        ]);
        assert.deepEqual(
          answers.map((r) => r.statusCode),
          [...Array(6).fill(200), ...Array(6).fill(201), ...Array(6).fill(201), 201, 201, 201],
          answers.map((r) => r.body).join('\n'),
        );
        await Promise.all(answers.slice(12, 18).map((r) => close(r.json<{ medId: number }>().medId, 'accept')));
        await settle();
      }
      assert.deepEqual(await balance(client), { available: 285, blocked: 0 });
    });

    it('concurrent accept and reject of one MED: exactly one wins', async () => {
      const pix = await receive('15.00');
      const before = await balance();
      const medId = await opened(pix.endToEndId);
      const answers = await Promise.all([close(medId, 'accept'), close(medId, 'reject'), close(medId, 'accept'), close(medId, 'reject')]);
      assert.deepEqual(answers.map((r) => r.statusCode).sort(), [200, 409, 409, 409], answers.map((r) => r.body).join('\n'));
      const status = (await medRow(medId)).status;
      await settle();
      assert.deepEqual(await balance(), status === 'ACCEPTED' ? { available: before.available - 15, blocked: before.blocked } : before);
      assert.equal((await medEvents(pix.transactionId)).length, 2);
    });

    it('concurrent MEDs against one PIX: one 201, the rest 409', async () => {
      const pix = await receive('16.00');
      const answers = await Promise.all(Array.from({ length: 8 }, () => open(pix.endToEndId)));
      assert.deepEqual(answers.map((r) => r.statusCode).sort(), [201, ...Array(7).fill(409)], answers.map((r) => r.body).join('\n'));
      const medId = answers.find((r) => r.statusCode === 201)!.json<{ medId: number }>().medId;
      await closed(medId, 'reject');
    });
    ledgerHolds();
  });

  describe('closing', () => {
    it('409 when the MED is already closed, either way; nothing moves', async () => {
      const pix = await receive('12.00');
      const accepted = await opened(pix.endToEndId);
      await closed(accepted, 'accept');
      const rejectedPix = await receive('12.00');
      const rejected = await opened(rejectedPix.endToEndId);
      await closed(rejected, 'reject');
      const before = await balance();
      for (const [medId, decision] of [
        [accepted, 'accept'],
        [accepted, 'reject'],
        [rejected, 'accept'],
        [rejected, 'reject'],
      ] as const) {
        assert.match(errorMessage(await close(medId, decision), 409), /already (ACCEPTED|REJECTED)/, `${medId} ${decision}`);
      }
      assert.deepEqual(await balance(), before);
      assert.equal((await t.db.selectFrom('refunds').select('id').where('original_transaction_id', '=', BigInt(pix.transactionId)).execute()).length, 1);
      assert.equal((await medEvents(pix.transactionId)).length, 2);
      assert.equal((await medEvents(rejectedPix.transactionId)).length, 2);
      await settle();
    });

    it('404 for an unknown MED, 400 for an id that is not a positive number', async () => {
      for (const decision of ['accept', 'reject'] as const) {
        assert.match(errorMessage(await close(999_999_999, decision), 404), /MED not found/);
        for (const id of ['abc', '0', '-1', '1.5', '1e3']) {
          assert.match(errorMessage(await close(id, decision), 400), /medId/, id);
        }
      }
    });
    ledgerHolds();
  });
});
