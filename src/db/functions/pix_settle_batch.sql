-- Settles one batch of queued transfers and refunds whose turn has come, claimed with SKIP
-- LOCKED (so several workers never take the same one): HIGH at once, NORM from
-- p_norm_due_before on, in order of arrival; a movement past its expiration, or to a receiver
-- that rejects it (the sandbox's key behaviour, or a settlement fault on the key with its BCB
-- reason code), fails and its money returns to available; a receiver that never answers
-- ('timeout') is left queued until it expires, and one a settlement fault delays until the
-- delay has passed (docs/decisions/0034-test-clock-and-faults.md). Returns each movement's outcome (and the other
-- account's new row for a movement between two accounts of this service); the caller writes
-- the notifications in the same transaction.
--
-- Its cost does not grow with the size of the tables: the claim walks indexes in order and
-- stops at p_limit, and the ledger accounts to lock are found by id. Transfers that settle
-- (to another institution or to an account of this service) are settled set-based, a few
-- statements for the whole batch, each receiving account credited once with the sum of what it
-- receives; failures and refunds, which are rare, one at a time
-- (docs/decisions/0012-set-based-settlement.md).
CREATE OR REPLACE FUNCTION pix_settle_batch(
  p_now                    timestamptz,
  p_norm_due_before        timestamptz,
  p_force                  boolean,
  p_limit                  integer,
  p_ispb                   text,
  p_bank_name              text,
  p_reason_expired         text,
  p_reason_rejected        text,
  p_reason_refund_rejected text
) RETURNS TABLE (transaction_id bigint, outcome settlement_outcome, received_id bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_ids      bigint[];
  v_claimed  tid[];
  v_lock     bigint[];
  v_settle   bigint[];
  v_credit   bigint[];
  v_internal boolean;
  v_network  bigint;
  v_to       bigint;
  v_reason   text;
  v_rejected bigint[];
  v_codes    text[];
  v_payer    accounts%ROWTYPE;
  v_original transactions%ROWTYPE;
  r          record;
BEGIN
  -- Claimed in three probes that each walk an index in order and stop at p_limit, instead of
  -- sorting the whole queue every round (a round cost grew with the backlog, so a settlement
  -- that fell behind fell further behind): HIGH first (due at once, never behind a NORM
  -- backlog), then NORM whose turn has come, by arrival, then anything past its expiration (it
  -- fails). A receiver that never answers ('timeout') keeps its transfers queued until they
  -- expire. SKIP LOCKED: several workers never claim the same transfer.
  SELECT coalesce(array_agg(c.transaction_id), '{}'), coalesce(array_agg(c.ctid), '{}') INTO v_ids, v_claimed FROM (
    SELECT q.transaction_id, q.ctid
      FROM settlement_queue q LEFT JOIN dict_keys k ON k.key = q.pix_key
      LEFT JOIN sandbox_faults f ON f.kind = 'settlement' AND f.effect = 'delay' AND f.pix_key = q.pix_key
     WHERE q.priority = 'HIGH' AND (k.behavior IS DISTINCT FROM 'timeout' OR q.expires_at <= p_now)
       AND (f.id IS NULL OR q.created_at + f.delay_ms * interval '1 millisecond' <= p_now OR q.expires_at <= p_now)
     ORDER BY q.created_at, q.transaction_id
     LIMIT p_limit
       FOR UPDATE OF q SKIP LOCKED) c;
  IF cardinality(v_ids) < p_limit THEN
    SELECT v_ids || coalesce(array_agg(c.transaction_id), '{}'), v_claimed || coalesce(array_agg(c.ctid), '{}') INTO v_ids, v_claimed FROM (
      SELECT q.transaction_id, q.ctid
        FROM settlement_queue q LEFT JOIN dict_keys k ON k.key = q.pix_key
        LEFT JOIN sandbox_faults f ON f.kind = 'settlement' AND f.effect = 'delay' AND f.pix_key = q.pix_key
       WHERE q.created_at <= CASE WHEN p_force THEN 'infinity'::timestamptz ELSE p_norm_due_before END
         AND q.priority = 'NORM' AND (k.behavior IS DISTINCT FROM 'timeout' OR q.expires_at <= p_now)
         AND (f.id IS NULL OR q.created_at + f.delay_ms * interval '1 millisecond' <= p_now OR q.expires_at <= p_now)
       ORDER BY q.created_at, q.transaction_id
       LIMIT p_limit - cardinality(v_ids)
         FOR UPDATE OF q SKIP LOCKED) c;
  END IF;
  IF cardinality(v_ids) < p_limit THEN
    -- Rows this transaction claimed above are its own (SKIP LOCKED does not skip them): left out.
    SELECT v_ids || coalesce(array_agg(c.transaction_id), '{}'), v_claimed || coalesce(array_agg(c.ctid), '{}') INTO v_ids, v_claimed FROM (
      SELECT q.transaction_id, q.ctid
        FROM settlement_queue q
       WHERE q.expires_at <= p_now AND NOT q.transaction_id = ANY (v_ids)
       ORDER BY q.expires_at
       LIMIT p_limit - cardinality(v_ids)
         FOR UPDATE OF q SKIP LOCKED) c;
  END IF;
  IF cardinality(v_ids) = 0 THEN
    RETURN;
  END IF;
  -- The claimed rows are locked, so their ctids stay theirs until this transaction ends.
  DELETE FROM settlement_queue WHERE ctid = ANY (v_claimed);
  SELECT id INTO v_network FROM ledger_accounts WHERE account_id IS NULL AND code = 'pix_network';
  -- Transfers their receiver refuses, decided once for the whole batch: a key that rejects
  -- everything, or a settlement fault on the key (with its reason code, '' for none).
  SELECT coalesce(array_agg(t.id), '{}'), coalesce(array_agg(coalesce(f.reason, '')), '{}') INTO v_rejected, v_codes
    FROM transactions t LEFT JOIN dict_keys k ON k.key = t.pix_key
    LEFT JOIN sandbox_faults f ON f.kind = 'settlement' AND f.effect = 'reject' AND f.pix_key = t.pix_key
   WHERE t.id = ANY (v_ids) AND t.type = 'WITHDRAW' AND (k.behavior = 'reject' OR f.id IS NOT NULL);
  -- Every ledger account this batch posts to, locked in id order (see pix_transfer_create_batch):
  -- the network, the shards holding the money, and the available accounts that receive it back
  -- (failures) or receive it (movements between two accounts of this service).
  -- The ids first, then the locks: one index probe per row, never a walk over every ledger
  -- account (the condition over several subqueries was planned as a scan of them all).
  SELECT coalesce(array_agg(DISTINCT s.id), '{}') INTO v_lock FROM (
    SELECT v_network AS id
    UNION ALL
    SELECT t.hold_ledger_account_id FROM transactions t WHERE t.id = ANY (v_ids)
    UNION ALL
    SELECT av.id
      FROM (SELECT t.account_id FROM transactions t
             WHERE t.id = ANY (v_ids)
               AND (t.expires_at <= p_now
                    OR t.id = ANY (v_rejected)
                    OR (t.type = 'REFUND_IN' AND t.counterpart_behavior = 'reject'))
            UNION
            SELECT t.counterpart_account_id FROM transactions t WHERE t.id = ANY (v_ids) AND t.counterpart_account_id IS NOT NULL) a
      CROSS JOIN LATERAL (SELECT la.id FROM ledger_accounts la WHERE la.account_id = a.account_id AND la.code = 'available') av
  ) s;
  PERFORM 1 FROM ledger_accounts la WHERE la.id = ANY (v_lock) ORDER BY la.id FOR UPDATE;

  -- The common case, transfers that settle, set-based: a few statements for the whole batch
  -- instead of several per transfer. Each credits the network's ledger account (a receiver at
  -- another institution) or the receiver's available account (an account of this service,
  -- which also gets its PAYMENT row); v_settle and v_credit pair them, in order of arrival.
  SELECT coalesce(array_agg(x.id ORDER BY x.created_at, x.id), '{}'), coalesce(array_agg(x.credit_id ORDER BY x.created_at, x.id), '{}'),
         coalesce(bool_or(x.internal), false)
    INTO v_settle, v_credit, v_internal
    FROM (SELECT t.id, t.created_at, t.counterpart_account_id IS NOT NULL AS internal,
                 CASE WHEN t.counterpart_account_id IS NULL THEN v_network
                      ELSE (SELECT la.id FROM ledger_accounts la WHERE la.account_id = t.counterpart_account_id AND la.code = 'available') END AS credit_id
            FROM transactions t
           WHERE t.id = ANY (v_ids) AND t.type = 'WITHDRAW' AND t.expires_at > p_now AND NOT t.id = ANY (v_rejected)) x;
  IF array_position(v_credit, NULL) IS NOT NULL THEN
    RAISE EXCEPTION 'transfer % goes to an account with no available ledger account', v_settle[array_position(v_credit, NULL)];
  END IF;
  IF cardinality(v_settle) > 0 THEN
    -- The CHECK on ledger_accounts fails the batch if a shard held less than it releases.
    UPDATE ledger_accounts la SET balance = la.balance - s.total
      FROM (SELECT t.hold_ledger_account_id AS id, sum(t.amount_centavos) AS total
              FROM transactions t WHERE t.id = ANY (v_settle) GROUP BY 1) s
     WHERE la.id = s.id;
    -- One update per credited account, however many movements it receives (a hot receiver).
    UPDATE ledger_accounts la SET balance = la.balance + s.total
      FROM (SELECT c.credit_id AS id, sum(t.amount_centavos) AS total
              FROM unnest(v_settle, v_credit) AS c(id, credit_id) JOIN transactions t ON t.id = c.id GROUP BY 1) s
     WHERE la.id = s.id;
    INSERT INTO postings (ledger_tx_id, kind, reference, debit_account_id, credit_account_id, amount_centavos, created_at)
         SELECT nextval('ledger_tx_seq'),
                CASE WHEN t.counterpart_account_id IS NULL THEN 'transfer_settle' ELSE 'transfer_settle_internal' END,
                t.end_to_end_id, t.hold_ledger_account_id, c.credit_id, t.amount_centavos, p_now
           FROM unnest(v_settle, v_credit) WITH ORDINALITY AS c(id, credit_id, n) JOIN transactions t ON t.id = c.id
          ORDER BY c.n;
    UPDATE transactions SET status = 'CONFIRMED', processed_at = p_now, updated_at = p_now WHERE id = ANY (v_settle);
  END IF;
  IF v_internal THEN
    -- The receiver's side of each movement between two accounts of this service.
    INSERT INTO transactions (
      account_id, type, status, amount_centavos, end_to_end_id, pix_key, description,
      counterpart_name, counterpart_document, counterpart_ispb, counterpart_bank_name,
      counterpart_branch, counterpart_account, counterpart_account_id, created_at, updated_at, processed_at
    )
    SELECT t.counterpart_account_id, 'PAYMENT', 'CONFIRMED', t.amount_centavos, t.end_to_end_id, t.pix_key, t.description,
           a.name, a.document, p_ispb, p_bank_name, a.branch, a.account_number, t.account_id, p_now, p_now, p_now
      FROM unnest(v_settle) WITH ORDINALITY AS c(id, n)
      JOIN transactions t ON t.id = c.id
      JOIN accounts a ON a.id = t.account_id
     WHERE t.counterpart_account_id IS NOT NULL
     ORDER BY c.n;
  END IF;

  -- Failures and refunds, one at a time.
  FOR r IN
    SELECT t.*, array_position(v_rejected, t.id) AS rejected_at FROM transactions t
     WHERE t.id = ANY (v_ids) AND NOT t.id = ANY (v_settle) ORDER BY t.created_at, t.id
  LOOP
    IF r.expires_at <= p_now OR r.rejected_at IS NOT NULL
       OR (r.type = 'REFUND_IN' AND r.counterpart_behavior = 'reject') THEN
      v_reason := CASE WHEN r.expires_at <= p_now THEN p_reason_expired
                       WHEN r.type = 'REFUND_IN' THEN p_reason_refund_rejected
                       WHEN v_codes[r.rejected_at] <> '' THEN p_reason_rejected || ' (' || v_codes[r.rejected_at] || ')'
                       ELSE p_reason_rejected END;
      SELECT id INTO v_to FROM ledger_accounts WHERE account_id = r.account_id AND code = 'available';
      IF ledger_post(CASE WHEN r.type = 'REFUND_IN' THEN 'refund_in_void' ELSE 'transfer_void' END, r.end_to_end_id, NULL, r.hold_ledger_account_id, v_to, r.amount_centavos, p_now) IS NULL THEN
        RAISE EXCEPTION 'blocked balance of account % cannot return movement %', r.account_id, r.id;
      END IF;
      UPDATE transactions SET status = 'ERROR', error_reason = v_reason, processed_at = p_now, updated_at = p_now WHERE id = r.id;
      IF r.type = 'REFUND_IN' THEN
        UPDATE refunds SET status = 'NAO_REALIZADO', motivo = v_reason, updated_at = p_now WHERE refunds.transaction_id = r.id;
      END IF;
    ELSIF r.counterpart_account_id IS NULL THEN
      -- A refund to a payer at another institution.
      IF ledger_post('refund_in_settle', r.end_to_end_id, NULL, r.hold_ledger_account_id, v_network, r.amount_centavos, p_now) IS NULL THEN
        RAISE EXCEPTION 'blocked balance of account % cannot settle refund %', r.account_id, r.id;
      END IF;
      UPDATE transactions SET status = 'CONFIRMED', processed_at = p_now, updated_at = p_now WHERE id = r.id;
      UPDATE refunds SET status = 'DEVOLVIDO', updated_at = p_now WHERE refunds.transaction_id = r.id;
    ELSE
      -- Between two accounts of this service: a transfer credits its receiver (PAYMENT), a
      -- refund credits the payer of the refunded PIX (REFUND_OUT of the payer's transfer).
      SELECT id INTO v_to FROM ledger_accounts WHERE account_id = r.counterpart_account_id AND code = 'available';
      IF ledger_post(CASE WHEN r.type = 'REFUND_IN' THEN 'refund_in_settle_internal' ELSE 'transfer_settle_internal' END, r.end_to_end_id, NULL, r.hold_ledger_account_id, v_to, r.amount_centavos, p_now) IS NULL THEN
        RAISE EXCEPTION 'blocked balance of account % cannot settle movement %', r.account_id, r.id;
      END IF;
      UPDATE transactions SET status = 'CONFIRMED', processed_at = p_now, updated_at = p_now WHERE id = r.id;
      SELECT * INTO v_payer FROM accounts WHERE id = r.account_id;
      IF r.type = 'REFUND_IN' THEN
        UPDATE refunds SET status = 'DEVOLVIDO', updated_at = p_now WHERE refunds.transaction_id = r.id;
        -- The payer's own transfer that the refunded PIX was.
        SELECT w.* INTO v_original FROM transactions o
          JOIN transactions w ON w.account_id = r.counterpart_account_id AND w.end_to_end_id = o.end_to_end_id AND w.type = 'WITHDRAW'
         WHERE o.id = r.original_transaction_id;
      END IF;
      INSERT INTO transactions (
        account_id, type, status, amount_centavos, end_to_end_id, pix_key, description, original_transaction_id,
        counterpart_name, counterpart_document, counterpart_ispb, counterpart_bank_name,
        counterpart_branch, counterpart_account, counterpart_account_id, created_at, updated_at, processed_at
      ) VALUES (
        r.counterpart_account_id, CASE WHEN r.type = 'REFUND_IN' THEN 'REFUND_OUT' ELSE 'PAYMENT' END, 'CONFIRMED',
        r.amount_centavos, r.end_to_end_id,
        CASE WHEN r.type = 'REFUND_IN' THEN v_original.pix_key ELSE r.pix_key END, r.description,
        CASE WHEN r.type = 'REFUND_IN' THEN v_original.id END,
        v_payer.name, v_payer.document, p_ispb, p_bank_name,
        v_payer.branch, v_payer.account_number, r.account_id, p_now, p_now, p_now
      );
    END IF;
  END LOOP;

  -- Every outcome, in order of arrival; a movement between our accounts brings the other
  -- account's new row.
  RETURN QUERY
    SELECT t.id, CASE WHEN t.status = 'ERROR' THEN 'failed' ELSE 'settled' END::settlement_outcome, rcv.id
      FROM transactions t
      LEFT JOIN transactions rcv
        ON t.counterpart_account_id IS NOT NULL AND rcv.account_id = t.counterpart_account_id
       AND rcv.end_to_end_id = t.end_to_end_id
       AND rcv.type = CASE WHEN t.type = 'REFUND_IN' THEN 'REFUND_OUT' ELSE 'PAYMENT' END
     WHERE t.id = ANY (v_ids)
     ORDER BY t.created_at, t.id;
END;
$$;
