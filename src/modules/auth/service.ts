import type { Db } from '../../db/client.ts';
import { badRequest, forbidden, unauthorized } from '../../http/errors.ts';
import type { PresentedCertificate } from '../../http/client-certificate.ts';
import type { Clock } from '../../lib/clock.ts';
import { isCurrentlyValid } from '../../lib/certificate.ts';
import { findAccountByClientId, findCertificate } from '../accounts/repo.ts';
import type { SecretChecks } from './secret-checks.ts';
import { decoyHash } from './secrets.ts';
import type { TokenService } from './tokens.ts';

export interface TokenDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly tokens: TokenService;
  readonly secrets: SecretChecks;
}

const credentialsInvalid = () => unauthorized('INVALID_CLIENT', 'Invalid client credentials');

/**
 * Client credentials plus a linked certificate give a certificate-bound access token.
 * Credentials are checked first (the same work whether or not the client exists), then the
 * certificate: unknown 403, another account's 401, expired 401. `source` is the caller's
 * address: one that failed too often lately gets 429 before anything is checked.
 */
export async function issueToken(deps: TokenDeps, presented: PresentedCertificate, clientId: string, clientSecret: string, source: string) {
  if (presented.kind === 'absent' || presented.kind === 'malformed') throw badRequest('CERTIFICATE_REQUIRED', presented.reason);
  if (presented.kind === 'untrusted') throw unauthorized('CERTIFICATE_UNTRUSTED', presented.reason);
  await deps.secrets.admit(source, deps.clock.now().getTime());
  const account = await findAccountByClientId(deps.db, clientId);
  const secretOk = await deps.secrets.verify(clientSecret, account?.client_secret_hash ?? (await decoyHash()));
  if (!account || !secretOk || account.status !== 'ACTIVE') {
    await deps.secrets.failed(source, deps.clock.now().getTime());
    throw credentialsInvalid();
  }

  const cert = presented.certificate;
  const linked = await findCertificate(deps.db, cert.fingerprint);
  if (!linked) throw forbidden('CERTIFICATE_NOT_LINKED', 'Certificate is not linked to the account');
  if (linked.account_id !== account.id) {
    throw unauthorized('CERTIFICATE_OTHER_ACCOUNT', 'Certificate is bound to another account');
  }
  if (!isCurrentlyValid(cert, deps.clock.now())) throw unauthorized('CERTIFICATE_EXPIRED', 'Certificate has expired or is not yet valid');

  const { token, expiresIn } = await deps.tokens.issue(account.id, cert.thumbprint);
  return { access_token: token, token_type: 'Bearer' as const, expires_in: expiresIn };
}
