-- The test clock can be reset to the real time: every reset starts a new epoch, and a process
-- takes a reading of a newer epoch whole, even when its offset is smaller than the one it had.
ALTER TABLE sandbox_state ADD COLUMN clock_epoch bigint NOT NULL DEFAULT 0;
