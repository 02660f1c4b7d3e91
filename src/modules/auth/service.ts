import type { Db } from '../../db/client.ts';
import { badRequest, forbidden, unauthorized } from '../../http/errors.ts';
import type { PresentedCertificate } from '../../http/client-certificate.ts';
import type { Clock } from '../../lib/clock.ts';
import { isCurrentlyValid } from '../../lib/certificate.ts';
import { findCertificateHolder } from '../accounts/repo.ts';
import { OAuthError } from './oauth.ts';
import { heldScopes, type Scope } from './scopes.ts';
import type { SecretChecks } from './secret-checks.ts';
import type { TokenService } from './tokens.ts';

export interface TokenDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly tokens: TokenService;
  readonly secrets: SecretChecks;
}

/**
 * Client credentials plus a linked certificate give a certificate-bound access token.
 *
 * Everything that needs no slow hash comes first, so that only the holder of a certificate
 * linked to the client id's own account can make the service hash a secret: a source with too
 * many recent failures 429, a certificate linked to no account 403, one linked to another account
 * than the client id's 401 (the same answer whether or not that client id exists), an expired
 * one 401. Then the attempt is counted against the source, the certificate and the client id
 * (429 when one is spent), and the secret is hashed. `source` is the caller's address, an IPv6
 * one as its /64 (client-certificate.ts failureSource).
 */
export async function issueToken(
  deps: TokenDeps,
  presented: PresentedCertificate,
  clientId: string,
  clientSecret: string,
  source: string,
  requested: ReadonlySet<Scope> | null = null,
) {
  if (presented.kind === 'absent' || presented.kind === 'malformed') throw badRequest('CERTIFICATE_REQUIRED', presented.reason);
  if (presented.kind === 'untrusted') throw unauthorized('CERTIFICATE_UNTRUSTED', presented.reason);
  const nowMs = () => deps.clock.now().getTime();
  await deps.secrets.admitSource(source, nowMs());

  const cert = presented.certificate;
  const holder = await findCertificateHolder(deps.db, cert.fingerprint);
  if (!holder) {
    await deps.secrets.failed({ source }, nowMs());
    throw forbidden('CERTIFICATE_NOT_LINKED', 'Certificate is not linked to the account');
  }
  if (holder.client_id !== clientId) {
    await deps.secrets.failed({ source, certificate: cert.fingerprint }, nowMs());
    throw unauthorized('CERTIFICATE_OTHER_ACCOUNT', 'Certificate is bound to another account than these client credentials');
  }
  if (!isCurrentlyValid(cert, deps.clock.now())) throw unauthorized('CERTIFICATE_EXPIRED', 'Certificate has expired or is not yet valid');

  const attempt = await deps.secrets.reserve({ source, certificate: cert.fingerprint, client: holder.client_id }, nowMs());
  let secretOk: boolean;
  try {
    secretOk = await deps.secrets.verify(clientSecret, holder.client_secret_hash);
  } catch (error) {
    // Refused for load (503), not for the secret: not a failed attempt.
    await attempt.release();
    throw error;
  }
  // A failed attempt stays counted.
  if (!secretOk || holder.status !== 'ACTIVE') throw unauthorized('INVALID_CLIENT', 'Invalid client credentials');
  await attempt.release();

  // Only an authenticated client learns which scopes it holds.
  const held = heldScopes(holder.scopes);
  const granted = requested ? held.filter((scope) => requested.has(scope)) : held;
  if (requested && granted.length < requested.size) {
    throw new OAuthError(400, 'invalid_scope', `The client does not hold the scope ${[...requested].find((s) => !held.includes(s))}`);
  }
  const { token, expiresIn } = await deps.tokens.issue(holder.id, cert.thumbprint, holder.client_secret_version, granted);
  return { token: { access_token: token, token_type: 'Bearer' as const, expires_in: expiresIn }, scopes: granted };
}
