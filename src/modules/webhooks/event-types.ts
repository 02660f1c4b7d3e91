import type { WebhookEventType } from '../../db/schema.ts';

/** The event types a webhook is registered for (`POST /api/webhooks`), in the order the API lists them. */
export const WEBHOOK_EVENT_TYPES = [
  'cash_in',
  'cash_out',
  'refund_in',
  'refund_out',
  'med_created',
  'med_accepted',
  'med_rejected',
] as const satisfies readonly WebhookEventType[];
