-- The whole product's schema: tables, indexes, domains, sequences and constraints. Every amount
-- is bigint centavos. The SQL functions are not here: each has its own file in src/db/functions/,
-- applied after the migrations (docs/decisions/0028-function-files.md). Runs unchanged on PGlite
-- and PostgreSQL (the schema snapshot test proves both end up identical).

-- The hot tables' one-column rules are domains, not CHECK constraints: PostgreSQL prepares a
-- table's CHECK expressions on every statement that writes a row, a domain's check once per
-- connection and only for the columns a statement writes. The rules are the same; rules over two
-- columns stay table constraints. Drivers see the base types
-- (docs/decisions/0017-column-rules-as-domains.md).
CREATE DOMAIN positive_centavos AS bigint CHECK (VALUE > 0);
CREATE DOMAIN nonnegative_centavos AS bigint CHECK (VALUE >= 0);
CREATE DOMAIN ledger_shard AS smallint CHECK (VALUE BETWEEN 0 AND 63);
CREATE DOMAIN transaction_type AS text CHECK (VALUE IN ('PAYMENT', 'WITHDRAW', 'REFUND_IN', 'REFUND_OUT'));
CREATE DOMAIN transaction_status AS text CHECK (VALUE IN ('PENDING', 'CONFIRMED', 'ERROR'));
CREATE DOMAIN transfer_priority AS text CHECK (VALUE IN ('HIGH', 'NORM'));
CREATE DOMAIN receiver_behavior AS text CHECK (VALUE = 'reject');
CREATE DOMAIN idempotency_status AS text CHECK (VALUE IN ('IN_FLIGHT', 'DONE'));
CREATE DOMAIN delivery_status AS text CHECK (VALUE IN ('PENDING', 'SUCCEEDED', 'FAILED'));
-- What pix_transfer_create tells its caller, and what pix_settle_batch tells of each movement;
-- a test compares their labels with the TypeScript lists (transfers/repo.ts, settlement/repo.ts).
CREATE TYPE transfer_create_outcome AS ENUM (
  'created', 'replay', 'in_flight', 'idempotency_mismatch', 'key_not_found', 'own_key', 'ispb_denied',
  'creditor_mismatch', 'external_id_taken', 'insufficient_funds'
);
CREATE TYPE settlement_outcome AS ENUM ('settled', 'failed');
-- What pix_transfer_create returns for a transfer, and pix_transfer_create_batch for each item:
-- the outcome and, for 'created' and 'replay', the stored answer's columns (null otherwise).
CREATE TYPE transfer_create_result AS (
  outcome                  transfer_create_outcome,
  transfer_id              bigint,
  transfer_end_to_end_id   text,
  transfer_amount_centavos bigint,
  transfer_status          transaction_status,
  transfer_accepted_at     timestamptz
);

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
  created_at         timestamptz NOT NULL DEFAULT now(),
  -- Every rotation of the client secret raises the version; a token carries the version it was
  -- issued under, and one below the account's current version is revoked
  -- (docs/decisions/0003-token-lifecycle.md).
  client_secret_version integer  NOT NULL DEFAULT 1
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
-- newest active key, so they agree and a rotation takes effect. Private keys are kept sealed
-- (AES-256-GCM under KEY_ENCRYPTION_KEY, the kid as additional data), so that reading the
-- database is not enough to mint tokens; private_jwk holds a key not sealed yet (the service
-- seals it on its first start and clears the plain copy). A retired key keeps neither: it never
-- signs again (docs/decisions/0003-token-lifecycle.md).
CREATE TABLE signing_keys (
  kid                text        PRIMARY KEY,
  algorithm          text        NOT NULL,
  private_jwk        jsonb,
  public_jwk         jsonb       NOT NULL,
  created_at         timestamptz NOT NULL DEFAULT now(),
  retired_at         timestamptz,
  private_key_sealed text,
  CONSTRAINT signing_keys_private_once CHECK (private_jwk IS NULL OR private_key_sealed IS NULL),
  CONSTRAINT signing_keys_active_has_private
    CHECK (retired_at IS NOT NULL OR private_jwk IS NOT NULL OR private_key_sealed IS NOT NULL)
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
-- the two do not wait for each other's row locks. The blocked balance is the sum of the shards
-- (docs/decisions/0011-sharded-blocked-money.md).
--
-- No foreign key to accounts: PostgreSQL runs its check (a query and a row lock) whenever a row
-- version written by the same transaction is updated again, which a batch of transfers does to
-- its payers' balances. The rows are made with their account, in the same transaction
-- (ledger/repo.ts), and accounts are never deleted
-- (docs/decisions/0022-hot-tables-without-foreign-keys.md).
CREATE TABLE ledger_accounts (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id      bigint,
  code            text         NOT NULL,
  shard           ledger_shard NOT NULL DEFAULT 0,
  balance         bigint       NOT NULL DEFAULT 0,
  allow_negative  boolean      NOT NULL DEFAULT false,
  created_at      timestamptz  NOT NULL DEFAULT now(),
  CONSTRAINT ledger_accounts_no_overdraft CHECK (allow_negative OR balance >= 0)
);
CREATE UNIQUE INDEX ledger_accounts_owner_code_idx ON ledger_accounts (account_id, code, shard) WHERE account_id IS NOT NULL;
CREATE UNIQUE INDEX ledger_accounts_system_code_idx ON ledger_accounts (code, shard) WHERE account_id IS NULL;

-- A posting moves a positive amount from one ledger account to another; the postings of one
-- movement share a ledger_tx_id. Postings are append-only and carry no index at all (not even a
-- primary key) and no foreign keys: they are the audit trail, only ever read in bulk, written
-- only by the SQL functions (ledger_post, pix_settle_batch) with ledger account ids they have
-- just updated, and each index entry or check would cost the hot path
-- (docs/decisions/0022-hot-tables-without-foreign-keys.md).
CREATE SEQUENCE ledger_tx_seq;

CREATE TABLE postings (
  id                 bigint GENERATED ALWAYS AS IDENTITY,
  ledger_tx_id       bigint            NOT NULL,
  kind               text              NOT NULL,
  reference          text,
  debit_account_id   bigint            NOT NULL,
  credit_account_id  bigint            NOT NULL,
  amount_centavos    positive_centavos NOT NULL,
  created_at         timestamptz       NOT NULL DEFAULT now(),
  CHECK (debit_account_id <> credit_account_id)
);

-- The movements, one row per ledger transaction.
CREATE VIEW ledger_transactions AS
  SELECT ledger_tx_id AS id, min(kind) AS kind, min(reference) AS reference, min(created_at) AS created_at
    FROM postings GROUP BY ledger_tx_id;

-- Every Pix movement an account holder sees: transfers out (WITHDRAW), PIX in (PAYMENT),
-- refunds we send (REFUND_IN) and refunds we receive (REFUND_OUT).
-- The hot-path tables (transactions, idempotency_keys, postings) have no foreign keys: their
-- rows are written only by the SQL functions (pix_transfer_create, pix_settle_batch) and by
-- services, always for an account that exists (accounts are never deleted), and the triggers
-- behind foreign keys cost a large share of a transfer's database time
-- (docs/decisions/0022-hot-tables-without-foreign-keys.md).
CREATE TABLE transactions (
  id                      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id              bigint               NOT NULL,
  type                    transaction_type     NOT NULL,
  status                  transaction_status   NOT NULL,
  amount_centavos         positive_centavos    NOT NULL,
  fee_centavos            nonnegative_centavos NOT NULL DEFAULT 0,
  external_id             text,
  end_to_end_id           text,
  idempotency_key         text,
  pix_key                 text,
  txid                    text,
  description             text,
  priority                transfer_priority,
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
  -- The ledger account (a blocked shard) that holds a pending movement's money.
  hold_ledger_account_id  bigint,
  created_at              timestamptz NOT NULL DEFAULT now(),
  updated_at              timestamptz NOT NULL DEFAULT now(),
  processed_at            timestamptz,
  -- Sandbox: a received PIX whose payer's institution refuses refunds of it ('reject').
  counterpart_behavior    receiver_behavior
-- Settling rewrites a movement's row, changing only columns no index covers: with half of each
-- page free the new version almost always fits beside the old one (a HOT update, no index
-- touched), where less room left many of them to be written to every index again.
) WITH (fillfactor = 50);
CREATE UNIQUE INDEX transactions_account_external_idx ON transactions (account_id, external_id) WHERE external_id IS NOT NULL AND type = 'WITHDRAW';
-- Lookups by externalId: transfers (WITHDRAW) are found through the unique index above, so this
-- one only needs the other rows: one index entry fewer per transfer. The lookups name both
-- halves (transactions/repo.ts).
CREATE INDEX transactions_account_external_lookup_idx ON transactions (account_id, external_id)
  WHERE external_id IS NOT NULL AND type <> 'WITHDRAW';
-- One index on end-to-end ids: (end_to_end_id, account_id) is unique (both sides of an internal
-- transfer share the id, one row per account) and serves the lookups by id alone (the
-- sandbox's) as well as those scoped to an account.
CREATE UNIQUE INDEX transactions_e2e_account_idx ON transactions (end_to_end_id, account_id) WHERE end_to_end_id IS NOT NULL;
CREATE INDEX transactions_account_created_idx ON transactions (account_id, created_at DESC, id DESC);
CREATE INDEX transactions_account_pix_key_idx ON transactions (account_id, pix_key, created_at DESC, id DESC);

-- What the settlement worker has still to do: a pending transfer or refund enters with its
-- transaction and leaves when it is settled or fails. Kept apart from transactions, whose status
-- update would otherwise have to maintain a partial index. No primary key: the queue is only
-- read in order of arrival (HIGH ones through their own index, expired ones through theirs),
-- and pix_settle_batch deletes the rows it claimed by ctid. Refunds have no PIX key.
CREATE TABLE settlement_queue (
  transaction_id  bigint            NOT NULL,
  priority        transfer_priority NOT NULL,
  pix_key         text,
  created_at      timestamptz       NOT NULL,
  expires_at      timestamptz       NOT NULL
);
CREATE INDEX settlement_queue_order_idx ON settlement_queue (created_at, transaction_id);
CREATE INDEX settlement_queue_high_idx ON settlement_queue (created_at, transaction_id) WHERE priority = 'HIGH';
CREATE INDEX settlement_queue_expires_idx ON settlement_queue (expires_at);

-- Idempotent writes: the stored answer lives beside the effect, under one unique key.
CREATE TABLE idempotency_keys (
  account_id       bigint             NOT NULL,
  key              text               NOT NULL,
  request_hash     text               NOT NULL,
  status           idempotency_status NOT NULL,
  -- The stored answer: the transfer's id, end-to-end id, amount and status when it was accepted
  -- (created_at is when). A replay answers with these, not with the transfer's state of the
  -- moment; the answer itself is built by transfers/views.ts
  -- (docs/decisions/0029-answers-built-in-typescript.md).
  transaction_id     bigint             NOT NULL,
  end_to_end_id      text               NOT NULL,
  amount_centavos    positive_centavos  NOT NULL,
  transaction_status transaction_status NOT NULL,
  created_at       timestamptz        NOT NULL DEFAULT now(),
  expires_at       timestamptz        NOT NULL,
  PRIMARY KEY (account_id, key)
);
-- The worker deletes answers past their 24 hours, oldest first. They expire in the order they
-- were written: a BRIN index finds the expired ones at a fraction of a btree's cost per insert.
CREATE INDEX idempotency_keys_expires_brin ON idempotency_keys USING brin (expires_at);

-- Immediate charges (cob). loc.id is the row id. A txid is unique per account (BCB: per
-- receiving user), not across the service: another account's charges are invisible and never
-- collide. The one index, (txid, account_id), enforces that, finds an account's charge by txid,
-- and finds every account holding a txid (the sandbox payer, which must then be told which one).
CREATE TABLE charges (
  id                    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id            bigint      NOT NULL REFERENCES accounts (id),
  txid                  text        NOT NULL CHECK (txid ~ '^[a-zA-Z0-9]{26,35}$'),
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
  updated_at            timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT charges_txid_account_key UNIQUE (txid, account_id)
);
CREATE INDEX charges_account_created_idx ON charges (account_id, created_at DESC, id DESC);

-- Refunds we send (devolucao) of a received PIX. A refund is a REFUND_IN transaction that holds
-- its money in a blocked shard, like a transfer, and goes through the settlement queue: the
-- worker pays it out to the network (or to the payer, when the payer is an account of this
-- service) or returns it to available when the payer's institution refuses it.
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
-- Settlement marks the refund of the REFUND_IN transaction it settles.
CREATE UNIQUE INDEX refunds_transaction_idx ON refunds (transaction_id);

-- MED disputes against a received PIX. The money a MED blocks sits in one of the account's
-- blocked shards; its reason is one of the DICT's (FRAUD -> refund natureza MED_FRAUDE,
-- OPERATIONAL_FLAW -> MED_OPERACIONAL). One open MED per received PIX.
CREATE TABLE meds (
  id                     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id             bigint      NOT NULL REFERENCES accounts (id),
  transaction_id         bigint      NOT NULL REFERENCES transactions (id),
  amount_centavos        bigint      NOT NULL CHECK (amount_centavos > 0),
  reason                 text        NOT NULL,
  status                 text        NOT NULL CHECK (status IN ('OPEN', 'ACCEPTED', 'REJECTED')),
  refund_id              bigint      REFERENCES refunds (id),
  created_at             timestamptz NOT NULL DEFAULT now(),
  closed_at              timestamptz,
  hold_ledger_account_id bigint      NOT NULL,
  details                text        CHECK (length(details) <= 2000),
  CONSTRAINT meds_reason_check CHECK (reason IN ('FRAUD', 'OPERATIONAL_FLAW'))
);
CREATE UNIQUE INDEX meds_open_idx ON meds (transaction_id) WHERE status = 'OPEN';
CREATE INDEX meds_transaction_idx ON meds (transaction_id);
-- The account holder reads its MED disputes (GET /api/meds): a page of one account's MEDs of an
-- interval, newest first, is a range scan of this index.
CREATE INDEX meds_account_created_idx ON meds (account_id, created_at DESC, id DESC);

-- Fair webhook delivery (docs/decisions/0001-fair-webhook-delivery.md). A destination is one
-- account's receiving origin (scheme, host and port): the unit that gets a bounded number of
-- deliveries in flight and a circuit breaker. Its state lives here, shared by every worker
-- process on the database.
CREATE TABLE webhook_destinations (
  id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id  bigint      NOT NULL,
  origin      text        NOT NULL CHECK (length(origin) <= 2048),
  -- Consecutive attempts that timed out, could not connect or got a 5xx; 0 after a success.
  failures    integer     NOT NULL DEFAULT 0 CHECK (failures >= 0),
  -- Consecutive openings of the breaker: each one is open twice as long as the one before.
  opens       integer     NOT NULL DEFAULT 0 CHECK (opens >= 0),
  -- While in the future the breaker is open: nothing is attempted; after it, one probe.
  open_until  timestamptz,
  -- Set while the destination has held deliveries: when a claim should look at them again.
  ready_at    timestamptz,
  -- Counts the records that freed its slots: a claim that marks it held compares it, so that a
  -- record made meanwhile is not overwritten (delivery.ts).
  wakes       integer     NOT NULL DEFAULT 0,
  -- Counts the claims for the account, on its first destination (the anchor): a claim goes
  -- ahead only where it is what the claim read, so the bounds hold over every worker.
  claims      integer     NOT NULL DEFAULT 0,
  created_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (account_id, origin)
);
CREATE INDEX webhook_destinations_ready_idx ON webhook_destinations (ready_at) WHERE ready_at IS NOT NULL;

-- Webhook registrations: up to 3 active URLs per (account, event type), each at the destination
-- of its URL's origin.
CREATE TABLE webhooks (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id      bigint      NOT NULL REFERENCES accounts (id),
  event_type      text        NOT NULL CHECK (event_type IN ('cash_in', 'cash_out', 'refund_in', 'refund_out', 'med_created', 'med_accepted', 'med_rejected')),
  url             text        NOT NULL CHECK (length(url) <= 2048),
  headers         jsonb       NOT NULL DEFAULT '{}',
  is_active       boolean     NOT NULL DEFAULT true,
  version         integer     NOT NULL DEFAULT 1,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  destination_id  bigint      NOT NULL,
  UNIQUE (account_id, event_type, url)
);

-- Outbox: every notification is written in the transaction of the movement that causes it, with
-- its deliveries. No foreign keys, as on the other hot-path tables: rows are written beside the
-- movement. Every notification gets its Standard Webhooks message id when it is written, so each
-- delivery and every retry or resend of it carries the same `webhook-id`.
CREATE TABLE outbox (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id      bigint      NOT NULL,
  event_type      text        NOT NULL,
  transaction_id  bigint,
  payload         jsonb       NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  dispatched_at   timestamptz,
  message_id      text        NOT NULL DEFAULT ('msg_' || replace(gen_random_uuid()::text, '-', ''))
);
CREATE INDEX outbox_undispatched_idx ON outbox (id) WHERE dispatched_at IS NULL;
CREATE INDEX outbox_transaction_idx ON outbox (transaction_id);

-- One row per (notification, destination URL): the unit the worker delivers and retries.
-- No foreign keys: their KEY SHARE lock of the account's row (a WAL record, and a multixact when
-- several hold it) cost every insert; a delivery whose registration was removed finds no
-- registration and fails (delivery.ts)
-- (docs/decisions/0022-hot-tables-without-foreign-keys.md).
--
-- A delivery is claimed with a lease: `leased_until` is set while an attempt is in flight, so
-- the deliveries in flight per destination and per account are counted from the database,
-- across processes, and a worker that dies mid-attempt leaves it to be claimed again, with the
-- same message id (docs/decisions/0021-webhook-delivery-lease.md). `held`: due, but its
-- destination is at its bound or its breaker is open, so it waits in the destination's own
-- queue instead of in the global due index, where every claim would walk over it.
CREATE TABLE webhook_deliveries (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  outbox_id        bigint,
  account_id       bigint          NOT NULL,
  webhook_id       bigint,
  url              text            NOT NULL,
  message_id       text            NOT NULL,
  status           delivery_status NOT NULL,
  attempts         integer         NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz     NOT NULL DEFAULT now(),
  created_at       timestamptz     NOT NULL DEFAULT now(),
  event_type       text,
  transaction_id   bigint,
  last_attempt_at  timestamptz,
  destination_id   bigint,
  held             boolean         NOT NULL DEFAULT false,
  leased_until     timestamptz,
  CONSTRAINT webhook_deliveries_pending_destination CHECK (status <> 'PENDING' OR destination_id IS NOT NULL)
);
CREATE INDEX webhook_deliveries_outbox_idx ON webhook_deliveries (outbox_id);
CREATE INDEX webhook_deliveries_webhook_idx ON webhook_deliveries (webhook_id) WHERE webhook_id IS NOT NULL;
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at, id) WHERE status = 'PENDING' AND NOT held;
CREATE INDEX webhook_deliveries_destination_idx ON webhook_deliveries (destination_id, next_attempt_at, id) WHERE status = 'PENDING';
CREATE INDEX webhook_deliveries_leased_idx ON webhook_deliveries (account_id, destination_id) WHERE leased_until IS NOT NULL;

-- Every delivery attempt, readable by the account, per account with filters, newest first. No
-- foreign keys, as on webhook_deliveries.
CREATE TABLE webhook_logs (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id      bigint      NOT NULL,
  delivery_id     bigint,
  transaction_id  bigint,
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
CREATE INDEX webhook_logs_account_transaction_idx ON webhook_logs (account_id, transaction_id);

-- Who this database is. Files the service writes outside the database (the sandbox's demo
-- credentials under DATA_DIR) name it, so that a start on another database can tell they are not
-- its own. Written once, here, and never changed: a copy of the database (a dump restored) is
-- the same database, with the same accounts, and keeps the identity
-- (docs/decisions/0005-start-up-and-demo-files.md).
CREATE TABLE database_identity (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  created_at timestamptz NOT NULL DEFAULT now(),
  -- One row at most: a second one would break this column's unique constraint.
  one_row boolean NOT NULL DEFAULT true UNIQUE CHECK (one_row)
);
INSERT INTO database_identity DEFAULT VALUES;

-- The sandbox's demo account of this database: provisioned once per database, whatever files a
-- DATA_DIR holds (deciding by the files gave a second demo account when they were another
-- database's).
CREATE TABLE demo_account (
  account_id bigint PRIMARY KEY REFERENCES accounts (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  one_row boolean NOT NULL DEFAULT true UNIQUE CHECK (one_row)
);

-- The rest of the Pix network, as seen from our ledger.
INSERT INTO ledger_accounts (account_id, code, allow_negative) VALUES (NULL, 'pix_network', true);
