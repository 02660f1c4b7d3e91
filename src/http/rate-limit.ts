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
  /**
   * Counts an attempt if there is room, as hit does, and gives the way to take it back: a limit
   * on failures counts an attempt while it is in progress (so attempts made at once cannot all
   * pass a peek) and withdraws it when it succeeds.
   */
  reserve(key: string, nowMs: number): Promise<Reservation>;
  close(): Promise<void>;
}

export interface Reservation extends RateDecision {
  /** Withdraws the attempt (nothing when it was not counted). */
  release(): Promise<void>;
}

const nothingToRelease = async (): Promise<void> => undefined;

const retryAfter = (oldestMs: number, windowMs: number, nowMs: number) => Math.max(1, Math.ceil((oldestMs + windowMs - nowMs) / 1000));

/** Keys held before the first sweep of idle ones. */
const SWEEP_AT_KEYS = 10_000;
/**
 * Keys held at most: a flood from a new source per request (a new IPv6 /64 each time) makes one
 * key per request, all live for the window. Past this, the least recently counted are forgotten,
 * half at a time: a forgotten source starts again from nothing, which is looser, never stricter.
 */
const MAX_KEYS = 100_000;

/** One process's limiter: enough when a single process serves the API. */
export class MemoryRateLimiter implements RateLimiter {
  /** In the order the keys were last counted (a count moves its key to the end). */
  readonly #log = new Map<string, number[]>();
  readonly #limit: number;
  readonly #windowMs: number;
  #sweepAt = SWEEP_AT_KEYS;

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
    this.#log.delete(key);
    this.#log.set(key, recent);
    if (this.#log.size > this.#sweepAt) this.#sweep(nowMs);
    return { allowed: true, retryAfterSeconds: 0 };
  }

  /**
   * Drops keys with nothing left in the window, and past MAX_KEYS the least recently counted.
   * The next sweep waits until the map has doubled (or reached MAX_KEYS): a sweep walks every
   * key, and one on every request of a flood would cost as much as the flood's keys.
   */
  #sweep(nowMs: number): void {
    for (const [k, times] of this.#log) if (times.every((at) => at <= nowMs - this.#windowMs)) this.#log.delete(k);
    if (this.#log.size > MAX_KEYS / 2) {
      for (const k of this.#log.keys()) {
        if (this.#log.size <= MAX_KEYS / 2) break;
        this.#log.delete(k);
      }
    }
    this.#sweepAt = Math.min(MAX_KEYS, Math.max(SWEEP_AT_KEYS, 2 * this.#log.size));
  }

  async reserve(key: string, nowMs: number): Promise<Reservation> {
    const decision = await this.hit(key, nowMs);
    if (!decision.allowed) return { ...decision, release: nothingToRelease };
    let released = false;
    return {
      ...decision,
      release: async () => {
        if (released) return;
        released = true;
        // Entries of one time are alike: taking back any one of them is taking back this one.
        const times = this.#log.get(key);
        const at = times?.lastIndexOf(nowMs) ?? -1;
        if (at >= 0) times!.splice(at, 1);
      },
    };
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

/** How long a request waits for a limiter's first connection to Redis. */
const CONNECT_WAIT_MS = 1_000;

/**
 * A connection for limits: commands are not queued while Redis is away (they would wait), and
 * fail after one retry, so that the caller can fall back to counting in its own process.
 */
export function openRedis(url: string): Redis {
  const redis = new Redis(url, { lazyConnect: false, enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000 });
  redis.on('error', () => undefined);
  return redis;
}

/**
 * Since commands are not queued, a limiter just built would count its first requests in-process
 * while its connection is still being set up: those wait for it, briefly. A connection lost
 * later falls back at once.
 */
export async function whenConnected(redis: Redis): Promise<void> {
  if (redis.status !== 'connecting' && redis.status !== 'connect') return;
  await new Promise<void>((resolve) => {
    const events = ['ready', 'error', 'close', 'end'] as const;
    const done = () => {
      clearTimeout(timer);
      for (const event of events) redis.off(event, done);
      resolve();
    };
    const timer = setTimeout(done, CONNECT_WAIT_MS);
    for (const event of events) redis.once(event, done);
  });
}

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
    this.#redis = openRedis(url);
  }

  async hit(key: string, nowMs: number): Promise<RateDecision> {
    try {
      return await this.#run(key, nowMs, [`${nowMs}:${randomUUID()}`]);
    } catch (error) {
      this.#onError(error);
      return this.#fallback.hit(key, nowMs);
    }
  }

  async peek(key: string, nowMs: number): Promise<RateDecision> {
    try {
      return await this.#run(key, nowMs, []);
    } catch (error) {
      this.#onError(error);
      return this.#fallback.peek(key, nowMs);
    }
  }

  async reserve(key: string, nowMs: number): Promise<Reservation> {
    const member = `${nowMs}:${randomUUID()}`;
    let decision: RateDecision;
    try {
      decision = await this.#run(key, nowMs, [member]);
    } catch (error) {
      this.#onError(error);
      return this.#fallback.reserve(key, nowMs);
    }
    if (!decision.allowed) return { ...decision, release: nothingToRelease };
    return {
      ...decision,
      release: async () => {
        try {
          await this.#redis.zrem(`${this.#prefix}${key}`, member);
        } catch (error) {
          // The attempt stays counted until it leaves the window: stricter, never looser.
          this.#onError(error);
        }
      },
    };
  }

  async #run(key: string, nowMs: number, member: string[]): Promise<RateDecision> {
    await whenConnected(this.#redis);
    const [allowed, oldest] = (await this.#redis.eval(SLIDING_LOG, 1, `${this.#prefix}${key}`, nowMs, this.#windowMs, this.#limit, ...member)) as [number, number];
    return allowed === 1 ? { allowed: true, retryAfterSeconds: 0 } : { allowed: false, retryAfterSeconds: retryAfter(oldest, this.#windowMs, nowMs) };
  }

  async close(): Promise<void> {
    this.#redis.disconnect();
  }
}
