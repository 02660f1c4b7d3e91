-- Every statement of the hot-path functions reaches its rows by key (an id, an id list, a
-- ledger account's owner and code): a scan of the whole table is never the right plan for them.
-- PostgreSQL still chose one whenever the table was small when a session first ran the
-- statement (a ledger of a few accounts, a transactions table of ten rows), and a session keeps
-- that plan until something invalidates it: the next ANALYZE or VACUUM of the table. The tables
-- then grow fast: on a fresh database under the bench's load, transactions held 240,000 rows
-- 40 s later, settlement still scanned all of them (pix_settle_batch 110-280 ms a round instead
-- of 5-10 ms), transfers queued behind its locks and answered in 500-800 ms. Where the service
-- analysed every 10 s this was hidden; at autovacuum's own pace (a table looked at once a
-- minute, worker/maintenance.ts) it lasted the whole first minute, and it would on any server
-- whose autovacuum runs.
--
-- With sequential scans off inside these functions, each statement is planned on its indexes
-- however small the table is at that moment (a table with no usable index would still be
-- scanned). A SET on a function applies to the functions it calls: pix_transfer_create runs only
-- inside the batch functions and needs none of its own (each SET costs about 1.2 µs a call,
-- pgbench A/B), while ledger_post carries its own because the service also calls it directly,
-- and a plan it made then would serve the transfers too.
ALTER FUNCTION ledger_post(text, text, bigint, bigint, bigint, bigint, timestamptz) SET enable_seqscan = off;
ALTER FUNCTION pix_transfer_create_batch(jsonb) SET enable_seqscan = off;
ALTER FUNCTION pix_transfer_create_batch(jsonb, integer) SET enable_seqscan = off;
ALTER FUNCTION pix_settle_batch(timestamptz, timestamptz, boolean, integer, text, text, text, text, text) SET enable_seqscan = off;
