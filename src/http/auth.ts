import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Clock } from '../lib/clock.ts';
import { isCurrentlyValid } from '../lib/certificate.ts';
import type { CertificateLinkCache } from '../modules/auth/link-cache.ts';
import { InvalidToken, type TokenService } from '../modules/auth/tokens.ts';
import { presentedCertificate, type CertificateTrust } from './client-certificate.ts';
import { badRequest, unauthorized } from './errors.ts';

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
 * Verifies the access token on every account route: signature, expiry, and the RFC 8705
 * binding. The bound certificate must still be linked to the account and valid; a certificate
 * presented with the request must be the bound one.
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
    if (presented.kind === 'present' && presented.certificate.thumbprint !== claims.thumbprint) {
      throw unauthorized('CERTIFICATE_MISMATCH', 'The client certificate does not match the access token');
    }
    const linked = await deps.links.get(claims.accountId, claims.fingerprint);
    if (!linked?.active) {
      throw unauthorized('CERTIFICATE_UNLINKED', 'The certificate of this access token is no longer linked to the account');
    }
    if (!isCurrentlyValid(linked, deps.clock.now())) {
      throw unauthorized('CERTIFICATE_EXPIRED', 'The certificate of this access token has expired');
    }
    request.accountId = claims.accountId;
  };
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** The operator's bearer token, compared in constant time. */
export function adminAuthentication(adminToken: string) {
  const expected = digest(adminToken);
  return async function authenticateAdmin(request: FastifyRequest): Promise<void> {
    const token = bearerToken(request);
    if (!token || !timingSafeEqual(digest(token), expected)) {
      throw unauthorized('ADMIN_TOKEN_INVALID', 'A valid admin bearer token is required');
    }
  };
}
