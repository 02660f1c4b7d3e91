/**
 * The payer's notifications of Pix Automático, through the root webhooks (V2 envelope), written
 * in the transaction of the change they tell: an authorization asked of an account holder of
 * this service, approved, rejected, cancelled or expired (`AUTHORIZATION`), and a recurring
 * charge it pays scheduled, paid, failed or cancelled (`RECURRING_CHARGE`). Nothing for a payer at
 * another institution: its PSP tells it.
 */
import type { Trx } from '../../db/client.ts';
import { enqueue, type EventType } from '../notifications/repo.ts';
import { authorizationPayload, authorizationView, payerChargePayload, payerChargeView, type PayerFailure } from './payer-views.ts';
import { detailsOf, selectAuthorizations, selectPayerCharges, type RecurrenceRow, type SolicitationRow } from './rows.ts';

/** The ISPB of a recurrence's receiver PSP: the one in its idRec (R, R or N, then the ISPB). */
export const receiverIspbOf = (idRec: string): string => idRec.slice(2, 10);

const AUTHORIZATION_EVENTS: Partial<Record<RecurrenceRow['status'], EventType>> = {
  APROVADA: 'authorization_approved',
  REJEITADA: 'authorization_rejected',
  CANCELADA: 'authorization_cancelled',
  EXPIRADA: 'authorization_expired',
};

/** The latest solicitation of a recurrence that reached its payer here. */
export async function payerSolicitation(trx: Trx, rec: Pick<RecurrenceRow, 'id' | 'payer_account_id'>): Promise<SolicitationRow | null> {
  if (rec.payer_account_id === null) return null;
  const row = await trx
    .selectFrom('rec_solicitations')
    .selectAll()
    .where('recurrence_id', '=', rec.id)
    .where('payer_account_id', '=', rec.payer_account_id)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row ?? null;
}

/** After a recurrence changed: its payer here is told, by the status it reached (or that it was asked). */
export async function notifyAuthorization(trx: Trx, rec: RecurrenceRow, at: Date, asked = false): Promise<void> {
  if (rec.payer_account_id === null) return;
  const eventType = asked ? 'authorization_requested' : AUTHORIZATION_EVENTS[rec.status];
  if (eventType === undefined) return;
  const row = await selectAuthorizations(trx).where('recurrences.id', '=', rec.id).executeTakeFirstOrThrow();
  const view = authorizationView(row, await payerSolicitation(trx, rec), receiverIspbOf(rec.id_rec));
  await enqueue(trx, { accountId: rec.payer_account_id, eventType, transactionId: null, payload: authorizationPayload(view), now: at });
}

export type PayerChargeEvent = 'recurring_charge_scheduled' | 'recurring_charge_paid' | 'recurring_charge_failed' | 'recurring_charge_cancelled';

/** A recurring charge's payer here is told what happened to it (a failure with its code, and when it runs again). */
export async function notifyPayerCharge(trx: Trx, chargeId: bigint, eventType: PayerChargeEvent, at: Date, failure: PayerFailure | null = null): Promise<void> {
  const row = await selectPayerCharges(trx).where('recurring_charges.id', '=', chargeId).executeTakeFirst();
  if (!row) return;
  const [detail] = await detailsOf(trx, [row]);
  const paid = detail!.attempts.find((a) => a.status === 'PAGA')?.debit_transaction_id ?? null;
  const view = payerChargeView(detail!, receiverIspbOf(row.id_rec), at);
  await enqueue(trx, { accountId: row.payer_account_id, eventType, transactionId: eventType === 'recurring_charge_paid' ? paid : null, payload: payerChargePayload(view, failure), now: at });
}
