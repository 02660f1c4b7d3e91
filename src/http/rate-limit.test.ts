import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { MemoryRateLimiter, RedisRateLimiter, type RateLimiter } from './rate-limit.ts';
import { redisAnswers, TEST_REDIS_URL } from '../../test/redis.ts';

const redisUp = await redisAnswers();

/**
 * One property of a limiter, checked in memory, on Redis unreachable (the in-process fallback)
 * and on one Redis that two limiters share, where `shared` checks what one sees of the other.
 */
function onEveryLimiter(name: string, property: (limiter: RateLimiter) => Promise<void>, shared: (one: RateLimiter, two: RateLimiter) => Promise<void>): void {
  describe(name, () => {
    it('in memory', () => property(new MemoryRateLimiter(2, 60_000)));

    it('with Redis unreachable, in this process', async () => {
      const limiter = new RedisRateLimiter('redis://127.0.0.1:1', { limit: 2, windowMs: 60_000, prefix: `test:${randomUUID()}:`, onError: () => undefined });
      try {
        await property(limiter);
      } finally {
        await limiter.close();
      }
    });

    it('in Redis, shared by two limiters', { skip: redisUp ? false : `no Redis answers at ${TEST_REDIS_URL}` }, async () => {
      const options = { limit: 2, windowMs: 60_000, prefix: `test:${randomUUID()}:`, onError: (e: unknown) => assert.fail(String(e)) };
      const [one, two] = [new RedisRateLimiter(TEST_REDIS_URL, options), new RedisRateLimiter(TEST_REDIS_URL, options)];
      try {
        await property(one);
        await shared(one, two);
      } finally {
        await one.close();
        await two.close();
      }
    });
  });
}

/** peek tells what hit would, and counts nothing: a limit on failures only peeks, then hits on a failure. */
async function peekCountsNothing(limiter: RateLimiter): Promise<void> {
  const t0 = 1_000_000;
  for (let i = 0; i < 5; i++) assert.deepEqual(await limiter.peek('k', t0), { allowed: true, retryAfterSeconds: 0 });
  await limiter.hit('k', t0);
  await limiter.hit('k', t0 + 20_000);
  assert.deepEqual(await limiter.peek('k', t0 + 30_000), { allowed: false, retryAfterSeconds: 30 });
  assert.deepEqual(await limiter.peek('other', t0 + 30_000), { allowed: true, retryAfterSeconds: 0 });
  // The first hit leaves the window at t0 + 60 s.
  assert.deepEqual(await limiter.peek('k', t0 + 60_001), { allowed: true, retryAfterSeconds: 0 });
  assert.deepEqual(await limiter.hit('k', t0 + 60_001), { allowed: true, retryAfterSeconds: 0 });
  assert.deepEqual(await limiter.peek('k', t0 + 60_002), { allowed: false, retryAfterSeconds: 20 });
}

onEveryLimiter('RateLimiter.peek', peekCountsNothing, async (_one, two) => {
  // What one counted, the other sees.
  assert.equal((await two.peek('k', 1_060_002)).allowed, false);
});

/** An attempt counts from its reservation; a released one no longer counts, a refused one never did. */
async function reserveCountsUntilReleased(limiter: RateLimiter): Promise<void> {
  const t0 = 2_000_000;
  const first = await limiter.reserve('r', t0);
  const second = await limiter.reserve('r', t0);
  assert.deepEqual([first.allowed, second.allowed], [true, true]);
  const third = await limiter.reserve('r', t0 + 1_000);
  assert.deepEqual({ allowed: third.allowed, retryAfterSeconds: third.retryAfterSeconds }, { allowed: false, retryAfterSeconds: 59 });
  await third.release();
  assert.equal((await limiter.peek('r', t0 + 1_000)).allowed, false, 'releasing a refusal frees nothing');
  await first.release();
  assert.equal((await limiter.peek('r', t0 + 1_000)).allowed, true);
  await first.release();
  const fourth = await limiter.reserve('r', t0 + 2_000);
  assert.equal(fourth.allowed, true);
  assert.equal((await limiter.peek('r', t0 + 2_000)).allowed, false, 'a second release of one reservation frees no other');
  // Unreleased, the others leave the window as any hit does.
  assert.equal((await limiter.peek('r', t0 + 62_001)).allowed, true);
}

onEveryLimiter('RateLimiter.reserve', reserveCountsUntilReleased, async (one, two) => {
  const held = await one.reserve('s', 3_000_000);
  assert.equal((await two.reserve('s', 3_000_000)).allowed, true);
  assert.equal((await two.reserve('s', 3_000_000)).allowed, false, 'what one holds, the other sees');
  await held.release();
  assert.equal((await two.peek('s', 3_000_000)).allowed, true, 'and what one releases');
});

describe('MemoryRateLimiter under a flood of new keys (a new IPv6 /64 per request)', () => {
  it('stays linear and bounded: the least recently counted keys are forgotten first, a key counted lately is kept', async () => {
    const limiter = new MemoryRateLimiter(2, 60_000);
    const t0 = 5_000_000;
    await limiter.hit('early', t0);
    await limiter.hit('kept', t0);
    const started = performance.now();
    for (let i = 0; i < 120_000; i++) {
      if (i === 60_000) await limiter.hit('kept', t0 + 1);
      await limiter.hit(`source-${i}`, t0 + 1);
    }
    // A sweep of every key on every request (what this replaced) takes minutes here.
    assert.ok(performance.now() - started < 10_000, `${Math.round(performance.now() - started)} ms`);
    assert.equal((await limiter.peek('kept', t0 + 2)).allowed, false, 'counted twice, lately: remembered');
    assert.equal((await limiter.hit('early', t0 + 2)).allowed, true, 'counted once, longest ago: forgotten (looser, never stricter)');
  });
});
