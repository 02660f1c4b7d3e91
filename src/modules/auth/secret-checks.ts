import { availableParallelism } from 'node:os';
import { createHmac, randomBytes } from 'node:crypto';
import { AppError, overloaded } from '../../http/errors.ts';
import type { RateLimiter } from '../../http/rate-limit.ts';
import { Gate, GateFull } from '../../lib/gate.ts';
import { Lru } from '../../lib/lru.ts';
import { verifySecret } from './secrets.ts';

export interface SecretCheckOptions {
  /** Slow hashes computed at once (each holds a thread of libuv's pool and 32 MB). */
  concurrency: number;
  /** Token requests waiting for one; beyond, 503 at once. */
  maxWaiting: number;
  /** Failed credential checks per source address (a sliding window); beyond, 429 until the oldest leaves it. */
  failures: RateLimiter;
}

/**
 * As many hashes at once as cores, but never all of libuv's threads (4 unless UV_THREADPOOL_SIZE
 * says otherwise), which also resolve the names of webhook destinations; about a second of them
 * waiting.
 */
export function defaultSecretCheckLimits(): { concurrency: number; maxWaiting: number } {
  const threads = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  const concurrency = Math.max(1, Math.min(threads - 1, availableParallelism()));
  return { concurrency, maxWaiting: 8 * concurrency };
}

export const FAILED_TOKEN_REQUESTS_PER_MINUTE = 30;

const tooManyFailures = (retryAfterSeconds: number) =>
  new AppError(429, 'TOO_MANY_FAILED_ATTEMPTS', 'Too many failed token requests from this address; retry later', {
    headers: { 'retry-after': String(retryAfterSeconds) },
  });

/**
 * What stands between an anonymous token request and the slow hash of a client secret (scrypt,
 * about 120 ms of a core here). Anyone holding any certificate can ask, so without limits 400
 * requests with made-up credentials kept a valid client waiting 21 s for its token (measured).
 *
 * - A source address with too many recent failures is refused (429) before any hash.
 * - At most `concurrency` hashes run and `maxWaiting` wait; the rest get 503 at once.
 * - A secret that verified is remembered, by a keyed hash of it, together with the stored hash
 *   it matched (a rotation changes that): a client asking again does not take a slot, so a flood
 *   of wrong credentials does not lock out the clients that hold right ones. Only in this
 *   process's memory; the database keeps only the slow hash (decisions.md).
 */
export class SecretChecks {
  readonly #gate: Gate;
  readonly #failures: RateLimiter;
  readonly #verified = new Lru<string, true>(4096);
  readonly #key = randomBytes(32);

  constructor(options: SecretCheckOptions) {
    this.#gate = new Gate(options);
    this.#failures = options.failures;
  }

  /** 429 when `source` has failed too often lately. */
  async admit(source: string, nowMs: number): Promise<void> {
    const decision = await this.#failures.peek(source, nowMs);
    if (!decision.allowed) throw tooManyFailures(decision.retryAfterSeconds);
  }

  async failed(source: string, nowMs: number): Promise<void> {
    await this.#failures.hit(source, nowMs);
  }

  /** Whether `secret` matches the stored hash; 503 when too many checks are in progress. */
  async verify(secret: string, stored: string): Promise<boolean> {
    const mark = `${stored}\n${createHmac('sha256', this.#key).update(secret).digest('base64url')}`;
    if (this.#verified.get(mark)) return true;
    let ok: boolean;
    try {
      ok = await this.#gate.run(() => verifySecret(secret, stored));
    } catch (error) {
      if (error instanceof GateFull) throw overloaded('Too many token requests in progress; retry shortly');
      throw error;
    }
    if (ok) this.#verified.set(mark, true);
    return ok;
  }

  close(): Promise<void> {
    return this.#failures.close();
  }
}
