-- The one way a balance changes: a positive amount from a debit to a credit ledger account.
-- The debit is guarded (no row when the account cannot pay and may not go negative), so the
-- answer is NULL and nothing is written; otherwise the ledger transaction id (p_ledger_tx, or a
-- new one). The CHECK on ledger_accounts backs the guard up.
CREATE OR REPLACE FUNCTION ledger_post(
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
