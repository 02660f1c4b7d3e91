-- Two costs of the transfer batch that pg_stat_statements (with nested statements) showed on the
-- bench, once the planner had true statistics of ledger_accounts (see worker/maintenance.ts):
--
-- 1. Migration 0007 found each item's available account and blocked shard with two LATERAL
--    joins. PostgreSQL estimates any jsonb_to_recordset at 100 rows, for which hash joins over
--    two sequential scans of ledger_accounts look cheapest; batches hold about four items. The
--    statement took 0.29 ms a batch, 17% of the batch function's time. Scalar subqueries run
--    once per item and are planned alone: two primary-key-sized index probes per item.
--
-- 2. The foreign key from ledger_accounts to accounts. PostgreSQL skips its check when an update
--    leaves the key alone, except when the row version being updated was written by the same
--    transaction: then it runs `SELECT 1 FROM accounts ... FOR KEY SHARE`, a query and a row lock
--    (a WAL record, and a multixact when batches share a payer). A batch updates a payer's
--    balances once per transfer and settlement a shard once per round, so this ran for 7,036 of
--    10,869 transfers. Like the other hot-path tables (migrations 0001 and 0006), ledger_accounts
--    is written only with ids the service has just read: its rows are made with their account,
--    in the same transaction (ledger/repo.ts), and accounts are never deleted.
ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_account_id_fkey;

CREATE OR REPLACE FUNCTION pix_transfer_create_batch(p_items jsonb, p_hold_shard integer)
RETURNS TABLE (ord integer, outcome text, response_status integer, response_body jsonb)
LANGUAGE plpgsql AS $$
DECLARE
  it record;
BEGIN
  -- In the order of each payer's available ledger account, the order every writer locks them in
  -- (migration 0005), and in arrival order within one payer.
  FOR it IN
    SELECT x.*,
           (SELECT la.id FROM ledger_accounts la WHERE la.account_id = x.account_id AND la.code = 'available') AS available_id,
           (SELECT la.id FROM ledger_accounts la
             WHERE la.account_id = x.account_id AND la.code = 'blocked' AND la.shard = p_hold_shard) AS blocked_id
      FROM jsonb_to_recordset(p_items) AS x(
             ord integer, account_id bigint, idempotency_key text, request_hash text, amount bigint, pix_key text,
             priority text, expiration integer, creditor_document text, ispb_deny text[], description text,
             external_id text, end_to_end_id text, now timestamptz)
     ORDER BY available_id, x.ord
  LOOP
    IF it.available_id IS NULL OR it.blocked_id IS NULL THEN
      RAISE EXCEPTION 'account % has no ledger accounts', it.account_id;
    END IF;
    RETURN QUERY SELECT it.ord, c.outcome, c.response_status, c.response_body
      FROM pix_transfer_create(it.account_id, it.idempotency_key, it.request_hash, it.amount, it.pix_key, it.priority,
                               it.expiration, it.creditor_document, it.ispb_deny, it.description, it.external_id,
                               it.end_to_end_id, it.now, it.available_id, it.blocked_id) c;
  END LOOP;
END;
$$;
