import { sql } from 'kysely';
import type { Db, DbExecutor, Trx } from '../../db/client.ts';
import { notFound } from '../../http/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { destinationOrigin, type DestinationPolicy } from './destination.ts';
import { callbackUrl } from './pix-callbacks.ts';
import { deliverableCallbacks } from './pix-keys.ts';
import { ensureDestination, lockAccount } from './repo.ts';
import { destination } from './service.ts';

/**
 * BCB's webhooks of Pix Automático (PUT /v2/webhookrec and /v2/webhookcobr): one URL per account
 * and kind, under the same destination rules as every other webhook. Their callbacks,
 * `POST {webhookUrl}/rec` with `{"recs": [...]}` and `POST {webhookUrl}/cobr` with
 * `{"cobsr": [...]}`, are written in the transaction of the change they tell (the outbox) and
 * delivered as the `/pix` callbacks are: signed, over mutual TLS, retried, fair, logged.
 */
export type AutomaticoKind = 'rec' | 'cobr';

/** What a callback is about, in `outbox.subject`: a recurrence by its idRec, a recurring charge by its txid. */
export const automaticoSubject = (kind: AutomaticoKind, id: string) => `${kind}:${id}`;

export interface AutomaticoWebhooksDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly policy: DestinationPolicy;
}

const noWebhook = (kind: AutomaticoKind) =>
  notFound('WEBHOOK_NOT_FOUND', kind === 'rec' ? 'No webhook of recurrences is registered' : 'No webhook of recurring charges is registered');

export function findAutomaticoWebhook(db: DbExecutor, accountId: bigint, kind: AutomaticoKind) {
  return db.selectFrom('automatico_webhooks').selectAll().where('account_id', '=', accountId).where('kind', '=', kind).executeTakeFirst();
}

export type AutomaticoWebhookRow = NonNullable<Awaited<ReturnType<typeof findAutomaticoWebhook>>>;

/** Registers or replaces the account's webhook of a kind; callbacks still to deliver go to the new URL. */
export async function putAutomaticoWebhook(deps: AutomaticoWebhooksDeps, accountId: bigint, kind: AutomaticoKind, webhookUrl: string): Promise<AutomaticoWebhookRow> {
  const url = await destination(webhookUrl, deps.policy, 'webhookUrl');
  await deliverableCallbacks(url, deps.policy, kind);
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    if (!(await lockAccount(trx, accountId))) throw notFound('ACCOUNT_NOT_FOUND', 'Account not found');
    const destinationId = await ensureDestination(trx, accountId, destinationOrigin(url), now);
    const existing = await findAutomaticoWebhook(trx, accountId, kind);
    if (!existing) {
      return trx
        .insertInto('automatico_webhooks')
        .values({ account_id: accountId, kind, webhook_url: url, destination_id: destinationId, created_at: now })
        .returningAll()
        .executeTakeFirstOrThrow();
    }
    if (existing.webhook_url === url) return existing;
    await sql`
      update webhook_deliveries set url = ${callbackUrl(url, kind)}, destination_id = ${destinationId}, held = false
       where webhook_id = ${existing.id} and event_type = ${kind} and status = 'PENDING'`.execute(trx);
    // Destinations are set once by the query builder's types; a new URL is the one case that moves them.
    await sql`update automatico_webhooks set webhook_url = ${url}, destination_id = ${destinationId} where id = ${existing.id}`.execute(trx);
    return trx.selectFrom('automatico_webhooks').selectAll().where('id', '=', existing.id).executeTakeFirstOrThrow();
  });
}

export async function getAutomaticoWebhook(deps: Pick<AutomaticoWebhooksDeps, 'db'>, accountId: bigint, kind: AutomaticoKind): Promise<AutomaticoWebhookRow> {
  const found = await findAutomaticoWebhook(deps.db, accountId, kind);
  if (!found) throw noWebhook(kind);
  return found;
}

/** Removes the account's webhook of a kind: its callbacks not yet delivered end as FAILED (they stay in the log). */
export async function deleteAutomaticoWebhook(deps: Pick<AutomaticoWebhooksDeps, 'db'>, accountId: bigint, kind: AutomaticoKind): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    await lockAccount(trx, accountId);
    const found = await findAutomaticoWebhook(trx, accountId, kind);
    if (!found) throw noWebhook(kind);
    const mine = trx.updateTable('webhook_deliveries').where('webhook_id', '=', found.id).where('event_type', '=', kind);
    await mine.set({ status: 'FAILED' }).where('status', '=', 'PENDING').execute();
    await mine.set({ webhook_id: null }).execute();
    await trx.deleteFrom('automatico_webhooks').where('id', '=', found.id).execute();
  });
}

/**
 * A callback of Pix Automático, written in the caller's transaction when the account has a
 * webhook of its kind: the notification (about `subject`, a recurrence or a recurring charge)
 * and its delivery, due at once. Nothing when it has none.
 */
export async function enqueueAutomaticoCallback(
  trx: Trx,
  callback: { accountId: bigint; kind: AutomaticoKind; subject: string; payload: unknown },
  now: Date,
): Promise<boolean> {
  const webhook = await findAutomaticoWebhook(trx, callback.accountId, callback.kind);
  if (!webhook) return false;
  const outbox = await trx
    .insertInto('outbox')
    .values({
      account_id: callback.accountId,
      event_type: callback.kind,
      transaction_id: null,
      subject: callback.subject,
      payload: JSON.stringify(callback.payload),
      created_at: now,
      dispatched_at: now,
    })
    .returning(['id', 'message_id'])
    .executeTakeFirstOrThrow();
  await trx
    .insertInto('webhook_deliveries')
    .values({
      outbox_id: outbox.id,
      account_id: callback.accountId,
      webhook_id: webhook.id,
      destination_id: webhook.destination_id,
      url: callbackUrl(webhook.webhook_url, callback.kind),
      message_id: outbox.message_id,
      status: 'PENDING',
      attempts: 0,
      next_attempt_at: now,
      created_at: now,
      event_type: callback.kind,
      transaction_id: null,
    })
    .execute();
  return true;
}

/**
 * The latest callback of Pix Automático to resend for `identifier`: a recurrence's idRec, else a
 * recurring charge's txid; with the webhook of its kind, if the account still has one.
 */
export async function automaticoCallbackToResend(db: DbExecutor, accountId: bigint, identifier: string, kinds: readonly AutomaticoKind[] = ['rec', 'cobr']) {
  for (const kind of kinds) {
    const notification = await db
      .selectFrom('outbox')
      .select(['id', 'payload', 'message_id'])
      .where('account_id', '=', accountId)
      .where('subject', '=', automaticoSubject(kind, identifier))
      .where('event_type', '=', kind)
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (notification) return { kind, notification, webhookUrl: (await findAutomaticoWebhook(db, accountId, kind))?.webhook_url ?? null };
  }
  return null;
}
