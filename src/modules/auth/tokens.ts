import { randomUUID } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { thumbprintToFingerprint } from '../../lib/certificate.ts';
import type { Clock } from '../../lib/clock.ts';
import { LongKeyLru } from '../../lib/lru.ts';
import type { KeyRing } from './key-ring.ts';
import { SCOPES, SERVICE_SCOPES } from './scopes.ts';
import { SIGNING_ALGORITHM } from './signing-keys.ts';

export const TOKEN_LIFETIME_SECONDS = 1800;
const ISSUER = 'pix-api';
const TOKEN_TYPE = 'at+jwt';

export interface TokenClaims {
  readonly accountId: bigint;
  /** `cnf.x5t#S256`: base64url SHA-256 of the certificate the token was issued to. */
  readonly thumbprint: string;
  /** The same digest in hex, as account_certificates stores it (computed once per token). */
  readonly fingerprint: string;
  /**
   * `sv`: the version of the client secret the token was issued under; a rotation raises the
   * account's, and revokes the token. Tokens from before versions existed carry none: 1.
   */
  readonly secretVersion: number;
  /** `scope`: the OAuth scopes granted (space-separated in the token); none when the claim is absent. */
  readonly scopes: ReadonlySet<string>;
}

/**
 * `scv`: the catalogue of scopes a token was issued under. 2 has the service's own scopes for
 * the root routes; a token without it was issued before they existed, when the root routes
 * required none.
 */
const SCOPE_CATALOG = 2;

/**
 * The scopes a token's claim grants. A token from before the service's own scopes existed that
 * carries every one of BCB's was granted everything the client held: it keeps the root routes
 * until it expires (30 minutes after an upgrade at most), within what the client holds now.
 */
export function scopesOfClaim(claim: string, catalog: unknown): ReadonlySet<string> {
  const scopes = new Set(claim.split(' ').filter(Boolean));
  if (catalog === undefined && SCOPES.every((scope) => SERVICE_SCOPES.includes(scope) || scopes.has(scope))) {
    for (const scope of SERVICE_SCOPES) scopes.add(scope);
  }
  return scopes;
}

export class InvalidToken extends Error {
  override name = 'InvalidToken';
}

/** Whole seconds since the epoch, as JWT claims count them. */
const seconds = (clock: Clock) => Math.floor(clock.now().getTime() / 1000);

/**
 * Asymmetric JWTs signed with the keys of the database (KeyRing): every process signs with the
 * newest active key and verifies with any active one.
 */
export class TokenService {
  readonly #keys: KeyRing;
  readonly #clock: Clock;
  /** Tokens already verified: the signature check is the costly part. Expiry and the key being
   * still active are checked again on every use. */
  readonly #verified = new LongKeyLru<TokenClaims & { expiresAtMs: number; kid: string }>(10_000);

  constructor(keys: KeyRing, clock: Clock) {
    this.#keys = keys;
    this.#clock = clock;
  }

  async issue(accountId: bigint, thumbprint: string, secretVersion: number, scopes: readonly string[] = []): Promise<{ token: string; expiresIn: number }> {
    const { kid, key } = await this.#keys.signer();
    const now = seconds(this.#clock);
    const token = await new SignJWT({ cnf: { 'x5t#S256': thumbprint }, sv: secretVersion, scope: scopes.join(' '), scv: SCOPE_CATALOG })
      .setProtectedHeader({ alg: SIGNING_ALGORITHM, kid, typ: TOKEN_TYPE })
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
      if (!(await this.#keys.isActive(known.kid))) {
        this.#verified.delete(token);
        throw new InvalidToken('Access token signed by an unknown or retired key');
      }
      return known;
    }
    const { payload, kid } = await this.#verifySignature(token);
    // Only this service issues tokens, all for 1800 s: a longer one was not made by its rules,
    // whatever signed it.
    if (payload.exp! - payload.iat! > TOKEN_LIFETIME_SECONDS) throw new InvalidToken(`Access token lifetime exceeds ${TOKEN_LIFETIME_SECONDS} s`);
    const cnf = payload.cnf as Record<string, unknown> | undefined;
    const thumbprint = cnf?.['x5t#S256'];
    if (typeof thumbprint !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(thumbprint)) {
      throw new InvalidToken('Access token is not bound to a certificate');
    }
    if (!payload.sub || !/^[1-9]\d{0,18}$/.test(payload.sub)) throw new InvalidToken('Access token is invalid');
    const secretVersion = payload.sv ?? 1;
    if (!Number.isSafeInteger(secretVersion) || (secretVersion as number) < 1) throw new InvalidToken('Access token is invalid');
    const scope = payload.scope ?? '';
    if (typeof scope !== 'string') throw new InvalidToken('Access token is invalid');
    const claims = {
      accountId: BigInt(payload.sub),
      thumbprint,
      fingerprint: thumbprintToFingerprint(thumbprint),
      secretVersion: secretVersion as number,
      scopes: scopesOfClaim(scope, payload.scv),
    };
    this.#verified.set(token, { ...claims, expiresAtMs: payload.exp! * 1000, kid });
    return claims;
  }

  async #verifySignature(token: string) {
    try {
      const { payload, protectedHeader } = await jwtVerify(token, (header) => this.#publicKey(header.kid), {
        algorithms: [SIGNING_ALGORITHM],
        issuer: ISSUER,
        typ: TOKEN_TYPE,
        currentDate: this.#clock.now(),
        requiredClaims: ['exp', 'iat', 'sub'],
      });
      return { payload, kid: protectedHeader.kid! };
    } catch (error) {
      // Only what is wrong with the token makes it invalid: a key lookup that failed (the
      // database unreachable or busy) is the service's trouble, answered 503, not a 401 that
      // would have the client throw away a good token.
      if (error instanceof InvalidToken || !(error instanceof joseErrors.JOSEError)) throw error;
      throw new InvalidToken(error.code === 'ERR_JWT_EXPIRED' ? 'Access token expired' : 'Access token is invalid');
    }
  }

  async #publicKey(kid: string | undefined) {
    // Our kids are JWK thumbprints (base64url): anything else is no key of ours, and is not
    // sent to the database (a NUL in it would be refused there as a bad value, not a bad token).
    if (typeof kid !== 'string' || !/^[A-Za-z0-9_-]{1,128}$/.test(kid)) throw new InvalidToken('Access token has no key id');
    const key = await this.#keys.verificationKey(kid);
    if (!key) throw new InvalidToken('Access token signed by an unknown or retired key');
    return key;
  }
}
