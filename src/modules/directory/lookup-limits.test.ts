import assert from 'node:assert/strict';
import { randomInt, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import { buildApp } from '../../app.ts';
import { createClient, externalKey, fundedClient, randomCnpj, type TestClient } from '../../../test/factories.ts';
import { startTestApp, type TestApp } from '../../../test/harness.ts';
import { assertError } from '../../../test/assertions.ts';
import { redisAnswers, TEST_REDIS_URL } from '../../../test/redis.ts';

/**
 * Directory look-ups on an account's behalf are limited by a token bucket per account, as BCB's
 * DICT limits participants (decisions.md, Identifiers). Defaults: a natural person (CPF) holds
 * 100 tokens and gets 2 back a minute (one every 30 s), a legal entity (CNPJ) 1,000 and 20; a
 * look-up costs 1, a key not in the directory 20 in all, an accepted transfer nothing.
 */

const redisUp = await redisAnswers();

/** The answer is 429 DIRECTORY_RATE_LIMITED; returns its Retry-After, in whole seconds. */
function spent(res: LightMyRequestResponse): number {
  assertError(res, 429, /directory look-ups are spent/, 'DIRECTORY_RATE_LIMITED');
  const header = String(res.headers['retry-after']);
  assert.match(header, /^[1-9][0-9]*$/, `Retry-After ${header}`);
  return Number(header);
}

/** What a CPF bucket holding `tokens` (a whole number, 0 or less) tells in Retry-After: 30 s a token until it holds 1. */
const cpfWait = (tokens: number) => (1 - tokens) * 30;

function helpers(get: () => TestApp) {
  const lookUp = (client: TestClient, key: string) =>
    get().app.inject({ method: 'GET', url: `/dict/keys/${encodeURIComponent(key)}`, headers: client.headers });
  const transfer = (client: TestClient, payload: Record<string, unknown>, idempotencyKey: string = randomUUID()) =>
    get().app.inject({ method: 'POST', url: '/dict/pix', headers: { ...client.headers, 'x-idempotency-key': idempotencyKey }, payload });
  /** The attack's probe: more than any account holds, so an existing key answers INSUFFICIENT_BALANCE. */
  const probe = (client: TestClient, pixKey: string, extra: Record<string, unknown> = {}) =>
    transfer(client, { pixKey, payment: { currency: 'BRL', amount: 999999999.99 }, ...extra });
  const missing = () => `nobody-${randomUUID()}@example.com`;
  return { lookUp, transfer, probe, missing };
}

describe('directory look-ups, default limits', () => {
  let t: TestApp;
  let dest: { key: string; document: string };
  const { lookUp, probe, missing } = helpers(() => t);

  before(async () => {
    t = await startTestApp();
    dest = await externalKey(t);
  });
  after(() => t.close());

  it('a natural person’s bucket empties after 100 look-ups and refills one every 30 s (Retry-After says when)', async () => {
    const client = await createClient(t);
    for (let i = 0; i < 100; i++) assert.equal((await lookUp(client, dest.key)).statusCode, 200, `look-up ${i + 1}`);
    assert.equal(spent(await lookUp(client, dest.key)), 30);
    assert.equal(spent(await probe(client, dest.key)), 30, 'one bucket for both routes');
    t.clock.advance(29_000);
    assert.equal(spent(await lookUp(client, dest.key)), 1);
    t.clock.advance(1_000);
    assert.equal((await lookUp(client, dest.key)).statusCode, 200);
    assert.equal(spent(await lookUp(client, dest.key)), 30);
    // Ten minutes later: 20 more.
    t.clock.advance(600_000);
    for (let i = 0; i < 20; i++) assert.equal((await lookUp(client, dest.key)).statusCode, 200, `look-up ${i + 1} after 10 min`);
    assert.equal(spent(await lookUp(client, dest.key)), 30);
  });

  it('misses cost 20: a fresh natural person affords 5 keys that are not in the directory, by either route', async () => {
    const viaGet = await createClient(t);
    for (let i = 0; i < 5; i++) assertError(await lookUp(viaGet, missing()), 404, undefined, 'PIX_KEY_NOT_FOUND');
    assert.equal(spent(await lookUp(viaGet, dest.key)), 30, 'spent, even for a key that exists');

    const viaTransfer = await createClient(t);
    for (let i = 0; i < 5; i++) assertError(await probe(viaTransfer, missing()), 422, undefined, 'PIX_KEY_NOT_FOUND');
    assert.equal(spent(await probe(viaTransfer, missing())), 30);
  });

  it("a HIGH transfer whose creditorDocument is not the key owner's costs what a miss costs, even when it is refused for its amount", async () => {
    const client = await createClient(t);
    const wrong = { priority: 'HIGH', creditorDocument: randomCnpj() };
    // The probe asks for more than the account holds: refused for that, as with the right document.
    for (let i = 0; i < 5; i++) assertError(await probe(client, dest.key, wrong), 422, undefined, 'INSUFFICIENT_BALANCE');
    assert.equal(spent(await probe(client, dest.key, wrong)), 30);
  });

  it('hits cost 1: one miss and 80 refused transfers to a key that exists spend a natural person’s 100', async () => {
    const client = await createClient(t);
    assertError(await lookUp(client, missing()), 404, undefined, 'PIX_KEY_NOT_FOUND');
    for (let i = 0; i < 80; i++) assertError(await probe(client, dest.key), 422, undefined, 'INSUFFICIENT_BALANCE');
    assert.equal(spent(await probe(client, dest.key)), 30);
  });

  it('a legal entity holds 1,000 tokens and gets one back every 3 s', async () => {
    const company = await createClient(t, { name: 'Empresa Pagadora SA', document: randomCnpj() });
    for (let i = 0; i < 50; i++) assertError(await lookUp(company, missing()), 404, undefined, 'PIX_KEY_NOT_FOUND');
    assert.equal(spent(await lookUp(company, dest.key)), 3);
    t.clock.advance(3_000);
    assert.equal((await lookUp(company, dest.key)).statusCode, 200);
  });

  it('300 probes at once get at most the bucket’s worth of answers, and each answered one costs what it should', async () => {
    const client = await createClient(t);
    // Half to the key that exists (1 token each), half to keys that do not (20 each).
    const answers = await Promise.all(Array.from({ length: 300 }, (_, i) => probe(client, i % 2 === 0 ? dest.key : missing())));
    const codes = answers.map((res) => (res.statusCode === 429 ? 'limited' : (res.json() as { code: string }).code));
    const hits = codes.filter((c) => c === 'INSUFFICIENT_BALANCE').length;
    const misses = codes.filter((c) => c === 'PIX_KEY_NOT_FOUND').length;
    assert.equal(hits + misses + codes.filter((c) => c === 'limited').length, 300, JSON.stringify(codes));
    assert.ok(hits + misses <= 100, `${hits} hits and ${misses} misses answered`);
    assert.ok(misses > 0 && hits > 0, `${hits} hits and ${misses} misses answered`);
    for (const res of answers.filter((r) => r.statusCode === 429)) spent(res);
    // Every answered probe paid in full (the clock stands still: no refill): a look-up each
    // beforehand, and the rest of a miss's 20 after, into debt. No probe paid less.
    assert.equal(spent(await probe(client, dest.key)), cpfWait(100 - hits - 20 * misses));
  });
});

describe('directory look-ups that cost nothing, and the order of checks', () => {
  let t: TestApp;
  let dest: { key: string; document: string };
  const { lookUp, transfer, probe, missing } = helpers(() => t);
  const pay = (pixKey: string, amount = 1.5) => ({ pixKey, payment: { currency: 'BRL', amount } });

  before(async () => {
    // Three tokens, so that every free request would show at once if it were not.
    t = await startTestApp({ env: { DIRECTORY_CPF_TOKENS: '3' } });
    dest = await externalKey(t);
  });
  after(() => t.close());

  it('accepted transfers, replays, idempotency refusals and invalid requests take nothing from the bucket', async () => {
    const client = await fundedClient(t, 1_000_00n);
    const first = randomUUID();
    for (let i = 0; i < 10; i++) assert.equal((await transfer(client, pay(dest.key), i === 0 ? first : randomUUID())).statusCode, 201, `transfer ${i + 1}`);
    for (let i = 0; i < 10; i++) {
      const replay = await transfer(client, pay(dest.key), first);
      assert.equal(replay.statusCode, 201, replay.body);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
    }
    for (let i = 0; i < 3; i++) assertError(await transfer(client, pay(missing()), first), 422, undefined, 'IDEMPOTENCY_KEY_REUSED');
    assertError(await transfer(client, pay('not a key')), 400, undefined, 'INVALID_PIX_KEY');
    assertError(await transfer(client, pay(missing(), 0)), 400, undefined, 'INVALID_AMOUNT');
    assertError(await transfer(client, { ...pay(missing()), priority: 'HIGH' }), 400, undefined, 'CREDITOR_DOCUMENT_REQUIRED');
    assertError(await transfer(client, { ...pay(missing()), priority: 'HIGH', creditorDocument: '11111111111' }), 400, undefined, 'INVALID_CREDITOR_DOCUMENT');
    assertError(await transfer(client, pay(missing()), 'not-a-uuid'), 400, undefined, 'IDEMPOTENCY_KEY_INVALID');
    assertError(await lookUp(client, 'not a key'), 400, undefined, 'INVALID_PIX_KEY');
    // All three tokens are still there.
    for (let i = 0; i < 3; i++) assert.equal((await lookUp(client, dest.key)).statusCode, 200, `look-up ${i + 1}`);
    assert.equal(spent(await lookUp(client, dest.key)), 30);
  });

  it('a spent bucket answers the same 429 whether the key exists or not, and checks nothing about the key first', async () => {
    const client = await fundedClient(t, 1_000_00n);
    const accepted = randomUUID();
    assert.equal((await transfer(client, pay(dest.key), accepted)).statusCode, 201);
    for (let i = 0; i < 3; i++) assert.equal((await lookUp(client, dest.key)).statusCode, 200);

    const answers = [
      await probe(client, dest.key),
      await probe(client, missing()),
      await probe(client, dest.key, { priority: 'HIGH', creditorDocument: dest.document }),
      await probe(client, dest.key, { priority: 'HIGH', creditorDocument: randomCnpj() }),
      await transfer(client, pay(dest.key)),
      await lookUp(client, dest.key),
      await lookUp(client, missing()),
    ];
    const bodies = answers.map((res) => (spent(res), res.body));
    assert.equal(new Set(bodies).size, 1, 'one answer for all');
    const withdrawals = await t.db.selectFrom('transactions').select('id').where('account_id', '=', BigInt(client.accountId)).execute();
    assert.equal(withdrawals.length, 1, 'only the transfer made before');
    // Invalid input is still told apart from a spent bucket: it costs nothing and reveals nothing.
    assertError(await probe(client, 'not a key'), 400, undefined, 'INVALID_PIX_KEY');
    assertError(await lookUp(client, 'not a key'), 400, undefined, 'INVALID_PIX_KEY');
    // A replay asks the same database call that reads the key, so it waits for the bucket too
    // (docs/decisions/0004-directory-rate-limit.md); the client can read the transfer meanwhile.
    spent(await transfer(client, pay(dest.key), accepted));
    t.clock.advance(30_000);
    const replay = await transfer(client, pay(dest.key), accepted);
    assert.equal(replay.statusCode, 201, replay.body);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal((await lookUp(client, dest.key)).statusCode, 200, 'the replay gave its token back');
  });
});

describe('directory look-ups shared through Redis by two app instances', { skip: redisUp ? false : `no Redis answers at ${TEST_REDIS_URL}` }, () => {
  let a: TestApp;
  let b: TestApp['app'];
  let redis: Redis;
  let dest: { key: string; document: string };
  // Account ids start at 1 in every fresh database: an ISPB of this run's own keeps its buckets apart.
  const ispb = String(randomInt(10_000_000, 99_999_999));
  const inject = (app: TestApp['app'], client: TestClient, key: string) =>
    app.inject({ method: 'GET', url: `/dict/keys/${encodeURIComponent(key)}`, headers: client.headers });

  before(async () => {
    a = await startTestApp({ env: { REDIS_URL: TEST_REDIS_URL, PSP_ISPB: ispb } });
    b = await buildApp({ config: a.config, db: a.db, clock: a.clock, logLevel: false });
    redis = new Redis(TEST_REDIS_URL);
    dest = await externalKey(a);
  });
  after(async () => {
    const keys = await redis.keys(`pix-api:dict:${ispb}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    await b.close();
    await a.close();
  });

  it('one bucket per account for both: 100 look-ups spread over the two, then 429 on either', async () => {
    const client = await createClient(a);
    for (let i = 0; i < 100; i++) assert.equal((await inject(i % 2 === 0 ? a.app : b, client, dest.key)).statusCode, 200, `look-up ${i + 1}`);
    assert.equal(spent(await inject(a.app, client, dest.key)), 30);
    assert.equal(spent(await inject(b, client, dest.key)), 30);
    assert.deepEqual(await redis.hmget(`pix-api:dict:${ispb}:${client.accountId}`, 'level'), ['0']);
  });

  it('a miss through one instance is debt the other sees', async () => {
    const client = await createClient(a);
    for (let i = 0; i < 6; i++) {
      const res = await inject(i % 2 === 0 ? a.app : b, client, `nobody-${randomUUID()}@example.com`);
      if (i < 5) assertError(res, 404, undefined, 'PIX_KEY_NOT_FOUND');
      else assert.equal(spent(res), 30);
    }
    a.clock.advance(30_000);
    assert.equal((await inject(b, client, dest.key)).statusCode, 200);
    assert.equal(spent(await inject(a.app, client, dest.key)), 30);
  });
});
