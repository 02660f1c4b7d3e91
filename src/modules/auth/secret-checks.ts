import { availableParallelism } from 'node:os';
import { createHmac, randomBytes } from 'node:crypto';
import { AppError, overloaded } from '../../http/errors.ts';
import type { RateLimiter, Reservation } from '../../http/rate-limit.ts';
import { Gate, GateFull } from '../../lib/gate.ts';
import { Lru } from '../../lib/lru.ts';
import { verifySecret } from './secrets.ts';

/** Failed token requests a minute (a sliding window) beyond which each counter answers 429. */
export const FAILED_TOKEN_REQUESTS_PER_MINUTE = { source: 30, client: 10, certificate: 10 } as const;

/** Where failed token requests are counted: per source (an IPv4 address, an IPv6 /64), per client id, per certificate. */
export interface FailureCounters {
  readonly source: RateLimiter;
  readonly client: RateLimiter;
  readonly certificate: RateLimiter;
}

export interface SecretCheckOptions {
  /** Slow hashes computed at once (each holds a thread of libuv's pool and 32 MB). */
  concurrency: number;
  /** Token requests waiting for one; beyond, 503 at once. */
  maxWaiting: number;
  failures: FailureCounters;
}

/**
 * As many hashes at once as cores, but never all of libuv's threads (4 unless UV_THREADPOOL_SIZE
 * says otherwise), which also resolve the names of webhook destinations; about a second of them
 * waiting.
 * Why, and what was measured: docs/decisions/0019-limits-on-token-requests.md.
 */
export function defaultSecretCheckLimits(): { concurrency: number; maxWaiting: number } {
  const threads = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  const concurrency = Math.max(1, Math.min(threads - 1, availableParallelism()));
  return { concurrency, maxWaiting: 8 * concurrency };
}

const tooManyFailures = (retryAfterSeconds: number) =>
  new AppError(429, 'TOO_MANY_FAILED_ATTEMPTS', 'Too many failed token requests lately from this address, client or certificate; retry later', {
    headers: { 'retry-after': String(retryAfterSeconds) },
  });

/** The counters one failed token request counts against; a counter left out does not count it. */
export interface FailureKeys {
  readonly source: string;
  readonly certificate?: string;
  readonly client?: string;
}

/**
 * What stands between an anonymous token request and the slow hash of a client secret (scrypt,
 * deliberately slow). Only a request that presents a certificate linked to the client
 * id's own account gets that far (service.ts); before it:
 *
 * - Failed requests are counted per source, per certificate and per client id; one over its
 *   limit is 429 before any hash. The client id counts only requests that presented one of its
 *   own linked certificates, whose private key the proxy or our TLS saw proved: a stranger
 *   cannot spend a client's allowance. A request is counted while its hash runs and taken back
 *   when it succeeds, so requests sent at once cannot all pass the limit together.
 * - At most `concurrency` hashes run and `maxWaiting` wait; the rest get 503 at once.
 * - A secret that verified is remembered, by a keyed hash of it, together with the stored hash
 *   it matched (a rotation changes that): a client asking again does not take a slot. Only in
 *   this process's memory; the database keeps only the slow hash (decisions.md).
 * Why, and what was measured: docs/decisions/0019-limits-on-token-requests.md and
 * docs/decisions/0003-token-lifecycle.md.
 */
export class SecretChecks {
  readonly #gate: Gate;
  readonly #failures: FailureCounters;
  readonly #verified = new Lru<string, true>(4096);
  readonly #key = randomBytes(32);

  constructor(options: SecretCheckOptions) {
    this.#gate = new Gate(options);
    this.#failures = options.failures;
  }

  /** 429 when the source has failed too often lately: before anything is looked up. */
  async admitSource(source: string, nowMs: number): Promise<void> {
    const decision = await this.#failures.source.peek(source, nowMs);
    if (!decision.allowed) throw tooManyFailures(decision.retryAfterSeconds);
  }

  /** Counts a failure found without a hash (a certificate not linked, or linked to another client). */
  async failed(keys: FailureKeys, nowMs: number): Promise<void> {
    await Promise.all(this.#counted(keys).map(([counter, key]) => counter.hit(key, nowMs)));
  }

  /**
   * Counts an attempt against every counter of `keys` before its hash runs: 429 when one of them
   * is spent (the others are taken back). The answer withdraws the attempt when it succeeds.
   */
  async reserve(keys: FailureKeys, nowMs: number): Promise<{ release(): Promise<void> }> {
    const reservations: Reservation[] = await Promise.all(this.#counted(keys).map(([counter, key]) => counter.reserve(key, nowMs)));
    const release = async () => {
      await Promise.all(reservations.map((r) => r.release()));
    };
    const refused = reservations.filter((r) => !r.allowed);
    if (refused.length > 0) {
      await release();
      throw tooManyFailures(Math.max(...refused.map((r) => r.retryAfterSeconds)));
    }
    return { release };
  }

  #counted(keys: FailureKeys): [RateLimiter, string][] {
    const counted: [RateLimiter, string][] = [[this.#failures.source, keys.source]];
    if (keys.certificate !== undefined) counted.push([this.#failures.certificate, keys.certificate]);
    if (keys.client !== undefined) counted.push([this.#failures.client, keys.client]);
    return counted;
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

  async close(): Promise<void> {
    await Promise.all([this.#failures.source.close(), this.#failures.client.close(), this.#failures.certificate.close()]);
  }
}
