-- POST /dict/pix in one round trip: idempotency, directory checks, the guarded debit and the
-- stored answer, all in the caller's transaction. The outcome is a code the service maps to
-- HTTP; only 'created' and 'replay' carry a body.
CREATE FUNCTION pix_transfer_create(
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
  p_now               timestamptz
) RETURNS TABLE (outcome text, response_status integer, response_body jsonb)
LANGUAGE plpgsql AS $$
DECLARE
  v_existing   idempotency_keys%ROWTYPE;
  v_key        dict_keys%ROWTYPE;
  v_available  bigint;
  v_blocked    bigint;
  v_ledger_tx  bigint;
  v_tx_id      bigint;
  v_body       jsonb;
  v_external_id text := p_external_id;
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
  IF p_external_id IS NOT NULL AND EXISTS (
    SELECT 1 FROM transactions WHERE account_id = p_account_id AND external_id = p_external_id AND type = 'WITHDRAW'
  ) THEN
    RETURN QUERY SELECT 'external_id_taken'::text, NULL::integer, NULL::jsonb;
    RETURN;
  END IF;
  -- Without an externalId the transfer's is its idempotency key, unless another transfer of the
  -- account already holds that value (this key used more than 24 hours ago): then it has none,
  -- since a key past its 24 hours may be used again and externalIds stay unique per account.
  IF p_external_id IS NULL AND NOT EXISTS (
    SELECT 1 FROM transactions WHERE account_id = p_account_id AND external_id = p_idempotency_key AND type = 'WITHDRAW'
  ) THEN
    v_external_id := p_idempotency_key;
  END IF;

  -- The guarded debit: no row means not enough available money (the CHECK backs it up).
  UPDATE ledger_accounts SET balance = balance - p_amount_centavos
   WHERE account_id = p_account_id AND code = 'available' AND balance >= p_amount_centavos
   RETURNING id INTO v_available;
  IF v_available IS NULL THEN
    RETURN QUERY SELECT 'insufficient_funds'::text, NULL::integer, NULL::jsonb;
    RETURN;
  END IF;
  UPDATE ledger_accounts SET balance = balance + p_amount_centavos
   WHERE account_id = p_account_id AND code = 'blocked'
   RETURNING id INTO v_blocked;
  INSERT INTO ledger_transactions (kind, reference, created_at)
       VALUES ('transfer_hold', p_end_to_end_id, p_now) RETURNING id INTO v_ledger_tx;
  INSERT INTO postings (ledger_tx_id, debit_account_id, credit_account_id, amount_centavos, created_at)
       VALUES (v_ledger_tx, v_available, v_blocked, p_amount_centavos, p_now);

  INSERT INTO transactions (
    account_id, type, status, amount_centavos, external_id, end_to_end_id, idempotency_key, pix_key,
    description, priority, expires_at, ispb_deny,
    counterpart_name, counterpart_document, counterpart_ispb, counterpart_bank_name,
    counterpart_branch, counterpart_account, counterpart_account_id, created_at, updated_at
  ) VALUES (
    p_account_id, 'WITHDRAW', 'PENDING', p_amount_centavos, v_external_id,
    p_end_to_end_id, p_idempotency_key, p_pix_key, p_description, p_priority,
    p_now + make_interval(secs => p_expiration_s), p_ispb_deny,
    v_key.owner_name, v_key.owner_document, v_key.ispb, v_key.bank_name,
    v_key.branch, v_key.account_number, v_key.account_id, p_now, p_now
  ) RETURNING id INTO v_tx_id;

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
