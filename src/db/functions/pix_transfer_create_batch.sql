-- Several transfers in one transaction and one commit (requests that arrive together), each
-- item with its own outcome and answer (docs/decisions/0010-transfer-batching.md).
--
-- No up-front lock of every ledger account of the batch: the items are taken in the order of
-- their payer's available ledger account (and in arrival order within one payer), so the
-- batch's row locks are taken in ascending id order by the postings themselves, the order
-- every other writer uses, and concurrent batches cannot deadlock; locking each row beforehand
-- cost one more WAL record per row.
--
-- Each item names the blocked shard that holds its money (transfers/batcher.ts holdShard):
-- NORM transfers in one half of the shards and HIGH transfers in the other, so that a HIGH
-- settlement, which comes within milliseconds, only waits for, and holds up, HIGH transfers
-- (docs/decisions/0011-sharded-blocked-money.md).
--
-- Each item's ledger accounts are found by scalar subqueries, planned alone as index probes:
-- PostgreSQL estimates any jsonb_to_recordset at 100 rows, for which joins hash sequential
-- scans of ledger_accounts, while a batch holds a few items.
CREATE OR REPLACE FUNCTION pix_transfer_create_batch(p_items jsonb)
RETURNS TABLE (ord integer, result transfer_create_result)
LANGUAGE plpgsql AS $$
DECLARE
  it record;
BEGIN
  FOR it IN
    SELECT x.*,
           (SELECT la.id FROM ledger_accounts la WHERE la.account_id = x.account_id AND la.code = 'available') AS available_id,
           (SELECT la.id FROM ledger_accounts la
             WHERE la.account_id = x.account_id AND la.code = 'blocked' AND la.shard = x.hold_shard) AS blocked_id
      FROM jsonb_to_recordset(p_items) AS x(
             ord integer, account_id bigint, idempotency_key text, request_hash text, amount bigint, pix_key text,
             priority text, expiration integer, creditor_document text, ispb_deny text[], description text,
             external_id text, end_to_end_id text, now timestamptz, hold_shard integer)
     ORDER BY available_id, x.ord
  LOOP
    IF it.available_id IS NULL OR it.blocked_id IS NULL THEN
      RAISE EXCEPTION 'account % has no ledger accounts (or no blocked shard %)', it.account_id, it.hold_shard;
    END IF;
    ord := it.ord;
    result := pix_transfer_create(it.account_id, it.idempotency_key, it.request_hash, it.amount, it.pix_key, it.priority,
                                  it.expiration, it.creditor_document, it.ispb_deny, it.description, it.external_id,
                                  it.end_to_end_id, it.now, it.available_id, it.blocked_id);
    RETURN NEXT;
  END LOOP;
END;
$$;
