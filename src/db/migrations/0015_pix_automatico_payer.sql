-- Pix Automático, the payer's side (docs/decisions/0049-pix-automatico-payer.md): this service
-- as the payer's PSP of its own account holders. The recurrences, solicitations and recurring
-- charges stay one set of rows whichever side is here:
--   * both sides accounts of this service: the receiver's account_id and the payer's
--     payer_account_id on the same rows;
--   * a receiver at another institution (the sandbox plays it): no account_id, and the receiver
--     as that institution described it (recebedor_externo); the payer is an account here.

-- A recurrence of a receiver at another institution: {cnpj, nome, ispbParticipante}.
ALTER TABLE recurrences ALTER COLUMN account_id DROP NOT NULL;
ALTER TABLE recurrences ADD COLUMN recebedor_externo jsonb;
ALTER TABLE recurrences ADD CONSTRAINT recurrences_receiver_check CHECK ((account_id IS NULL) <> (recebedor_externo IS NULL));
-- The payer's list of its authorizations, newest first.
DROP INDEX recurrences_payer_idx;
CREATE INDEX recurrences_payer_idx ON recurrences (payer_account_id, created_at DESC, id DESC) WHERE payer_account_id IS NOT NULL;

-- A solicitation sent by another institution's receiver has no account here; one that reaches an
-- account holder of this service names it (payer_account_id), found by its conta and document.
ALTER TABLE rec_solicitations ALTER COLUMN account_id DROP NOT NULL;
ALTER TABLE rec_solicitations ADD COLUMN payer_account_id bigint REFERENCES accounts (id);

-- A recurring charge of another institution's receiver: no account here, its txid unique among
-- those charges (the sandbox names them by it).
ALTER TABLE recurring_charges ALTER COLUMN account_id DROP NOT NULL;
CREATE UNIQUE INDEX recurring_charges_external_txid_idx ON recurring_charges (txid) WHERE account_id IS NULL;
-- The payer's list of the charges it pays: by recurrence, newest due date first.
CREATE INDEX recurring_charges_recurrence_idx ON recurring_charges (recurrence_id, due_date DESC, id DESC);

-- The payer's side of a paid attempt, when the payer is an account of this service: the Pix
-- out (WITHDRAW) that debited it, with the attempt's end-to-end id. Unique: one debit per attempt.
ALTER TABLE recurring_charge_attempts ADD COLUMN debit_transaction_id bigint UNIQUE;

-- The payer's notifications through the root webhooks: its authorizations and the recurring
-- charges it pays.
ALTER TABLE webhooks DROP CONSTRAINT webhooks_event_type_check;
ALTER TABLE webhooks ADD CONSTRAINT webhooks_event_type_check CHECK (event_type IN (
  'cash_in', 'cash_out', 'refund_in', 'refund_out', 'med_created', 'med_accepted', 'med_rejected',
  'authorization_requested', 'authorization_approved', 'authorization_rejected', 'authorization_cancelled', 'authorization_expired',
  'recurring_charge_scheduled', 'recurring_charge_paid', 'recurring_charge_failed', 'recurring_charge_cancelled'
));
