-- Answers on the wire are built by TypeScript views, not in SQL
-- (docs/decisions/0029-answers-built-in-typescript.md). pix_transfer_create built the answer of
-- POST /dict/pix as JSON (its amount converted by round(amount / 100, 2), a second conversion of
-- money beside lib/money.ts) and stored that body as the idempotent answer. Now the functions
-- keep the atomic core (claim the key, the guarded debit, the inserts) and return typed
-- columns; the stored answer is the typed columns it is rebuilt from; the outcomes are enums
-- whose labels a test compares with the TypeScript lists (transfers/repo.ts, settlement/repo.ts).
--
-- A process of the previous version reads response_body, which is gone, and calls functions
-- whose result changed: upgrade every process of a database together.

--------------------------------------------------------------------------------------------------
-- (1) Schema changes
--------------------------------------------------------------------------------------------------

-- What pix_transfer_create tells its caller, and what pix_settle_batch tells of each movement.
CREATE TYPE transfer_create_outcome AS ENUM (
  'created', 'replay', 'in_flight', 'idempotency_mismatch', 'key_not_found', 'own_key', 'ispb_denied',
  'creditor_mismatch', 'external_id_taken', 'insufficient_funds'
);
CREATE TYPE settlement_outcome AS ENUM ('settled', 'failed');

-- The stored answer of a transfer: its transaction, end-to-end id, amount and status when it was
-- accepted; created_at is when it was accepted. A replay answers with these, not with the
-- transaction's state of the moment.
ALTER TABLE idempotency_keys
  ADD COLUMN transaction_id bigint,
  ADD COLUMN end_to_end_id text,
  ADD COLUMN amount_centavos positive_centavos,
  ADD COLUMN transaction_status transaction_status;
-- The answers stored as JSON bodies, carried over: each matched to its transfer by the body's id,
-- the end-to-end id and the amount taken from the transfer (no conversion of money here), the
-- status from the body. Every stored answer is of a transfer that exists (transactions are never
-- deleted): a row left unmatched fails the NOT NULL below, and the migration with it.
UPDATE idempotency_keys k
   SET transaction_id = t.id,
       end_to_end_id = t.end_to_end_id,
       amount_centavos = t.amount_centavos,
       transaction_status = (k.response_body ->> 'type')::transaction_status
  FROM transactions t
 WHERE t.id = (k.response_body ->> 'id')::bigint;
ALTER TABLE idempotency_keys
  ALTER COLUMN transaction_id SET NOT NULL,
  ALTER COLUMN end_to_end_id SET NOT NULL,
  ALTER COLUMN amount_centavos SET NOT NULL,
  ALTER COLUMN transaction_status SET NOT NULL,
  DROP COLUMN response_status,
  DROP COLUMN response_body;

-- Their results change: dropped, then made again below. The two-argument batch function (one
-- shard for the whole batch) served processes of the version before migration 0011; like them,
-- it read the JSON answers, and it goes.
DROP FUNCTION pix_transfer_create_batch(jsonb, integer);
DROP FUNCTION pix_transfer_create_batch(jsonb);
DROP FUNCTION pix_transfer_create(bigint, text, text, bigint, text, text, integer, text, text[], text, text, text, timestamptz, bigint, bigint);
DROP FUNCTION pix_settle_batch(timestamptz, timestamptz, boolean, integer, text, text, text, text, text);

--------------------------------------------------------------------------------------------------
-- (2) Functions
--------------------------------------------------------------------------------------------------

-- POST /dict/pix in one round trip: idempotency, directory checks, the guarded debit and the
-- stored answer, all in the caller's transaction. Returns the outcome and, for 'created' and
-- 'replay', the stored answer's columns (null otherwise); the service maps the outcome to HTTP
-- and builds the answer (transfers/views.ts).
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
) RETURNS TABLE (
  outcome                  transfer_create_outcome,
  transfer_id              bigint,
  transfer_end_to_end_id   text,
  transfer_amount_centavos bigint,
  transfer_status          transaction_status,
  transfer_accepted_at     timestamptz
)
LANGUAGE plpgsql AS $$
DECLARE
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
      outcome := 'idempotency_mismatch';
    ELSE
      outcome := 'replay';
      transfer_id := v_existing.transaction_id;
      transfer_end_to_end_id := v_existing.end_to_end_id;
      transfer_amount_centavos := v_existing.amount_centavos;
      transfer_status := v_existing.transaction_status;
      transfer_accepted_at := v_existing.created_at;
    END IF;
    RETURN NEXT;
    RETURN;
  END IF;

  -- No answer yet and another transaction holding this key: the first request is still in
  -- flight. 409 at once, instead of waiting on the unique index.
  IF NOT v_locked THEN
    outcome := 'in_flight';
    RETURN NEXT;
    RETURN;
  END IF;
  IF v_existing.key IS NOT NULL THEN
    -- This key was used more than 24 hours ago and may be used again.
    DELETE FROM idempotency_keys WHERE account_id = p_account_id AND key = p_idempotency_key;
  END IF;

  SELECT * INTO v_key FROM dict_keys WHERE key = p_pix_key;
  IF NOT FOUND THEN
    outcome := 'key_not_found';
  ELSIF v_key.account_id = p_account_id THEN
    outcome := 'own_key';
  ELSIF p_ispb_deny IS NOT NULL AND v_key.ispb = ANY (p_ispb_deny) THEN
    outcome := 'ispb_denied';
  ELSIF p_priority = 'HIGH' AND v_key.owner_document IS DISTINCT FROM p_creditor_document THEN
    outcome := 'creditor_mismatch';
  END IF;
  IF outcome IS NOT NULL THEN
    RETURN NEXT;
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
      outcome := 'external_id_taken';
      RETURN NEXT;
      RETURN;
    END IF;
    v_external_id := NULL;
  END IF;

  -- The guarded debit: available -> blocked, or nothing when the money is not there.
  -- p_available_id and p_blocked_id: the payer's available account and the blocked shard that
  -- holds the money (the batch looked them up for all its items at once).
  v_ledger_tx := ledger_post('transfer_hold', p_end_to_end_id, NULL, p_available_id, p_blocked_id, p_amount_centavos, p_now);
  IF v_ledger_tx IS NULL THEN
    outcome := 'insufficient_funds';
    RETURN NEXT;
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
       INTO transfer_id, transfer_end_to_end_id, transfer_amount_centavos, transfer_status, transfer_accepted_at;

  IF p_priority = 'HIGH' THEN
    PERFORM pg_notify('pix_settlement', v_tx_id::text);
  END IF;
  outcome := 'created';
  RETURN NEXT;
END;
$$;

-- Several transfers in one transaction and one commit (requests that arrive together), each
-- item holding its money in the blocked shard it names (migration 0011), each with its own
-- outcome and answer. In the order of each payer's available ledger account, the order every
-- writer locks them in (migration 0005), and in arrival order within one payer; each item's
-- ledger accounts found by two index probes (migration 0009).
CREATE FUNCTION pix_transfer_create_batch(p_items jsonb)
RETURNS TABLE (
  ord                      integer,
  outcome                  transfer_create_outcome,
  transfer_id              bigint,
  transfer_end_to_end_id   text,
  transfer_amount_centavos bigint,
  transfer_status          transaction_status,
  transfer_accepted_at     timestamptz
)
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
    RETURN QUERY SELECT it.ord, c.outcome, c.transfer_id, c.transfer_end_to_end_id, c.transfer_amount_centavos,
                        c.transfer_status, c.transfer_accepted_at
      FROM pix_transfer_create(it.account_id, it.idempotency_key, it.request_hash, it.amount, it.pix_key, it.priority,
                               it.expiration, it.creditor_document, it.ispb_deny, it.description, it.external_id,
                               it.end_to_end_id, it.now, it.available_id, it.blocked_id) c;
  END LOOP;
END;
$$;

-- Settles one batch of queued transfers and refunds whose turn has come, claimed with SKIP LOCKED
-- (several workers never take the same one): HIGH at once, NORM from p_norm_due_before on, by
-- arrival; one past its expiration, or to a receiver that rejects, fails and its money returns to
-- available. Returns each movement's outcome (and, for a movement between two accounts of this
-- service, the other account's new row); the caller writes the notifications in the same
-- transaction. The body is migration 0010's; the outcome is now a settlement_outcome.
CREATE FUNCTION pix_settle_batch(
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
     WHERE q.priority = 'HIGH' AND (k.behavior IS DISTINCT FROM 'timeout' OR q.expires_at <= p_now)
     ORDER BY q.created_at, q.transaction_id
     LIMIT p_limit
       FOR UPDATE OF q SKIP LOCKED) c;
  IF cardinality(v_ids) < p_limit THEN
    SELECT v_ids || coalesce(array_agg(c.transaction_id), '{}'), v_claimed || coalesce(array_agg(c.ctid), '{}') INTO v_ids, v_claimed FROM (
      SELECT q.transaction_id, q.ctid
        FROM settlement_queue q LEFT JOIN dict_keys k ON k.key = q.pix_key
       WHERE q.created_at <= CASE WHEN p_force THEN 'infinity'::timestamptz ELSE p_norm_due_before END
         AND q.priority = 'NORM' AND (k.behavior IS DISTINCT FROM 'timeout' OR q.expires_at <= p_now)
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
      FROM (SELECT t.account_id FROM transactions t LEFT JOIN dict_keys k ON k.key = t.pix_key
             WHERE t.id = ANY (v_ids)
               AND (t.expires_at <= p_now
                    OR (t.type = 'WITHDRAW' AND k.behavior = 'reject')
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
            FROM transactions t LEFT JOIN dict_keys k ON k.key = t.pix_key
           WHERE t.id = ANY (v_ids) AND t.type = 'WITHDRAW' AND t.expires_at > p_now AND k.behavior IS DISTINCT FROM 'reject') x;
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
    SELECT t.*, k.behavior FROM transactions t LEFT JOIN dict_keys k ON k.key = t.pix_key
     WHERE t.id = ANY (v_ids) AND NOT t.id = ANY (v_settle) ORDER BY t.created_at, t.id
  LOOP
    IF r.expires_at <= p_now OR (r.type = 'WITHDRAW' AND r.behavior = 'reject')
       OR (r.type = 'REFUND_IN' AND r.counterpart_behavior = 'reject') THEN
      v_reason := CASE WHEN r.expires_at <= p_now THEN p_reason_expired
                       WHEN r.type = 'REFUND_IN' THEN p_reason_refund_rejected
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
