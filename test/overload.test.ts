import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.ts';
import { openDatabase, type Database } from '../src/db/client.ts';
import { ManualClock } from '../src/lib/clock.ts';
import { assertError } from './assertions.ts';
import { createClient, creditAccount, externalKey, type TestClient } from './factories.ts';
import { createTestDatabase, onPostgres, testConfig, type TestApp, type TestDatabase } from './harness.ts';

/**
 * A request that finds every pooled connection taken waits at most the queue timeout, then gets
 * 503 with Retry-After: under a sustained overload requests are refused quickly instead of
 * queueing until their callers time out.
 */
describe('a busy connection pool', { skip: !onPostgres && 'PGlite is one session: there is no pool to wait for' }, () => {
  let testDb: TestDatabase;
  let small: Database;
  let app: FastifyInstance;
  let client: TestClient;

  before(async () => {
    testDb = await createTestDatabase();
    small = await openDatabase({ url: testDb.url, poolSize: 1, queueTimeoutMs: 300 });
    // Two directory look-ups a client: a transfer refused for a busy pool must not spend one.
    app = await buildApp({ config: testConfig({ DIRECTORY_CPF_TOKENS: '2' }), db: small.db, clock: new ManualClock(new Date()), logLevel: false });
    client = await createClient({ app, db: small.db } as TestApp);
  });
  after(async () => {
    await app?.close();
    await small?.close();
    await testDb?.drop();
  });

  /** Holds the pool's only connection until the returned function is called. */
  async function holdTheConnection(): Promise<() => Promise<void>> {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    const done = small.db.connection().execute(async () => {
      held();
      await released;
    });
    await holding;
    return async () => {
      release();
      await done;
    };
  }

  // The first request after the token was issued also looks up the token's verification key:
  // that lookup failing must be a 503 as well, not a 401 that makes the client drop a good token.
  it('503 with Retry-After once the wait passes the timeout, then served again', async () => {
    const release = await holdTheConnection();
    try {
      const started = performance.now();
      const res = await app.inject({ method: 'GET', url: '/api/transactions', headers: client.headers });
      const waited = performance.now() - started;
      assertError(res, 503, /briefly unavailable/);
      assert.equal(res.headers['retry-after'], '1');
      assert.ok(waited >= 250 && waited < 3_000, `answered after ${Math.round(waited)} ms`);
    } finally {
      await release();
    }
    const res = await app.inject({ method: 'GET', url: '/api/transactions', headers: client.headers });
    assert.equal(res.statusCode, 200, res.body);
  });

  it('a transfer refused this way was not made: sent again with its key, it is made once', async () => {
    const t = { app, db: small.db } as TestApp;
    await creditAccount(small.db, client.accountId, 10_000n);
    const dest = await externalKey(t);
    const request = {
      method: 'POST' as const,
      url: '/dict/pix',
      headers: { ...client.headers, 'x-idempotency-key': randomUUID() },
      payload: { pixKey: dest.key, payment: { currency: 'BRL', amount: 12.34 } },
    };
    // A look-up first (one of the two): the service now knows the account's bucket without a query.
    const lookedUp = await app.inject({ method: 'GET', url: `/dict/keys/${encodeURIComponent(dest.key)}`, headers: client.headers });
    assert.equal(lookedUp.statusCode, 200, lookedUp.body);
    const release = await holdTheConnection();
    try {
      assertError(await app.inject(request), 503);
    } finally {
      await release();
    }
    // The refused transfer gave its look-up back: the last token pays for this one.
    const made = await app.inject(request);
    assert.equal(made.statusCode, 201, made.body);
    const replayed = await app.inject(request);
    assert.equal(replayed.body, made.body);
    const rows = await small.db.selectFrom('transactions').select('id').where('account_id', '=', BigInt(client.accountId)).where('type', '=', 'WITHDRAW').execute();
    assert.equal(rows.length, 1);
  });
});
