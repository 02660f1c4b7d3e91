import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../app.ts';
import { adminHeaders, startTestApp, testConfig, type TestApp } from '../../../test/harness.ts';
import { assertError } from '../../../test/assertions.ts';
import { redisAnswers, TEST_REDIS_URL } from '../../../test/redis.ts';

const redisUp = await redisAnswers();
const WRONG = { authorization: 'Bearer wrong-admin-token-0123456789' };
const run = randomInt(0x1000, 0xffff).toString(16);

/** An operator call from `from`, through the local proxy (127.0.0.1, trusted by default). */
function call(app: FastifyInstance, headers: Record<string, string>, from: string, url = '/admin/signing-keys') {
  return app.inject({ method: 'GET', url, headers: { ...headers, 'x-forwarded-for': from } });
}

describe('wrong admin tokens are limited per source', () => {
  let t: TestApp;

  before(async () => {
    t = await startTestApp({ adminFailuresPerMinute: 3 });
  });
  after(() => t.close());

  it('beyond 3 in a minute: 429 with Retry-After, the right token included, until the oldest is a minute old', async () => {
    const from = '203.0.113.60';
    assertError(await call(t.app, {}, from), 401, /admin/, 'ADMIN_TOKEN_INVALID');
    t.clock.advance(20_000);
    for (let i = 0; i < 2; i++) assertError(await call(t.app, WRONG, from), 401, /admin/, 'ADMIN_TOKEN_INVALID');
    const refused = await call(t.app, WRONG, from);
    assertError(refused, 429, /wrong admin tokens/, 'TOO_MANY_FAILED_ATTEMPTS');
    assert.equal(refused.headers['retry-after'], '40');
    const right = await call(t.app, adminHeaders, from);
    assertError(right, 429, /wrong admin tokens/, 'TOO_MANY_FAILED_ATTEMPTS');
    // The sandbox routes sit behind the same check.
    assertError(await t.app.inject({ method: 'POST', url: '/sandbox/settle', headers: { ...adminHeaders, 'x-forwarded-for': from } }), 429);
    // Another source is not held up.
    assert.equal((await call(t.app, adminHeaders, '203.0.113.61')).statusCode, 200);
    t.clock.advance(40_000);
    assert.equal((await call(t.app, adminHeaders, from)).statusCode, 200);
  });

  it('an IPv6 source is its /64', async () => {
    for (const host of ['1', '2', 'ab:cd']) assertError(await call(t.app, WRONG, `2001:db8:${run}:1::${host}`), 401);
    assertError(await call(t.app, adminHeaders, `2001:db8:${run}:1::ffff`), 429);
    assert.equal((await call(t.app, adminHeaders, `2001:db8:${run}:2::1`)).statusCode, 200);
  });

  it('successes are not counted', async () => {
    const from = '203.0.113.62';
    for (let i = 0; i < 10; i++) assert.equal((await call(t.app, adminHeaders, from)).statusCode, 200);
    for (let i = 0; i < 3; i++) assertError(await call(t.app, WRONG, from), 401);
    assertError(await call(t.app, WRONG, from), 429);
  });

  it('wrong tokens sent at once cannot slip under the limit together', async () => {
    const from = '203.0.113.63';
    const answers = await Promise.all(Array.from({ length: 20 }, () => call(t.app, WRONG, from)));
    assert.deepEqual(
      answers.map((a) => a.statusCode).sort(),
      [...Array<number>(3).fill(401), ...Array<number>(17).fill(429)],
    );
  });

  it('a caller that is not a trusted proxy is counted by its own address, whatever it forwards', async () => {
    const peer = '198.51.100.70';
    for (let i = 0; i < 3; i++) {
      const res = await t.app.inject({ method: 'GET', url: '/admin/signing-keys', headers: { ...WRONG, 'x-forwarded-for': `192.0.2.${i}` }, remoteAddress: peer });
      assertError(res, 401);
    }
    assertError(await t.app.inject({ method: 'GET', url: '/admin/signing-keys', headers: adminHeaders, remoteAddress: peer }), 429);
  });
});

describe('wrong admin tokens: the count is shared through Redis', { skip: redisUp ? false : `no Redis answers at ${TEST_REDIS_URL}` }, () => {
  let t: TestApp;
  let second: FastifyInstance;

  before(async () => {
    t = await startTestApp({ env: { REDIS_URL: TEST_REDIS_URL }, adminFailuresPerMinute: 2 });
    second = await buildApp({ config: testConfig({ REDIS_URL: TEST_REDIS_URL }), db: t.db, clock: t.clock, logLevel: false, adminFailuresPerMinute: 2 });
  });
  after(async () => {
    await second.close();
    await t.close();
  });

  it('failures in one process count in the other', async () => {
    const from = `2001:db8:${run}:99::1`;
    for (let i = 0; i < 2; i++) assertError(await call(t.app, WRONG, from), 401);
    assertError(await call(second, adminHeaders, `2001:db8:${run}:99::2`), 429);
  });
});
