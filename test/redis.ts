import { Redis } from 'ioredis';

/** The local Redis the tests that share state through Redis use. */
export const TEST_REDIS_URL = 'redis://127.0.0.1:6379';

/** Whether the local Redis answers (tests that need it are skipped when it does not). */
export async function redisAnswers(): Promise<boolean> {
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, connectTimeout: 500, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}
