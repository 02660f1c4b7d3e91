/**
 * The receiver's callbacks of Pix Automático, written in the transaction of the change they tell:
 * `POST {webhookrec}/rec` with `{"recs": [RecNotification]}` when a recurrence is approved,
 * rejected, expired or cancelled, and `POST {webhookcobr}/cobr` with `{"cobsr":
 * [CobRNotification]}` when a recurring charge or one of its attempts changes. Only for a
 * receiver that registered the webhook of that kind; delivered as every BCB callback is.
 */
import type { Trx } from '../../db/client.ts';
import { cobrNotificationView } from '../../dialects/bcb/cobr/views.ts';
import { recNotificationView } from '../../dialects/bcb/rec/views.ts';
import { automaticoSubject, enqueueAutomaticoCallback } from '../webhooks/automatico.ts';
import { chargeDetail, type RecurrenceRow } from './rows.ts';

export async function recurrenceCallback(trx: Trx, row: RecurrenceRow, at: Date): Promise<void> {
  await enqueueAutomaticoCallback(trx, { accountId: row.account_id, kind: 'rec', subject: automaticoSubject('rec', row.id_rec), payload: { recs: [recNotificationView(row)] } }, at);
}

export async function recurringChargeCallback(trx: Trx, chargeId: bigint, at: Date): Promise<void> {
  const detail = await chargeDetail(trx, chargeId);
  await enqueueAutomaticoCallback(
    trx,
    { accountId: detail.row.account_id, kind: 'cobr', subject: automaticoSubject('cobr', detail.row.txid), payload: { cobsr: [cobrNotificationView(detail)] } },
    at,
  );
}
