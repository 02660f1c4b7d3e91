import type { KeyWebhookRow } from '../../../modules/webhooks/pix-key-repo.ts';

/** BCB's `WebhookCompleto`. */
export function webhookView(row: KeyWebhookRow) {
  return { webhookUrl: row.webhook_url, chave: row.chave, criacao: row.created_at.toISOString() };
}
