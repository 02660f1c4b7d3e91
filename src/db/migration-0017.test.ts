// Migration 0017 on a database holding answers that the functions before it stored as JSON bodies:
// each is carried over to the typed columns, and its replay is, value for value, the body stored.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { transferRow } from '../../test/factories.ts';
import { createTestDatabase, onPostgres, type TestDatabase } from '../../test/harness.ts';
import { MAX_AMOUNT_CENTAVOS } from '../lib/money.ts';
import { batchItem, createTransfers } from '../modules/transfers/repo.ts';
import { transferView } from '../modules/transfers/views.ts';
import { loadMigrations } from './migrate.ts';

const AMOUNTS = [1n, 10n, 99n, 100n, 1_234n, 1_050n, 123_456_789n, 99_999_999_999_999n, MAX_AMOUNT_CENTAVOS];
const KEY = 'destino@example.com';

describe(`migration 0017 (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let t: TestDatabase;
  const migrations = loadMigrations();
  const apply = async (versions: (v: number) => boolean) => {
    for (const m of migrations.filter((x) => versions(x.version))) await sql.raw(m.sql).execute(t.db);
  };

  before(async () => {
    t = await createTestDatabase({ migrated: false });
  });
  after(() => t?.drop());

  it('carries the stored bodies over to typed columns, and a replay answers each body exactly', async () => {
    await apply((v) => v < 17);
    const total = AMOUNTS.reduce((sum, a) => sum + a, 0n);
    await sql`insert into ledger_accounts (account_id, code, shard, balance) values (1, 'available', 0, ${total}), (1, 'blocked', 0, 0)`.execute(t.db);
    await sql`insert into dict_keys (key, key_type, owner_name, owner_document, ispb) values (${KEY}, 'EMAIL', 'Joana Destino', '12345678909', '12345678')`.execute(
      t.db,
    );
    const now = new Date('2026-11-23T10:11:12.345Z');
    const rows = AMOUNTS.map((amountCentavos) => transferRow({ accountId: 1n, amountCentavos, pixKey: KEY, now }));
    const items = rows.map((row, ord) => batchItem(row, ord, 0));
    const stored = await sql<{ ord: number; outcome: string; response_status: number; response_body: unknown }>`
      select ord, outcome, response_status, response_body from pix_transfer_create_batch(${JSON.stringify(items)}::jsonb) order by ord`.execute(t.db);
    assert.deepEqual(
      stored.rows.map((r) => [r.outcome, r.response_status]),
      rows.map(() => ['created', 201]),
    );

    await apply((v) => v >= 17);
    const kept = await t.db.selectFrom('idempotency_keys').selectAll().orderBy('transaction_id').execute();
    assert.deepEqual(
      kept.map((k) => [k.end_to_end_id, k.amount_centavos, k.transaction_status, k.created_at.getTime()]),
      rows.map((r) => [r.endToEndId, r.amountCentavos, 'PENDING', now.getTime()]),
    );

    const replays = await createTransfers(t.db, rows, () => 0);
    for (const [i, replay] of replays.entries()) {
      assert.equal(replay.outcome, 'replay');
      assert.deepEqual(transferView(replay.transfer!), stored.rows[i]!.response_body, `amount ${AMOUNTS[i]}`);
    }
  });
});
