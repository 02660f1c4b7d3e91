import { sql } from 'kysely';
import type { DbExecutor, Trx } from '../../db/client.ts';
import { prepared } from '../../db/prepared.ts';
import { PIX_CALLBACK_EVENT } from './repo.ts';

/** BCB's webhooks per key (pix_key_webhooks) and the deliveries of their callbacks. */

/** Whether the key is one of the account's in the directory. */
export async function accountHoldsKey(db: DbExecutor, accountId: bigint, key: string): Promise<boolean> {
  const row = await db.selectFrom('dict_keys').select('key').where('key', '=', key).where('account_id', '=', accountId).executeTakeFirst();
  return row !== undefined;
}

export function findKeyWebhook(db: DbExecutor, accountId: bigint, chave: string) {
  return db.selectFrom('pix_key_webhooks').selectAll().where('account_id', '=', accountId).where('chave', '=', chave).executeTakeFirst();
}

export type KeyWebhookRow = NonNullable<Awaited<ReturnType<typeof findKeyWebhook>>>;

export function insertKeyWebhook(trx: Trx, w: { accountId: bigint; chave: string; url: string; destinationId: bigint; now: Date }) {
  return trx
    .insertInto('pix_key_webhooks')
    .values({ account_id: w.accountId, chave: w.chave, webhook_url: w.url, destination_id: w.destinationId, created_at: w.now })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * A new URL for a key's webhook: the row, and the callbacks still to deliver, which go to the
 * new address (at its destination) from their next attempt.
 */
export async function changeKeyWebhookUrl(trx: Trx, id: bigint, change: { url: string; callbackUrl: string; destinationId: bigint }) {
  // Destinations are set once by the query builder's types; a new URL is the one case that moves them.
  await sql`
    update webhook_deliveries set url = ${change.callbackUrl}, destination_id = ${change.destinationId}, held = false
     where webhook_id = ${id} and event_type = ${PIX_CALLBACK_EVENT} and status = 'PENDING'`.execute(trx);
  await sql`update pix_key_webhooks set webhook_url = ${change.url}, destination_id = ${change.destinationId} where id = ${id}`.execute(trx);
  return trx.selectFrom('pix_key_webhooks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** Removes a key's webhook; its pending callbacks end as FAILED and keep their log. */
export async function deleteKeyWebhook(trx: Trx, id: bigint): Promise<void> {
  const mine = trx.updateTable('webhook_deliveries').where('webhook_id', '=', id).where('event_type', '=', PIX_CALLBACK_EVENT);
  await mine.set({ status: 'FAILED' }).where('status', '=', 'PENDING').execute();
  await mine.set({ webhook_id: null }).execute();
  await trx.deleteFrom('pix_key_webhooks').where('id', '=', id).execute();
}

/** A page of the account's webhooks per key created in the interval (either end optional), oldest first, and how many match. */
export async function listKeyWebhooks(db: DbExecutor, accountId: bigint, range: { from?: Date | undefined; to?: Date | undefined }, offset: number, limit: number) {
  let query = db.selectFrom('pix_key_webhooks').where('account_id', '=', accountId);
  if (range.from) query = query.where('created_at', '>=', range.from);
  if (range.to) query = query.where('created_at', '<=', range.to);
  const rows = await query.selectAll().orderBy('created_at').orderBy('id').offset(offset).limit(limit).execute();
  const counted = await query.select(sql<number>`count(*)::int4`.as('n')).executeTakeFirstOrThrow();
  return { rows, total: counted.n };
}

/** The received PIX with a txid among `ids` whose key has a webhook, with that webhook. */
export function callbackTargets(trx: Trx, transactionIds: readonly bigint[]) {
  return trx
    .selectFrom('transactions as t')
    .innerJoin('pix_key_webhooks as k', (j) => j.onRef('k.account_id', '=', 't.account_id').onRef('k.chave', '=', 't.pix_key'))
    .selectAll('t')
    .select(['k.id as webhook_id', 'k.webhook_url', 'k.destination_id'])
    .where('t.id', 'in', [...transactionIds])
    .where('t.type', '=', 'PAYMENT')
    .where('t.txid', 'is not', null)
    .orderBy('t.id')
    .execute();
}

/** The received PIX each refund among `ids` (REFUND_IN transactions) refunds. */
export async function originalsOfRefunds(trx: Trx, refundTransactionIds: readonly bigint[]): Promise<bigint[]> {
  const rows = await trx
    .selectFrom('transactions')
    .select('original_transaction_id')
    .where('id', 'in', [...refundTransactionIds])
    .where('type', '=', 'REFUND_IN')
    .where('original_transaction_id', 'is not', null)
    .execute();
  return [...new Set(rows.map((r) => r.original_transaction_id!))];
}

export interface CallbackRow {
  accountId: bigint;
  transactionId: bigint;
  webhookId: bigint;
  destinationId: bigint;
  url: string;
  payload: unknown;
}

/**
 * BCB's callbacks, written with their deliveries in the caller's transaction (the movement's):
 * one notification and one delivery each, due now, at the destination of the key webhook's URL.
 */
export async function enqueueCallbacks(trx: Trx, rows: readonly CallbackRow[], now: Date): Promise<void> {
  if (rows.length === 0) return;
  const json = rows.map((r) => ({
    account_id: r.accountId.toString(),
    transaction_id: r.transactionId.toString(),
    webhook_id: r.webhookId.toString(),
    destination_id: r.destinationId.toString(),
    url: r.url,
    payload: r.payload,
  }));
  await prepared('pix_callback_enqueue', sql`
    with e as (
      select * from rows from (jsonb_to_recordset(${JSON.stringify(json)}::jsonb)
               as (account_id int8, transaction_id int8, webhook_id int8, destination_id int8, url text, payload jsonb))
             with ordinality as e(account_id, transaction_id, webhook_id, destination_id, url, payload, n)),
    o as (
      insert into outbox (account_id, event_type, transaction_id, payload, created_at, dispatched_at)
      select e.account_id, ${PIX_CALLBACK_EVENT}, e.transaction_id, e.payload, ${now}::timestamptz, ${now}::timestamptz from e order by e.n
      returning id, account_id, transaction_id, message_id)
    insert into webhook_deliveries
      (outbox_id, account_id, webhook_id, destination_id, url, message_id, status, attempts, next_attempt_at, created_at, event_type, transaction_id)
    select o.id, o.account_id, e.webhook_id, e.destination_id, e.url, o.message_id, 'PENDING', 0, ${now}::timestamptz, ${now}::timestamptz,
           ${PIX_CALLBACK_EVENT}, o.transaction_id
      from o join e on e.account_id = o.account_id and e.transaction_id = o.transaction_id
     order by o.id`).execute(trx);
}

/**
 * Changes with every webhook per key made, moved to another URL or removed: a sum of a hash of
 * each row's id and URL (a small table, one row per key at most, with no column that says when a
 * row last changed).
 */
export const changeMarker = (db: DbExecutor) => db.selectFrom('pix_key_webhooks').select(sql<string>`sum(hashtext(id || ' ' || webhook_url))`.as('marker'));
