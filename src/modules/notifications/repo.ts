import { sql } from 'kysely';
import type { Trx } from '../../db/client.ts';

export type EventType = 'cash_in' | 'cash_out' | 'refund_in' | 'refund_out' | 'med_created' | 'med_accepted' | 'med_rejected';

export interface OutboxEvent {
  accountId: bigint;
  eventType: EventType;
  transactionId: bigint | null;
  payload: { type: 'TRANSFER' | 'RECEIVE' | 'REFUND' | 'MED'; data: Record<string, unknown> };
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
  await trx
    .with('o', (db) =>
      db
        .insertInto('outbox')
        .values(
          events.map((event) => ({
            account_id: event.accountId,
            event_type: event.eventType,
            transaction_id: event.transactionId,
            payload: JSON.stringify(event.payload),
            created_at: event.now,
            dispatched_at: event.now,
          })),
        )
        .returning(['id', 'account_id', 'event_type', 'transaction_id', 'message_id', 'created_at']),
    )
    .insertInto('webhook_deliveries')
    .columns(['outbox_id', 'account_id', 'webhook_id', 'url', 'message_id', 'status', 'attempts', 'next_attempt_at', 'created_at', 'event_type', 'transaction_id'])
    .expression((eb) =>
      eb
        .selectFrom('o')
        .innerJoin('webhooks as w', (join) =>
          join.onRef('w.account_id', '=', 'o.account_id').onRef('w.event_type', '=', 'o.event_type').on('w.is_active', '=', true),
        )
        .select([
          'o.id',
          'o.account_id',
          'w.id as webhook_id',
          'w.url',
          'o.message_id',
          sql.lit('PENDING').as('status'),
          sql.lit(0).as('attempts'),
          'o.created_at as next_attempt_at',
          'o.created_at',
          'o.event_type',
          'o.transaction_id',
        ])
        .orderBy('o.id')
        .orderBy('w.id'),
    )
    .execute();
}
