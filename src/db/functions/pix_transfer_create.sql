-- POST /dict/pix in one round trip: idempotency, directory checks, the guarded debit and the
-- stored answer, all in the caller's transaction. The outcome is a code the service maps to
-- HTTP; only 'created' and 'replay' carry a body. Called for each item by
-- pix_transfer_create_batch, which looks up the payer's ledger accounts.
CREATE OR REPLACE FUNCTION pix_transfer_create(
  p_account_id        bigint,
  p_idempotency_key   text,
  p_request_hash      text,
  p_amount_centavos   bigint,
  p_pix_key           text,
  p_priority          text,
  p_expiration_s      integer,
  p_creditor_document text,
  p_ispb_deny         text[],
  p_description       text,
  p_external_id       text,
  p_end_to_end_id     text,
  p_now               timestamptz,
  p_available_id      bigint,
  p_blocked_id        bigint
) RETURNS TABLE (outcome text, response_status integer, response_body jsonb)
LANGUAGE plpgsql AS $$
DECLARE
  v_existing   idempotency_keys%ROWTYPE;
  v_key        dict_keys%ROWTYPE;
  v_ledger_tx  bigint;
  v_tx_id      bigint;
  v_body       jsonb;
  v_external_id text;
  v_locked     boolean;
BEGIN
  v_locked := pg_try_advisory_xact_lock(hashtextextended(p_account_id::text || ':' || p_idempotency_key, 7262));

  -- A stored answer is final until it expires: replay it (or refuse another body) even while
  -- another transaction holds the key, since that one can only be replaying it as well.
  SELECT * INTO v_existing FROM idempotency_keys
   WHERE account_id = p_account_id AND key = p_idempotency_key;
  IF FOUND AND v_existing.expires_at > p_now THEN
    IF v_existing.request_hash <> p_request_hash THEN
      RETURN QUERY SELECT 'idempotency_mismatch'::text, NULL::integer, NULL::jsonb;
    ELSE
      RETURN QUERY SELECT 'replay'::text, v_existing.response_status, v_existing.response_body;
    END IF;
    RETURN;
  END IF;

  -- No answer yet and another transaction holding this key: the first request is still in
  -- flight. 409 at once, instead of waiting on the unique index.
  IF NOT v_locked THEN
    RETURN QUERY SELECT 'in_flight'::text, NULL::integer, NULL::jsonb;
    RETURN;
  END IF;
  IF v_existing.key IS NOT NULL THEN
    -- This key was used more than 24 hours ago and may be used again.
    DELETE FROM idempotency_keys WHERE account_id = p_account_id AND key = p_idempotency_key;
  END IF;

  SELECT * INTO v_key FROM dict_keys WHERE key = p_pix_key;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'key_not_found'::text, NULL::integer, NULL::jsonb;
    RETURN;
  END IF;
  IF v_key.account_id = p_account_id THEN
    RETURN QUERY SELECT 'own_key'::text, NULL::integer, NULL::jsonb;
    RETURN;
  END IF;
  IF p_ispb_deny IS NOT NULL AND v_key.ispb = ANY (p_ispb_deny) THEN
    RETURN QUERY SELECT 'ispb_denied'::text, NULL::integer, NULL::jsonb;
    RETURN;
  END IF;
  IF p_priority = 'HIGH' AND v_key.owner_document IS DISTINCT FROM p_creditor_document THEN
    RETURN QUERY SELECT 'creditor_mismatch'::text, NULL::integer, NULL::jsonb;
    RETURN;
  END IF;
  -- The transfer's externalId is the one given or else its idempotency key. One probe tells
  -- whether another transfer of the account already holds it: a given one is then refused; a
  -- default one (an explicit externalId elsewhere, or this key's own earlier transfer when it is
  -- reused after its 24 hours) is dropped, as externalIds stay unique per account.
  v_external_id := coalesce(p_external_id, p_idempotency_key);
  IF EXISTS (
    SELECT 1 FROM transactions WHERE account_id = p_account_id AND external_id = v_external_id AND type = 'WITHDRAW'
  ) THEN
    IF p_external_id IS NOT NULL THEN
      RETURN QUERY SELECT 'external_id_taken'::text, NULL::integer, NULL::jsonb;
      RETURN;
    END IF;
    v_external_id := NULL;
  END IF;

  -- The guarded debit: available -> blocked, or nothing when the money is not there.
  -- p_available_id and p_blocked_id: the payer's available account and the blocked shard that
  -- holds the money (the batch looked them up for all its items at once).
  v_ledger_tx := ledger_post('transfer_hold', p_end_to_end_id, NULL, p_available_id, p_blocked_id, p_amount_centavos, p_now);
  IF v_ledger_tx IS NULL THEN
    RETURN QUERY SELECT 'insufficient_funds'::text, NULL::integer, NULL::jsonb;
    RETURN;
  END IF;

  INSERT INTO transactions (
    account_id, type, status, amount_centavos, external_id, end_to_end_id, idempotency_key, pix_key,
    description, priority, expires_at, ispb_deny,
    counterpart_name, counterpart_document, counterpart_ispb, counterpart_bank_name,
    counterpart_branch, counterpart_account, counterpart_account_id, hold_ledger_account_id, created_at, updated_at
  ) VALUES (
    p_account_id, 'WITHDRAW', 'PENDING', p_amount_centavos, v_external_id,
    p_end_to_end_id, p_idempotency_key, p_pix_key, p_description, p_priority,
    p_now + make_interval(secs => p_expiration_s), p_ispb_deny,
    v_key.owner_name, v_key.owner_document, v_key.ispb, v_key.bank_name,
    v_key.branch, v_key.account_number, v_key.account_id, p_blocked_id, p_now, p_now
  )
  RETURNING id INTO v_tx_id;

  INSERT INTO settlement_queue (transaction_id, priority, pix_key, created_at, expires_at)
       VALUES (v_tx_id, p_priority, p_pix_key, p_now, p_now + make_interval(secs => p_expiration_s));

  v_body := jsonb_build_object(
    'endToEndId', p_end_to_end_id,
    'eventDate', to_char(p_now AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'id', v_tx_id,
    'payment', jsonb_build_object('amount', round(p_amount_centavos::numeric / 100, 2)),
    'type', 'PENDING');
  INSERT INTO idempotency_keys (account_id, key, request_hash, status, response_status, response_body, created_at, expires_at)
       VALUES (p_account_id, p_idempotency_key, p_request_hash, 'DONE', 201, v_body, p_now, p_now + interval '24 hours');

  IF p_priority = 'HIGH' THEN
    PERFORM pg_notify('pix_settlement', v_tx_id::text);
  END IF;
  RETURN QUERY SELECT 'created'::text, 201, v_body;
END;
$$;
