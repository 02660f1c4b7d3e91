-- The account holder reads its MED disputes (GET /api/meds): a page of one account's MEDs of an
-- interval, newest first, is a range scan of this index.
CREATE INDEX meds_account_created_idx ON meds (account_id, created_at DESC, id DESC);
