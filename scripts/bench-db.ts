// What scripts/bench.ts reads from PostgreSQL and /proc: settlement progress, lags, the ledger
// invariants, WAL and CPU counters, and pgbench as the machine's reference.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { withClient } from './lib/pg.ts';

export async function queued(url: string): Promise<number> {
  return withClient(url, async (c) => (await c.query('select count(*)::int as n from settlement_queue')).rows[0].n as number);
}

/** Waits until the settlement queue is empty (or `timeoutMs`); returns what is left and how long it took. */
export async function drained(url: string, timeoutMs = 60_000): Promise<{ left: number; ms: number }> {
  const started = Date.now();
  for (;;) {
    const left = await queued(url);
    if (left === 0 || Date.now() - started >= timeoutMs) return { left, ms: Date.now() - started };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Transfers (WITHDRAW) settled between two instants. */
export async function settledBetween(url: string, from: Date, to: Date): Promise<number> {
  return withClient(url, async (c) => {
    const { rows } = await c.query(
      `select count(*)::int as n from transactions where type = 'WITHDRAW' and processed_at >= $1 and processed_at < $2`,
      [from, to],
    );
    return rows[0].n as number;
  });
}

export interface Settlement {
  /** created_at and processed_at, ms since the epoch (processed null: not settled yet). */
  createdMs: number;
  processedMs: number | null;
}

/** When the transfers (WITHDRAW) with these end-to-end ids were accepted and settled. */
export async function settlementTimes(url: string, endToEndIds: readonly string[]): Promise<Map<string, Settlement>> {
  return withClient(url, async (c) => {
    const { rows } = await c.query<{ e2e: string; created: string; processed: string | null }>(
      `select end_to_end_id as e2e, extract(epoch from created_at) * 1000 as created, extract(epoch from processed_at) * 1000 as processed
         from transactions where type = 'WITHDRAW' and end_to_end_id = any($1::text[])`,
      [endToEndIds],
    );
    return new Map(rows.map((r) => [r.e2e, { createdMs: Number(r.created), processedMs: r.processed === null ? null : Number(r.processed) }]));
  });
}

/** processed_at - created_at of every HIGH transfer created since `since`, ms (Infinity: not settled). */
export async function highLags(url: string, since: Date): Promise<number[]> {
  return withClient(url, async (c) => {
    const { rows } = await c.query<{ ms: string | null }>(
      `select extract(epoch from processed_at - created_at) * 1000 as ms from transactions
        where type = 'WITHDRAW' and priority = 'HIGH' and created_at >= $1`,
      [since],
    );
    return rows.map((r) => (r.ms === null ? Infinity : Number(r.ms)));
  });
}

/**
 * Fills the table to `rows` transactions over 1000 other accounts' worth of rows and 30 days,
 * then writes it out (CHECKPOINT): the seed's own write-back of a million rows is not the lists'
 * workload, and a checkpoint spreading it over the next seconds ran during the list run.
 */
export async function seedTransactions(url: string, accountId: number, rows: number): Promise<void> {
  await withClient(url, async (client) => {
    await client.query(
      `insert into transactions (account_id, type, status, amount_centavos, end_to_end_id, pix_key, counterpart_name,
                                 counterpart_document, created_at, updated_at, processed_at)
       select case when g % 1000 = 0 then $1 else 1000000 + g % 1000 end, (array['PAYMENT','WITHDRAW'])[1 + g % 2], 'CONFIRMED',
              100 + g % 1000, 'E' || lpad(g::text, 31, '0'), 'seed@example.com', 'Seed', '52998224725',
              now() - (g % 2592000) * interval '1 second', now(), now()
         from generate_series(1, $2::int) g`,
      [accountId, rows],
    );
    await client.query('vacuum analyze transactions');
    await client.query('checkpoint');
  });
}

/**
 * pgbench's TPC-B database (scale 16) on the same server, initialised once: `run` measures tps
 * (prepared statements, 16 clients), so the reference can be taken right beside the runs it is
 * compared with.
 */
export interface PgbenchDatabase {
  run(seconds: number): number;
  drop(): void;
}

/** On the machine's server by default, or on another one's `port` (a cluster's primary, scripts/bench-cluster.ts). */
export function pgbenchDatabase(port = 5432): PgbenchDatabase {
  const name = `pix_bench_pgbench_${Date.now()}`;
  const server = ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres'];
  execFileSync('createdb', [...server, name]);
  const drop = () => execFileSync('dropdb', [...server, '--force', name]);
  try {
    execFileSync('pgbench', [...server, '-i', '-q', '-s', '16', name], { stdio: 'ignore' });
  } catch (error) {
    drop();
    throw error;
  }
  return {
    run(seconds) {
      const out = execFileSync('pgbench', [...server, '-M', 'prepared', '-c', '16', '-j', '2', '-T', String(seconds), name], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      const match = /tps = ([\d.]+) \(without initial connection time\)/.exec(out);
      return match ? Number(match[1]) : NaN;
    },
    drop,
  };
}

export type Invariants = Awaited<ReturnType<typeof invariants>>;

export async function invariants(url: string) {
  return withClient(url, async (client) => {
    const total = await client.query(`select coalesce(sum(balance), 0)::text as s from ledger_accounts`);
    const mismatched = await client.query(`
      select count(*)::int as n from ledger_accounts a
       where a.balance <> coalesce((select sum(amount_centavos) from postings where credit_account_id = a.id), 0)
                       - coalesce((select sum(amount_centavos) from postings where debit_account_id = a.id), 0)`);
    const negative = await client.query(`select count(*)::int as n from ledger_accounts where not allow_negative and balance < 0`);
    // Money changes only by what entered or left: each account's balance equals the PIX and refunds
    // it received minus the transfers it sent that did not fail.
    const unreconciled = await client.query(`
      select count(*)::int as n from accounts a
       where (select coalesce(sum(balance), 0) from ledger_accounts where account_id = a.id)
          <> (select coalesce(sum(case when type in ('PAYMENT', 'REFUND_OUT') and status = 'CONFIRMED' then amount_centavos
                                       when type in ('WITHDRAW', 'REFUND_IN') and status <> 'ERROR' then -amount_centavos
                                       else 0 end), 0)
                from transactions where account_id = a.id)`);
    return {
      sum: total.rows[0].s as string,
      mismatched: mismatched.rows[0].n as number,
      negative: negative.rows[0].n as number,
      unreconciled: unreconciled.rows[0].n as number,
    };
  });
}

/** CPU seconds used so far by every PostgreSQL process and by one process of ours (Linux /proc). */
export function cpuSeconds(pid: number): { pg: number; proc: number } {
  const ticks = 100; // USER_HZ
  let pg = 0;
  let proc = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const used = (Number(fields[11]) + Number(fields[12])) / ticks;
      if (Number(entry) === pid) proc += used;
      // With the CPU of children that ended (the postmaster's cutime and cstime): a backend
      // whose connection closes during a run takes its CPU with it otherwise.
      else if (comm === 'postgres' || comm.startsWith('postgres:')) pg += used + (Number(fields[13]) + Number(fields[14])) / ticks;
    } catch {
      // the process ended meanwhile
    }
  }
  return { pg, proc };
}

/** The server's commits (this database) and WAL so far. */
export async function walStats(url: string): Promise<{ commits: number; walBytes: number; walSyncs: number }> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ commits: string; wal_bytes: string; wal_sync: string }>(
      `select (select xact_commit from pg_stat_database where datname = current_database()) as commits, wal_bytes, wal_sync from pg_stat_wal`,
    );
    return { commits: Number(rows[0]!.commits), walBytes: Number(rows[0]!.wal_bytes), walSyncs: Number(rows[0]!.wal_sync) };
  });
}

export interface Costs {
  /** CPU per operation (ms): every PostgreSQL process, and the process that served it. */
  pgMs: number;
  procMs: number;
  /** CPU per operation (ms) of this process: the load generator (and the webhook receiver). */
  loadMs: number;
  /** Operations per commit of this database and per WAL flush of the server, WAL bytes per operation. */
  perCommit: number;
  perSync: number;
  walBytes: number;
}

/** Runs `run` and tells what each of its `ok` operations cost in CPU, commits, WAL flushes and WAL bytes. */
export async function measured<R extends { ok: number }>(url: string, pid: number, run: () => Promise<R>): Promise<R & Costs> {
  const [before, walBefore, loadBefore] = [cpuSeconds(pid), await walStats(url), process.cpuUsage()];
  const result = await run();
  const [after, walAfter, load] = [cpuSeconds(pid), await walStats(url), process.cpuUsage(loadBefore)];
  const n = Math.max(1, result.ok);
  return {
    ...result,
    pgMs: ((after.pg - before.pg) * 1000) / n,
    procMs: ((after.proc - before.proc) * 1000) / n,
    loadMs: (load.user + load.system) / 1000 / n,
    perCommit: n / Math.max(1, walAfter.commits - walBefore.commits),
    perSync: n / Math.max(1, walAfter.walSyncs - walBefore.walSyncs),
    walBytes: (walAfter.walBytes - walBefore.walBytes) / n,
  };
}
