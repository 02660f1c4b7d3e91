import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import type { Db } from '../db/client.ts';
import { randomCpf } from '../../test/factories.ts';
import { createTestDatabase, onPostgres, type TestDatabase } from '../../test/harness.ts';
import { insertAccount } from '../modules/accounts/repo.ts';
import { createHolderLedgerAccounts } from '../modules/ledger/repo.ts';
import { systemClock } from '../lib/clock.ts';
import {
  cancelTableMaintenance,
  dueTables,
  MAINTENANCE_LOCK,
  MAINTENANCE_STATISTICS_TARGET,
  maintenanceRound,
  needsMaintenance,
  type TableWork,
} from './maintenance.ts';
import { Worker } from './worker.ts';

const defaults = { vacuum_threshold: 50, vacuum_scale: 0.2, insert_threshold: 1000, insert_scale: 0.2, analyze_threshold: 50, analyze_scale: 0.1 };
const stats = (relname: string, reltuples: number, dead: number, inserted: number, modified: number) => ({
  relname,
  reltuples,
  n_dead_tup: String(dead),
  n_ins_since_vacuum: String(inserted),
  n_mod_since_analyze: String(modified),
  ...defaults,
});

describe("autovacuum's rules", () => {
  it('vacuums past the dead-row or insert threshold and analyses past the changed-row threshold, each scaled by the rows', () => {
    assert.deepEqual(
      dueTables([
        stats('quiet', 10_000, 2_000, 0, 1_000),
        stats('dead', 10_000, 2_051, 0, 0),
        stats('appended', 10_000, 0, 3_001, 0),
        stats('changed', 10_000, 0, 0, 1_051),
        // Never analysed (-1): the thresholds alone.
        stats('new', -1, 51, 0, 51),
      ]),
      [
        { table: 'dead', vacuum: true, analyze: false },
        { table: 'appended', vacuum: true, analyze: false },
        { table: 'changed', vacuum: false, analyze: true },
        { table: 'new', vacuum: true, analyze: true },
      ],
    );
    // An insert threshold of -1 turns insert-driven vacuums off, as in PostgreSQL.
    assert.deepEqual(dueTables([{ ...stats('appended', 0, 0, 1_000_000, 0), insert_threshold: -1 }]), []);
  });
});

/** What a round did to a table, without how long it took. */
const what = (work: TableWork | undefined) => work && { table: work.table, vacuum: work.vacuum, analyze: work.analyze };

describe('table maintenance where autovacuum does not run', () => {
  let t: TestDatabase;
  before(async () => {
    t = await createTestDatabase();
  });
  after(() => t.drop());

  const plan = async (db: Db) =>
    (await sql<{ 'QUERY PLAN': string }>`explain update ledger_accounts set balance = balance + 1 where id = 5`.execute(db)).rows
      .map((r) => r['QUERY PLAN'])
      .join('\n');

  it('is needed on PGlite always and on PostgreSQL when autovacuum is off', async () => {
    const setting = (await sql<{ a: string }>`select current_setting('autovacuum') as a`.execute(t.db)).rows[0]!.a;
    assert.equal(await needsMaintenance(t.db, t.database.kind), t.database.kind === 'pglite' || setting !== 'on');
  });

  it('analyses the ledger once 64 accounts are in it, so the hot-path update probes the primary key instead of scanning', async () => {
    // Statistics taken while the ledger held only the network's account: the planner believes
    // it one row on one page, as it does of any table analysed young and grown since.
    await sql`analyze ledger_accounts`.execute(t.db);
    // On one connection whose statistics are reported at once: what another backend reports
    // reaches the shared counters up to a second later.
    await t.db.connection().execute(async (conn) => {
      // As createAccount makes them, without hashing 64 secrets.
      for (let i = 0; i < 64; i++) {
        await conn.transaction().execute(async (trx) => {
          const accountId = await insertAccount(trx, {
            name: `Maintained ${i}`,
            document: randomCpf(),
            documentType: 'CPF',
            clientId: `pix_maintained_${i}`,
            clientSecretHash: 'not a secret',
            webhookSecret: 'not a secret',
          });
          await createHolderLedgerAccounts(trx, accountId);
        });
      }
      await sql`select pg_stat_force_next_flush()`.execute(conn);
      await sql`select 1`.execute(conn);
    });
    assert.match(await plan(t.db), /Seq Scan on ledger_accounts/);

    const work = await maintenanceRound(t.db, t.database.kind);
    assert.deepEqual(what(work.find((w) => w.table === 'ledger_accounts')), { table: 'ledger_accounts', vacuum: false, analyze: true });
    assert.ok(work.every((w) => typeof w.ms === 'number' && w.ms >= 0), 'each table done says how long it took');
    const rows = (await sql<{ reltuples: number }>`select reltuples from pg_class where relname = 'ledger_accounts'`.execute(t.db)).rows[0]!;
    const count = (await t.db.selectFrom('ledger_accounts').select((eb) => eb.fn.countAll<bigint>().as('n')).executeTakeFirstOrThrow()).n;
    assert.equal(BigInt(rows.reltuples), count);
    assert.match(await plan(t.db), /Index Scan using ledger_accounts_pkey/);

    // Done is done: the next round finds nothing due there.
    assert.equal((await maintenanceRound(t.db, t.database.kind)).find((w) => w.table === 'ledger_accounts'), undefined);
  });

  /** Rows in and out of the settlement queue, reported to the statistics at once. */
  const churnQueue = () =>
    t.db.connection().execute(async (conn) => {
      // In one transaction, so that a running worker never sees these rows.
      await conn.transaction().execute(async (trx) => {
        await sql`
          insert into settlement_queue (transaction_id, priority, pix_key, created_at, expires_at)
          select -g, 'NORM', 'k', now(), now() from generate_series(1, 500) g`.execute(trx);
        await sql`delete from settlement_queue where transaction_id < 0`.execute(trx);
      });
      await sql`select pg_stat_force_next_flush()`.execute(conn);
      await sql`select 1`.execute(conn);
    });

  it('vacuums a table whose rows were deleted (the queue churns like this with every transfer)', async () => {
    await churnQueue();
    const work = await maintenanceRound(t.db, t.database.kind);
    assert.deepEqual(what(work.find((w) => w.table === 'settlement_queue')), { table: 'settlement_queue', vacuum: true, analyze: true });
    const vacuumed = (
      await sql<{ dead: string; vacuumed: boolean }>`
        select n_dead_tup::text as dead, last_vacuum is not null as vacuumed from pg_stat_user_tables where relname = 'settlement_queue'`.execute(t.db)
    ).rows[0]!;
    assert.deepEqual(vacuumed, { dead: '0', vacuumed: true });
  });

  it(`analyses with a sample of ${300 * MAINTENANCE_STATISTICS_TARGET} rows (target ${MAINTENANCE_STATISTICS_TARGET}), then leaves the connection's target as it was`, async () => {
    await t.db.connection().execute(async (conn) => {
      await sql`create table maintenance_probe (n int8 not null)`.execute(conn);
      await sql`insert into maintenance_probe select g from generate_series(1, 20000) g`.execute(conn);
      await sql`select pg_stat_force_next_flush()`.execute(conn);
      await sql`select 1`.execute(conn);
    });
    try {
      const work = await maintenanceRound(t.db, t.database.kind);
      assert.deepEqual(what(work.find((w) => w.table === 'maintenance_probe')), { table: 'maintenance_probe', vacuum: true, analyze: true });
      const { rows } = await sql<{ bounds: number; target: string }>`
        select array_length(histogram_bounds, 1) as bounds, current_setting('default_statistics_target') as target
          from pg_stats where tablename = 'maintenance_probe' and attname = 'n'`.execute(t.db);
      // A histogram has target + 1 bounds: 101 with PostgreSQL's default of 100.
      assert.equal(rows[0]?.bounds, MAINTENANCE_STATISTICS_TARGET + 1);
      assert.equal(rows[0]?.target, '100');
    } finally {
      await sql`drop table maintenance_probe`.execute(t.db);
    }
  });

  it('runs in the worker, beside settlement, until the worker stops', async (c) => {
    if (!(await needsMaintenance(t.db, t.database.kind))) return c.skip('autovacuum runs on this server');
    let seen: (work: TableWork) => void = () => undefined;
    const vacuumed = new Promise<TableWork>((resolve, reject) => {
      seen = (work) => work.table === 'settlement_queue' && resolve(work);
      setTimeout(() => reject(new Error('no maintenance round vacuumed the queue within 10 s')), 10_000).unref();
    });
    const log = { info: (obj: unknown, msg?: string) => msg === 'table maintenance' && seen(obj as TableWork), warn: () => undefined, error: () => undefined };
    const worker = new Worker({ db: t.db, clock: systemClock, ispb: '12345678', settlementDelayMs: 0, log, maintenance: { kind: t.database.kind, intervalMs: 20 } });
    worker.start();
    try {
      await churnQueue();
      assert.deepEqual(what(await vacuumed), { table: 'settlement_queue', vacuum: true, analyze: true });
    } finally {
      await worker.stop();
    }
  });

  it('leaves the round to the process holding the maintenance lock', { skip: !onPostgres && 'one connection on PGlite' }, async () => {
    await churnQueue();
    const other = new pg.Client({ connectionString: t.url });
    await other.connect();
    try {
      await other.query('select pg_advisory_lock($1)', [MAINTENANCE_LOCK]);
      assert.deepEqual(await maintenanceRound(t.db, t.database.kind), []);
      await other.query('select pg_advisory_unlock($1)', [MAINTENANCE_LOCK]);
      assert.ok((await maintenanceRound(t.db, t.database.kind)).some((w) => w.table === 'settlement_queue' && w.vacuum));
    } finally {
      await other.end();
    }
  });

  it('gives way to migrations: a running round is cancelled, as autovacuum yields to DDL', { skip: !onPostgres && 'one connection on PGlite' }, async () => {
    const maintainer = new pg.Client({ connectionString: t.url });
    await maintainer.connect();
    try {
      // A maintainer in the middle of a long statement, holding the lock as a round does.
      await maintainer.query('select pg_advisory_lock($1)', [MAINTENANCE_LOCK]);
      const long = maintainer.query('select pg_sleep(30)').then(
        () => 'finished',
        (error: { code?: string }) => error.code,
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      const started = Date.now();
      assert.equal(await cancelTableMaintenance(t.db), 1);
      assert.equal(await long, '57014'); // query_canceled
      assert.ok(Date.now() - started < 5_000);
      // Nothing else to cancel, and never the caller itself.
      await maintainer.query('select pg_advisory_unlock($1)', [MAINTENANCE_LOCK]);
      await t.db.connection().execute(async (conn) => {
        await sql`select pg_advisory_lock(${MAINTENANCE_LOCK})`.execute(conn);
        assert.equal(await cancelTableMaintenance(conn), 0);
        await sql`select pg_advisory_unlock(${MAINTENANCE_LOCK})`.execute(conn);
      });
    } finally {
      await maintainer.end();
    }
  });
});
