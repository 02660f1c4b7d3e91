-- The one way a balance changes: a positive amount from a debit to a credit ledger account.
-- The debit is guarded (no row when the account cannot pay and may not go negative), so the
-- answer is NULL and nothing is written; otherwise the ledger transaction id (p_ledger_tx, or a
-- new one). The CHECK on ledger_accounts backs the guard up.
CREATE FUNCTION ledger_post(
  p_kind      text,
  p_reference text,
  p_ledger_tx bigint,
  p_debit     bigint,
  p_credit    bigint,
  p_amount    bigint,
  p_now       timestamptz
) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  v_tx bigint := p_ledger_tx;
BEGIN
  IF p_amount <= 0 OR p_debit = p_credit THEN
    RAISE EXCEPTION 'invalid posting: % from % to %', p_amount, p_debit, p_credit USING ERRCODE = 'check_violation';
  END IF;
  UPDATE ledger_accounts SET balance = balance - p_amount
   WHERE id = p_debit AND (allow_negative OR balance >= p_amount);
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  UPDATE ledger_accounts SET balance = balance + p_amount WHERE id = p_credit;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'ledger account % does not exist', p_credit;
  END IF;
  IF v_tx IS NULL THEN
    v_tx := nextval('ledger_tx_seq');
  END IF;
  INSERT INTO postings (ledger_tx_id, kind, reference, debit_account_id, credit_account_id, amount_centavos, created_at)
       VALUES (v_tx, p_kind, p_reference, p_debit, p_credit, p_amount, p_now);
  RETURN v_tx;
END;
$$;

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

-- Several transfers in one transaction and one commit (requests that arrive together). The
-- ledger accounts the batch posts to (each payer's available and its blocked shard
-- p_hold_shard) are locked first, in id order, as settlement does, so concurrent batches cannot
-- deadlock; each item keeps its own outcome and answer.
CREATE FUNCTION pix_transfer_create_batch(p_items jsonb, p_hold_shard integer)
RETURNS TABLE (ord integer, outcome text, response_status integer, response_body jsonb)
LANGUAGE plpgsql AS $$
DECLARE
  it record;
BEGIN
  PERFORM 1 FROM ledger_accounts la
   WHERE la.account_id IN (SELECT (x ->> 'account_id')::bigint FROM jsonb_array_elements(p_items) x)
     AND (la.code = 'available' OR (la.code = 'blocked' AND la.shard = p_hold_shard))
   ORDER BY la.id FOR UPDATE;
  FOR it IN
    SELECT x.*, av.id AS available_id, bl.id AS blocked_id
      FROM jsonb_to_recordset(p_items) AS x(
             ord integer, account_id bigint, idempotency_key text, request_hash text, amount bigint, pix_key text,
             priority text, expiration integer, creditor_document text, ispb_deny text[], description text,
             external_id text, end_to_end_id text, now timestamptz)
      JOIN ledger_accounts av ON av.account_id = x.account_id AND av.code = 'available'
      JOIN ledger_accounts bl ON bl.account_id = x.account_id AND bl.code = 'blocked' AND bl.shard = p_hold_shard
     ORDER BY x.ord
  LOOP
    RETURN QUERY SELECT it.ord, c.outcome, c.response_status, c.response_body
      FROM pix_transfer_create(it.account_id, it.idempotency_key, it.request_hash, it.amount, it.pix_key, it.priority,
                               it.expiration, it.creditor_document, it.ispb_deny, it.description, it.external_id,
                               it.end_to_end_id, it.now, it.available_id, it.blocked_id) c;
  END LOOP;
END;
$$;

-- Settles one batch of queued transfers whose turn has come, claimed with SKIP LOCKED (so
-- several workers never take the same one): HIGH at once, NORM from p_norm_due_before on, in
-- order of arrival; a transfer past its expiration, or to a receiver that rejects, fails and
-- its money returns to available; a receiver that never answers ('timeout') is left queued
-- until it expires. Returns each transfer's outcome (and the receiver's new PAYMENT row for a
-- transfer between two accounts of this service); the caller writes the notifications in the
-- same transaction.
CREATE FUNCTION pix_settle_batch(
  p_now             timestamptz,
  p_norm_due_before timestamptz,
  p_force           boolean,
  p_limit           integer,
  p_ispb            text,
  p_bank_name       text,
  p_reason_expired  text,
  p_reason_rejected text
) RETURNS TABLE (transaction_id bigint, outcome text, received_id bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_ids      bigint[];
  v_external bigint[];
  v_network  bigint;
  v_to       bigint;
  v_reason   text;
  v_payer    accounts%ROWTYPE;
  r          record;
BEGIN
  SELECT coalesce(array_agg(c.transaction_id ORDER BY c.created_at, c.transaction_id), '{}') INTO v_ids FROM (
    SELECT q.transaction_id, q.created_at
      FROM settlement_queue q
      LEFT JOIN dict_keys k ON k.key = q.pix_key
     WHERE (p_force OR q.priority = 'HIGH' OR q.created_at <= p_norm_due_before OR q.expires_at <= p_now)
       AND (k.behavior IS DISTINCT FROM 'timeout' OR q.expires_at <= p_now)
     ORDER BY q.created_at, q.transaction_id
     LIMIT p_limit
       FOR UPDATE OF q SKIP LOCKED) c;
  IF cardinality(v_ids) = 0 THEN
    RETURN;
  END IF;
  DELETE FROM settlement_queue WHERE settlement_queue.transaction_id = ANY (v_ids);
  SELECT id INTO v_network FROM ledger_accounts WHERE account_id IS NULL AND code = 'pix_network';
  -- Every ledger account this batch posts to, locked in id order (see pix_transfer_create_batch):
  -- the network, the shards holding the money, and the available accounts that receive it back
  -- (failures) or receive it (transfers between two accounts of this service).
  PERFORM 1 FROM ledger_accounts la
   WHERE la.id = v_network
      OR la.id IN (SELECT t.hold_ledger_account_id FROM transactions t WHERE t.id = ANY (v_ids))
      OR (la.code = 'available' AND la.account_id IN (
            SELECT t.account_id FROM transactions t LEFT JOIN dict_keys k ON k.key = t.pix_key
             WHERE t.id = ANY (v_ids) AND (t.expires_at <= p_now OR k.behavior = 'reject')
            UNION
            SELECT t.counterpart_account_id FROM transactions t WHERE t.id = ANY (v_ids)))
   ORDER BY la.id FOR UPDATE;

  -- The common case, transfers to other institutions that settle, set-based: a few statements
  -- for the whole batch instead of several per transfer.
  SELECT coalesce(array_agg(t.id), '{}') INTO v_external
    FROM transactions t LEFT JOIN dict_keys k ON k.key = t.pix_key
   WHERE t.id = ANY (v_ids) AND t.expires_at > p_now AND k.behavior IS DISTINCT FROM 'reject'
     AND t.counterpart_account_id IS NULL;
  IF cardinality(v_external) > 0 THEN
    -- The CHECK on ledger_accounts fails the batch if a shard held less than it releases.
    UPDATE ledger_accounts la SET balance = la.balance - s.total
      FROM (SELECT t.hold_ledger_account_id AS id, sum(t.amount_centavos) AS total
              FROM transactions t WHERE t.id = ANY (v_external) GROUP BY 1) s
     WHERE la.id = s.id;
    UPDATE ledger_accounts SET balance = balance +
           (SELECT sum(t.amount_centavos) FROM transactions t WHERE t.id = ANY (v_external))
     WHERE id = v_network;
    INSERT INTO postings (ledger_tx_id, kind, reference, debit_account_id, credit_account_id, amount_centavos, created_at)
         SELECT nextval('ledger_tx_seq'), 'transfer_settle', t.end_to_end_id, t.hold_ledger_account_id, v_network,
                t.amount_centavos, p_now
           FROM transactions t WHERE t.id = ANY (v_external) ORDER BY t.created_at, t.id;
    UPDATE transactions SET status = 'CONFIRMED', processed_at = p_now, updated_at = p_now WHERE id = ANY (v_external);
  END IF;

  -- Failures and transfers between two accounts of this service, one at a time.
  FOR r IN
    SELECT t.*, k.behavior FROM transactions t LEFT JOIN dict_keys k ON k.key = t.pix_key
     WHERE t.id = ANY (v_ids) AND NOT t.id = ANY (v_external) ORDER BY t.created_at, t.id
  LOOP
    IF r.expires_at <= p_now OR r.behavior = 'reject' THEN
      v_reason := CASE WHEN r.expires_at <= p_now THEN p_reason_expired ELSE p_reason_rejected END;
      SELECT id INTO v_to FROM ledger_accounts WHERE account_id = r.account_id AND code = 'available';
      IF ledger_post('transfer_void', r.end_to_end_id, NULL, r.hold_ledger_account_id, v_to, r.amount_centavos, p_now) IS NULL THEN
        RAISE EXCEPTION 'blocked balance of account % cannot return transfer %', r.account_id, r.id;
      END IF;
      UPDATE transactions SET status = 'ERROR', error_reason = v_reason, processed_at = p_now, updated_at = p_now WHERE id = r.id;
    ELSE
      SELECT id INTO v_to FROM ledger_accounts WHERE account_id = r.counterpart_account_id AND code = 'available';
      IF ledger_post('transfer_settle_internal', r.end_to_end_id, NULL, r.hold_ledger_account_id, v_to, r.amount_centavos, p_now) IS NULL THEN
        RAISE EXCEPTION 'blocked balance of account % cannot settle transfer %', r.account_id, r.id;
      END IF;
      UPDATE transactions SET status = 'CONFIRMED', processed_at = p_now, updated_at = p_now WHERE id = r.id;
      SELECT * INTO v_payer FROM accounts WHERE id = r.account_id;
      INSERT INTO transactions (
        account_id, type, status, amount_centavos, end_to_end_id, pix_key, description,
        counterpart_name, counterpart_document, counterpart_ispb, counterpart_bank_name,
        counterpart_branch, counterpart_account, counterpart_account_id, created_at, updated_at, processed_at
      ) VALUES (
        r.counterpart_account_id, 'PAYMENT', 'CONFIRMED', r.amount_centavos, r.end_to_end_id, r.pix_key, r.description,
        v_payer.name, v_payer.document, p_ispb, p_bank_name,
        v_payer.branch, v_payer.account_number, r.account_id, p_now, p_now, p_now
      );
    END IF;
  END LOOP;

  -- Every outcome, in order of arrival; a transfer between our accounts brings its receiver's row.
  RETURN QUERY
    SELECT t.id, CASE WHEN t.status = 'ERROR' THEN 'failed' ELSE 'settled' END, rcv.id
      FROM transactions t
      LEFT JOIN transactions rcv
        ON t.counterpart_account_id IS NOT NULL AND rcv.account_id = t.counterpart_account_id
       AND rcv.end_to_end_id = t.end_to_end_id AND rcv.type = 'PAYMENT'
     WHERE t.id = ANY (v_ids)
     ORDER BY t.created_at, t.id;
END;
$$;
