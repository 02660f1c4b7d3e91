import type { Db } from '../../db/client.ts';
import type { Clock } from '../../lib/clock.ts';
import { Lru } from '../../lib/lru.ts';
import { findLinkedCertificate } from '../accounts/repo.ts';

export interface Link {
  notBefore: Date;
  notAfter: Date;
  active: boolean;
}

/** How long another process may go on trusting a certificate that was unlinked elsewhere. */
export const LINK_CACHE_TTL_MS = 5_000;

/**
 * Whether a token's certificate is still linked to its account, read on every request and so
 * cached briefly. An unlink through this process drops the entry at once; other processes see it
 * within LINK_CACHE_TTL_MS.
 */
export class CertificateLinkCache {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #entries = new Lru<string, { link: Link | null; at: number }>(10_000);

  constructor(db: Db, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  async get(accountId: bigint, fingerprint: string): Promise<Link | null> {
    const key = `${accountId}:${fingerprint}`;
    const now = this.#clock.now().getTime();
    const hit = this.#entries.get(key);
    if (hit && now - hit.at < LINK_CACHE_TTL_MS && now >= hit.at) return hit.link;
    const row = await findLinkedCertificate(this.#db, accountId, fingerprint);
    const link = row ? { notBefore: row.not_before, notAfter: row.not_after, active: row.status === 'ACTIVE' } : null;
    this.#entries.set(key, { link, at: now });
    return link;
  }

  invalidate(accountId: bigint, fingerprint: string): void {
    this.#entries.delete(`${accountId}:${fingerprint}`);
  }
}
