import { randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, errors as joseErrors, exportJWK, generateKeyPair, importJWK, jwtVerify, SignJWT, type CryptoKey, type JWK } from 'jose';
import type { Db } from '../../db/client.ts';
import { thumbprintToFingerprint } from '../../lib/certificate.ts';
import type { Clock } from '../../lib/clock.ts';
import { LongKeyLru } from '../../lib/lru.ts';

export const TOKEN_LIFETIME_SECONDS = 1800;
const ALGORITHM = 'EdDSA';
const ISSUER = 'pix-api';
const TOKEN_TYPE = 'at+jwt';

export interface TokenClaims {
  readonly accountId: bigint;
  /** `cnf.x5t#S256`: base64url SHA-256 of the certificate the token was issued to. */
  readonly thumbprint: string;
  /** The same digest in hex, as account_certificates stores it (computed once per token). */
  readonly fingerprint: string;
}

export class InvalidToken extends Error {
  override name = 'InvalidToken';
}

/**
 * Asymmetric JWT signing with keys kept in the database, so every process of the service signs
 * and verifies with the same keys. The first process to need a key creates it.
 */
export class TokenService {
  readonly #db: Db;
  readonly #clock: Clock;
  #signing: Promise<{ kid: string; key: CryptoKey }> | undefined;
  readonly #publicKeys = new Map<string, Promise<CryptoKey | null>>();
  /** Tokens already verified: the signature check is the costly part and its answer never
   * changes; expiry is checked again on every use. */
  readonly #verified = new LongKeyLru<TokenClaims & { expiresAtMs: number }>(10_000);

  constructor(db: Db, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  async issue(accountId: bigint, thumbprint: string): Promise<{ token: string; expiresIn: number }> {
    const { kid, key } = await this.#signingKey();
    const now = Math.floor(this.#clock.now().getTime() / 1000);
    const token = await new SignJWT({ cnf: { 'x5t#S256': thumbprint } })
      .setProtectedHeader({ alg: ALGORITHM, kid, typ: TOKEN_TYPE })
      .setIssuer(ISSUER)
      .setSubject(accountId.toString())
      .setIssuedAt(now)
      .setExpirationTime(now + TOKEN_LIFETIME_SECONDS)
      .setJti(randomUUID())
      .sign(key);
    return { token, expiresIn: TOKEN_LIFETIME_SECONDS };
  }

  async verify(token: string): Promise<TokenClaims> {
    const known = this.#verified.get(token);
    if (known) {
      if (this.#clock.now().getTime() >= known.expiresAtMs) throw new InvalidToken('Access token expired');
      return known;
    }
    let payload;
    try {
      ({ payload } = await jwtVerify(token, (header) => this.#publicKey(header.kid), {
        algorithms: [ALGORITHM],
        issuer: ISSUER,
        typ: TOKEN_TYPE,
        currentDate: this.#clock.now(),
        requiredClaims: ['exp', 'iat', 'sub'],
      }));
    } catch (error) {
      // Only what is wrong with the token makes it invalid: a key lookup that failed (the
      // database unreachable or busy) is the service's trouble, answered 503, not a 401 that
      // would have the client throw away a good token.
      if (!(error instanceof InvalidToken) && !(error instanceof joseErrors.JOSEError)) throw error;
      const code = (error as { code?: string }).code;
      throw new InvalidToken(code === 'ERR_JWT_EXPIRED' ? 'Access token expired' : 'Access token is invalid');
    }
    const cnf = payload.cnf as Record<string, unknown> | undefined;
    const thumbprint = cnf?.['x5t#S256'];
    if (typeof thumbprint !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(thumbprint)) {
      throw new InvalidToken('Access token is not bound to a certificate');
    }
    if (!payload.sub || !/^[1-9]\d{0,18}$/.test(payload.sub)) throw new InvalidToken('Access token is invalid');
    const claims = { accountId: BigInt(payload.sub), thumbprint, fingerprint: thumbprintToFingerprint(thumbprint) };
    this.#verified.set(token, { ...claims, expiresAtMs: payload.exp! * 1000 });
    return claims;
  }

  #signingKey(): Promise<{ kid: string; key: CryptoKey }> {
    this.#signing ??= this.#loadOrCreateSigningKey().catch((error: unknown) => {
      this.#signing = undefined;
      throw error;
    });
    return this.#signing;
  }

  async #loadOrCreateSigningKey(): Promise<{ kid: string; key: CryptoKey }> {
    let row = await this.#newestKey();
    if (!row) {
      const { privateKey, publicKey } = await generateKeyPair(ALGORITHM, { extractable: true });
      const publicJwk = await exportJWK(publicKey);
      const kid = await calculateJwkThumbprint(publicJwk);
      await this.#db
        .insertInto('signing_keys')
        .values({
          kid,
          algorithm: ALGORITHM,
          private_jwk: JSON.stringify(await exportJWK(privateKey)),
          public_jwk: JSON.stringify(publicJwk),
        })
        .onConflict((oc) => oc.doNothing())
        .execute();
      // Another process may have created one at the same moment; every process signs with the
      // oldest active key, so they all agree.
      row = await this.#newestKey();
    }
    if (!row) throw new Error('no signing key after creating one');
    return { kid: row.kid, key: (await importJWK(row.private_jwk as JWK, ALGORITHM)) as CryptoKey };
  }

  #newestKey() {
    return this.#db
      .selectFrom('signing_keys')
      .select(['kid', 'private_jwk'])
      .where('retired_at', 'is', null)
      .orderBy('created_at', 'asc')
      .orderBy('kid', 'asc')
      .limit(1)
      .executeTakeFirst();
  }

  async #publicKey(kid: string | undefined): Promise<CryptoKey> {
    // Our kids are JWK thumbprints (base64url): anything else is no key of ours, and is not
    // sent to the database (a NUL in it would be refused there as a bad value, not a bad token).
    if (!kid || !/^[A-Za-z0-9_-]{1,128}$/.test(kid)) throw new InvalidToken('Access token has no key id');
    let pending = this.#publicKeys.get(kid);
    if (!pending) {
      pending = this.#db
        .selectFrom('signing_keys')
        .select('public_jwk')
        .where('kid', '=', kid)
        .where('retired_at', 'is', null)
        .executeTakeFirst()
        .then(async (row) => (row ? ((await importJWK(row.public_jwk as JWK, ALGORITHM)) as CryptoKey) : null));
      this.#publicKeys.set(kid, pending);
      // An unknown kid is not cached, so a key created later by another process is found.
      void pending.then((key) => key ?? this.#publicKeys.delete(kid), () => this.#publicKeys.delete(kid));
    }
    const key = await pending;
    if (!key) throw new InvalidToken('Access token signed by an unknown key');
    return key;
  }
}
