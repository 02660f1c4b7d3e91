/**
 * No account's reads can take the database from the others (docs/decisions/0002-list-isolation.md):
 * lists run on connections of their own, at most a few of one account at once (429 beyond a
 * short wait), and a list that runs too long is cancelled (503).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { buildApp } from '../src/app.ts';
import { openDatabase, type Database, type Db } from '../src/db/client.ts';
import { ManualClock } from '../src/lib/clock.ts';
import { errorMessage } from './assertions.ts';
import { createClient, creditAccount, evpKey, type TestClient } from './factories.ts';
import { createTestDatabase, onPostgres, startTestApp, testConfig, type TestApp, type TestDatabase } from './harness.ts';

const DAY_MS = 86_400_000;

/** `n` charges of the account over the 30 days before `now`, written straight to the table. */
async function seedCharges(db: Db, accountId: number, n: number, now: Date): Promise<void> {
  await sql`
    insert into charges (account_id, txid, status, expiracao_seconds, amount_centavos, chave, br_code, created_at, updated_at)
    select ${accountId}, 'SEED' || lpad(g::text, 28, '0'), 'ATIVA', 86400, 100 + g % 1000, 'seed@example.com',
           '00020101021226' || lpad(g::text, 180, '0'), ${now}::timestamptz - (g % 2592000) * interval '1 second', ${now}
      from generate_series(1, ${n}::int) g`.execute(db);
  await sql`analyze charges`.execute(db);
}

/** Holds an exclusive lock on the tables the lists read until released: their queries wait (on PGlite, its one session is held). */
async function holdListTables(db: Db, tables = sql`charges, transactions, webhook_logs, meds`): Promise<() => Promise<void>> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const holding = new Promise<void>((resolve) => (locked = resolve));
  const done = db.transaction().execute(async (trx) => {
    await sql`lock table ${tables} in access exclusive mode`.execute(trx);
    locked();
    await released;
  });
  await holding;
  return async () => {
    release();
    await done;
  };
}

/** The first of two answers to arrive, and the other one. */
async function firstOf(a: Promise<LightMyRequestResponse>, b: Promise<LightMyRequestResponse>) {
  const tagged = [a.then((res) => ({ res, other: b })), b.then((res) => ({ res, other: a }))];
  return Promise.race(tagged);
}

describe('a list beyond the account’s limit waits briefly, then 429', () => {
  let t: TestApp;
  let lister: TestClient;
  let other: TestClient;
  let key: string;

  before(async () => {
    t = await startTestApp({ env: { LIST_CONCURRENCY_PER_ACCOUNT: '1', LIST_QUEUE_TIMEOUT_MS: '50' } });
    lister = await createClient(t);
    other = await createClient(t);
    key = await evpKey(t, lister.accountId);
  });
  after(() => t?.close());

  const now = () => t.clock.now();
  const routes = () => [
    `/cob?inicio=${new Date(now().getTime() - DAY_MS).toISOString()}&fim=${now().toISOString()}`,
    '/api/transactions',
    `/api/pix/transactions/pix-key/${key}`,
    `/api/pix/transactions/pix-key/${key}/123`,
    '/api/webhooks/logs',
    '/api/meds',
  ];

  for (const [i, route] of ['GET /cob', 'GET /api/transactions', 'the PIX-key list', 'the PIX-key lookup', 'GET /api/webhooks/logs', 'GET /api/meds'].entries()) {
    it(`${route}: while the account's one list waits for the database, the next is 429 with Retry-After; then both are served`, async () => {
      const url = routes()[i]!;
      const get = (client: TestClient) => t.app.inject({ method: 'GET', url, headers: client.headers });
      // Served once first, so that the token and certificate checks are cached and never wait for the database below.
      assert.ok([200, 404].includes((await get(lister)).statusCode));
      const release = await holdListTables(t.db);
      let second: Promise<LightMyRequestResponse>;
      try {
        const first = await firstOf(get(lister), get(lister));
        errorMessage(first.res, 429, 'TOO_MANY_LIST_REQUESTS');
        assert.equal(first.res.headers['retry-after'], '1');
        second = first.other;
      } finally {
        await release();
      }
      assert.ok([200, 404].includes((await second).statusCode));
      assert.ok([200, 404].includes((await get(lister)).statusCode));
    });
  }

  it("another account's lists are not held by this account's limit (PostgreSQL)", { skip: !onPostgres && 'PGlite is one session: every query waits for it' }, async () => {
    const charges = routes()[0]!;
    assert.equal((await t.app.inject({ method: 'GET', url: charges, headers: lister.headers })).statusCode, 200);
    assert.equal((await t.app.inject({ method: 'GET', url: charges, headers: other.headers })).statusCode, 200);
    const release = await holdListTables(t.db, sql`charges`);
    const get = () => t.app.inject({ method: 'GET', url: charges, headers: lister.headers });
    let held: Promise<LightMyRequestResponse>;
    try {
      // One of the lister's two lists waits for the lock on charges, the other is refused; the
      // other account's transactions are listed meanwhile.
      const first = await firstOf(get(), get());
      errorMessage(first.res, 429, 'TOO_MANY_LIST_REQUESTS');
      held = first.other;
      assert.equal((await t.app.inject({ method: 'GET', url: '/api/transactions', headers: other.headers })).statusCode, 200);
    } finally {
      await release();
    }
    assert.equal((await held).statusCode, 200);
  });
});

describe('list isolation on PostgreSQL', { skip: !onPostgres && 'needs concurrent connections to one server: set TEST_DATABASE_URL' }, () => {
  let testDb: TestDatabase;
  let database: Database;
  let app: FastifyInstance;
  let clock: ManualClock;
  let lister: TestClient;
  let reader: TestClient;

  before(async () => {
    testDb = await createTestDatabase();
    // A small pool that waits little for a connection, as a busy service's would be: lists that
    // held it would make the other requests wait past the timeout (503).
    database = await openDatabase({ url: testDb.url, poolSize: 3, queueTimeoutMs: 300, lists: { poolSize: 2, statementTimeoutMs: 150 } });
    clock = new ManualClock(new Date());
    app = await buildApp({ config: testConfig(), db: database.db, listDb: database.lists, clock, logLevel: false });
    const t = { app, db: database.db } as TestApp;
    lister = await createClient(t);
    await evpKey(t, lister.accountId);
    reader = await createClient(t);
    await creditAccount(database.db, reader.accountId, 12_345n);
    await seedCharges(database.db, lister.accountId, 60_000, clock.now());
  });
  after(async () => {
    await app?.close();
    await database?.close();
    await testDb?.drop();
  });

  const window = () => `inicio=${new Date(clock.now().getTime() - 30 * DAY_MS - 1000).toISOString()}&fim=${clock.now().toISOString()}`;

  it("one account's 40 parallel heavy lists never take the connections of another account's balance reads", async () => {
    let stop = false;
    const listed: number[] = [];
    const heavy = async (worker: number) => {
      for (let i = 0; !stop; i++) {
        const page = (worker * 7 + i) % 60;
        const res = await app.inject({ method: 'GET', url: `/cob?${window()}&paginacao.itensPorPagina=1000&paginacao.paginaAtual=${page}`, headers: lister.headers });
        listed.push(res.statusCode);
      }
    };
    const lists = Array.from({ length: 40 }, (_, worker) => heavy(worker));
    const balances: number[] = [];
    try {
      // The balance reads start once the lists are under way, and run until 40 have answered.
      while (listed.length < 40) await new Promise((resolve) => setImmediate(resolve));
      for (let i = 0; i < 40; i++) {
        const res = await app.inject({ method: 'GET', url: '/balance', headers: reader.headers });
        balances.push(res.statusCode);
        if (res.statusCode === 200) assert.equal(res.json<{ netBalance: number }>().netBalance, 123.45);
      }
    } finally {
      stop = true;
      await Promise.all(lists);
    }
    assert.deepEqual(balances, Array(40).fill(200), `balance reads answered ${JSON.stringify(balances)}`);
    // The lister's own lists are served one at a time, or refused (429), or cut off (503): never a 5xx of another kind.
    const statuses = new Set(listed);
    assert.ok(statuses.has(200), `the lists answered ${[...statuses].join(', ')}`);
    for (const status of statuses) assert.ok([200, 429, 503].includes(status), `a list answered ${status}`);
  });

  it('a list that runs past its time limit is cancelled: 503 LIST_TIMEOUT with Retry-After; the other requests have no such limit', async () => {
    const release = await holdListTables(database.db);
    try {
      const res = await app.inject({ method: 'GET', url: `/cob?${window()}`, headers: lister.headers });
      assert.match(errorMessage(res, 503, 'LIST_TIMEOUT'), /time limit/);
      assert.equal(res.headers['retry-after'], '1');
      // Meanwhile the money paths answer, on connections without the list's time limit.
      const balance = await app.inject({ method: 'GET', url: '/balance', headers: reader.headers });
      assert.equal(balance.statusCode, 200, balance.body);
    } finally {
      await release();
    }
    const limits = async (db: Db) => (await sql<{ statement_timeout: string }>`show statement_timeout`.execute(db)).rows[0]!.statement_timeout;
    assert.equal(await limits(database.lists), '150ms');
    assert.equal(await limits(database.db), '0');
    assert.equal((await app.inject({ method: 'GET', url: `/cob?${window()}&paginacao.itensPorPagina=10`, headers: lister.headers })).statusCode, 200);
  });
});
