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
  'authorization_requested',
  'authorization_approved',
  'authorization_rejected',
  'authorization_cancelled',
  'authorization_expired',
  'recurring_charge_scheduled',
  'recurring_charge_paid',
  'recurring_charge_failed',
  'recurring_charge_cancelled',
] as const satisfies readonly WebhookEventType[];
