-- A transfer holds its money in a blocked shard chosen by the service for each item, not one
-- shard for the whole batch: NORM transfers in one half of the shards and HIGH transfers in the
-- other (transfers/batcher.ts holdShard).
--
-- HIGH transfers settle within milliseconds of their arrival, so their settlement locked the
-- very shard that every transfer arriving in the same 250 ms window was crediting: in the
-- bench's open loop (2,500 transfers/s, 10% HIGH) the credit to the blocked shard took 79 µs per
-- transfer on average (pg_stat_statements), most of it waiting for the settlement's lock; with
-- the two halves, 9 µs. A HIGH settlement now only waits for, and holds up, HIGH transfers.
--
-- A function of one argument. The old one of two (one shard for the whole batch) stays for the
-- processes of the previous version still running during a rolling upgrade, as a wrapper that
-- gives every item that shard: one body of the batch loop, not two.
CREATE FUNCTION pix_transfer_create_batch(p_items jsonb)
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
    RETURN QUERY SELECT it.ord, c.outcome, c.response_status, c.response_body
      FROM pix_transfer_create(it.account_id, it.idempotency_key, it.request_hash, it.amount, it.pix_key, it.priority,
                               it.expiration, it.creditor_document, it.ispb_deny, it.description, it.external_id,
                               it.end_to_end_id, it.now, it.available_id, it.blocked_id) c;
  END LOOP;
END;
$$;

CREATE OR REPLACE FUNCTION pix_transfer_create_batch(p_items jsonb, p_hold_shard integer)
RETURNS TABLE (ord integer, outcome text, response_status integer, response_body jsonb)
LANGUAGE sql AS $$
  SELECT * FROM pix_transfer_create_batch(
    (SELECT coalesce(jsonb_agg(item || jsonb_build_object('hold_shard', p_hold_shard)), '[]'::jsonb)
       FROM jsonb_array_elements(p_items) AS item));
$$;
