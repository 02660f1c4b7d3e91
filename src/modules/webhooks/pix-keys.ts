import type { Db } from '../../db/client.ts';
import { AppError, badRequest, notFound } from '../../http/errors.ts';
import type { ListQueries } from '../../http/list-queries.ts';
import type { Clock } from '../../lib/clock.ts';
import { parseDateBound } from '../../lib/dates.ts';
import { parsePixKey } from '../../lib/pix-key.ts';
import { destinationOrigin, type DestinationPolicy } from './destination.ts';
import { callbackUrl } from './pix-callbacks.ts';
import * as keys from './pix-key-repo.ts';
import { ensureDestination, lockAccount } from './repo.ts';
import { destination } from './service.ts';

/**
 * BCB's webhooks per key (PUT /v2/webhook/{chave}): one URL per key of the account, under the
 * same destination rules as the root's registrations, at the destination of the URL's origin.
 */
export interface KeyWebhooksDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly policy: DestinationPolicy;
  readonly lists: ListQueries;
}

/** Pages of at most this many. */
export const MAX_KEY_WEBHOOK_PAGE_SIZE = 1000;

/** A key as the directory stores it (e-mails in lower case); anything else as given, to be found nowhere. */
const stored = (chave: string) => parsePixKey(chave)?.key ?? chave;

const noWebhook = () => notFound('WEBHOOK_NOT_FOUND', 'No webhook is registered for this key');

/**
 * The callbacks of a webhook go to `{webhookUrl}/pix`: a URL whose callbacks could never be
 * delivered (the service's own inbox under a sub-path of its own, where the callback's would be
 * a second one) is refused when it is registered, with the reason, not at every callback.
 */
export async function deliverableCallbacks(webhookUrl: string, policy: DestinationPolicy, path: 'pix' | 'rec' | 'cobr' = 'pix'): Promise<void> {
  const callback = callbackUrl(webhookUrl, path);
  try {
    await destination(callback, policy);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    throw new AppError(400, 'INVALID_WEBHOOK_URL', `webhookUrl: its callbacks go to ${callback}, where they cannot be delivered (${error.message})`, { field: 'webhookUrl' });
  }
}

/** Registers or replaces the URL of a key's webhook; callbacks still to deliver go to the new one. */
export async function putKeyWebhook(deps: Pick<KeyWebhooksDeps, 'db' | 'clock' | 'policy'>, accountId: bigint, chave: string, webhookUrl: string) {
  const url = await destination(webhookUrl, deps.policy, 'webhookUrl');
  await deliverableCallbacks(url, deps.policy);
  const key = stored(chave);
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    if (!(await lockAccount(trx, accountId))) throw notFound('ACCOUNT_NOT_FOUND', 'Account not found');
    if (!(await keys.accountHoldsKey(trx, accountId, key))) throw badRequest('PIX_KEY_NOT_OWNED', 'The key is not one of this account\'s keys');
    const destinationId = await ensureDestination(trx, accountId, destinationOrigin(url), now);
    const existing = await keys.findKeyWebhook(trx, accountId, key);
    if (!existing) return keys.insertKeyWebhook(trx, { accountId, chave: key, url, destinationId, now });
    if (existing.webhook_url === url) return existing;
    return keys.changeKeyWebhookUrl(trx, existing.id, { url, callbackUrl: callbackUrl(url), destinationId });
  });
}

export async function getKeyWebhook(deps: KeyWebhooksDeps, accountId: bigint, chave: string) {
  const found = await keys.findKeyWebhook(deps.db, accountId, stored(chave));
  if (!found) throw noWebhook();
  return found;
}

/** Removes a key's webhook: its callbacks not yet delivered end as FAILED. */
export async function deleteKeyWebhook(deps: Pick<KeyWebhooksDeps, 'db'>, accountId: bigint, chave: string): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    await lockAccount(trx, accountId);
    const found = await keys.findKeyWebhook(trx, accountId, stored(chave));
    if (!found) throw noWebhook();
    await keys.deleteKeyWebhook(trx, found.id);
  });
}

function bound(text: string | undefined, field: string): Date | undefined {
  if (text === undefined) return undefined;
  const parsed = parseDateBound(text);
  if (!parsed) throw badRequest('INVALID_DATE', `${field} must be an RFC 3339 timestamp`);
  return parsed.at;
}

/** A page (0-based) of the account's webhooks per key created between `from` and `to` (each optional, inclusive). */
export async function listKeyWebhooks(deps: KeyWebhooksDeps, accountId: bigint, query: { from?: string | undefined; to?: string | undefined; page: number; size: number }) {
  const range = { from: bound(query.from, 'inicio'), to: bound(query.to, 'fim') };
  if (range.from && range.to && range.to < range.from) throw badRequest('INVALID_INTERVAL', 'fim must not be before inicio');
  if (query.size < 1 || query.size > MAX_KEY_WEBHOOK_PAGE_SIZE) throw badRequest('VALIDATION_FAILED', `the page size is 1 to ${MAX_KEY_WEBHOOK_PAGE_SIZE}`);
  return deps.lists.run(accountId, (db) => keys.listKeyWebhooks(db, accountId, range, query.page * query.size, query.size));
}
