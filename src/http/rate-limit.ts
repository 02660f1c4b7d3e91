import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';

export interface RateDecision {
  allowed: boolean;
  /** Whole seconds until a request would be allowed again (0 when allowed). */
  retryAfterSeconds: number;
}

/** At most `limit` requests per key in any window of `windowMs` (a sliding log). */
export interface RateLimiter {
  /** Counts a request if there is room for it, and tells whether there was. */
  hit(key: string, nowMs: number): Promise<RateDecision>;
  /** Whether a request would be allowed now, counting nothing (for limits on failures only). */
  peek(key: string, nowMs: number): Promise<RateDecision>;
  close(): Promise<void>;
}

const retryAfter = (oldestMs: number, windowMs: number, nowMs: number) => Math.max(1, Math.ceil((oldestMs + windowMs - nowMs) / 1000));

/** One process's limiter: enough when a single process serves the API. */
export class MemoryRateLimiter implements RateLimiter {
  readonly #log = new Map<string, number[]>();
  readonly #limit: number;
  readonly #windowMs: number;

  constructor(limit: number, windowMs: number) {
    this.#limit = limit;
    this.#windowMs = windowMs;
  }

  /** The key's requests still in the window, and the refusal they make, if they do. */
  #window(key: string, nowMs: number): { recent: number[]; refusal: RateDecision | null } {
    const recent = (this.#log.get(key) ?? []).filter((at) => at > nowMs - this.#windowMs);
    const refusal = recent.length >= this.#limit ? { allowed: false, retryAfterSeconds: retryAfter(recent[0]!, this.#windowMs, nowMs) } : null;
    return { recent, refusal };
  }

  async peek(key: string, nowMs: number): Promise<RateDecision> {
    return this.#window(key, nowMs).refusal ?? { allowed: true, retryAfterSeconds: 0 };
  }

  async hit(key: string, nowMs: number): Promise<RateDecision> {
    const { recent, refusal } = this.#window(key, nowMs);
    if (refusal) {
      this.#log.set(key, recent);
      return refusal;
    }
    recent.push(nowMs);
    this.#log.set(key, recent);
    // Keys of idle accounts would pile up: sweep now and then.
    if (this.#log.size > 10_000) {
      for (const [k, times] of this.#log) if (times.every((at) => at <= nowMs - this.#windowMs)) this.#log.delete(k);
    }
    return { allowed: true, retryAfterSeconds: 0 };
  }

  async close(): Promise<void> {}
}

// Atomic in Redis: drop entries older than the window, count, and when under the limit add this
// request (ARGV[4], its member); without a member only the count is read (peek).
const SLIDING_LOG = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))
local n = redis.call('ZCARD', KEYS[1])
if n < tonumber(ARGV[3]) then
  if ARGV[4] then
    redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
  end
  return {1, 0}
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {0, tonumber(oldest[2])}
`;

/** How long a request waits for the limiter's first connection to Redis. */
const CONNECT_WAIT_MS = 1_000;

/**
 * The limiter several service processes share (REDIS_URL). When Redis cannot answer, the
 * process falls back to its own count rather than refusing or waiting: a limit per process is
 * looser, but the service stays up.
 */
export class RedisRateLimiter implements RateLimiter {
  readonly #redis: Redis;
  readonly #fallback: MemoryRateLimiter;
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #prefix: string;
  readonly #onError: (error: unknown) => void;

  constructor(url: string, options: { limit: number; windowMs: number; prefix: string; onError: (error: unknown) => void }) {
    this.#limit = options.limit;
    this.#windowMs = options.windowMs;
    this.#prefix = options.prefix;
    this.#onError = options.onError;
    this.#fallback = new MemoryRateLimiter(options.limit, options.windowMs);
    this.#redis = new Redis(url, { lazyConnect: false, enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000 });
    this.#redis.on('error', () => undefined);
  }

  /**
   * Commands are not queued while Redis is away (they would wait), so a limiter just built would
   * count its first requests in-process while its connection is still being set up: those wait
   * for it, briefly. A connection lost later falls back at once.
   */
  async #connected(): Promise<void> {
    if (this.#redis.status !== 'connecting' && this.#redis.status !== 'connect') return;
    await new Promise<void>((resolve) => {
      const events = ['ready', 'error', 'close', 'end'] as const;
      const done = () => {
        clearTimeout(timer);
        for (const event of events) this.#redis.off(event, done);
        resolve();
      };
      const timer = setTimeout(done, CONNECT_WAIT_MS);
      for (const event of events) this.#redis.once(event, done);
    });
  }

  hit(key: string, nowMs: number): Promise<RateDecision> {
    return this.#run(key, nowMs, [`${nowMs}:${randomUUID()}`], () => this.#fallback.hit(key, nowMs));
  }

  peek(key: string, nowMs: number): Promise<RateDecision> {
    return this.#run(key, nowMs, [], () => this.#fallback.peek(key, nowMs));
  }

  async #run(key: string, nowMs: number, member: string[], fallback: () => Promise<RateDecision>): Promise<RateDecision> {
    try {
      await this.#connected();
      const [allowed, oldest] = (await this.#redis.eval(SLIDING_LOG, 1, `${this.#prefix}${key}`, nowMs, this.#windowMs, this.#limit, ...member)) as [number, number];
      return allowed === 1 ? { allowed: true, retryAfterSeconds: 0 } : { allowed: false, retryAfterSeconds: retryAfter(oldest, this.#windowMs, nowMs) };
    } catch (error) {
      this.#onError(error);
      return fallback();
    }
  }

  async close(): Promise<void> {
    this.#redis.disconnect();
  }
}
