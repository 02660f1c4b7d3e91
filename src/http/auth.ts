import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Clock } from '../lib/clock.ts';
import { isCurrentlyValid } from '../lib/certificate.ts';
import type { CertificateLinkCache } from '../modules/auth/link-cache.ts';
import { effectiveScopes } from '../modules/auth/scopes.ts';
import { InvalidToken, type TokenService } from '../modules/auth/tokens.ts';
import { presentedCertificate, requestSource, type CertificateTrust } from './client-certificate.ts';
import { AppError, badRequest, unauthorized } from './errors.ts';
import type { RateLimiter } from './rate-limit.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated account; set by the bearer-token hook on account routes. */
    accountId: bigint;
  }
}

const BEARER = /^Bearer +([A-Za-z0-9_\-.]{1,4096})$/i;

export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  return BEARER.exec(header)?.[1] ?? '';
}

export interface AuthDeps {
  readonly clock: Clock;
  readonly tokens: TokenService;
  readonly trust: CertificateTrust;
  readonly links: CertificateLinkCache;
}

/**
 * Verifies the access token on every account route: signature, expiry, and the RFC 8705 §3
 * binding. Every request must present the certificate the token is bound to (on the service's
 * own mutual TLS, or in X-SSL-Client-Cert from a trusted proxy): a token alone, stolen or not,
 * is 401. The bound certificate must also still be linked to the account and valid.
 */
export function accountAuthentication(deps: AuthDeps) {
  return async function authenticate(request: FastifyRequest): Promise<void> {
    const token = bearerToken(request);
    if (token === null) {
      throw unauthorized('TOKEN_MISSING', 'Missing access token: send Authorization: Bearer <token>', 'Bearer realm="pix-api"');
    }
    if (token === '') throw unauthorized('TOKEN_MALFORMED', 'Authorization header must be Bearer <token>');
    let claims;
    try {
      claims = await deps.tokens.verify(token);
    } catch (error) {
      if (error instanceof InvalidToken) throw unauthorized('TOKEN_INVALID', error.message);
      throw error;
    }
    const presented = presentedCertificate(request, deps.trust);
    if (presented.kind === 'malformed') throw badRequest('CERTIFICATE_MALFORMED', presented.reason);
    if (presented.kind === 'untrusted') throw unauthorized('CERTIFICATE_UNTRUSTED', presented.reason);
    if (presented.kind === 'absent') {
      throw unauthorized('CERTIFICATE_REQUIRED', `The access token is bound to a client certificate: present it. ${presented.reason}`);
    }
    if (presented.certificate.thumbprint !== claims.thumbprint) {
      throw unauthorized('CERTIFICATE_MISMATCH', 'The client certificate does not match the access token');
    }
    const linked = await deps.links.get(claims.accountId, claims.fingerprint);
    if (!linked?.active) {
      throw unauthorized('CERTIFICATE_UNLINKED', 'The certificate of this access token is no longer linked to the account');
    }
    if (!isCurrentlyValid(linked, deps.clock.now())) {
      throw unauthorized('CERTIFICATE_EXPIRED', 'The certificate of this access token has expired');
    }
    if (claims.secretVersion < linked.secretVersion) {
      throw unauthorized('TOKEN_INVALID', 'The access token was revoked: the client secret was rotated since it was issued');
    }
    request.accountId = claims.accountId;
    request.tokenScopes = effectiveScopes(claims.scopes, linked.scopes);
  };
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Wrong admin tokens a minute from one source (an IPv4 address, an IPv6 /64) before 429. */
export const FAILED_ADMIN_TOKENS_PER_MINUTE = 10;

export interface AdminAuthDeps {
  readonly adminToken: string;
  readonly clock: Clock;
  readonly trust: Pick<CertificateTrust, 'trustedProxies'>;
  /** Wrong tokens per source (requestSource): shared by every process through Redis when there is one. */
  readonly failures: RateLimiter;
}

const tooManyAdminFailures = (retryAfterSeconds: number) =>
  new AppError(429, 'TOO_MANY_FAILED_ATTEMPTS', 'Too many wrong admin tokens lately from this address; retry later', {
    headers: { 'retry-after': String(retryAfterSeconds) },
  });

/**
 * The operator's bearer token, compared in constant time (digests of equal length). A wrong one
 * is counted against its source, atomically, so that requests sent at once cannot all slip under
 * the limit; a source over the limit gets 429 whatever it sends, the right token included, or
 * guessing would go on with the answers telling right from wrong. Successes are not counted.
 */
export function adminAuthentication(deps: AdminAuthDeps) {
  const check = adminTokenCheck(deps);
  return async function authenticateAdmin(request: FastifyRequest): Promise<void> {
    await check(bearerToken(request), request);
  };
}

/**
 * The same check of a token given another way (the console's sign-in form): counted against the
 * same limit per source, so that no form is a way around it.
 */
export function adminTokenCheck(deps: AdminAuthDeps) {
  const expected = digest(deps.adminToken);
  return async function checkAdminToken(token: string | null, request: FastifyRequest): Promise<void> {
    const right = token ? timingSafeEqual(digest(token), expected) : false;
    const source = requestSource(request, deps.trust);
    const nowMs = deps.clock.now().getTime();
    const decision = right ? await deps.failures.peek(source, nowMs) : await deps.failures.hit(source, nowMs);
    if (!decision.allowed) throw tooManyAdminFailures(decision.retryAfterSeconds);
    if (!right) throw unauthorized('ADMIN_TOKEN_INVALID', 'A valid admin bearer token is required');
  };
}
