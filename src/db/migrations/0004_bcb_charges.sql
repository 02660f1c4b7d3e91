-- BCB's API Pix under /v2 (docs/decisions/0033-bcb-charges-and-locations.md): payload locations,
-- due-date charges (cobv) in the same table as immediate ones, the revisions a charge had,
-- batches of cobv, webhooks per key, and the value components of a received Pix.

-- Payload locations (`loc`): the address a dynamic BR Code names. A location belongs to one
-- account and one kind of charge; it is linked to at most one charge (charges.loc_id), and can be
-- unlinked and linked again. `token` is the pixUrlAccessToken of its URL.
CREATE TABLE locations (
  id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id  bigint      NOT NULL REFERENCES accounts (id),
  tipo_cob    text        NOT NULL CHECK (tipo_cob IN ('cob', 'cobv')),
  token       text        NOT NULL UNIQUE CHECK (token ~ '^[a-z0-9]{32}$'),
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX locations_account_created_idx ON locations (account_id, created_at DESC, id DESC);

-- A charge is an immediate one (cob: valid `expiracao_seconds` from its creation) or a due-date
-- one (cobv: payable until `last_payable_day`, from `due_date` and `validade_apos_vencimento`, with the amount
-- rules of `valor_rules`). `pix_copia_e_cola` is the dynamic BR Code of its location; `br_code`
-- stays the static code the root dialect shows. An amount of 0.00 is a Pix Saque or a charge
-- whose payer chooses the amount (BCB).
ALTER TABLE charges
  ADD COLUMN tipo_cob                 text    NOT NULL DEFAULT 'cob' CHECK (tipo_cob IN ('cob', 'cobv')),
  ADD COLUMN loc_id                   bigint  UNIQUE REFERENCES locations (id),
  ADD COLUMN pix_copia_e_cola         text,
  ADD COLUMN retirada                 jsonb,
  ADD COLUMN due_date                 date,
  ADD COLUMN validade_apos_vencimento integer CHECK (validade_apos_vencimento >= 0),
  -- cobv: the last day it can be paid (the due date and the last one moved to banking days,
  -- cobv/amount.ts), kept so that the lists' status filter reads what the charge reads.
  ADD COLUMN last_payable_day         date,
  ADD COLUMN valor_rules              jsonb,
  ADD COLUMN recebedor                jsonb,
  ALTER COLUMN expiracao_seconds DROP NOT NULL,
  DROP CONSTRAINT charges_amount_centavos_check,
  ADD CONSTRAINT charges_amount_centavos_check CHECK (amount_centavos >= 0),
  ADD CONSTRAINT charges_kind_check CHECK (
    (tipo_cob = 'cob' AND expiracao_seconds IS NOT NULL AND due_date IS NULL)
    OR (tipo_cob = 'cobv' AND expiracao_seconds IS NULL AND due_date IS NOT NULL AND validade_apos_vencimento IS NOT NULL
        AND last_payable_day IS NOT NULL));

-- What a charge was at each earlier revision (GET /v2/cob/{txid}?revisao=N): a revision writes
-- the state it replaces; the current one is the charge's row.
CREATE TABLE charge_revisions (
  charge_id   bigint      NOT NULL REFERENCES charges (id),
  revisao     integer     NOT NULL CHECK (revisao >= 0),
  snapshot    jsonb       NOT NULL,
  created_at  timestamptz NOT NULL,
  PRIMARY KEY (charge_id, revisao)
);

-- Batches of due-date charges (lotecobv), the id given by the account; each item is one cobv of
-- the batch, with its own outcome.
CREATE TABLE cobv_batches (
  account_id  bigint      NOT NULL REFERENCES accounts (id),
  id          bigint      NOT NULL,
  descricao   text        NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, id)
);

CREATE TABLE cobv_batch_items (
  account_id  bigint      NOT NULL,
  batch_id    bigint      NOT NULL,
  txid        text        NOT NULL,
  position    integer     NOT NULL,
  status      text        NOT NULL CHECK (status IN ('EM_PROCESSAMENTO', 'CRIADA', 'NEGADA')),
  problema    jsonb,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, batch_id, txid),
  FOREIGN KEY (account_id, batch_id) REFERENCES cobv_batches (account_id, id)
);

-- BCB's webhook per key (PUT /v2/webhook/{chave}): one URL per key of the account. Its callbacks
-- (`POST {url}/pix`) go through the outbox and deliveries as the root dialect's do, at the
-- destination of the URL's origin.
CREATE TABLE pix_key_webhooks (
  id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id      bigint      NOT NULL REFERENCES accounts (id),
  chave           text        NOT NULL,
  webhook_url     text        NOT NULL CHECK (length(webhook_url) <= 2048),
  destination_id  bigint      NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (account_id, chave)
);

-- A received Pix's value components (BCB's componentesValor: original, saque, troco, juros,
-- multa, abatimento, desconto), as centavos in decimal strings; null for a plain Pix, whose
-- components are its amount alone.
ALTER TABLE transactions ADD COLUMN value_components jsonb;
