import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { MemoryTokenBuckets, RedisTokenBuckets, type TokenBuckets } from './token-bucket.ts';
import { redisAnswers, TEST_REDIS_URL } from '../../test/redis.ts';

const redisUp = await redisAnswers();

/** 10 tokens, 2 a minute: one every 30 s. */
const SIZE = { capacity: 10, refillPerMinute: 2 };
const T0 = 1_800_000_000_000;

/** Every implementation behaves the same, to the token and the second. */
async function bucketRules(buckets: TokenBuckets): Promise<void> {
  // A bucket never used is full; take empties it, one token at a time or more.
  assert.deepEqual(await buckets.take('a', SIZE, 4, T0), { allowed: true, retryAfterSeconds: 0, tokens: 6 });
  assert.deepEqual(await buckets.take('a', SIZE, 6, T0), { allowed: true, retryAfterSeconds: 0, tokens: 0 });
  // Empty: refused, and nothing taken; Retry-After is the time until it holds the cost.
  assert.deepEqual(await buckets.take('a', SIZE, 1, T0), { allowed: false, retryAfterSeconds: 30, tokens: 0 });
  assert.deepEqual(await buckets.take('a', SIZE, 3, T0 + 1), { allowed: false, retryAfterSeconds: 90, tokens: 2 / 60_000 });
  assert.equal((await buckets.take('b', SIZE, 1, T0)).tokens, 9, 'another key has its own bucket');
  // It refills at its rate, and never above capacity.
  assert.equal((await buckets.take('a', SIZE, 1, T0 + 29_999)).allowed, false);
  assert.deepEqual(await buckets.take('a', SIZE, 1, T0 + 30_000), { allowed: true, retryAfterSeconds: 0, tokens: 0 });
  assert.equal((await buckets.take('a', SIZE, 1, T0 + 30_000 + 3_600_000)).tokens, 9);
  // A clock that goes back refills nothing.
  assert.equal((await buckets.take('a', SIZE, 1, T0)).tokens, 8);

  // Settling takes more (into debt, down to the floor) or gives back (up to capacity). A take of
  // nothing reads the bucket.
  const tokens = async (key: string) => (await buckets.take(key, SIZE, 0, T0)).tokens;
  await buckets.settle('c', SIZE, 19, -200, T0);
  assert.equal(await tokens('c'), -9);
  assert.deepEqual(await buckets.take('c', SIZE, 1, T0), { allowed: false, retryAfterSeconds: 300, tokens: -9 });
  await buckets.settle('c', SIZE, 500, -200, T0);
  assert.equal(await tokens('c'), -200, 'the floor bounds the debt');
  await buckets.settle('c', SIZE, -205, -200, T0);
  assert.equal(await tokens('c'), 5);
  await buckets.settle('c', SIZE, -3, -200, T0);
  await buckets.settle('c', SIZE, -1, -200, T0);
  assert.equal(await tokens('c'), 9, 'tokens given back add up');
  await buckets.settle('c', SIZE, -50, -200, T0);
  assert.equal(await tokens('c'), 10, 'never above capacity');
  // A bigger bucket for the same key: what it held, refilled at its own rate.
  assert.equal((await buckets.take('a', { capacity: 1000, refillPerMinute: 20 }, 1, T0 + 3_630_000 + 60_000)).tokens, 8 + 20 - 1);
}

describe('TokenBuckets', () => {
  it('in memory', () => bucketRules(new MemoryTokenBuckets()));

  it('with Redis unreachable, in this process', async () => {
    const errors: unknown[] = [];
    const buckets = new RedisTokenBuckets('redis://127.0.0.1:1', { prefix: `test:${randomUUID()}:`, onError: (e) => errors.push(e) });
    try {
      await bucketRules(buckets);
      assert.ok(errors.length > 0, 'each fallback is reported');
    } finally {
      await buckets.close();
    }
  });

  it('in Redis, shared by two processes’ buckets', { skip: redisUp ? false : `no Redis answers at ${TEST_REDIS_URL}` }, async () => {
    const options = { prefix: `test:${randomUUID()}:`, onError: (e: unknown) => assert.fail(String(e)), creditIdleMs: 20 };
    const [one, two] = [new RedisTokenBuckets(TEST_REDIS_URL, options), new RedisTokenBuckets(TEST_REDIS_URL, options)];
    try {
      await bucketRules(one);
      // What one took, the other sees.
      assert.equal((await two.take('b', SIZE, 1, T0)).tokens, 8);
      assert.equal((await two.take('c', SIZE, 10, T0)).tokens, 0);
      assert.deepEqual(await one.take('c', SIZE, 1, T0), { allowed: false, retryAfterSeconds: 30, tokens: 0 });
      // Tokens one gives back reach the other shortly, with no command of one's own for that bucket.
      await one.settle('c', SIZE, -4, -200, T0);
      assert.equal((await two.take('c', SIZE, 0, T0)).tokens, 0, 'not yet');
      await one.whenFlushed();
      assert.equal((await two.take('c', SIZE, 0, T0)).tokens, 4);
    } finally {
      await one.close();
      await two.close();
    }
  });

  it('in Redis, tokens given back pay the next look-up of their bucket in the process, and go back when idle', { skip: redisUp ? false : `no Redis answers at ${TEST_REDIS_URL}` }, async () => {
    const options = { prefix: `test:${randomUUID()}:`, onError: (e: unknown) => assert.fail(String(e)), creditIdleMs: 20 };
    const [one, two] = [new RedisTokenBuckets(TEST_REDIS_URL, options), new RedisTokenBuckets(TEST_REDIS_URL, options)];
    try {
      // A transfer: its look-up is taken from Redis, then given back.
      assert.deepEqual(await one.take('k', SIZE, 1, T0), { allowed: true, retryAfterSeconds: 0, tokens: 9 });
      await one.settle('k', SIZE, -1, -200, T0);
      // The next look-up uses that token without asking Redis (tokens: null), and gives it back again.
      for (let i = 0; i < 5; i++) {
        assert.deepEqual(await one.take('k', SIZE, 1, T0), { allowed: true, retryAfterSeconds: 0, tokens: null });
        assert.equal((await two.take('k', SIZE, 0, T0)).tokens, 9, 'the shared bucket still holds the one in use');
        await one.settle('k', SIZE, -1, -200, T0);
      }
      // A miss's debt goes to Redis at once, with the token held here.
      await one.settle('k', SIZE, 19, -200, T0);
      assert.equal((await two.take('k', SIZE, 0, T0)).tokens, -9);
      await one.settle('k', SIZE, -2, -200, T0);
      await one.whenFlushed();
      assert.equal((await two.take('k', SIZE, 0, T0)).tokens, -7);
    } finally {
      await one.close();
      await two.close();
    }
  });

  it('in Redis, a full bucket is no key at all, and any other expires when it would be full', { skip: redisUp ? false : `no Redis answers at ${TEST_REDIS_URL}` }, async () => {
    const prefix = `test:${randomUUID()}:`;
    const buckets = new RedisTokenBuckets(TEST_REDIS_URL, { prefix, onError: (e: unknown) => assert.fail(String(e)) });
    const { Redis } = await import('ioredis');
    const redis = new Redis(TEST_REDIS_URL);
    try {
      await buckets.take('k', SIZE, 3, T0);
      const ttl = await redis.pttl(`${prefix}k`);
      // 3 tokens at one every 30 s, and a second of margin.
      assert.ok(ttl > 90_000 && ttl <= 91_000, `PTTL ${ttl}`);
      await buckets.settle('k', SIZE, -3, -200, T0);
      assert.equal(await buckets.take('k', SIZE, 0, T0).then((a) => a.tokens), 10);
      assert.equal(await redis.exists(`${prefix}k`), 0);
    } finally {
      await buckets.close();
      redis.disconnect();
    }
  });
});
