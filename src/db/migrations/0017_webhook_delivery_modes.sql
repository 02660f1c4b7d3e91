-- Webhook delivery modes as sandbox faults (docs/guide/sandbox.md): a delivery under the prefix
-- sent twice (`duplicate`), or held until the next delivery to its URL is delivered, at most
-- `delay_ms` (`late`: the two arrive in the reverse of their order).
ALTER TABLE sandbox_faults DROP CONSTRAINT sandbox_faults_effect_check;
ALTER TABLE sandbox_faults ADD CONSTRAINT sandbox_faults_effect_check
  CHECK (effect IN ('status', 'timeout', 'delay', 'reject', 'unavailable', 'late', 'duplicate'));
ALTER TABLE sandbox_faults DROP CONSTRAINT sandbox_faults_check;
ALTER TABLE sandbox_faults ADD CONSTRAINT sandbox_faults_check CHECK (
  (kind = 'webhook' AND url_prefix IS NOT NULL AND pix_key IS NULL AND reason IS NULL AND stage IS NULL
    AND effect IN ('status', 'timeout', 'delay', 'duplicate', 'late')
    AND (effect <> 'status' OR status IS NOT NULL) AND (effect <> 'delay' OR delay_ms IS NOT NULL))
  OR (kind = 'settlement' AND pix_key IS NOT NULL AND url_prefix IS NULL AND status IS NULL AND remaining IS NULL AND stage IS NULL
    AND ((effect = 'reject' AND reason IS NOT NULL) OR (effect = 'delay' AND delay_ms IS NOT NULL)))
  OR (kind = 'directory' AND effect = 'unavailable' AND url_prefix IS NULL AND pix_key IS NULL AND remaining IS NULL AND stage IS NULL)
  OR (kind = 'automatico' AND stage IS NOT NULL AND url_prefix IS NULL AND pix_key IS NULL AND status IS NULL AND delay_ms IS NULL
    AND ((effect = 'reject' AND reason IS NOT NULL) OR (effect = 'late' AND stage = 'scheduling' AND reason IS NULL)))
);

-- A delivery a `late` fault holds: the fault (kept after, so that it is held once and its log
-- names the fault), and until when at most (null once it goes: released by the next delivery
-- to its URL, or claimed when the hold ran out). Not sent meanwhile: its next_attempt_at is
-- the hold's end, so a crash or another worker loses nothing.
ALTER TABLE webhook_deliveries ADD COLUMN late_fault bigint;
ALTER TABLE webhook_deliveries ADD COLUMN late_until timestamptz;
CREATE INDEX webhook_deliveries_late_idx ON webhook_deliveries (destination_id, url) WHERE late_until IS NOT NULL;
