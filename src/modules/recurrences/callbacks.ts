/**
 * The receiver's callbacks of Pix Automático, written in the transaction of the change they tell:
 * `POST {webhookrec}/rec` with `{"recs": [RecNotification]}` when a recurrence is approved,
 * rejected, expired or cancelled, and `POST {webhookcobr}/cobr` with `{"cobsr":
 * [CobRNotification]}` when a recurring charge or one of its attempts changes. Only for a
 * receiver of this service that registered the webhook of that kind; delivered as every BCB
 * callback is. A recurrence's payer here is told too (payer-events.ts).
 */
import type { Trx } from '../../db/client.ts';
import { cobrNotificationView } from '../../dialects/bcb/cobr/views.ts';
import { recNotificationView } from '../../dialects/bcb/rec/views.ts';
import { automaticoSubject, enqueueAutomaticoCallback } from '../webhooks/automatico.ts';
import { notifyAuthorization } from './payer-events.ts';
import { chargeDetail, type RecurrenceRow } from './rows.ts';

export async function recurrenceCallback(trx: Trx, row: RecurrenceRow, at: Date): Promise<void> {
  if (row.account_id !== null) {
    const payload = { recs: [recNotificationView(row)] };
    await enqueueAutomaticoCallback(trx, { accountId: row.account_id, kind: 'rec', subject: automaticoSubject('rec', row.id_rec), payload }, at);
  }
  await notifyAuthorization(trx, row, at);
}

export async function recurringChargeCallback(trx: Trx, chargeId: bigint, at: Date): Promise<void> {
  const detail = await chargeDetail(trx, chargeId);
  if (detail.row.account_id === null) return;
  await enqueueAutomaticoCallback(
    trx,
    { accountId: detail.row.account_id, kind: 'cobr', subject: automaticoSubject('cobr', detail.row.txid), payload: { cobsr: [cobrNotificationView(detail)] } },
    at,
  );
}
