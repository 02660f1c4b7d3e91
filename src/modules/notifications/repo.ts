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

/** Several notifications in one statement (a settled batch). */
export async function enqueueMany(trx: Trx, events: readonly OutboxEvent[]): Promise<void> {
  if (events.length === 0) return;
  await trx
    .insertInto('outbox')
    .values(
      events.map((event) => ({
        account_id: event.accountId,
        event_type: event.eventType,
        transaction_id: event.transactionId,
        payload: JSON.stringify(event.payload),
        created_at: event.now,
      })),
    )
    .execute();
}
