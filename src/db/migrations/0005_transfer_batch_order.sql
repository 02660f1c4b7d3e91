-- pix_transfer_create_batch of migration 0002 without the up-front lock of every ledger account
-- of the batch: the items are taken in the order of their payer's available ledger account (and
-- in arrival order within one payer), so the batch's row locks are taken in ascending id order
-- by the postings themselves, the order every other writer uses; locking each row beforehand
-- cost one more WAL record per row.
CREATE OR REPLACE FUNCTION pix_transfer_create_batch(p_items jsonb, p_hold_shard integer)
RETURNS TABLE (ord integer, outcome text, response_status integer, response_body jsonb)
LANGUAGE plpgsql AS $$
DECLARE
  it record;
BEGIN
  FOR it IN
    SELECT x.*, av.id AS available_id, bl.id AS blocked_id
      FROM jsonb_to_recordset(p_items) AS x(
             ord integer, account_id bigint, idempotency_key text, request_hash text, amount bigint, pix_key text,
             priority text, expiration integer, creditor_document text, ispb_deny text[], description text,
             external_id text, end_to_end_id text, now timestamptz)
      JOIN ledger_accounts av ON av.account_id = x.account_id AND av.code = 'available'
      JOIN ledger_accounts bl ON bl.account_id = x.account_id AND bl.code = 'blocked' AND bl.shard = p_hold_shard
     ORDER BY av.id, x.ord
  LOOP
    RETURN QUERY SELECT it.ord, c.outcome, c.response_status, c.response_body
      FROM pix_transfer_create(it.account_id, it.idempotency_key, it.request_hash, it.amount, it.pix_key, it.priority,
                               it.expiration, it.creditor_document, it.ispb_deny, it.description, it.external_id,
                               it.end_to_end_id, it.now, it.available_id, it.blocked_id) c;
  END LOOP;
END;
$$;

-- One index on end-to-end ids instead of two: (end_to_end_id, account_id) is unique (both sides of
-- an internal transfer share the id, one row per account) and serves the lookups by id alone
-- (the sandbox's) as well as those scoped to an account. One index fewer to write per movement.
CREATE UNIQUE INDEX transactions_e2e_account_idx ON transactions (end_to_end_id, account_id) WHERE end_to_end_id IS NOT NULL;
DROP INDEX transactions_account_e2e_idx;
DROP INDEX transactions_e2e_idx;

-- Stored idempotent answers expire in the order they were written: a BRIN index finds the
-- expired ones for housekeeping at a fraction of a btree's cost per insert.
DROP INDEX idempotency_keys_expires_idx;
CREATE INDEX idempotency_keys_expires_brin ON idempotency_keys USING brin (expires_at);

-- Fewer index entries per transfer (each costs CPU and WAL on the hot path):
-- - settling a transfer rewrites its row; with half of each page free the new version almost
--   always fits beside the old one (a HOT update, no index touched), where 30% left about a
--   third of them to be written to every index again;
ALTER TABLE transactions SET (fillfactor = 50);
-- - postings are the append-only audit trail, only ever read in bulk: no index at all;
ALTER TABLE postings DROP CONSTRAINT postings_pkey;
-- - the settlement queue is only read in order of arrival; claimed rows are deleted by ctid.
ALTER TABLE settlement_queue DROP CONSTRAINT settlement_queue_pkey;
