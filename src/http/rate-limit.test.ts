import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { MemoryRateLimiter, RedisRateLimiter, type RateLimiter } from './rate-limit.ts';
import { redisAnswers, TEST_REDIS_URL } from '../../test/redis.ts';

const redisUp = await redisAnswers();

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

describe('RateLimiter.peek', () => {
  it('in memory', () => peekCountsNothing(new MemoryRateLimiter(2, 60_000)));

  it('with Redis unreachable, in this process', async () => {
    const limiter = new RedisRateLimiter('redis://127.0.0.1:1', { limit: 2, windowMs: 60_000, prefix: `test:${randomUUID()}:`, onError: () => undefined });
    try {
      await peekCountsNothing(limiter);
    } finally {
      await limiter.close();
    }
  });

  it('in Redis, shared by two limiters', { skip: redisUp ? false : `no Redis answers at ${TEST_REDIS_URL}` }, async () => {
    const options = { limit: 2, windowMs: 60_000, prefix: `test:${randomUUID()}:`, onError: (e: unknown) => assert.fail(String(e)) };
    const [one, two] = [new RedisRateLimiter(TEST_REDIS_URL, options), new RedisRateLimiter(TEST_REDIS_URL, options)];
    try {
      await peekCountsNothing(one);
      // What one counted, the other sees.
      assert.equal((await two.peek('k', 1_060_002)).allowed, false);
    } finally {
      await one.close();
      await two.close();
    }
  });
});
