-- The whole product's schema. Every amount is bigint centavos. Runs unchanged on PGlite and
-- PostgreSQL (the schema snapshot test proves both end up identical).

CREATE TABLE accounts (
  id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name               text        NOT NULL CHECK (length(name) BETWEEN 1 AND 140),
  document           text        NOT NULL CHECK (document ~ '^[0-9]{11}$|^[0-9A-Z]{12}[0-9]{2}$'),
  document_type      text        NOT NULL CHECK (document_type IN ('CPF', 'CNPJ')),
  branch             text        NOT NULL,
  account_number     text        NOT NULL UNIQUE,
  client_id          text        NOT NULL UNIQUE,
  client_secret_hash text        NOT NULL,
  webhook_secret          text   NOT NULL,
  webhook_secret_previous text,
  webhook_secret_rotated_at timestamptz,
  status             text        NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE', 'BLOCKED', 'CLOSED')),
  created_at         timestamptz NOT NULL DEFAULT now()
);

-- X.509 client certificates linked to an account; a fingerprint belongs to one account only.
CREATE TABLE account_certificates (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id   bigint      NOT NULL REFERENCES accounts (id),
  fingerprint  text        NOT NULL UNIQUE CHECK (fingerprint ~ '^[0-9a-f]{64}$'),
  subject      text        NOT NULL,
  not_before   timestamptz NOT NULL,
  not_after    timestamptz NOT NULL,
  pem          text        NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX account_certificates_account_idx ON account_certificates (account_id);

-- JWT signing keys, shared by every process on the database; every process signs with the
-- oldest active key, so they agree.
CREATE TABLE signing_keys (
  kid          text        PRIMARY KEY,
  algorithm    text        NOT NULL,
  private_jwk  jsonb       NOT NULL,
  public_jwk   jsonb       NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  retired_at   timestamptz
);

-- The directory (DICT): keys of our own accounts (account_id set) and, in the sandbox, keys held
-- at other institutions (account_id null, with the holder's data and a simulated behaviour).
CREATE TABLE dict_keys (
  key            text        PRIMARY KEY CHECK (length(key) BETWEEN 1 AND 77),
  key_type       text        NOT NULL CHECK (key_type IN ('CPF', 'CNPJ', 'EMAIL', 'PHONE', 'EVP')),
  account_id     bigint      REFERENCES accounts (id),
  owner_name     text        NOT NULL,
  owner_document text        NOT NULL,
  ispb           text        NOT NULL CHECK (ispb ~ '^[0-9]{8}$'),
  bank_name      text,
  branch         text,
  account_number text,
  behavior       text        CHECK (behavior IN ('reject', 'timeout')),
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dict_keys_account_idx ON dict_keys (account_id) WHERE account_id IS NOT NULL;

-- Double-entry ledger. Each account holder has an 'available' and a 'blocked' ledger account;
-- system accounts (account_id null) stand for the rest of the Pix network. A posting moves a
-- positive amount from one ledger account to another, so every posting set sums to zero by
-- construction, and the CHECK below is the no-overdraft rule.
--
-- The blocked money of an account is spread over several shards (rows with the same code): a
-- batch of new transfers holds money in one shard while settlement releases it from others, so
-- the two do not wait for each other's row locks. The blocked balance is the sum of the shards.
CREATE TABLE ledger_accounts (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id      bigint      REFERENCES accounts (id),
  code            text        NOT NULL,
  shard           smallint    NOT NULL DEFAULT 0 CHECK (shard BETWEEN 0 AND 63),
  balance         bigint      NOT NULL DEFAULT 0,
  allow_negative  boolean     NOT NULL DEFAULT false,
  created_at      timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT ledger_accounts_no_overdraft CHECK (allow_negative OR balance >= 0)
);
CREATE UNIQUE INDEX ledger_accounts_owner_code_idx ON ledger_accounts (account_id, code, shard) WHERE account_id IS NOT NULL;
CREATE UNIQUE INDEX ledger_accounts_system_code_idx ON ledger_accounts (code, shard) WHERE account_id IS NULL;

-- A posting moves a positive amount from one ledger account to another; the postings of one
-- movement share a ledger_tx_id. Postings are append-only and carry no secondary index and no
-- foreign keys: they are the audit trail, read in bulk, written only by ledger_post (migration
-- 0002) with ledger account ids it has just updated, and each check would slow the hot path.
CREATE SEQUENCE ledger_tx_seq;

CREATE TABLE postings (
  id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  ledger_tx_id       bigint      NOT NULL,
  kind               text        NOT NULL,
  reference          text,
  debit_account_id   bigint      NOT NULL,
  credit_account_id  bigint      NOT NULL,
  amount_centavos    bigint      NOT NULL CHECK (amount_centavos > 0),
  created_at         timestamptz NOT NULL DEFAULT now(),
  CHECK (debit_account_id <> credit_account_id)
);

-- The movements, one row per ledger transaction.
CREATE VIEW ledger_transactions AS
  SELECT ledger_tx_id AS id, min(kind) AS kind, min(reference) AS reference, min(created_at) AS created_at
    FROM postings GROUP BY ledger_tx_id;

-- Every Pix movement an account holder sees: transfers out (WITHDRAW), PIX in (PAYMENT),
-- refunds we send (REFUND_IN) and refunds we receive (REFUND_OUT).
-- The hot-path tables (transactions, idempotency_keys, postings) have no foreign keys: their
-- rows are written only by the SQL functions of migration 0002 and by services, always for an
-- account that exists (accounts are never deleted), and the triggers behind foreign keys cost
-- about a quarter of a transfer's database time.
CREATE TABLE transactions (
  id                      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id              bigint      NOT NULL,
  type                    text        NOT NULL CHECK (type IN ('PAYMENT', 'WITHDRAW', 'REFUND_IN', 'REFUND_OUT')),
  status                  text        NOT NULL CHECK (status IN ('PENDING', 'CONFIRMED', 'ERROR')),
  amount_centavos         bigint      NOT NULL CHECK (amount_centavos > 0),
  fee_centavos            bigint      NOT NULL DEFAULT 0 CHECK (fee_centavos >= 0),
  external_id             text,
  end_to_end_id           text,
  idempotency_key         text,
  pix_key                 text,
  txid                    text,
  description             text,
  priority                text        CHECK (priority IN ('HIGH', 'NORM')),
  expires_at              timestamptz,
  ispb_deny               text[],
  error_reason            text,
  original_transaction_id bigint,
  counterpart_name        text,
  counterpart_document    text,
  counterpart_ispb        text,
  counterpart_bank_name   text,
  counterpart_bank_code   text,
  counterpart_branch      text,
  counterpart_account     text,
  counterpart_account_id  bigint,
  -- The ledger account (a blocked shard) that holds a pending transfer's money.
  hold_ledger_account_id  bigint,
  created_at              timestamptz NOT NULL DEFAULT now(),
  updated_at              timestamptz NOT NULL DEFAULT now(),
  processed_at            timestamptz
-- Settling changes only columns no index covers, so with room left on each page the update is
-- HOT: no index is touched.
) WITH (fillfactor = 70);
CREATE UNIQUE INDEX transactions_account_external_idx ON transactions (account_id, external_id) WHERE external_id IS NOT NULL AND type = 'WITHDRAW';
-- Both sides of an internal transfer carry the same end-to-end id, one row per account.
CREATE UNIQUE INDEX transactions_account_e2e_idx ON transactions (account_id, end_to_end_id) WHERE end_to_end_id IS NOT NULL;
CREATE INDEX transactions_e2e_idx ON transactions (end_to_end_id);
CREATE INDEX transactions_account_created_idx ON transactions (account_id, created_at DESC, id DESC);
CREATE INDEX transactions_account_external_lookup_idx ON transactions (account_id, external_id);
CREATE INDEX transactions_account_pix_key_idx ON transactions (account_id, pix_key, created_at DESC, id DESC);

-- What the settlement worker has still to do: a pending transfer enters with its transaction and
-- leaves when it is settled or fails. Kept apart from transactions, whose status update would
-- otherwise have to maintain a partial index.
CREATE TABLE settlement_queue (
  transaction_id  bigint      PRIMARY KEY,
  priority        text        NOT NULL CHECK (priority IN ('HIGH', 'NORM')),
  pix_key         text        NOT NULL,
  created_at      timestamptz NOT NULL,
  expires_at      timestamptz NOT NULL
);
CREATE INDEX settlement_queue_order_idx ON settlement_queue (created_at, transaction_id);

-- Idempotent writes: the stored answer lives beside the effect, under one unique key.
CREATE TABLE idempotency_keys (
  account_id       bigint      NOT NULL,
  key              text        NOT NULL,
  request_hash     text        NOT NULL,
  status           text        NOT NULL CHECK (status IN ('IN_FLIGHT', 'DONE')),
  response_status  integer,
  response_body    jsonb,
  created_at       timestamptz NOT NULL DEFAULT now(),
  expires_at       timestamptz NOT NULL,
  PRIMARY KEY (account_id, key)
);
-- The worker deletes answers past their 24 hours, oldest first.
CREATE INDEX idempotency_keys_expires_idx ON idempotency_keys (expires_at);

-- Immediate charges (cob). loc.id is the row id.
CREATE TABLE charges (
  id                    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id            bigint      NOT NULL REFERENCES accounts (id),
  txid                  text        NOT NULL UNIQUE CHECK (txid ~ '^[a-zA-Z0-9]{26,35}$'),
  revisao               integer     NOT NULL DEFAULT 0,
  status                text        NOT NULL CHECK (status IN ('ATIVA', 'CONCLUIDA', 'REMOVIDA_PELO_USUARIO_RECEBEDOR', 'REMOVIDA_PELO_PSP')),
  expiracao_seconds     integer     NOT NULL CHECK (expiracao_seconds > 0),
  amount_centavos       bigint      NOT NULL CHECK (amount_centavos > 0),
  modalidade_alteracao  integer     NOT NULL DEFAULT 0,
  chave                 text        NOT NULL,
  devedor               jsonb,
  solicitacao_pagador   text,
  info_adicionais       jsonb,
  br_code               text        NOT NULL,
  paid_transaction_id   bigint      REFERENCES transactions (id),
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX charges_account_created_idx ON charges (account_id, created_at DESC, id DESC);

-- Refunds we send (devolucao) of a received PIX.
CREATE TABLE refunds (
  id                       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id               bigint      NOT NULL REFERENCES accounts (id),
  original_transaction_id  bigint      NOT NULL REFERENCES transactions (id),
  transaction_id           bigint      NOT NULL REFERENCES transactions (id),
  refund_id                text        NOT NULL CHECK (length(refund_id) BETWEEN 1 AND 35),
  rtr_id                   text        NOT NULL UNIQUE,
  amount_centavos          bigint      NOT NULL CHECK (amount_centavos > 0),
  natureza                 text        NOT NULL CHECK (natureza IN ('ORIGINAL', 'RETIRADA', 'MED_OPERACIONAL', 'MED_FRAUDE')),
  descricao                text,
  status                   text        NOT NULL CHECK (status IN ('EM_PROCESSAMENTO', 'DEVOLVIDO', 'NAO_REALIZADO')),
  motivo                   text,
  requested_at             timestamptz NOT NULL DEFAULT now(),
  updated_at               timestamptz NOT NULL DEFAULT now(),
  UNIQUE (original_transaction_id, refund_id)
);

-- MED disputes against a received PIX.
CREATE TABLE meds (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id      bigint      NOT NULL REFERENCES accounts (id),
  transaction_id  bigint      NOT NULL REFERENCES transactions (id),
  amount_centavos bigint      NOT NULL CHECK (amount_centavos > 0),
  reason          text        NOT NULL,
  status          text        NOT NULL CHECK (status IN ('OPEN', 'ACCEPTED', 'REJECTED')),
  refund_id       bigint      REFERENCES refunds (id),
  created_at      timestamptz NOT NULL DEFAULT now(),
  closed_at       timestamptz
);

-- Webhook registrations: up to 3 active URLs per (account, event type).
CREATE TABLE webhooks (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id  bigint      NOT NULL REFERENCES accounts (id),
  event_type  text        NOT NULL CHECK (event_type IN ('cash_in', 'cash_out', 'refund_in', 'refund_out', 'med_created', 'med_accepted', 'med_rejected')),
  url         text        NOT NULL CHECK (length(url) <= 2048),
  headers     jsonb       NOT NULL DEFAULT '{}',
  is_active   boolean     NOT NULL DEFAULT true,
  version     integer     NOT NULL DEFAULT 1,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (account_id, event_type, url)
);

-- Outbox: every notification is written in the transaction of the movement that causes it.
-- No foreign keys, as on the other hot-path tables: rows are written beside the movement.
CREATE TABLE outbox (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id      bigint      NOT NULL,
  event_type      text        NOT NULL,
  transaction_id  bigint,
  payload         jsonb       NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  dispatched_at   timestamptz
);
CREATE INDEX outbox_undispatched_idx ON outbox (id) WHERE dispatched_at IS NULL;
CREATE INDEX outbox_transaction_idx ON outbox (transaction_id);

-- One row per (notification, destination URL): the unit the worker delivers and retries.
CREATE TABLE webhook_deliveries (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  outbox_id        bigint      REFERENCES outbox (id),
  account_id       bigint      NOT NULL REFERENCES accounts (id),
  webhook_id       bigint      REFERENCES webhooks (id),
  url              text        NOT NULL,
  message_id       text        NOT NULL,
  status           text        NOT NULL CHECK (status IN ('PENDING', 'SUCCEEDED', 'FAILED')),
  attempts         integer     NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'PENDING';

-- Every delivery attempt, readable by the account.
CREATE TABLE webhook_logs (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id      bigint      NOT NULL REFERENCES accounts (id),
  delivery_id     bigint      REFERENCES webhook_deliveries (id),
  transaction_id  bigint      REFERENCES transactions (id),
  event_type      text        NOT NULL,
  url             text        NOT NULL,
  message_id      text        NOT NULL,
  attempt         integer     NOT NULL,
  status_code     integer,
  success         boolean     NOT NULL,
  duration_ms     integer     NOT NULL,
  error           text,
  is_resend       boolean     NOT NULL DEFAULT false,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_logs_account_idx ON webhook_logs (account_id, created_at DESC, id DESC);

-- The rest of the Pix network, as seen from our ledger.
INSERT INTO ledger_accounts (account_id, code, allow_negative) VALUES (NULL, 'pix_network', true);
