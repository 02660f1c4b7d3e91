-- The payload locations of Pix Automático's recurrences (BCB's `locrec`): an id, the
-- recUrlAccessToken of `/qr/v2/rec/{token}`, and when it was made. A recurrence takes one by
-- naming it (its own loc_id); the location itself knows nothing of what it serves.
CREATE TABLE rec_locations (
  id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id  bigint      NOT NULL REFERENCES accounts (id),
  token       text        NOT NULL UNIQUE CHECK (token ~ '^[a-z0-9]{32}$'),
  created_at  timestamptz NOT NULL
);
CREATE INDEX rec_locations_account_created_idx ON rec_locations (account_id, created_at DESC, id DESC);
