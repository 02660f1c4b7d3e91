import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Kysely, sql } from 'kysely';
import pg from 'pg';
import { createTestDatabase, onPostgres, type TestDatabase } from '../../test/harness.ts';
import { openDatabase } from './client.ts';
import { applyFunctionFiles, FunctionFileFailed, loadFunctionFiles, pendingFunctions } from './function-files.ts';
import { appliedVersion, LATEST_MIGRATION, loadMigrations, migrate, UnknownMigrations } from './migrate.ts';
import { NodePostgresDialect } from './node-postgres-dialect.ts';
import { prepared, StatementNameConflict } from './prepared.ts';
import type { DB } from './schema.ts';
import { schemaSnapshot } from './schema-snapshot.ts';

const execFileAsync = promisify(execFile);

describe(`database (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let t: TestDatabase;
  before(async () => {
    t = await createTestDatabase();
  });
  after(() => t.drop());

  it('parses int8 as bigint, numeric as string and timestamptz as Date, as on the other driver', async () => {
    const { rows } = await sql<{ big: unknown; small: unknown; num: unknown; at: unknown; count: unknown }>`
      select 9007199254740993::int8 as big, 42::int8 as small, 12.345::numeric as num,
             '2026-11-22T12:00:00.123Z'::timestamptz as at, count(*) as count from (values (1), (2)) v(x)`.execute(t.db);
    const row = rows[0]!;
    assert.equal(row.big, 9007199254740993n);
    assert.equal(row.small, 42n);
    assert.equal(row.num, '12.345');
    assert.ok(row.at instanceof Date);
    assert.equal((row.at as Date).toISOString(), '2026-11-22T12:00:00.123Z');
    assert.equal(row.count, 2n);
  });

  it('runs a named query as a statement prepared once per connection, and an unnamed one unprepared', async () => {
    const plusOne = (n: number) => prepared('test_plus_one', sql<{ x: number }>`select ${n}::int4 + 1 as x`);
    await t.db.connection().execute(async (conn) => {
      assert.deepEqual((await plusOne(1).execute(conn)).rows, [{ x: 2 }]);
      assert.deepEqual((await plusOne(41).execute(conn)).rows, [{ x: 42 }]);
      await sql`select ${1}::int4 as unnamed`.execute(conn);
      const code = conn.selectFrom('ledger_accounts').select('code').where('code', '=', 'pix_network');
      assert.deepEqual(await prepared('test_builder', code).execute(), [{ code: 'pix_network' }]);
      // The same builder run without the name stays unnamed.
      assert.deepEqual(await code.execute(), [{ code: 'pix_network' }]);
      if (!onPostgres) return; // PGlite runs every statement unnamed.
      const { rows } = await sql<{ name: string; statement: string; plans: number }>`
        select name, statement, (generic_plans + custom_plans)::int4 as plans from pg_prepared_statements order by name`.execute(conn);
      assert.deepEqual(rows, [
        { name: 'test_builder', statement: 'select "code" from "ledger_accounts" where "code" = $1', plans: 1 },
        // Parsed once, bound and run twice.
        { name: 'test_plus_one', statement: 'select $1::int4 + 1 as x', plans: 2 },
      ]);
    });
  });

  it('refuses a statement name that another text already has, on both databases', async () => {
    const one = () => prepared('test_one_text', sql<{ x: number }>`select 1::int4 as x`);
    assert.deepEqual((await one().execute(t.db)).rows, [{ x: 1 }]);
    await assert.rejects(prepared('test_one_text', sql`select 2::int4 as x`).execute(t.db), StatementNameConflict);
    await assert.rejects(
      prepared('test_one_text', t.db.selectNoFrom(sql<number>`1::int4`.as('x'))).execute(),
      StatementNameConflict,
    );
    assert.deepEqual((await one().execute(t.db)).rows, [{ x: 1 }]);
  });

  it('refuses a statement name that is not lowercase letters, digits and underscores', () => {
    for (const name of ['', 'Upper', 'with space', '1st', `a${'b'.repeat(63)}`]) {
      assert.throws(() => prepared(name, sql`select 1`), /statement name/, name);
    }
  });

  it('calls node-postgres only through its callback form, for builders, transactions and named queries', async () => {
    if (!onPostgres) return; // PGlite: no node-postgres client in between.
    const calls: unknown[][] = [];
    const pool = new pg.Pool({ connectionString: t.url, max: 2 });
    pool.on('connect', (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      client.query = ((...args: unknown[]) => {
        calls.push(args);
        return query(...args);
      }) as typeof client.query;
    });
    const db = new Kysely<DB>({ dialect: new NodePostgresDialect(pool) });
    try {
      const code = () => db.selectFrom('ledger_accounts').select('code').where('code', '=', 'pix_network');
      assert.deepEqual(await code().execute(), [{ code: 'pix_network' }]);
      await db.transaction().execute(async (trx) => {
        await trx.selectFrom('ledger_accounts').select('id').where('code', '=', 'pix_network').executeTakeFirstOrThrow();
      });
      assert.deepEqual(await prepared('test_callback', code()).execute(), [{ code: 'pix_network' }]);
      assert.deepEqual((await sql<{ x: number }>`select 3::int4 as x`.execute(db)).rows, [{ x: 3 }]);
    } finally {
      await db.destroy();
    }
    const shapes = calls.map(([config, callback, ...rest]) => ({
      text: (config as { text?: unknown }).text,
      name: (config as { name?: unknown }).name,
      values: Array.isArray((config as { values?: unknown }).values),
      callback: typeof callback,
      rest: rest.length,
    }));
    const selectCode = 'select "code" from "ledger_accounts" where "code" = $1';
    assert.deepEqual(shapes, [
      { text: selectCode, name: undefined, values: true, callback: 'function', rest: 0 },
      { text: 'begin', name: undefined, values: true, callback: 'function', rest: 0 },
      { text: 'select "id" from "ledger_accounts" where "code" = $1', name: undefined, values: true, callback: 'function', rest: 0 },
      { text: 'commit', name: undefined, values: true, callback: 'function', rest: 0 },
      { text: selectCode, name: 'test_callback', values: true, callback: 'function', rest: 0 },
      { text: 'select 3::int4 as x', name: undefined, values: true, callback: 'function', rest: 0 },
    ]);
  });

  it('lets the rows of a finished query die young (none promoted to the old generation)', async () => {
    if (!onPostgres) return; // PGlite: no node-postgres client in between.
    // node-postgres's promise form promotes several MB here, its callback form a fraction of one:
    // docs/decisions/0015-node-postgres-callback-form.md. Measured in a process of its own
    // (test/support/old-generation.ts), untouched by what this file ran before.
    const { stdout } = await execFileAsync(process.execPath, [fileURLToPath(new URL('../../test/support/old-generation.ts', import.meta.url)), t.url!]);
    const { grown } = JSON.parse(stdout) as { grown: number };
    assert.ok(grown < 1_000_000, `the old generation grew ${grown} bytes over 1,000 queries`);
  });

  it('round-trips bigint parameters beyond 2^53 exactly', async () => {
    const { rows } = await sql<{ v: bigint }>`select ${9007199254740993n}::int8 + 1 as v`.execute(t.db);
    assert.equal(rows[0]!.v, 9007199254740994n);
  });

  it('produces exactly the committed schema snapshot (the same on PGlite and PostgreSQL)', async () => {
    const expected = JSON.parse(readFileSync(new URL('./schema.snapshot.json', import.meta.url), 'utf8'));
    assert.deepEqual(await schemaSnapshot(t.db), expected);
  });

  it('records the latest migration and applies nothing on a second run', async () => {
    assert.equal(await appliedVersion(t.db), LATEST_MIGRATION);
    assert.deepEqual(await migrate(t.db), { migrations: [], functions: [] });
    assert.deepEqual(await pendingFunctions(t.db), []);
  });

  it('holds each function as its file wrote it, and records the hash of each file', async () => {
    const { rows } = await sql<{ name: string; src: string }>`
      select proname as name, prosrc as src from pg_proc where pronamespace = 'public'::regnamespace order by 1`.execute(t.db);
    const files = loadFunctionFiles();
    assert.deepEqual(rows.map((r) => r.name), files.map((f) => f.name).sort(), 'one function per file, no other');
    for (const file of files) {
      // The body is what stands between the file's $$ quotes.
      const body = file.sql.slice(file.sql.indexOf('$$') + 2, file.sql.lastIndexOf('$$'));
      assert.equal(rows.find((r) => r.name === file.name)!.src, body, file.name);
    }
    const recorded = await t.db.selectFrom('schema_functions').select(['name', 'hash']).orderBy('name').execute();
    assert.deepEqual(recorded, files.map((f) => ({ name: f.name, hash: f.hash })).sort((a, b) => a.name.localeCompare(b.name)));
  });

  it('applies again only the function file whose text differs from the one recorded', async () => {
    const [file] = loadFunctionFiles();
    await t.db.updateTable('schema_functions').set({ hash: 'an earlier text' }).where('name', '=', file!.name).execute();
    assert.deepEqual(await pendingFunctions(t.db), [file!.name]);
    assert.deepEqual(await migrate(t.db), { migrations: [], functions: [file!.name] });
    assert.deepEqual(await pendingFunctions(t.db), []);
  });

  it('keeps the previous definition and record when a function file fails', async () => {
    const [file] = loadFunctionFiles();
    const broken = { ...file!, sql: `${file!.sql.replace('BEGIN', 'BEGIN\n  SELECT;')}\nSELECT no_such_column FROM ledger_accounts;`, hash: 'broken' };
    await t.db.connection().execute(async (conn) => {
      await assert.rejects(applyFunctionFiles(conn, [broken]), (error: unknown) => {
        assert.ok(error instanceof FunctionFileFailed);
        assert.match(error.message, new RegExp(`^function file ${file!.name}\\.sql failed \\(column "no_such_column" does not exist\\); the database keeps its previous definition: `));
        return true;
      });
    });
    assert.deepEqual(await pendingFunctions(t.db), []);
    const { rows } = await sql<{ src: string }>`select prosrc as src from pg_proc where proname = ${file!.name}`.execute(t.db);
    assert.doesNotMatch(rows[0]!.src, /SELECT;/);
  });

  it('refuses a database made by the migrations before the baseline, and changes nothing', async () => {
    const old = await openDatabase({});
    try {
      await sql
        .raw(
          `create table schema_migrations (version integer primary key, name text not null, applied_at timestamptz not null default now());
           insert into schema_migrations (version, name) values (1, 'initial'), (2, 'pix_functions'), (16, 'account_med_reads')`,
        )
        .execute(old.db);
      let beforeSchemaChange = 0;
      await assert.rejects(
        migrate(old.db, { beforeSchemaChange: async () => beforeSchemaChange++ }),
        (error: unknown) => error instanceof UnknownMigrations && error.recorded.join() === '0001_initial,0002_pix_functions,0016_account_med_reads',
      );
      assert.equal(beforeSchemaChange, 0);
      const { rows } = await sql<{ name: string | null }>`select to_regclass('schema_functions')::text as name`.execute(old.db);
      assert.equal(rows[0]!.name, null);
    } finally {
      await old.close();
    }
  });

  it('runs the hook before the first pending migration, on the migrating connection, and not when none is pending', async () => {
    const fresh = await openDatabase({});
    try {
      const seen: string[] = [];
      const hook = async (conn: typeof fresh.db) => {
        const { rows } = await sql<{ n: string | null }>`select to_regclass('schema_migrations')::text as n`.execute(conn);
        const applied = await conn.selectFrom('schema_migrations').select('version').execute();
        seen.push(`${rows[0]!.n} ${applied.length}`);
      };
      await migrate(fresh.db, { beforeSchemaChange: hook });
      await migrate(fresh.db, { beforeSchemaChange: hook });
      assert.deepEqual(seen, ['schema_migrations 0']);
    } finally {
      await fresh.close();
    }
  });

  it('refuses an overdraft in the database itself, not only in code', async () => {
    const { rows } = await sql<{ id: bigint }>`
      insert into ledger_accounts (account_id, code) values (null, 'test_guarded') returning id`.execute(t.db);
    const id = rows[0]!.id;
    await assert.rejects(sql`update ledger_accounts set balance = balance - 1 where id = ${id}`.execute(t.db), (error: unknown) => {
      const e = error as { code?: string; message?: string };
      return e.code === '23514' && Boolean(e.message?.includes('ledger_accounts_no_overdraft'));
    });
  });

  it('refuses postings of zero, negative amounts and self-transfers', async () => {
    const { rows } = await sql<{ id: bigint }>`select nextval('ledger_tx_seq') as id`.execute(t.db);
    const tx = rows[0]!.id;
    const network = (await sql<{ id: bigint }>`select id from ledger_accounts where code = 'pix_network'`.execute(t.db)).rows[0]!.id;
    const other = (
      await sql<{ id: bigint }>`insert into ledger_accounts (account_id, code, allow_negative) values (null, 'test_other', true) returning id`.execute(t.db)
    ).rows[0]!.id;
    const insert = (debit: bigint, credit: bigint, amount: bigint) =>
      sql`insert into postings (ledger_tx_id, kind, debit_account_id, credit_account_id, amount_centavos, created_at)
          values (${tx}, 'test', ${debit}, ${credit}, ${amount}, now())`.execute(t.db);
    await insert(network, other, 1n);
    for (const amount of [0n, -5n]) {
      await assert.rejects(insert(network, other, amount), (e: { code?: string }) => e.code === '23514');
    }
    await assert.rejects(insert(network, network, 1n), (e: { code?: string }) => e.code === '23514');
  });

  it('refuses rows that break the column rules kept as domains', async () => {
    const violates = (error: unknown) => (error as { code?: string }).code === '23514';
    const transaction = (row: Record<string, unknown>) =>
      sql`insert into transactions (account_id, type, status, amount_centavos, fee_centavos, priority, counterpart_behavior, created_at, updated_at)
          values (1, ${row.type ?? 'WITHDRAW'}, ${row.status ?? 'PENDING'}, ${row.amount ?? 100n}, ${row.fee ?? 0n},
                  ${row.priority ?? 'NORM'}, ${row.behavior ?? null}, now(), now())`.execute(t.db);
    await transaction({});
    for (const bad of [{ type: 'GIFT' }, { status: 'DONE' }, { amount: 0n }, { amount: -1n }, { fee: -1n }, { priority: 'LOW' }, { behavior: 'accept' }]) {
      await assert.rejects(transaction(bad), violates, JSON.stringify(bad, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
    }
    await assert.rejects(sql`insert into ledger_accounts (account_id, code, shard) values (null, 'test_shard', 64)`.execute(t.db), violates);
    await assert.rejects(
      sql`insert into settlement_queue (transaction_id, priority, pix_key, created_at, expires_at) values (1, 'LOW', 'k', now(), now())`.execute(t.db),
      violates,
    );
    await assert.rejects(
      sql`insert into idempotency_keys (account_id, key, request_hash, status, expires_at, created_at) values (1, 'k', 'h', 'LOST', now(), now())`.execute(t.db),
      violates,
    );
    await assert.rejects(
      sql`insert into webhook_deliveries (account_id, url, message_id, status, next_attempt_at, created_at) values (1, 'https://x.example', 'm', 'GONE', now(), now())`.execute(t.db),
      violates,
    );
  });

  it('applies migrations and function files once when several processes start together', { skip: !onPostgres && 'PGlite is single-process' }, async () => {
    // A second fresh database, migrated by three connections pools at once.
    const fresh = await createEmptyPostgresDatabase();
    try {
      const pools = await Promise.all([1, 2, 3].map(() => openDatabase({ url: fresh.url, poolSize: 2 })));
      const results = await Promise.all(pools.map((p) => migrate(p.db)));
      // Each known migration once (their numbers may have gaps), and each function file once.
      assert.deepEqual(
        results.flatMap((r) => r.migrations).sort((a, b) => a - b),
        loadMigrations().map((m) => m.version),
      );
      assert.deepEqual(
        results.flatMap((r) => r.functions),
        loadFunctionFiles().map((f) => f.name),
      );
      await Promise.all(pools.map((p) => p.close()));
    } finally {
      await fresh.drop();
    }
  });
});

async function createEmptyPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const server = process.env.TEST_DATABASE_URL!;
  const name = `pix_test_migrate_${Date.now()}`;
  const client = new pg.Client({ connectionString: server });
  await client.connect();
  await client.query(`create database ${name}`);
  await client.end();
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: server });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}
