// Migration 0012: the hot-path functions plan their statements on indexes however small the
// tables are when a session first runs them. A plan made on a ten-row table is kept by the session
// until the next ANALYZE of it; a sequential scan chosen then went on scanning the whole grown
// table (pix_settle_batch 110-280 ms a round on the bench instead of 5-10 ms).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { evpKey, externalKey, fundedClient, transferRow } from '../../test/factories.ts';
import { startTestApp, type TestApp } from '../../test/harness.ts';
import { settleBatch } from '../modules/settlement/repo.ts';
import { createTransfers } from '../modules/transfers/repo.ts';

describe('hot-path plans on small tables', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t?.close());

  it('transfers out and between accounts, and their settlement, scan no table whole', async () => {
    const receiver = await externalKey(t, { ispb: '12345678', bankName: 'Outro Banco' });
    const payer = await fundedClient(t, 100_000n);
    const payee = await fundedClient(t, 0n);
    const payeeKey = await evpKey(t, payee.accountId);
    const now = t.clock.now();
    const rows = [
      transferRow({ accountId: BigInt(payer.accountId), amountCentavos: 1_000n, pixKey: receiver.key, now }),
      transferRow({ accountId: BigInt(payer.accountId), amountCentavos: 2_000n, pixKey: payeeKey, now }),
      transferRow({ accountId: BigInt(payer.accountId), amountCentavos: 3_000n, pixKey: receiver.key, now, priority: 'HIGH', creditorDocument: receiver.document }),
    ];
    // One transaction, whose own table statistics (pg_stat_xact_user_tables) count what the two
    // functions did: the difference from before them (PGlite's single backend carries earlier
    // counts in them).
    const scans = await t.db.transaction().execute(async (trx) => {
      const counts = async () => {
        const { rows: stats } = await sql<{ relname: string; seq_scan: string; idx_scan: string }>`
          select relname, seq_scan::text, coalesce(idx_scan, 0)::text as idx_scan from pg_stat_xact_user_tables`.execute(trx);
        return new Map(stats.map((s) => [s.relname, { seq: Number(s.seq_scan), idx: Number(s.idx_scan) }]));
      };
      const start = await counts();
      const answers = await createTransfers(trx, rows, () => 0);
      assert.deepEqual(answers.map((a) => a.outcome), ['created', 'created', 'created']);
      const settled = await settleBatch(trx, {
        now,
        normDueBefore: now,
        force: true,
        limit: 100,
        ispb: '99999999',
        bankName: 'Pix API PSP',
        reasonExpired: 'expired',
        reasonRejected: 'rejected',
        reasonRefundRejected: 'refund rejected',
      });
      assert.deepEqual(settled.map((s) => s.outcome), ['settled', 'settled', 'settled']);
      const delta: Record<string, { seq: number; idx: number }> = {};
      for (const [table, end] of await counts()) {
        const before = start.get(table) ?? { seq: 0, idx: 0 };
        if (end.seq > before.seq || end.idx > before.idx) delta[table] = { seq: end.seq - before.seq, idx: end.idx - before.idx };
      }
      return delta;
    });
    // What the transfers and their settlement read, each through an index only.
    for (const table of ['dict_keys', 'idempotency_keys', 'ledger_accounts', 'settlement_queue', 'transactions']) {
      assert.ok((scans[table]?.idx ?? 0) > 0, `${table} read through an index: ${JSON.stringify(scans)}`);
    }
    const scanned = Object.entries(scans).filter(([, s]) => s.seq > 0).map(([table]) => table);
    assert.deepEqual(scanned, [], `tables scanned whole: ${JSON.stringify(scans)}`);
  });
});
