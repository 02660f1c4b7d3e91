-- Webhook delivery. Every notification gets its Standard Webhooks message id when it is
-- written, so each delivery and every retry or resend of it carries the same `webhook-id`.
ALTER TABLE outbox ADD COLUMN message_id text NOT NULL DEFAULT ('msg_' || replace(gen_random_uuid()::text, '-', ''));

-- A delivery is claimed by pushing next_attempt_at past the attempt's timeout (a lease): a
-- worker that dies mid-attempt leaves it to be claimed again, with the same message id.
ALTER TABLE webhook_deliveries ADD COLUMN event_type text;
ALTER TABLE webhook_deliveries ADD COLUMN transaction_id bigint;
ALTER TABLE webhook_deliveries ADD COLUMN last_attempt_at timestamptz;
CREATE INDEX webhook_deliveries_outbox_idx ON webhook_deliveries (outbox_id);
CREATE INDEX webhook_deliveries_webhook_idx ON webhook_deliveries (webhook_id) WHERE webhook_id IS NOT NULL;

-- The delivery log is read per account with filters, newest first.
CREATE INDEX webhook_logs_account_transaction_idx ON webhook_logs (account_id, transaction_id);
