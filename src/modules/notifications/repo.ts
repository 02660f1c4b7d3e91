import { sql } from 'kysely';
import type { DbExecutor, Trx } from '../../db/client.ts';
import { prepared } from '../../db/prepared.ts';
import { enqueuePixCallbacks } from '../webhooks/pix-callbacks.ts';

import type { WebhookEventType } from '../../db/schema.ts';

export type EventType = WebhookEventType;

export interface OutboxEvent {
  accountId: bigint;
  eventType: EventType;
  transactionId: bigint | null;
  payload: { type: 'TRANSFER' | 'RECEIVE' | 'REFUND' | 'MED' | 'AUTHORIZATION' | 'RECURRING_CHARGE'; data: Record<string, unknown> };
  now: Date;
}

/** Writes a notification in the caller's transaction: it exists only if the movement commits. */
export function enqueue(trx: Trx, event: OutboxEvent): Promise<void> {
  return enqueueMany(trx, [event]);
}

/**
 * Several notifications in one statement (a settled batch), each with its deliveries: one per
 * active webhook URL of the account and event type, due now. Written in the movement's
 * transaction, so they exist exactly when the movement does, and the worker only has to send.
 */
export async function enqueueMany(trx: Trx, events: readonly OutboxEvent[]): Promise<void> {
  if (events.length === 0) return;
  // The events travel as one JSON parameter: a settled batch of hundreds is one small statement
  // to build, bind and plan, not a VALUES list of thousands of parameters.
  const rows = events.map((event) => ({
    account_id: event.accountId.toString(),
    event_type: event.eventType,
    transaction_id: event.transactionId?.toString() ?? null,
    payload: event.payload,
    created_at: event.now.toISOString(),
  }));
  await prepared('outbox_enqueue', sql`
    with o as (
      insert into outbox (account_id, event_type, transaction_id, payload, created_at, dispatched_at)
      select e.account_id, e.event_type, e.transaction_id, e.payload, e.created_at, e.created_at
        from rows from (jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
               as (account_id int8, event_type text, transaction_id int8, payload jsonb, created_at timestamptz))
             with ordinality as e(account_id, event_type, transaction_id, payload, created_at, n)
       order by e.n
      returning id, account_id, event_type, transaction_id, message_id, created_at)
    insert into webhook_deliveries
      (outbox_id, account_id, webhook_id, destination_id, url, message_id, status, attempts, next_attempt_at, created_at, event_type, transaction_id)
    select o.id, o.account_id, w.id, w.destination_id, w.url, o.message_id, 'PENDING', 0, o.created_at, o.created_at, o.event_type, o.transaction_id
      from o join webhooks w on w.account_id = o.account_id and w.event_type = o.event_type and w.is_active
     order by o.id, w.id`).execute(trx);
  // BCB's callbacks of the same movements (a Pix with a txid at a key with a webhook per key).
  await enqueuePixCallbacks(trx, events, events[0]!.now);
}

/** The notifications of some of an account's transactions (MED events carry the disputed Pix's id), oldest first. */
export function notificationsOf(db: DbExecutor, accountId: bigint, transactionIds: readonly bigint[]) {
  if (transactionIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('outbox')
    .select(['id', 'event_type', 'transaction_id', 'message_id', 'payload', 'created_at'])
    .where('transaction_id', 'in', [...transactionIds])
    .where('account_id', '=', accountId)
    .orderBy('id')
    .execute();
}

export type NotificationRow = Awaited<ReturnType<typeof notificationsOf>>[number];

/** Changes with every notification: the newest id (an index look-up). */
export const changeMarker = (db: DbExecutor) => db.selectFrom('outbox').select((eb) => eb.fn.max('id').as('marker'));
