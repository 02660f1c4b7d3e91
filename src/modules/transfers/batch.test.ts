// pix_transfer_create_batch with many items at once (the batcher's group commit). The HTTP tests
// send one request at a time, so their batches hold one item; here every outcome meets others in
// one batch, including those that depend on an earlier item of the same batch.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { evpKey, externalKey, fundedClient, randomCpf, transferRow, type TestClient } from '../../../test/factories.ts';
import { startTestApp, type TestApp } from '../../../test/harness.ts';
import { assertLedgerInvariants } from '../../../test/ledger.ts';
import { BLOCKED_SHARDS, holderBalances } from '../ledger/service.ts';
import { holdShard, SHARD_WINDOW_MS } from './batcher.ts';
import { centavosToNumber } from '../../lib/money.ts';
import { CREATE_OUTCOMES, createTransfers, type CreateTransferRow } from './repo.ts';
import { transferView } from './views.ts';

describe('transfer batches', () => {
  let t: TestApp;
  let receiver: { key: string; document: string };
  let denied: { key: string; document: string };

  const funded = (centavos: bigint) => fundedClient(t, centavos);

  const row = (client: TestClient, centavos: bigint, extra: Partial<CreateTransferRow> = {}) =>
    transferRow({ accountId: BigInt(client.accountId), amountCentavos: centavos, pixKey: receiver.key, now: t.clock.now(), ...extra });

  const batch = (rows: CreateTransferRow[]) => createTransfers(t.db, rows, () => 0);
  const balances = async (client: TestClient) => (await holderBalances(t.db, BigInt(client.accountId)))!;

  before(async () => {
    t = await startTestApp();
    receiver = await externalKey(t, { ispb: '12345678', bankName: 'Outro Banco' });
    denied = await externalKey(t, { ispb: '87654321', bankName: 'Outro Banco' });
  });
  after(() => t?.close());

  it('knows every outcome of the database, in its order', async () => {
    const { rows } = await sql<{ label: string }>`select unnest(enum_range(null::transfer_create_outcome))::text as label`.execute(t.db);
    assert.deepEqual(
      rows.map((r) => r.label),
      [...CREATE_OUTCOMES],
    );
  });

  it('every outcome in one batch, each with its own answer, in the order of the items', async () => {
    const payer = await funded(100_000n);
    const ownKey = await evpKey(t, payer.accountId);
    const first = row(payer, 1_000n, { externalId: 'pedido-1' });
    const [created] = await batch([first]);
    assert.equal(created!.outcome, 'created');

    const rows = [
      row(payer, 1_100n),
      { ...first }, // the same key and body: its stored answer
      { ...first, requestHash: randomUUID() }, // the same key, another body
      row(payer, 1_200n, { pixKey: 'nobody@example.com' }),
      row(payer, 1_300n, { pixKey: ownKey }),
      row(payer, 1_400n, { pixKey: denied.key, ispbDeny: ['87654321'] }),
      row(payer, 1_500n, { priority: 'HIGH', creditorDocument: randomCpf() }),
      row(payer, 1_600n, { externalId: 'pedido-1' }),
      row(payer, 1_700n, { priority: 'HIGH', creditorDocument: receiver.document, description: 'urgente' }),
    ];
    const answers = await batch(rows);
    assert.deepEqual(
      answers.map((a) => a.outcome),
      ['created', 'replay', 'idempotency_mismatch', 'key_not_found', 'own_key', 'ispb_denied', 'creditor_mismatch', 'external_id_taken', 'created'],
    );
    assert.deepEqual(answers[1]!.transfer, created!.transfer);
    for (const i of [2, 3, 4, 5, 6, 7]) assert.equal(answers[i]!.transfer, null);

    // The two created: their rows, answers and stored answers agree.
    for (const i of [0, 8]) {
      const answer = answers[i]!.transfer!;
      assert.deepEqual(transferView(answer), {
        endToEndId: rows[i]!.endToEndId,
        eventDate: rows[i]!.now.toISOString(),
        id: Number(answer.id),
        payment: { amount: centavosToNumber(rows[i]!.amountCentavos) },
        type: 'PENDING',
      });
      const tx = await t.db.selectFrom('transactions').selectAll().where('id', '=', answer.id).executeTakeFirstOrThrow();
      assert.deepEqual(
        [tx.account_id, tx.type, tx.status, tx.amount_centavos, tx.end_to_end_id, tx.idempotency_key, tx.external_id, tx.priority, tx.counterpart_document],
        [BigInt(payer.accountId), 'WITHDRAW', 'PENDING', rows[i]!.amountCentavos, rows[i]!.endToEndId, rows[i]!.idempotencyKey, rows[i]!.idempotencyKey, rows[i]!.priority, receiver.document],
      );
      assert.equal(tx.expires_at!.getTime(), rows[i]!.now.getTime() + 600_000);
      const stored = await t.db.selectFrom('idempotency_keys').selectAll().where('key', '=', rows[i]!.idempotencyKey).executeTakeFirstOrThrow();
      assert.deepEqual(
        [stored.transaction_id, stored.end_to_end_id, stored.amount_centavos, stored.transaction_status, stored.created_at, stored.request_hash],
        [answer.id, answer.endToEndId, answer.amountCentavos, answer.status, answer.acceptedAt, rows[i]!.requestHash],
      );
      const queued = await t.db.selectFrom('settlement_queue').selectAll().where('transaction_id', '=', answer.id).executeTakeFirstOrThrow();
      assert.equal(queued.priority, rows[i]!.priority);
    }
    const ids = [0, 8].map((i) => answers[i]!.transfer!.id);
    assert.ok(ids[0]! < ids[1]!, 'ids follow the order of the items');
    assert.deepEqual(await balances(payer), { available: 100_000n - 1_000n - 1_100n - 1_700n, blocked: 1_000n + 1_100n + 1_700n });
    await assertLedgerInvariants(t.db);
  });

  it('payers that can afford all their transfers and one that cannot: the guard runs in order of arrival', async () => {
    const rich = await funded(10_000n);
    const poor = await funded(10_000n);
    const answers = await batch([
      row(rich, 4_000n),
      row(poor, 6_000n),
      row(poor, 5_000n), // 4,000 left: refused
      row(rich, 6_000n),
      row(poor, 4_000n), // exactly what is left
      row(poor, 1n),
    ]);
    assert.deepEqual(answers.map((a) => a.outcome), ['created', 'created', 'insufficient_funds', 'created', 'created', 'insufficient_funds']);
    assert.deepEqual(await balances(rich), { available: 0n, blocked: 10_000n });
    assert.deepEqual(await balances(poor), { available: 0n, blocked: 10_000n });
    await assertLedgerInvariants(t.db);
  });

  it('two transfers of one account claiming one externalId in one batch: the first has it', async () => {
    const payer = await funded(10_000n);
    const other = await funded(10_000n);
    const answers = await batch([row(payer, 100n, { externalId: 'lote-7' }), row(other, 100n, { externalId: 'lote-7' }), row(payer, 200n, { externalId: 'lote-7' })]);
    assert.deepEqual(answers.map((a) => a.outcome), ['created', 'created', 'external_id_taken']);
    // An explicit externalId that is another item's idempotency key: that item's default is dropped.
    const key = randomUUID();
    const second = await batch([row(payer, 300n, { externalId: key }), row(payer, 400n, { idempotencyKey: key })]);
    assert.deepEqual(second.map((a) => a.outcome), ['created', 'created']);
    const externalIds = await t.db
      .selectFrom('transactions')
      .select(['amount_centavos', 'external_id'])
      .where('account_id', '=', BigInt(payer.accountId))
      .where('amount_centavos', 'in', [300n, 400n])
      .orderBy('id')
      .execute();
    assert.deepEqual(externalIds, [
      { amount_centavos: 300n, external_id: key },
      { amount_centavos: 400n, external_id: null },
    ]);
    await assertLedgerInvariants(t.db);
  });

  it('a key whose answer is past its 24 hours makes a new transfer in a batch', async () => {
    const payer = await funded(10_000n);
    const old = row(payer, 100n);
    assert.equal((await batch([old]))[0]!.outcome, 'created');
    t.clock.advance(24 * 3_600_000 + 1);
    const again = row(payer, 100n, { idempotencyKey: old.idempotencyKey, externalId: null });
    const answers = await batch([row(payer, 50n), again]);
    assert.deepEqual(answers.map((a) => a.outcome), ['created', 'created']);
    const stored = await t.db.selectFrom('idempotency_keys').selectAll().where('key', '=', old.idempotencyKey).execute();
    assert.equal(stored.length, 1);
    assert.equal(stored[0]!.end_to_end_id, again.endToEndId);
    assert.deepEqual(await balances(payer), { available: 10_000n - 250n, blocked: 250n });
  });

  it('NORM and HIGH transfers of one batch hold their money in the two halves of the shards, in the window of their arrival', async () => {
    const payer = await funded(100_000n);
    const at = Date.parse('2026-11-23T10:00:00.000Z') + 3 * SHARD_WINDOW_MS;
    const rows = [row(payer, 100n), row(payer, 200n, { priority: 'HIGH', creditorDocument: receiver.document }), row(payer, 300n)];
    const answers = await createTransfers(t.db, rows, (r) => holdShard(at, r.priority));
    assert.deepEqual(answers.map((a) => a.outcome), ['created', 'created', 'created']);
    const held = await t.db
      .selectFrom('transactions as tx')
      .innerJoin('ledger_accounts as la', 'la.id', 'tx.hold_ledger_account_id')
      .select(['tx.amount_centavos', 'la.shard', 'la.code', 'la.account_id'])
      .where('tx.account_id', '=', BigInt(payer.accountId))
      .orderBy('tx.amount_centavos')
      .execute();
    const window = Math.floor(at / SHARD_WINDOW_MS) % (BLOCKED_SHARDS / 2);
    assert.deepEqual(
      held.map((h) => [h.amount_centavos, h.code, h.account_id, h.shard]),
      [
        [100n, 'blocked', BigInt(payer.accountId), window],
        [200n, 'blocked', BigInt(payer.accountId), BLOCKED_SHARDS / 2 + window],
        [300n, 'blocked', BigInt(payer.accountId), window],
      ],
    );
    // The next window moves both halves on, and wraps within each half.
    assert.equal(holdShard(at + SHARD_WINDOW_MS, 'NORM'), (window + 1) % (BLOCKED_SHARDS / 2));
    assert.equal(holdShard(at + (BLOCKED_SHARDS / 2) * SHARD_WINDOW_MS, 'HIGH'), BLOCKED_SHARDS / 2 + window);
    assert.deepEqual(await balances(payer), { available: 100_000n - 600n, blocked: 600n });
    await assertLedgerInvariants(t.db);
  });
});
