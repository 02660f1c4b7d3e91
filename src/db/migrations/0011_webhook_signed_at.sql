-- When an attempt was signed: its webhook-timestamp, on the real clock (business time, which
-- created_at keeps, may run ahead of it in the sandbox). NULL for attempts that sent nothing and
-- those logged before it was kept (their timestamp was created_at).
ALTER TABLE webhook_logs ADD COLUMN signed_at timestamptz;
