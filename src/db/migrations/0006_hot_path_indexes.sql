-- The webhook tables are on the hot path now (a delivery per notification, a log entry per
-- attempt): their foreign keys cost a KEY SHARE lock of the account's row (a WAL record, and a
-- multixact when several hold it) per insert. Like the other hot-path tables they are written
-- only by this service, for accounts that exist and are never deleted; a delivery whose
-- registration was removed finds no registration and fails (delivery.ts), where the foreign key
-- made the movement that wrote it fail instead.
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_outbox_id_fkey;
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_account_id_fkey;
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_webhook_id_fkey;
ALTER TABLE webhook_logs DROP CONSTRAINT webhook_logs_account_id_fkey;
ALTER TABLE webhook_logs DROP CONSTRAINT webhook_logs_delivery_id_fkey;
ALTER TABLE webhook_logs DROP CONSTRAINT webhook_logs_transaction_id_fkey;

-- Lookups by externalId: transfers (WITHDRAW) are found through the unique
-- transactions_account_external_idx already, so the plain index only needs the other rows. One
-- index entry fewer per transfer; the lookups name both halves (transactions/repo.ts).
DROP INDEX transactions_account_external_lookup_idx;
CREATE INDEX transactions_account_external_lookup_idx ON transactions (account_id, external_id)
  WHERE external_id IS NOT NULL AND type <> 'WITHDRAW';
