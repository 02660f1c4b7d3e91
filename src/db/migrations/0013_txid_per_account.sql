-- A txid is unique per account (BCB: per receiving user), not across the service: another
-- account's charges are invisible and never collide (decisions.md, Charges). The one index is
-- (txid, account_id): it enforces that, finds an account's charge by txid, and finds every
-- account holding a txid (the sandbox payer, which must then be told which one).
ALTER TABLE charges ADD CONSTRAINT charges_txid_account_key UNIQUE (txid, account_id);
ALTER TABLE charges DROP CONSTRAINT charges_txid_key;
