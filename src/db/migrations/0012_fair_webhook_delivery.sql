-- Fair webhook delivery (docs/decisions/0001-fair-webhook-delivery.md). Deliveries were claimed
-- globally in next_attempt_at order, so one account's slow receiver, flooded, held every slot.
--
-- A destination is one account's receiving origin (scheme, host and port): the unit that gets
-- a bounded number of deliveries in flight and a circuit breaker. Its state lives here, shared
-- by every worker process on the database.
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

INSERT INTO webhook_destinations (account_id, origin)
SELECT DISTINCT account_id, substring(url from '^https://[^/?#]+') FROM webhooks;

ALTER TABLE webhooks ADD COLUMN destination_id bigint;
UPDATE webhooks w SET destination_id = d.id
  FROM webhook_destinations d
 WHERE d.account_id = w.account_id AND d.origin = substring(w.url from '^https://[^/?#]+');
ALTER TABLE webhooks ALTER COLUMN destination_id SET NOT NULL;

-- `held`: due, but its destination is at its bound or its breaker is open, so it waits in the
-- destination's own queue instead of in the global due index, where every claim would walk
-- over it. `leased_until`: set while an attempt is in flight, so the deliveries in flight per
-- destination and per account are counted from the database, across processes.
ALTER TABLE webhook_deliveries
  ADD COLUMN destination_id bigint,
  ADD COLUMN held boolean NOT NULL DEFAULT false,
  ADD COLUMN leased_until timestamptz;
UPDATE webhook_deliveries d SET destination_id = w.destination_id
  FROM webhooks w
 WHERE w.id = d.webhook_id AND d.status = 'PENDING';
UPDATE webhook_deliveries SET status = 'FAILED' WHERE status = 'PENDING' AND destination_id IS NULL;
ALTER TABLE webhook_deliveries
  ADD CONSTRAINT webhook_deliveries_pending_destination CHECK (status <> 'PENDING' OR destination_id IS NOT NULL);

DROP INDEX webhook_deliveries_due_idx;
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at, id) WHERE status = 'PENDING' AND NOT held;
CREATE INDEX webhook_deliveries_destination_idx ON webhook_deliveries (destination_id, next_attempt_at, id) WHERE status = 'PENDING';
CREATE INDEX webhook_deliveries_leased_idx ON webhook_deliveries (account_id, destination_id) WHERE leased_until IS NOT NULL;
