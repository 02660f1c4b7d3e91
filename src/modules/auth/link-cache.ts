import type { Db } from '../../db/client.ts';
import type { Clock } from '../../lib/clock.ts';
import { Lru } from '../../lib/lru.ts';
import { findLinkedCertificate } from '../accounts/repo.ts';

export interface Link {
  notBefore: Date;
  notAfter: Date;
  active: boolean;
  /** The account's client secret version: tokens issued under a lower one are revoked. */
  secretVersion: number;
  /** The scopes the client holds now (null: all of them); a token uses only those it carries that are among them. */
  scopes: readonly string[] | null;
}

/**
 * How long another process may go on trusting a certificate that was unlinked elsewhere, a
 * token whose client secret was rotated elsewhere, or a scope an operator removed elsewhere.
 */
export const LINK_CACHE_TTL_MS = 5_000;

/**
 * Whether a token's certificate is still linked to its account, and the account's client secret
 * version, read on every request and so cached briefly. An unlink or a rotation through this
 * process applies here at once; other processes see it within LINK_CACHE_TTL_MS.
 */
export class CertificateLinkCache {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #entries = new Lru<string, { link: Link | null; at: number; generation: number }>(10_000);
  /** Raised by every invalidation; an entry read before its account's last one is stale. */
  #generation = 0;
  readonly #accountChanged = new Lru<bigint, number>(10_000);

  constructor(db: Db, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  async get(accountId: bigint, fingerprint: string): Promise<Link | null> {
    const key = `${accountId}:${fingerprint}`;
    const now = this.#clock.now().getTime();
    const hit = this.#entries.get(key);
    if (hit && now - hit.at < LINK_CACHE_TTL_MS && now >= hit.at && hit.generation >= (this.#accountChanged.get(accountId) ?? 0)) return hit.link;
    // Taken before the read: an invalidation while it is in flight makes its answer stale.
    const generation = this.#generation;
    const row = await findLinkedCertificate(this.#db, accountId, fingerprint);
    const link = row
      ? { notBefore: row.not_before, notAfter: row.not_after, active: row.status === 'ACTIVE', secretVersion: row.client_secret_version, scopes: row.scopes }
      : null;
    this.#entries.set(key, { link, at: now, generation });
    return link;
  }

  invalidate(accountId: bigint, fingerprint: string): void {
    this.#entries.delete(`${accountId}:${fingerprint}`);
    this.#accountChanged.set(accountId, ++this.#generation);
  }

  /** Every cached link of the account, after its client secret was rotated or its scopes changed. */
  invalidateAccount(accountId: bigint): void {
    this.#accountChanged.set(accountId, ++this.#generation);
  }
}
