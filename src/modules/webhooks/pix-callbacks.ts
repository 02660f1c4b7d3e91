import type { DbExecutor, Trx } from '../../db/client.ts';
import { pixView } from '../../dialects/bcb/pix/views.ts';
import { refundsOf } from '../refunds/repo.ts';
import { callbackTargets, enqueueCallbacks, originalsOfRefunds } from './pix-key-repo.ts';
import { latestNotification, PIX_CALLBACK_EVENT } from './repo.ts';

/** A movement whose notification may also be one of BCB's callbacks. */
export interface CallbackCause {
  readonly eventType: string;
  readonly transactionId: bigint | null;
}

/**
 * Where BCB's callback of a webhook goes: `{webhookUrl}/pix` (API Pix, callbacks of
 * PUT /webhook/{chave}), `/rec` and `/cobr` (PUT /webhookrec, /webhookcobr), without doubling the
 * slash of a URL that ends in one.
 */
export function callbackUrl(webhookUrl: string, path: 'pix' | 'rec' | 'cobr' = 'pix'): string {
  return `${webhookUrl.replace(/\/+$/, '')}/${path}`;
}

/**
 * BCB's callbacks of a set of movements, written in their transaction: a received PIX with a
 * txid (`cash_in`) whose key has a webhook, and a refund of such a PIX that reached DEVOLVIDO or
 * NAO_REALIZADO (`refund_in`, written when it settles or fails), each as `{"pix": [<Pix>]}` with
 * the PIX's refunds as they are now. The root dialect's notifications of the same movements are
 * written beside them, each in its own format.
 */
export async function enqueuePixCallbacks(trx: Trx, causes: readonly CallbackCause[], now: Date): Promise<void> {
  const received = causes.flatMap((c) => (c.eventType === 'cash_in' && c.transactionId !== null ? [c.transactionId] : []));
  const refunds = causes.flatMap((c) => (c.eventType === 'refund_in' && c.transactionId !== null ? [c.transactionId] : []));
  if (received.length === 0 && refunds.length === 0) return;
  const originals = refunds.length === 0 ? [] : await originalsOfRefunds(trx, refunds);
  const ids = [...new Set([...received, ...originals])];
  if (ids.length === 0) return;
  const targets = await callbackTargets(trx, ids);
  if (targets.length === 0) return;
  const made = await refundsOf(trx, targets.map((t) => t.id));
  await enqueueCallbacks(
    trx,
    targets.map((t) => ({
      accountId: t.account_id,
      transactionId: t.id,
      webhookId: t.webhook_id,
      destinationId: t.destination_id,
      url: callbackUrl(t.webhook_url),
      payload: { pix: [pixView(t, made.filter((r) => r.original_transaction_id === t.id))] },
    })),
    now,
  );
}

/**
 * What a resend of a received PIX delivers again as BCB's callback: its latest callback (the
 * same `{"pix": [...]}` and webhook-id), to the URL its key's webhook has now. Null when the
 * PIX's key has no webhook, or the PIX never had a callback (no txid, or it arrived before the
 * key's webhook was registered).
 */
export async function callbackToResend(db: DbExecutor, accountId: bigint, transactionId: bigint) {
  const webhook = await db
    .selectFrom('transactions as t')
    .innerJoin('pix_key_webhooks as k', (j) => j.onRef('k.account_id', '=', 't.account_id').onRef('k.chave', '=', 't.pix_key'))
    .select('k.webhook_url')
    .where('t.id', '=', transactionId)
    .where('t.account_id', '=', accountId)
    .where('t.type', '=', 'PAYMENT')
    .executeTakeFirst();
  if (!webhook) return null;
  const notification = await latestNotification(db, accountId, transactionId, PIX_CALLBACK_EVENT);
  return notification ? { webhookUrl: webhook.webhook_url, notification } : null;
}
