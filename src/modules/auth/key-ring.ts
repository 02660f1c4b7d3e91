import { importJWK, type CryptoKey, type JWK } from 'jose';
import type { Db } from '../../db/client.ts';
import type { Clock } from '../../lib/clock.ts';
import { unseal, type KeyEncryptionKey } from './key-encryption.ts';
import * as repo from './repo.ts';
import { prepareSigningKeys, SIGNING_ALGORITHM } from './signing-keys.ts';

/**
 * How long a process goes on using the set of active keys it read: a key rotated or retired
 * through another process (or the CLI) signs, or stops verifying, here within this time. A
 * change made through this process applies here at once (invalidate).
 */
export const SIGNING_KEY_CACHE_TTL_MS = 5_000;

interface KeySet {
  /** Public keys of the active keys, by kid. */
  readonly verifying: ReadonlyMap<string, CryptoKey>;
  /** The newest active key, which signs. */
  readonly signing: { readonly kid: string; readonly sealed: string } | undefined;
}

/**
 * This process's view of the signing keys in the database, read again when older than
 * SIGNING_KEY_CACHE_TTL_MS (one small query per process every 5 s at most, while requests come).
 * A kid it does not know is looked up at once, so a token signed by a key another process has
 * just created verifies here too; one such look-up at a time, however many ask.
 */
export class KeyRing {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #kek: KeyEncryptionKey;
  #set: KeySet | undefined;
  #loadedAtMs = 0;
  #loading: Promise<KeySet> | undefined;
  /** Raised by invalidate: a load that started before it does not become the current set. */
  #generation = 0;
  #imported = new Map<string, CryptoKey>();
  #signer: { kid: string; key: CryptoKey } | undefined;

  constructor(db: Db, clock: Clock, kek: KeyEncryptionKey) {
    this.#db = db;
    this.#clock = clock;
    this.#kek = kek;
  }

  /** Start-up: seals old rows, checks the key-encryption key (a wrong one throws ConfigError), ensures a key. */
  async prepare(): Promise<void> {
    await prepareSigningKeys(this.#db, this.#kek);
    this.invalidate();
    await this.#current();
  }

  /** Forgets the set, after a rotation or retirement made through this process. */
  invalidate(): void {
    this.#generation++;
    this.#set = undefined;
    this.#loading = undefined;
  }

  async signer(): Promise<{ kid: string; key: CryptoKey }> {
    let { signing } = await this.#current();
    if (!signing) {
      // Every key was retired behind the service's back, or a process of an older version wrote
      // a plain one: the start-up preparation puts it right.
      await this.prepare();
      signing = (await this.#current()).signing;
      if (!signing) throw new Error('no active signing key after preparing one');
    }
    if (this.#signer?.kid !== signing.kid) {
      const jwk = JSON.parse(unseal(this.#kek.key, signing.kid, signing.sealed)) as JWK;
      this.#signer = { kid: signing.kid, key: (await importJWK(jwk, SIGNING_ALGORITHM)) as CryptoKey };
    }
    return this.#signer;
  }

  /** The public key of an active key, or undefined for an unknown or retired kid. */
  async verificationKey(kid: string): Promise<CryptoKey | undefined> {
    const known = (await this.#current()).verifying.get(kid);
    return known ?? (await this.#reload()).verifying.get(kid);
  }

  async isActive(kid: string): Promise<boolean> {
    return (await this.#current()).verifying.has(kid);
  }

  #current(): Promise<KeySet> | KeySet {
    const age = this.#clock.now().getTime() - this.#loadedAtMs;
    // A clock moved back (tests do) makes the set stale rather than fresh for longer.
    if (this.#set && age >= 0 && age < SIGNING_KEY_CACHE_TTL_MS) return this.#set;
    return this.#reload();
  }

  #reload(): Promise<KeySet> {
    if (this.#loading) return this.#loading;
    const generation = this.#generation;
    const loadedAtMs = this.#clock.now().getTime();
    const loading = this.#load().then((set) => {
      if (generation === this.#generation) {
        this.#set = set;
        this.#loadedAtMs = loadedAtMs;
      }
      return set;
    });
    const settle = () => {
      if (this.#loading === loading) this.#loading = undefined;
    };
    loading.then(settle, settle);
    this.#loading = loading;
    return loading;
  }

  async #load(): Promise<KeySet> {
    const rows = await repo.activeSigningKeys(this.#db);
    const verifying = new Map<string, CryptoKey>();
    for (const row of rows) {
      const key = this.#imported.get(row.kid) ?? ((await importJWK(repo.jsonColumn(row.public_jwk) as JWK, row.algorithm)) as CryptoKey);
      verifying.set(row.kid, key);
    }
    // Only active keys stay imported: the map is as small as the set.
    this.#imported = verifying;
    const newest = rows[0];
    return { verifying, signing: newest?.private_key_sealed ? { kid: newest.kid, sealed: newest.private_key_sealed } : undefined };
  }
}
