import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createClient, creditAccount, evpKey, externalKey as registerExternalKey, randomCnpj, randomCpf, type TestClient } from '../../../test/factories.ts';
import { onPostgres, startTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../../../test/harness.ts';
import { assertLedgerInvariants } from '../../../test/ledger.ts';
import { masked, onlyEvent, outboxOf, receivePayload } from '../../../test/events.ts';
import { openDatabase, type Db } from '../../db/client.ts';
import { holderBalances } from '../ledger/service.ts';
import { Worker } from '../../worker/worker.ts';
import { SETTLEMENT_OUTCOMES, settleBatch } from './repo.ts';
import { REASON_EXPIRED, REASON_REJECTED, settleDue, type SettlementDeps } from './service.ts';

/** A key held at another institution, registered through the sandbox directory. */
const externalKey = (t: TestApp, options: { behavior?: 'reject' | 'timeout'; document?: string } = {}) => registerExternalKey(t, { name: 'Fulano Externo', ...options });

interface Sent {
  id: number;
  endToEndId: string;
  idempotencyKey: string;
}

async function send(t: TestApp, client: TestClient, body: Record<string, unknown>): Promise<Sent> {
  const idempotencyKey = randomUUID();
  const res = await t.app.inject({
    method: 'POST',
    url: '/dict/pix',
    headers: { ...client.headers, 'x-idempotency-key': idempotencyKey },
    payload: { payment: { currency: 'BRL', amount: 10.5 }, ...body },
  });
  assert.equal(res.statusCode, 201, res.body);
  const answer = res.json<{ id: number; endToEndId: string; type: string }>();
  assert.equal(answer.type, 'PENDING');
  return { id: answer.id, endToEndId: answer.endToEndId, idempotencyKey };
}

const transaction = (db: Db, id: number | bigint) => db.selectFrom('transactions').selectAll().where('id', '=', BigInt(id)).executeTakeFirstOrThrow();

async function balances(db: Db, accountId: number) {
  const found = await holderBalances(db, BigInt(accountId));
  assert.ok(found);
  return found;
}

/** Ledger transactions that finish a transfer (settle or void), per end-to-end id. */
async function finishingPostings(db: Db, references: string[]): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('ledger_transactions')
    .select(['reference', (eb) => eb.fn.countAll<bigint>().as('n')])
    .where('kind', 'in', ['transfer_settle', 'transfer_settle_internal', 'transfer_void'])
    .where('reference', 'in', references)
    .groupBy('reference')
    .execute();
  return new Map(rows.map((r) => [r.reference!, Number(r.n)]));
}

describe('settlement', () => {
  let t: TestApp;
  let payer: TestClient;
  let deps: SettlementDeps;
  const due = (options: { force?: boolean; limit?: number } = {}) => settleDue(deps, options);

  before(async () => {
    t = await startTestApp({ env: { SETTLEMENT_DELAY_MS: '1000' } });
    deps = { db: t.db, clock: t.clock, ispb: t.config.pspIspb, settlementDelayMs: t.config.settlementDelayMs };
    assert.equal(deps.settlementDelayMs, 1000);
    payer = await createClient(t, { name: 'Pagadora Teste' });
    await creditAccount(t.db, payer.accountId, 1_000_000n);
  });
  after(() => t?.close());

  it('knows every outcome of the database, in its order', async () => {
    const { rows } = await sql<{ label: string }>`select unnest(enum_range(null::settlement_outcome))::text as label`.execute(t.db);
    assert.deepEqual(
      rows.map((r) => r.label),
      [...SETTLEMENT_OUTCOMES],
    );
  });

  it('HIGH settles at the first settleDue, without waiting for the delay', async () => {
    const target = await externalKey(t);
    const sent = await send(t, payer, { pixKey: target.key, priority: 'HIGH', creditorDocument: target.document });
    assert.deepEqual(await balances(t.db, payer.accountId), { available: 998_950n, blocked: 1050n });
    assert.deepEqual(await due(), { settled: 1, failed: 0 });
    const row = await transaction(t.db, sent.id);
    assert.equal(row.status, 'CONFIRMED');
    assert.equal(row.processed_at?.getTime(), t.clock.now().getTime());
    assert.equal(row.error_reason, null);
    assert.deepEqual(await balances(t.db, payer.accountId), { available: 998_950n, blocked: 0n });
  });

  it('NORM waits for the settlement delay, then settles', async () => {
    const target = await externalKey(t);
    const sent = await send(t, payer, { pixKey: target.key });
    assert.deepEqual(await due(), { settled: 0, failed: 0 });
    t.clock.advance(999);
    assert.deepEqual(await due(), { settled: 0, failed: 0 });
    assert.equal((await transaction(t.db, sent.id)).status, 'PENDING');
    t.clock.advance(1);
    assert.deepEqual(await due(), { settled: 1, failed: 0 });
    assert.equal((await transaction(t.db, sent.id)).status, 'CONFIRMED');
  });

  it('NORM transfers settle in order of arrival, each when its own delay has passed', async () => {
    const target = await externalKey(t);
    const sent: Sent[] = [];
    for (let i = 0; i < 3; i++) {
      sent.push(await send(t, payer, { pixKey: target.key }));
      t.clock.advance(400);
    }
    // Now 1200 ms after the first, 800 after the second, 400 after the third.
    const settledAt: Date[] = [];
    for (const [i, expected] of [
      [0, [1, 0, 0]],
      [1, [1, 1, 0]],
      [2, [1, 1, 1]],
    ] as const) {
      assert.deepEqual(await due(), { settled: 1, failed: 0 }, `round ${i}`);
      const statuses = await Promise.all(sent.map(async (s) => (await transaction(t.db, s.id)).status));
      assert.deepEqual(statuses, expected.map((done) => (done ? 'CONFIRMED' : 'PENDING')));
      settledAt.push((await transaction(t.db, sent[i]!.id)).processed_at!);
      t.clock.advance(400);
    }
    assert.ok(settledAt[0]! < settledAt[1]! && settledAt[1]! < settledAt[2]!);

    // Several due at once settle in one call, still in order of arrival: their notifications
    // (and ledger entries) are written in the order of the transfers' ids.
    const batch: Sent[] = [];
    for (let i = 0; i < 5; i++) batch.push(await send(t, payer, { pixKey: target.key }));
    t.clock.advance(1000);
    assert.deepEqual(await due({ limit: 2 }), { settled: 5, failed: 0 });
    const outbox = await t.db
      .selectFrom('outbox')
      .select(['id', 'transaction_id'])
      .where('transaction_id', 'in', batch.map((s) => BigInt(s.id)))
      .orderBy('id')
      .execute();
    assert.deepEqual(
      outbox.map((o) => Number(o.transaction_id)),
      batch.map((s) => s.id),
    );
  });

  it('a key that rejects: ERROR with a reason, the money back in available, a cash_out ERROR notification', async () => {
    const target = await externalKey(t, { behavior: 'reject' });
    const before = await balances(t.db, payer.accountId);
    const sent = await send(t, payer, { pixKey: target.key, priority: 'HIGH', creditorDocument: target.document });
    assert.deepEqual(await balances(t.db, payer.accountId), { available: before.available - 1050n, blocked: 1050n });
    assert.deepEqual(await due(), { settled: 0, failed: 1 });
    const row = await transaction(t.db, sent.id);
    assert.equal(row.status, 'ERROR');
    assert.equal(row.error_reason, REASON_REJECTED);
    assert.deepEqual(await balances(t.db, payer.accountId), before);
    assert.equal(before.blocked, 0n);
    const payload = await onlyEvent(t.db, sent.id, 'cash_out', payer.accountId);
    assert.equal(payload.type, 'TRANSFER');
    assert.equal(payload.data.status, 'ERROR');
    assert.equal(payload.data.errorReason, REASON_REJECTED);
    assert.equal(payload.data.id, sent.id);
    // The account holder reads why in the status view too.
    const view = await t.app.inject({ method: 'GET', url: `/api/pix/transaction/${sent.id}`, headers: payer.headers });
    assert.deepEqual([view.statusCode, view.json().status, view.json().errorReason], [200, 'ERROR', REASON_REJECTED]);
    assert.equal(payload.data.endToEndId, sent.endToEndId);
    assert.deepEqual(payload.data.payment, { amount: '10.50', currency: 'BRL' });
    // The void is one ledger entry under the transfer's end-to-end id; nothing went to the network.
    assert.deepEqual(Object.fromEntries(await finishingPostings(t.db, [sent.endToEndId])), { [sent.endToEndId]: 1 });
    const kinds = await t.db.selectFrom('ledger_transactions').select('kind').where('reference', '=', sent.endToEndId).orderBy('id').execute();
    assert.deepEqual(kinds.map((k) => k.kind), ['transfer_hold', 'transfer_void']);
  });

  it('a key that never answers: PENDING through every settleDue (even forced) until the expiration passes, then ERROR', async () => {
    const target = await externalKey(t, { behavior: 'timeout' });
    const before = await balances(t.db, payer.accountId);
    const high = await send(t, payer, { pixKey: target.key, priority: 'HIGH', creditorDocument: target.document, expiration: 30 });
    const norm = await send(t, payer, { pixKey: target.key, expiration: 31 });
    for (const step of [0, 1000, 28_000, 999]) {
      t.clock.advance(step);
      assert.deepEqual(await due(), { settled: 0, failed: 0 });
      assert.deepEqual(await due({ force: true }), { settled: 0, failed: 0 });
    }
    assert.equal((await transaction(t.db, high.id)).status, 'PENDING');
    assert.deepEqual(await balances(t.db, payer.accountId), { available: before.available - 2100n, blocked: 2100n });

    t.clock.advance(1); // exactly 30 s after: the HIGH one has expired, the NORM one not yet
    assert.deepEqual(await due(), { settled: 0, failed: 1 });
    const expired = await transaction(t.db, high.id);
    assert.equal(expired.status, 'ERROR');
    assert.equal(expired.error_reason, REASON_EXPIRED);
    assert.equal((await transaction(t.db, norm.id)).status, 'PENDING');
    t.clock.advance(1000);
    assert.deepEqual(await due(), { settled: 0, failed: 1 });
    assert.equal((await transaction(t.db, norm.id)).status, 'ERROR');
    assert.deepEqual(await balances(t.db, payer.accountId), before);
    for (const sent of [high, norm]) {
      const [event] = await outboxOf(t.db, sent.id);
      const payload = event!.payload;
      assert.deepEqual([event!.event_type, payload.type, payload.data.status, payload.data.errorReason], ['cash_out', 'TRANSFER', 'ERROR', REASON_EXPIRED]);
    }
  });

  it('a transfer to another account of this service settles internally', async () => {
    const receiver = await createClient(t, { name: 'Recebedora Interna' });
    const key = await evpKey(t, receiver.accountId);
    const senderBefore = await balances(t.db, payer.accountId);
    const sent = await send(t, payer, { pixKey: key, priority: 'HIGH', creditorDocument: receiver.document, description: 'aluguel' });
    assert.deepEqual(await due(), { settled: 1, failed: 0 });

    assert.deepEqual(await balances(t.db, payer.accountId), { available: senderBefore.available - 1050n, blocked: senderBefore.blocked });
    assert.deepEqual(await balances(t.db, receiver.accountId), { available: 1050n, blocked: 0n });
    const withdraw = await transaction(t.db, sent.id);
    assert.equal(withdraw.status, 'CONFIRMED');
    assert.equal(Number(withdraw.counterpart_account_id), receiver.accountId);

    const received = await t.db
      .selectFrom('transactions')
      .selectAll()
      .where('account_id', '=', BigInt(receiver.accountId))
      .where('end_to_end_id', '=', sent.endToEndId)
      .execute();
    assert.equal(received.length, 1);
    const payment = received[0]!;
    assert.equal(payment.type, 'PAYMENT');
    assert.equal(payment.status, 'CONFIRMED');
    assert.equal(payment.amount_centavos, 1050n);
    assert.equal(payment.pix_key, key);
    assert.equal(payment.description, 'aluguel');
    assert.equal(Number(payment.counterpart_account_id), payer.accountId);
    assert.equal(payment.counterpart_name, 'Pagadora Teste');
    assert.equal(payment.counterpart_document, payer.document);
    assert.equal(payment.counterpart_ispb, t.config.pspIspb);

    const [cashOut] = await outboxOf(t.db, sent.id);
    assert.equal(cashOut?.event_type, 'cash_out');
    assert.equal(Number(cashOut.account_id), payer.accountId);
    assert.equal(cashOut.payload.data.status, 'LIQUIDATED');
    assert.deepEqual(
      await onlyEvent(t.db, payment.id, 'cash_in', receiver.accountId),
      receivePayload({ id: Number(payment.id), amount: '10.50', endToEndId: sent.endToEndId, debtor: { name: 'Pagadora Teste', document: masked(payer.document) } }),
    );
    // The money went straight from the sender's hold to the receiver, not through the network.
    const kinds = await t.db.selectFrom('ledger_transactions').select('kind').where('reference', '=', sent.endToEndId).orderBy('id').execute();
    assert.deepEqual(kinds.map((k) => k.kind), ['transfer_hold', 'transfer_settle_internal']);
  });

  it('one round settles many payers to one receiver and to other institutions together: each credit counted once', async () => {
    const receiver = await createClient(t, { name: 'Recebedora Quente' });
    const key = await evpKey(t, receiver.accountId);
    const target = await externalKey(t);
    const payers = [payer, await createClient(t, { name: 'Segunda Pagadora' }), await createClient(t, { name: 'Terceira Pagadora' })];
    for (const p of payers.slice(1)) await creditAccount(t.db, p.accountId, 100_000n);
    const before = await Promise.all(payers.map((p) => balances(t.db, p.accountId)));
    const internal: Sent[] = [];
    const external: Sent[] = [];
    for (let i = 0; i < 3; i++) {
      for (const p of payers) {
        internal.push(await send(t, p, { pixKey: key, description: `interna ${i}` }));
        external.push(await send(t, p, { pixKey: target.key }));
      }
    }
    t.clock.advance(1000);
    assert.deepEqual(await due(), { settled: 18, failed: 0 });

    assert.deepEqual(await balances(t.db, receiver.accountId), { available: 9n * 1050n, blocked: 0n });
    for (const [i, p] of payers.entries()) {
      assert.deepEqual(await balances(t.db, p.accountId), { available: before[i]!.available - 6n * 1050n, blocked: before[i]!.blocked });
    }
    const received = await t.db
      .selectFrom('transactions')
      .select(['end_to_end_id', 'type', 'status', 'amount_centavos', 'counterpart_account_id', 'counterpart_name', 'description'])
      .where('account_id', '=', BigInt(receiver.accountId))
      .orderBy('id')
      .execute();
    // One PAYMENT per transfer, in the order they arrived, each naming its own payer.
    assert.deepEqual(
      received.map((r) => [r.end_to_end_id, r.type, r.status, r.amount_centavos, Number(r.counterpart_account_id), r.description]),
      internal.map((s, n) => [s.endToEndId, 'PAYMENT', 'CONFIRMED', 1050n, payers[n % 3]!.accountId, `interna ${Math.floor(n / 3)}`]),
    );
    assert.deepEqual(received.map((r) => r.counterpart_name), internal.map((_, n) => (n % 3 === 0 ? 'Pagadora Teste' : n % 3 === 1 ? 'Segunda Pagadora' : 'Terceira Pagadora')));
    const settledKinds = await t.db
      .selectFrom('postings')
      .select(['reference', 'kind', 'amount_centavos'])
      .where('reference', 'in', [...internal, ...external].map((s) => s.endToEndId))
      .where('kind', '<>', 'transfer_hold')
      .execute();
    const kindOf = new Map(settledKinds.map((p) => [p.reference, p.kind]));
    assert.equal(settledKinds.length, 18);
    for (const s of internal) assert.equal(kindOf.get(s.endToEndId), 'transfer_settle_internal');
    for (const s of external) assert.equal(kindOf.get(s.endToEndId), 'transfer_settle');
    for (const s of [...internal, ...external]) assert.equal((await transaction(t.db, s.id)).status, 'CONFIRMED');
    await assertLedgerInvariants(t.db);
  });

  it('an external transfer: the TRANSFER payload has exactly the fields of the spec', async () => {
    for (const document of [randomCpf(), randomCnpj()]) {
      const target = await externalKey(t, { document });
      const before = await balances(t.db, payer.accountId);
      const sent = await send(t, payer, { pixKey: target.key, description: 'pagamento 42' });
      t.clock.advance(1000);
      assert.deepEqual(await due(), { settled: 1, failed: 0 });
      assert.deepEqual(await balances(t.db, payer.accountId), { available: before.available - 1050n, blocked: before.blocked });
      const payload = await onlyEvent(t.db, sent.id, 'cash_out');
      assert.deepEqual(payload, {
        type: 'TRANSFER',
        data: {
          id: sent.id,
          txId: null,
          pixKey: target.key,
          status: 'LIQUIDATED',
          payment: { amount: '10.50', currency: 'BRL' },
          endToEndId: sent.endToEndId,
          creditDebitType: 'DEBIT',
          idempotencyKey: sent.idempotencyKey,
          creditorAccount: { name: target.name, document: masked(document), ispb: target.ispb },
          remittanceInformation: 'pagamento 42',
        },
      });
      const shown = (payload.data.creditorAccount as { document: string }).document;
      assert.match(shown, document.length === 11 ? /^\*\*\*\.\d{3}\.\d{3}-\*\*$/ : /^\d{2}\.\d{3}\.\d{3}\/\*\*\*\*-\*\*$/);
      const kinds = await t.db.selectFrom('ledger_transactions').select('kind').where('reference', '=', sent.endToEndId).orderBy('id').execute();
      assert.deepEqual(kinds.map((k) => k.kind), ['transfer_hold', 'transfer_settle']);
    }
  });

  it('settling twice settles nothing the second time', async () => {
    const target = await externalKey(t);
    const sent = [await send(t, payer, { pixKey: target.key }), await send(t, payer, { pixKey: target.key })];
    assert.deepEqual(await due({ force: true }), { settled: 2, failed: 0 });
    const outboxCount = (await t.db.selectFrom('outbox').select('id').execute()).length;
    const ledgerCount = (await t.db.selectFrom('ledger_transactions').select('id').execute()).length;
    t.clock.advance(5000);
    assert.deepEqual(await due(), { settled: 0, failed: 0 });
    assert.deepEqual(await due({ force: true }), { settled: 0, failed: 0 });
    assert.equal((await t.db.selectFrom('outbox').select('id').execute()).length, outboxCount);
    assert.equal((await t.db.selectFrom('ledger_transactions').select('id').execute()).length, ledgerCount);
    for (const s of sent) assert.equal((await outboxOf(t.db, s.id)).length, 1);
  });

  it('the Worker runs a settlement round when started, and stop() waits for it', async () => {
    const target = await externalKey(t);
    const sent = await send(t, payer, { pixKey: target.key, priority: 'HIGH', creditorDocument: target.document });
    const logged: unknown[] = [];
    const log = { info: (o: unknown) => logged.push(o), warn: () => undefined, error: () => undefined };
    const worker = new Worker({ ...deps, log });
    worker.start();
    worker.wake();
    await worker.stop();
    assert.equal((await transaction(t.db, sent.id)).status, 'CONFIRMED');
    assert.deepEqual(logged, [{ settled: 1, failed: 0 }]);
  });

  it('HIGH transfers that wake the Worker in quick succession share rounds, at most one per 50 ms', async () => {
    const target = await externalKey(t);
    const rounds: { settled: number }[] = [];
    const settled = () => rounds.reduce((n, r) => n + r.settled, 0);
    const log = { info: (o: unknown) => rounds.push(o as { settled: number }), warn: () => undefined, error: () => undefined };
    const worker = new Worker({ ...deps, log });
    const started = performance.now();
    worker.start();
    for (let i = 0; i < 10; i++) {
      await send(t, payer, { pixKey: target.key, priority: 'HIGH', creditorDocument: target.document });
      worker.wake();
    }
    // Every round that settles something logs how many: wait for all ten.
    for (let tries = 0; tries < 100 && settled() < 10; tries++) await delay(20);
    await worker.stop();
    const elapsed = performance.now() - started;
    assert.equal(settled(), 10);
    assert.ok(rounds.length <= Math.floor(elapsed / 50) + 1, `${rounds.length} rounds in ${Math.round(elapsed)} ms`);
  });

  it('the ledger stays consistent after all of the above', async () => {
    await assertLedgerInvariants(t.db);
    const pending = await t.db.selectFrom('transactions').select('id').where('status', '=', 'PENDING').execute();
    assert.deepEqual(pending, []);
  });
});

describe('settlement claims (a settlement delay longer than an expiration)', () => {
  let t: TestApp;
  let payer: TestClient;
  let deps: SettlementDeps;

  before(async () => {
    t = await startTestApp({ env: { SETTLEMENT_DELAY_MS: '5000' } });
    deps = { db: t.db, clock: t.clock, ispb: t.config.pspIspb, settlementDelayMs: t.config.settlementDelayMs };
    payer = await createClient(t, { name: 'Pagadora Teste' });
    await creditAccount(t.db, payer.accountId, 1_000_000n);
  });
  after(() => t?.close());

  it('a NORM transfer whose expiration passes before its turn fails as soon as it has expired', async () => {
    const target = await externalKey(t);
    const sent = await send(t, payer, { pixKey: target.key, expiration: 1 });
    const other = await send(t, payer, { pixKey: target.key });
    t.clock.advance(999);
    assert.deepEqual(await settleDue(deps), { settled: 0, failed: 0 });
    t.clock.advance(1);
    assert.deepEqual(await settleDue(deps), { settled: 0, failed: 1 });
    const row = await transaction(t.db, sent.id);
    assert.deepEqual([row.status, row.error_reason], ['ERROR', REASON_EXPIRED]);
    assert.equal((await transaction(t.db, other.id)).status, 'PENDING');
    t.clock.advance(4000);
    assert.deepEqual(await settleDue(deps), { settled: 1, failed: 0 });
    await assertLedgerInvariants(t.db);
  });

  it('a HIGH transfer is claimed before a NORM backlog that is due, whatever the batch size', async () => {
    const target = await externalKey(t);
    const backlog = [];
    for (let i = 0; i < 4; i++) backlog.push(await send(t, payer, { pixKey: target.key }));
    t.clock.advance(5000);
    const high = await send(t, payer, { pixKey: target.key, priority: 'HIGH', creditorDocument: target.document });
    // A batch of one claims the HIGH one, though it arrived last (looked at, then rolled back).
    const now = t.clock.now();
    const claimed = await t.db
      .transaction()
      .execute(async (trx) => {
        const rows = await settleBatch(trx, {
          now,
          normDueBefore: new Date(now.getTime() - 5000),
          force: false,
          limit: 1,
          ispb: deps.ispb,
          bankName: 'x',
          reasonExpired: REASON_EXPIRED,
          reasonRejected: REASON_REJECTED,
          reasonRefundRejected: REASON_REJECTED,
        });
        throw Object.assign(new Error('rollback'), { rows });
      })
      .catch((error: { rows?: { transaction_id: bigint }[] }) => error.rows);
    assert.deepEqual(claimed?.map((r) => r.transaction_id), [BigInt(high.id)]);
    assert.deepEqual(await settleDue(deps, { limit: 2 }), { settled: 5, failed: 0 });
    for (const sent of [high, ...backlog]) assert.equal((await transaction(t.db, sent.id)).status, 'CONFIRMED');
  });
});

describe('settlement across processes (PostgreSQL)', { skip: onPostgres ? false : 'needs several connections to one server: set TEST_DATABASE_URL' }, () => {
  let t: TestApp;
  let senders: TestClient[];
  const children = new Set<ChildProcess>();

  before(async () => {
    t = await startTestApp();
    senders = await Promise.all(Array.from({ length: 8 }, () => createClient(t)));
    for (const s of senders) await creditAccount(t.db, s.accountId, 100_000_000n);
  });
  after(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await t?.close();
  });

  /** `count` NORM transfers to external keys, spread over the senders and several receivers. */
  async function queue(count: number): Promise<Sent[]> {
    const targets = await Promise.all(Array.from({ length: 4 }, () => externalKey(t)));
    const sent: Sent[] = [];
    for (let start = 0; start < count; start += 100) {
      const chunk = Array.from({ length: Math.min(100, count - start) }, (_, i) => start + i);
      sent.push(
        ...(await Promise.all(chunk.map((i) => send(t, senders[i % senders.length]!, { pixKey: targets[i % targets.length]!.key, payment: { currency: 'BRL', amount: 1.01 } })))),
      );
    }
    return sent;
  }

  async function assertSettledOnce(sent: Sent[]): Promise<void> {
    const ids = sent.map((s) => BigInt(s.id));
    const statuses = await t.db.selectFrom('transactions').select(['status']).where('id', 'in', ids).execute();
    assert.ok(statuses.every((r) => r.status === 'CONFIRMED'), 'every transfer settled');
    const postings = await finishingPostings(t.db, sent.map((s) => s.endToEndId));
    assert.equal(postings.size, sent.length);
    assert.ok([...postings.values()].every((n) => n === 1), 'one settle posting per transfer');
    const settleKinds = await t.db
      .selectFrom('ledger_transactions')
      .select(['kind', (eb) => eb.fn.countAll<bigint>().as('n')])
      .where('reference', 'in', sent.map((s) => s.endToEndId))
      .groupBy('kind')
      .orderBy('kind')
      .execute();
    assert.deepEqual(
      settleKinds.map((k) => [k.kind, Number(k.n)]),
      [
        ['transfer_hold', sent.length],
        ['transfer_settle', sent.length],
      ],
    );
    const outbox = await t.db
      .selectFrom('outbox')
      .select(['transaction_id', (eb) => eb.fn.countAll<bigint>().as('n')])
      .where('transaction_id', 'in', ids)
      .where('event_type', '=', 'cash_out')
      .groupBy('transaction_id')
      .execute();
    assert.equal(outbox.length, sent.length);
    assert.ok(outbox.every((o) => o.n === 1n), 'one cash_out notification per transfer');
    await assertLedgerInvariants(t.db);
    for (const s of senders) assert.equal((await balances(t.db, s.accountId)).blocked, 0n);
  }

  it('two settleDue calls on two pools settle 200 queued transfers exactly once', async () => {
    const sent = await queue(200);
    const pools = await Promise.all([openDatabase({ url: t.testDb.url }), openDatabase({ url: t.testDb.url })]);
    try {
      const results = await Promise.all(
        pools.map((p) => settleDue({ db: p.db, clock: t.clock, ispb: t.config.pspIspb, settlementDelayMs: 0 }, { limit: 10 })),
      );
      assert.equal(results[0]!.settled + results[1]!.settled, 200);
      assert.ok(results.every((r) => r.settled > 0), `both pools settled some: ${JSON.stringify(results)}`);
      assert.equal(results[0]!.failed + results[1]!.failed, 0);
    } finally {
      await Promise.all(pools.map((p) => p.close()));
    }
    await assertSettledOnce(sent);
  });

  it('a worker process killed mid-run: another one finishes, and every transfer is settled exactly once', async () => {
    const sent = await queue(2000);
    const ids = sent.map((s) => BigInt(s.id));
    const settled = async () => {
      const row = await t.db
        .selectFrom('transactions')
        .select((eb) => eb.fn.countAll<bigint>().as('n'))
        .where('id', 'in', ids)
        .where('status', '<>', 'PENDING')
        .executeTakeFirstOrThrow();
      return Number(row.n);
    };
    const main = fileURLToPath(new URL('../../main.ts', import.meta.url));
    const startWorker = (env: Record<string, string> = {}) => {
      const child = spawn(process.execPath, [main, 'worker'], {
        env: { ...process.env, DATABASE_URL: t.testDb.url, PIX_MODE: 'sandbox', ADMIN_TOKEN: TEST_ADMIN_TOKEN, SETTLEMENT_DELAY_MS: '0', LOG_LEVEL: 'warn', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      const collect = (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-4000));
      child.stdout!.on('data', collect);
      child.stderr!.on('data', collect);
      children.add(child);
      const exited = new Promise<number | string | null>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)));
      return { child, exited, output: () => output };
    };
    /** Polls the database while a worker process runs, for at most `limitMs`. */
    const until = async (predicate: (n: number) => boolean, limitMs: number, what: string, worker: { output(): string }) => {
      const deadline = Date.now() + limitMs;
      for (;;) {
        const n = await settled();
        if (predicate(n)) return n;
        assert.ok(Date.now() < deadline, `${what}: ${n} settled after ${limitMs} ms; worker output: ${worker.output()}`);
        await delay(5);
      }
    };

    const first = startWorker();
    const seen = await until((n) => n > 0, 30_000, 'first worker never settled anything', first);
    first.child.kill('SIGKILL');
    assert.equal(await first.exited, 'SIGKILL');
    const atKill = await settled();
    assert.ok(seen < 2000 && atKill < 2000, `the first worker should be killed mid-run (settled ${atKill})`);

    // The second one binds ADMIN_PORT: its own /metrics counts what it settled, and nothing else.
    const second = startWorker({ ADMIN_PORT: '0', LOG_LEVEL: 'info' });
    await until((n) => n === 2000, 30_000, 'second worker did not finish', second);
    const address = /metrics and probes on (http:\/\/[^"\s]+)/.exec(second.output())?.[1];
    assert.ok(address, `the worker names its listener: ${second.output()}`);
    assert.equal((await fetch(`${address}/metrics`)).status, 401);
    assert.equal((await fetch(`${address}/health`)).status, 200);
    const scrape = await fetch(`${address}/metrics`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
    assert.equal(scrape.status, 200);
    const text = await scrape.text();
    const sample = (name: string) => Number(new RegExp(`^${name.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]);
    assert.equal(sample('pix_transfers_total{stage="settled"}') + (sample('pix_transfers_total{stage="failed"}') || 0), 2000 - atKill, text);
    assert.equal(sample('pix_settlement_queue_depth'), 0);
    assert.ok(sample('pix_database_connections_in_use{pool="worker"}') >= 0, text);
    second.child.kill('SIGTERM');
    assert.equal(await second.exited, 0, second.output());
    await assertSettledOnce(sent);
  });
});
