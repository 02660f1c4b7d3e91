-- POST /dict/pix in one round trip: idempotency, directory checks, the guarded debit and the
-- stored answer, all in the caller's transaction. Returns the outcome and, for 'created' and
-- 'replay', the stored answer's columns (null otherwise); the service maps the outcome to HTTP
-- and builds the answer (transfers/views.ts).
-- Called for each item by pix_transfer_create_batch, which looks up the payer's ledger accounts.
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
) RETURNS transfer_create_result
LANGUAGE plpgsql AS $$
DECLARE
  r             transfer_create_result;
  v_existing    idempotency_keys%ROWTYPE;
  v_key         dict_keys%ROWTYPE;
  v_ledger_tx   bigint;
  v_tx_id       bigint;
  v_tx_status   transaction_status;
  v_external_id text;
  v_locked      boolean;
BEGIN
  v_locked := pg_try_advisory_xact_lock(hashtextextended(p_account_id::text || ':' || p_idempotency_key, 7262));

  -- A stored answer is final until it expires: replay it (or refuse another body) even while
  -- another transaction holds the key, since that one can only be replaying it as well.
  SELECT * INTO v_existing FROM idempotency_keys
   WHERE account_id = p_account_id AND key = p_idempotency_key;
  IF FOUND AND v_existing.expires_at > p_now THEN
    IF v_existing.request_hash <> p_request_hash THEN
      r.outcome := 'idempotency_mismatch';
    ELSE
      r.outcome := 'replay';
      r.transfer_id := v_existing.transaction_id;
      r.transfer_end_to_end_id := v_existing.end_to_end_id;
      r.transfer_amount_centavos := v_existing.amount_centavos;
      r.transfer_status := v_existing.transaction_status;
      r.transfer_accepted_at := v_existing.created_at;
    END IF;
    RETURN r;
  END IF;

  -- No answer yet and another transaction holding this key: the first request is still in
  -- flight. 409 at once, instead of waiting on the unique index.
  IF NOT v_locked THEN
    r.outcome := 'in_flight';
    RETURN r;
  END IF;
  IF v_existing.key IS NOT NULL THEN
    -- This key was used more than 24 hours ago and may be used again.
    DELETE FROM idempotency_keys WHERE account_id = p_account_id AND key = p_idempotency_key;
  END IF;

  SELECT * INTO v_key FROM dict_keys WHERE key = p_pix_key;
  IF NOT FOUND THEN
    r.outcome := 'key_not_found';
  ELSIF v_key.account_id = p_account_id THEN
    r.outcome := 'own_key';
  ELSIF p_ispb_deny IS NOT NULL AND v_key.ispb = ANY (p_ispb_deny) THEN
    r.outcome := 'ispb_denied';
  END IF;
  IF r.outcome IS NOT NULL THEN
    RETURN r;
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
      r.outcome := 'external_id_taken';
      RETURN r;
    END IF;
    v_external_id := NULL;
  END IF;

  -- A HIGH transfer's creditorDocument is judged last, once nothing else would refuse it: a
  -- refusal for anything else (the amount, a taken externalId) must not depend on whether the
  -- document guessed is the key owner's, or the answers would confirm a guess. The look-up of a
  -- wrong one is charged as a miss all the same.
  IF p_priority = 'HIGH' AND v_key.owner_document IS DISTINCT FROM p_creditor_document THEN
    IF EXISTS (SELECT 1 FROM ledger_accounts WHERE id = p_available_id AND NOT allow_negative AND balance < p_amount_centavos) THEN
      r.outcome := 'insufficient_funds_miss';
    ELSE
      r.outcome := 'creditor_mismatch';
    END IF;
    RETURN r;
  END IF;

  -- The guarded debit: available -> blocked, or nothing when the money is not there.
  -- p_available_id and p_blocked_id: the payer's available account and the blocked shard that
  -- holds the money (the batch looked them up for all its items at once).
  v_ledger_tx := ledger_post('transfer_hold', p_end_to_end_id, NULL, p_available_id, p_blocked_id, p_amount_centavos, p_now);
  IF v_ledger_tx IS NULL THEN
    r.outcome := 'insufficient_funds';
    RETURN r;
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
  RETURNING id, status INTO v_tx_id, v_tx_status;

  INSERT INTO settlement_queue (transaction_id, priority, pix_key, created_at, expires_at)
       VALUES (v_tx_id, p_priority, p_pix_key, p_now, p_now + make_interval(secs => p_expiration_s));

  -- The first answer is the stored one, as every replay of it will be.
  INSERT INTO idempotency_keys (
    account_id, key, request_hash, status, transaction_id, end_to_end_id, amount_centavos, transaction_status, created_at, expires_at
  ) VALUES (
    p_account_id, p_idempotency_key, p_request_hash, 'DONE', v_tx_id, p_end_to_end_id, p_amount_centavos, v_tx_status,
    p_now, p_now + interval '24 hours'
  )
  RETURNING transaction_id, end_to_end_id, amount_centavos, transaction_status, created_at
       INTO r.transfer_id, r.transfer_end_to_end_id, r.transfer_amount_centavos, r.transfer_status, r.transfer_accepted_at;

  IF p_priority = 'HIGH' THEN
    PERFORM pg_notify('pix_settlement', v_tx_id::text);
  END IF;
  r.outcome := 'created';
  RETURN r;
END;
$$;
