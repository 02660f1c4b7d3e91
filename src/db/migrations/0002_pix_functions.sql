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

-- One item of a batch of POST /dict/pix, as the service sends it.
CREATE TYPE pix_transfer_item AS (
  ord integer, account_id bigint, idempotency_key text, request_hash text, amount bigint, pix_key text,
  priority text, expiration integer, creditor_document text, ispb_deny text[], description text,
  external_id text, end_to_end_id text, now timestamptz
);

-- POST /dict/pix, for several transfers in one transaction and one commit (requests that
-- arrive together), decided and written set-based: a handful of statements for the whole batch,
-- whatever its size. Each item keeps its own outcome (a code the service maps to HTTP) and
-- answer: idempotency, directory checks, the guarded debit available -> blocked and the stored
-- answer commit together. The ledger
-- accounts the batch posts to (each payer's available and its blocked shard p_hold_shard) are
-- locked first, in id order, as settlement does, so concurrent batches cannot deadlock. An
-- (account, idempotency key) appears at most once in a batch (the service sees to it).
CREATE FUNCTION pix_transfer_create_batch(p_items jsonb, p_hold_shard integer)
RETURNS TABLE (ord integer, outcome text, response_status integer, response_body jsonb)
LANGUAGE plpgsql AS $$
DECLARE
  v_n         integer;
  v_outcome   text[];
  v_account   bigint[];
  v_amount    bigint[];
  v_ext_given text[];
  v_ext_final text[];
  v_status    integer[];
  v_body      jsonb[];
  v_acc_ids   bigint[];
  v_acc_left  bigint[];
  v_pos       integer;
  v_taken     text[] := '{}';
  v_high      boolean;
  v_new_ords  integer[];
  v_new_bodies jsonb[];
BEGIN
  -- The payers' available accounts and the blocked shard, locked in id order; the available
  -- balances are read under that lock.
  PERFORM 1 FROM ledger_accounts la
   WHERE la.account_id IN (SELECT (x ->> 'account_id')::bigint FROM jsonb_array_elements(p_items) x)
     AND (la.code = 'available' OR (la.code = 'blocked' AND la.shard = p_hold_shard))
   ORDER BY la.id FOR UPDATE;
  SELECT array_agg(la.account_id), array_agg(la.balance) INTO v_acc_ids, v_acc_left
    FROM ledger_accounts la
   WHERE la.code = 'available'
     AND la.account_id IN (SELECT (x ->> 'account_id')::bigint FROM jsonb_array_elements(p_items) x);

  -- Everything that decides an item but money, for all items at once, in this order: a stored
  -- answer (replayed, or 422 for another body, even while another transaction holds the key), a
  -- key in flight (409 at once rather than waiting on the unique index), the directory, the
  -- externalId.
  SELECT count(*),
         array_agg(d.pre ORDER BY d.ord), array_agg(d.account_id ORDER BY d.ord), array_agg(d.amount ORDER BY d.ord),
         array_agg(d.external_id ORDER BY d.ord), array_agg(d.ext_final ORDER BY d.ord),
         array_agg(d.status ORDER BY d.ord), array_agg(d.body ORDER BY d.ord)
    INTO v_n, v_outcome, v_account, v_amount, v_ext_given, v_ext_final, v_status, v_body
    FROM (
      SELECT i.ord, i.account_id, i.amount, i.external_id,
             CASE
               WHEN ik.key IS NOT NULL AND ik.request_hash <> i.request_hash THEN 'idempotency_mismatch'
               WHEN ik.key IS NOT NULL THEN 'replay'
               WHEN NOT pg_try_advisory_xact_lock(hashtextextended(i.account_id::text || ':' || i.idempotency_key, 7262)) THEN 'in_flight'
               WHEN k.key IS NULL THEN 'key_not_found'
               WHEN k.account_id = i.account_id THEN 'own_key'
               WHEN i.ispb_deny IS NOT NULL AND k.ispb = ANY (i.ispb_deny) THEN 'ispb_denied'
               WHEN i.priority = 'HIGH' AND k.owner_document IS DISTINCT FROM i.creditor_document THEN 'creditor_mismatch'
               WHEN i.external_id IS NOT NULL AND taken.hit THEN 'external_id_taken'
               ELSE 'candidate'
             END AS pre,
             -- Without an externalId the transfer's is its idempotency key, unless another
             -- transfer of the account already holds that value: then it has none.
             CASE WHEN i.external_id IS NOT NULL THEN i.external_id
                  WHEN taken.hit THEN NULL ELSE i.idempotency_key END AS ext_final,
             CASE WHEN ik.key IS NOT NULL AND ik.request_hash = i.request_hash THEN ik.response_status END AS status,
             CASE WHEN ik.key IS NOT NULL AND ik.request_hash = i.request_hash THEN ik.response_body END AS body
        FROM jsonb_populate_recordset(NULL::pix_transfer_item, p_items) i
        LEFT JOIN idempotency_keys ik
          ON ik.account_id = i.account_id AND ik.key = i.idempotency_key AND ik.expires_at > i.now
        LEFT JOIN dict_keys k ON k.key = i.pix_key
        LEFT JOIN LATERAL (
          SELECT true AS hit FROM transactions t
           WHERE t.account_id = i.account_id AND t.type = 'WITHDRAW'
             AND t.external_id = coalesce(i.external_id, i.idempotency_key)
           LIMIT 1) taken ON true
    ) d;

  -- Money, in arrival order and in memory: an item is accepted while its payer can still pay.
  FOR v_i IN 1 .. coalesce(v_n, 0) LOOP
    CONTINUE WHEN v_outcome[v_i] <> 'candidate';
    IF v_ext_given[v_i] IS NOT NULL THEN
      IF v_ext_given[v_i] = ANY (v_taken) THEN
        v_outcome[v_i] := 'external_id_taken';
        CONTINUE;
      END IF;
    END IF;
    v_pos := array_position(v_acc_ids, v_account[v_i]);
    IF v_pos IS NULL OR v_acc_left[v_pos] < v_amount[v_i] THEN
      v_outcome[v_i] := 'insufficient_funds';
      CONTINUE;
    END IF;
    v_acc_left[v_pos] := v_acc_left[v_pos] - v_amount[v_i];
    v_outcome[v_i] := 'created';
    IF v_ext_final[v_i] IS NOT NULL THEN
      v_taken := v_taken || v_ext_final[v_i];
    END IF;
  END LOOP;

  IF 'created' = ANY (v_outcome) THEN
    -- Keys used again after their 24 hours give way to the new answer.
    DELETE FROM idempotency_keys ik
     USING jsonb_populate_recordset(NULL::pix_transfer_item, p_items) i
     WHERE v_outcome[i.ord + 1] = 'created' AND ik.account_id = i.account_id AND ik.key = i.idempotency_key;

    -- available -> blocked shard, one row each per payer.
    UPDATE ledger_accounts la SET balance = la.balance + m.delta
      FROM (
        SELECT l.id, CASE WHEN l.code = 'available' THEN -sum(i.amount) ELSE sum(i.amount) END AS delta
          FROM jsonb_populate_recordset(NULL::pix_transfer_item, p_items) i
          JOIN ledger_accounts l ON l.account_id = i.account_id
           AND (l.code = 'available' OR (l.code = 'blocked' AND l.shard = p_hold_shard))
         WHERE v_outcome[i.ord + 1] = 'created'
         GROUP BY l.id, l.code) m
     WHERE la.id = m.id;

    WITH accepted AS (
      SELECT i.*, v_ext_final[i.ord + 1] AS ext, k.owner_name, k.owner_document, k.ispb AS k_ispb, k.bank_name,
             k.branch AS k_branch, k.account_number AS k_account, k.account_id AS k_account_id,
             av.id AS available_id, bl.id AS blocked_id
        FROM jsonb_populate_recordset(NULL::pix_transfer_item, p_items) i
        JOIN dict_keys k ON k.key = i.pix_key
        JOIN ledger_accounts av ON av.account_id = i.account_id AND av.code = 'available'
        JOIN ledger_accounts bl ON bl.account_id = i.account_id AND bl.code = 'blocked' AND bl.shard = p_hold_shard
       WHERE v_outcome[i.ord + 1] = 'created'
    ), postings_written AS (
      INSERT INTO postings (ledger_tx_id, kind, reference, debit_account_id, credit_account_id, amount_centavos, created_at)
      SELECT nextval('ledger_tx_seq'), 'transfer_hold', a.end_to_end_id, a.available_id, a.blocked_id, a.amount, a.now
        FROM accepted a
    ), created AS (
      INSERT INTO transactions (
        account_id, type, status, amount_centavos, external_id, end_to_end_id, idempotency_key, pix_key,
        description, priority, expires_at, ispb_deny,
        counterpart_name, counterpart_document, counterpart_ispb, counterpart_bank_name,
        counterpart_branch, counterpart_account, counterpart_account_id, hold_ledger_account_id, created_at, updated_at)
      SELECT a.account_id, 'WITHDRAW', 'PENDING', a.amount, a.ext, a.end_to_end_id, a.idempotency_key, a.pix_key,
             a.description, a.priority, a.now + make_interval(secs => a.expiration), a.ispb_deny,
             a.owner_name, a.owner_document, a.k_ispb, a.bank_name,
             a.k_branch, a.k_account, a.k_account_id, a.blocked_id, a.now, a.now
        FROM accepted a ORDER BY a.ord
      RETURNING id, end_to_end_id, account_id
    ), queued AS (
      INSERT INTO settlement_queue (transaction_id, priority, pix_key, created_at, expires_at)
      SELECT c.id, a.priority, a.pix_key, a.now, a.now + make_interval(secs => a.expiration)
        FROM created c JOIN accepted a ON a.end_to_end_id = c.end_to_end_id
    ), answers AS (
      SELECT a.ord, a.account_id, a.idempotency_key, a.request_hash, a.now,
             jsonb_build_object(
               'endToEndId', a.end_to_end_id,
               'eventDate', to_char(a.now AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
               'id', c.id,
               'payment', jsonb_build_object('amount', round(a.amount::numeric / 100, 2)),
               'type', 'PENDING') AS body
        FROM created c JOIN accepted a ON a.end_to_end_id = c.end_to_end_id
    ), stored AS (
      INSERT INTO idempotency_keys (account_id, key, request_hash, status, response_status, response_body, created_at, expires_at)
      SELECT w.account_id, w.idempotency_key, w.request_hash, 'DONE', 201, w.body, w.now, w.now + interval '24 hours'
        FROM answers w
    )
    SELECT array_agg(w.ord), array_agg(w.body) INTO v_new_ords, v_new_bodies FROM answers w;
    FOR v_j IN 1 .. coalesce(array_length(v_new_ords, 1), 0) LOOP
      v_status[v_new_ords[v_j] + 1] := 201;
      v_body[v_new_ords[v_j] + 1] := v_new_bodies[v_j];
    END LOOP;
    SELECT bool_or(i.priority = 'HIGH') INTO v_high
      FROM jsonb_populate_recordset(NULL::pix_transfer_item, p_items) i WHERE v_outcome[i.ord + 1] = 'created';
    IF v_high THEN
      PERFORM pg_notify('pix_settlement', '');
    END IF;
  END IF;

  RETURN QUERY SELECT g - 1, v_outcome[g], v_status[g], v_body[g] FROM generate_series(1, coalesce(v_n, 0)) g;
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
  v_blocked  bigint;
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
    v_blocked := r.hold_ledger_account_id;
    IF r.expires_at <= p_now OR r.behavior = 'reject' THEN
      v_reason := CASE WHEN r.expires_at <= p_now THEN p_reason_expired ELSE p_reason_rejected END;
      SELECT id INTO v_to FROM ledger_accounts WHERE account_id = r.account_id AND code = 'available';
      IF ledger_post('transfer_void', r.end_to_end_id, NULL, v_blocked, v_to, r.amount_centavos, p_now) IS NULL THEN
        RAISE EXCEPTION 'blocked balance of account % cannot return transfer %', r.account_id, r.id;
      END IF;
      UPDATE transactions SET status = 'ERROR', error_reason = v_reason, processed_at = p_now, updated_at = p_now WHERE id = r.id;
    ELSE
      SELECT id INTO v_to FROM ledger_accounts WHERE account_id = r.counterpart_account_id AND code = 'available';
      IF ledger_post('transfer_settle_internal', r.end_to_end_id, NULL, v_blocked, v_to, r.amount_centavos, p_now) IS NULL THEN
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
