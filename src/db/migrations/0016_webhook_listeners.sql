-- `pix-api listen` (sandbox): a listener forwards an account's deliveries to a developer's
-- machine. The service delivers to `{PUBLIC_URL}/sandbox/listen/{id}` as to any receiver; what
-- arrives there waits in webhook_forwards until the listener takes it, and is answered with what
-- the developer's receiver answered. A production database keeps these tables empty.
CREATE TABLE webhook_listeners (
  id          text        PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9_-]{22}$'),
  account_id  bigint      NOT NULL REFERENCES accounts (id),
  name        text        NOT NULL CHECK (name ~ '^[A-Za-z0-9_-]{1,64}$'),
  kinds       text[]      NOT NULL,
  -- BCB's registrations (per key, rec, cobr) it took over, to give back when it stops.
  replaced    jsonb       NOT NULL DEFAULT '[]',
  created_at  timestamptz NOT NULL,
  -- Real time (not the test clock's): when the listener last asked for what arrived.
  seen_at     timestamptz NOT NULL,
  UNIQUE (account_id, name)
);

CREATE TABLE webhook_forwards (
  id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  listener_id  text        NOT NULL REFERENCES webhook_listeners (id) ON DELETE CASCADE,
  path         text        NOT NULL,
  headers      jsonb       NOT NULL,
  body         text        NOT NULL,
  received_at  timestamptz NOT NULL,
  taken_at     timestamptz,
  status       integer     CHECK (status BETWEEN 100 AND 599),
  duration_ms  integer,
  error        text,
  answered_at  timestamptz
);
CREATE INDEX webhook_forwards_listener_idx ON webhook_forwards (listener_id, id);

-- A root registration a listener made for itself: not the account's, not listed, not counted.
ALTER TABLE webhooks ADD COLUMN listener_id text REFERENCES webhook_listeners (id) ON DELETE CASCADE;
