import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import { openRedis, whenConnected } from './rate-limit.ts';

/** How many tokens a bucket holds when full, and how fast it fills again. */
export interface BucketSize {
  readonly capacity: number;
  readonly refillPerMinute: number;
}

export interface BucketAnswer {
  /** Whether the bucket held the tokens (and now holds that many fewer). */
  allowed: boolean;
  /** take refused: whole seconds until the bucket holds the tokens asked for (at least 1); else 0. */
  retryAfterSeconds: number;
  /**
   * Tokens in the bucket afterwards, below zero when settlements ran it into debt; null when
   * tokens the process had got back paid, without asking the shared bucket.
   */
  tokens: number | null;
}

/**
 * Token buckets, one per key, each of the size its caller gives. A bucket that was never used,
 * or has been idle long enough, is full. Settlements may run a bucket into debt (down to
 * `floor`), which its refill pays off before it can be taken from again.
 */
export interface TokenBuckets {
  /** Takes `cost` tokens if the bucket holds them; otherwise takes nothing. */
  take(key: string, size: BucketSize, cost: number, nowMs: number): Promise<BucketAnswer>;
  /**
   * Takes `delta` more tokens (a positive delta), held or not, but never below `floor`; or gives
   * tokens back (a negative delta), never above capacity.
   */
  settle(key: string, size: BucketSize, delta: number, floor: number, nowMs: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Levels are kept in whole units of 1/60,000 of a token, so that a refill of n tokens a minute
 * adds exactly n units a millisecond: integers throughout, the same in Lua as in JavaScript.
 */
const UNIT = 60_000;
/** Buckets one process keeps before it forgets the ones that have filled up since. */
const SWEEP_AT = 100_000;

interface Level {
  units: number;
  atMs: number;
}

const waitSeconds = (missingUnits: number, refillPerMinute: number) => Math.max(1, Math.ceil(missingUnits / refillPerMinute / 1000));

/** One process's buckets: enough when a single process serves the API. */
export class MemoryTokenBuckets implements TokenBuckets {
  readonly #levels = new Map<string, Level & { size: BucketSize }>();
  #sweepAt = SWEEP_AT;

  /** The bucket refilled up to now (a clock that went back refills nothing). */
  #refilled(key: string, size: BucketSize, nowMs: number): Level {
    const full = size.capacity * UNIT;
    const stored = this.#levels.get(key);
    if (!stored) return { units: full, atMs: nowMs };
    if (nowMs <= stored.atMs) return { units: Math.min(full, stored.units), atMs: stored.atMs };
    return { units: Math.min(full, stored.units + (nowMs - stored.atMs) * size.refillPerMinute), atMs: nowMs };
  }

  #store(key: string, size: BucketSize, level: Level): number {
    // A full bucket is the same as none: idle accounts leave nothing behind.
    if (level.units >= size.capacity * UNIT) this.#levels.delete(key);
    else this.#levels.set(key, { ...level, size });
    if (this.#levels.size >= this.#sweepAt) this.#sweep(level.atMs);
    return level.units / UNIT;
  }

  /**
   * Forgets the buckets that their refill has filled since (they read as full anyway). Buckets
   * still in debt stay: forgetting one would forgive it. There is one per account at most.
   */
  #sweep(nowMs: number): void {
    for (const [key, { units, atMs, size }] of this.#levels) {
      if (units + Math.max(0, nowMs - atMs) * size.refillPerMinute >= size.capacity * UNIT) this.#levels.delete(key);
    }
    this.#sweepAt = Math.max(SWEEP_AT, this.#levels.size * 2);
  }

  async take(key: string, size: BucketSize, cost: number, nowMs: number): Promise<BucketAnswer> {
    const level = this.#refilled(key, size, nowMs);
    const costUnits = cost * UNIT;
    if (level.units < costUnits) {
      return { allowed: false, retryAfterSeconds: waitSeconds(costUnits - level.units, size.refillPerMinute), tokens: level.units / UNIT };
    }
    return { allowed: true, retryAfterSeconds: 0, tokens: this.#store(key, size, { units: level.units - costUnits, atMs: level.atMs }) };
  }

  async settle(key: string, size: BucketSize, delta: number, floor: number, nowMs: number): Promise<void> {
    const level = this.#refilled(key, size, nowMs);
    const units = delta < 0 ? Math.min(size.capacity * UNIT, level.units - delta * UNIT) : Math.max(floor * UNIT, level.units - delta * UNIT);
    this.#store(key, size, { units, atMs: level.atMs });
  }

  async close(): Promise<void> {}
}

// The same bucket, atomic in Redis. KEYS[1]: the bucket; ARGV: now (ms), capacity (units), refill
// (units per ms), amount (units), 'take', 'settle' or 'credit', floor (units), credit (units given
// back since the last command for this bucket). A full bucket is deleted; any other expires when
// its refill would have filled it. Returns {allowed, wait ms, level}.
const BUCKET = `
local now, full, rate, amount = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local level, at = full, now
local stored = redis.call('HMGET', KEYS[1], 'level', 'at')
if stored[1] then
  level, at = tonumber(stored[1]), tonumber(stored[2])
  if now > at then
    level = level + (now - at) * rate
    at = now
  end
end
level = math.min(full, level + tonumber(ARGV[7]))
local allowed, wait = 1, 0
if ARGV[5] == 'take' then
  if level >= amount then level = level - amount else allowed, wait = 0, math.ceil((amount - level) / rate) end
elseif ARGV[5] == 'settle' then
  level = math.max(tonumber(ARGV[6]), level - amount)
end
if level >= full then
  redis.call('DEL', KEYS[1])
else
  redis.call('HSET', KEYS[1], 'level', level, 'at', at)
  redis.call('PEXPIRE', KEYS[1], math.ceil((full - level) / rate) + 1000)
end
return {allowed, wait, level}
`;

type BucketCommand = (key: string, ...args: (string | number)[]) => Promise<[number, number, number]>;

/** Tokens given back to a bucket that no look-up of this process has used for this long go back to Redis. */
export const CREDIT_IDLE_MS = 1_000;

/** Tokens a process took from a shared bucket and got back, not yet returned to it. */
interface Credit {
  units: number;
  size: BucketSize;
  /** The bucket's clock when they were given back. */
  atMs: number;
  /** When a look-up last gave tokens back or used them (performance.now()). */
  usedAt: number;
}

/**
 * The buckets several service processes share (REDIS_URL). When Redis cannot answer, the
 * process falls back to its own buckets rather than refusing or waiting, as RedisRateLimiter does.
 *
 * Tokens given back (an accepted transfer's look-up) stay in the process a moment: the next
 * look-up of the same bucket here uses them without a command, and those that no look-up has
 * used for a second (CREDIT_IDLE_MS) go back to Redis (or with the next command for their bucket, which
 * carries them). A busy account's transfers then cost no command at all. These tokens were
 * taken from the shared bucket before: the bucket never pays for more look-ups than it held,
 * it only reads a little lower meanwhile to the other processes.
 */
export class RedisTokenBuckets implements TokenBuckets {
  readonly #redis: Redis;
  readonly #bucket: BucketCommand;
  readonly #fallback = new MemoryTokenBuckets();
  readonly #prefix: string;
  readonly #onError: (error: unknown) => void;
  readonly #credits = new Map<string, Credit>();
  readonly #creditIdleMs: number;
  /** The next return of idle tokens to Redis, and a way to make it now, for every bucket. */
  #flushed: Promise<void> | undefined;
  #flushNow: (() => void) | undefined;

  constructor(url: string, options: { prefix: string; onError: (error: unknown) => void; creditIdleMs?: number }) {
    this.#prefix = options.prefix;
    this.#onError = options.onError;
    this.#creditIdleMs = options.creditIdleMs ?? CREDIT_IDLE_MS;
    this.#redis = openRedis(url);
    // EVALSHA: the script is sent once per connection, not with every look-up.
    this.#redis.defineCommand('tokenBucket', { numberOfKeys: 1, lua: BUCKET });
    this.#bucket = (this.#redis as unknown as { tokenBucket: BucketCommand }).tokenBucket.bind(this.#redis);
  }

  take(key: string, size: BucketSize, cost: number, nowMs: number): Promise<BucketAnswer> {
    const credit = this.#credits.get(key);
    if (cost > 0 && credit && credit.units >= cost * UNIT) {
      credit.units -= cost * UNIT;
      credit.usedAt = performance.now();
      return Promise.resolve({ allowed: true, retryAfterSeconds: 0, tokens: null });
    }
    return this.#run(key, size, nowMs, [cost * UNIT, 'take', 0], () => this.#fallback.take(key, size, cost, nowMs));
  }

  async settle(key: string, size: BucketSize, delta: number, floor: number, nowMs: number): Promise<void> {
    if (delta < 0) {
      const pending = this.#credits.get(key);
      const units = (pending?.units ?? 0) - delta * UNIT;
      this.#credits.set(key, { units, size, atMs: Math.max(nowMs, pending?.atMs ?? nowMs), usedAt: performance.now() });
      this.#scheduleFlush();
      return;
    }
    await this.#run(key, size, nowMs, [delta * UNIT, 'settle', floor * UNIT], () => this.#fallback.settle(key, size, delta, floor, nowMs));
  }

  #scheduleFlush(): void {
    this.#flushed ??= new Promise((resolve) => {
      const now = (all = false) => {
        clearTimeout(timer);
        resolve(this.#flush(all));
      };
      const timer = setTimeout(now, this.#creditIdleMs).unref();
      this.#flushNow = () => now(true);
    });
  }

  /** Resolves once every token given back so far has gone back to Redis (none being used meanwhile). */
  async whenFlushed(): Promise<void> {
    while (this.#flushed) await this.#flushed;
  }

  /** Returns the tokens that no look-up has used lately (all of them when closing) to Redis. */
  async #flush(all: boolean): Promise<void> {
    this.#flushed = undefined;
    this.#flushNow = undefined;
    const idleSince = performance.now() - this.#creditIdleMs;
    const idle = [...this.#credits].filter(([, credit]) => all || credit.usedAt <= idleSince);
    if (idle.length < this.#credits.size) this.#scheduleFlush();
    await Promise.all(
      idle.map(([key, { units, size, atMs }]) =>
        units > 0 ? this.#run(key, size, atMs, [0, 'credit', 0], () => this.#fallback.take(key, size, 0, atMs)) : this.#credits.delete(key),
      ),
    );
  }

  async #run<T>(key: string, size: BucketSize, nowMs: number, args: [number, string, number], fallback: () => Promise<T>): Promise<BucketAnswer | T> {
    const credit = this.#credits.get(key);
    this.#credits.delete(key);
    try {
      await whenConnected(this.#redis);
      const [allowed, waitMs, units] = await this.#bucket(`${this.#prefix}${key}`, nowMs, size.capacity * UNIT, size.refillPerMinute, ...args, credit?.units ?? 0);
      return {
        allowed: allowed === 1,
        retryAfterSeconds: allowed === 1 ? 0 : Math.max(1, Math.ceil(waitMs / 1000)),
        tokens: units / UNIT,
      };
    } catch (error) {
      this.#onError(error);
      if (credit) await this.#fallback.settle(key, size, -credit.units / UNIT, 0, nowMs);
      return fallback();
    }
  }

  async close(): Promise<void> {
    const pending = this.#flushed;
    this.#flushNow?.();
    await pending;
    this.#redis.disconnect();
  }
}
