-- The sandbox's controls of the simulated world (docs/decisions/0034-test-clock-and-faults.md):
-- the test clock, faults on demand and the webhook inbox. A production database keeps these
-- tables empty: nothing there reads them.

-- One row: how far business time runs ahead of the real clock (the test clock, forward only),
-- and a counter that every change of the faults bumps, so that each process, polling this one
-- row, knows when to read the faults again.
CREATE TABLE sandbox_state (
  id              boolean     PRIMARY KEY DEFAULT true CHECK (id),
  clock_offset_ms bigint      NOT NULL DEFAULT 0 CHECK (clock_offset_ms >= 0),
  faults_version  bigint      NOT NULL DEFAULT 0
);
INSERT INTO sandbox_state (id) VALUES (true);

-- Faults a developer sets: webhook deliveries to URLs under a prefix answered with a status,
-- timing out or delayed (for the next `remaining` deliveries, or until cleared); settlement of
-- transfers to a key rejected with a BCB reason code or delayed; the directory unavailable.
CREATE TABLE sandbox_faults (
  id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kind        text        NOT NULL CHECK (kind IN ('webhook', 'settlement', 'directory')),
  effect      text        NOT NULL CHECK (effect IN ('status', 'timeout', 'delay', 'reject', 'unavailable')),
  url_prefix  text        CHECK (length(url_prefix) BETWEEN 1 AND 2048),
  pix_key     text        CHECK (length(pix_key) BETWEEN 1 AND 77),
  status      integer     CHECK (status BETWEEN 200 AND 599),
  delay_ms    bigint      CHECK (delay_ms > 0),
  reason      text        CHECK (reason ~ '^[A-Z]{2}[0-9]{2}$'),
  remaining   integer     CHECK (remaining >= 0),
  created_at  timestamptz NOT NULL,
  CHECK (
    (kind = 'webhook' AND url_prefix IS NOT NULL AND pix_key IS NULL AND reason IS NULL
      AND effect IN ('status', 'timeout', 'delay')
      AND (effect <> 'status' OR status IS NOT NULL) AND (effect <> 'delay' OR delay_ms IS NOT NULL))
    OR (kind = 'settlement' AND pix_key IS NOT NULL AND url_prefix IS NULL AND status IS NULL AND remaining IS NULL
      AND ((effect = 'reject' AND reason IS NOT NULL) OR (effect = 'delay' AND delay_ms IS NOT NULL)))
    OR (kind = 'directory' AND effect = 'unavailable' AND url_prefix IS NULL AND pix_key IS NULL AND remaining IS NULL)
  )
);
-- Settlement reads a key's fault with the transfer: one per key (a new one replaces it).
CREATE UNIQUE INDEX sandbox_faults_settlement_key ON sandbox_faults (pix_key) WHERE kind = 'settlement';

-- What arrived at the webhook inbox `name` (POST /sandbox/inbox/{name}), newest kept.
CREATE TABLE sandbox_inbox (
  id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name         text        NOT NULL CHECK (name ~ '^[A-Za-z0-9_-]{1,64}$'),
  received_at  timestamptz NOT NULL,
  method       text        NOT NULL,
  headers      jsonb       NOT NULL,
  body         text        NOT NULL,
  status       integer     NOT NULL
);
CREATE INDEX sandbox_inbox_name_idx ON sandbox_inbox (name, id DESC);

-- Business time comes from the service's clock, never from the database's: a row of these
-- tables says when it was made (or is due) in the time its rules read, so every insert names it.
ALTER TABLE transactions ALTER COLUMN created_at DROP DEFAULT, ALTER COLUMN updated_at DROP DEFAULT;
ALTER TABLE postings ALTER COLUMN created_at DROP DEFAULT;
ALTER TABLE idempotency_keys ALTER COLUMN created_at DROP DEFAULT;
ALTER TABLE charges ALTER COLUMN created_at DROP DEFAULT, ALTER COLUMN updated_at DROP DEFAULT;
ALTER TABLE locations ALTER COLUMN created_at DROP DEFAULT;
ALTER TABLE cobv_batches ALTER COLUMN created_at DROP DEFAULT;
ALTER TABLE cobv_batch_items ALTER COLUMN created_at DROP DEFAULT;
ALTER TABLE refunds ALTER COLUMN requested_at DROP DEFAULT, ALTER COLUMN updated_at DROP DEFAULT;
ALTER TABLE meds ALTER COLUMN created_at DROP DEFAULT;
ALTER TABLE outbox ALTER COLUMN created_at DROP DEFAULT;
ALTER TABLE webhooks ALTER COLUMN created_at DROP DEFAULT, ALTER COLUMN updated_at DROP DEFAULT;
ALTER TABLE webhook_destinations ALTER COLUMN created_at DROP DEFAULT;
ALTER TABLE webhook_deliveries ALTER COLUMN created_at DROP DEFAULT, ALTER COLUMN next_attempt_at DROP DEFAULT;
ALTER TABLE webhook_logs ALTER COLUMN created_at DROP DEFAULT;
ALTER TABLE pix_key_webhooks ALTER COLUMN created_at DROP DEFAULT;
