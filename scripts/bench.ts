// npm run bench: the service on PostgreSQL under load, beside pgbench TPC-B on the same server
// as the machine's reference. Prints one table; figures are ratios measured in one run.
//
//   BENCH_SECONDS=10 BENCH_CLIENTS=32 BENCH_ACCOUNTS=64 DATABASE_SERVER=postgres://postgres@127.0.0.1:5432/postgres npm run bench
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { Pool } from 'undici';
import { issueCertificate } from '../src/lib/certificate-authority.ts';
import { cpfCheckDigits } from '../src/lib/document.ts';

const SERVER = process.env.DATABASE_SERVER ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 32);
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 64);
const PORT = Number(process.env.BENCH_PORT ?? 18080);
const ADMIN = 'bench-admin-token-0123456789';
const MAIN = new URL('../src/main.ts', import.meta.url).pathname;

function databaseUrl(name: string): string {
  const url = new URL(SERVER);
  url.pathname = `/${name}`;
  return url.toString();
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: SERVER });
  await client.connect();
  await client.query(sql);
  await client.end();
}

function cpf(n: number): string {
  const base = String(100_000_000 + n).slice(-9);
  return base + cpfCheckDigits(base);
}

async function startService(url: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []), MAIN, 'serve'], {
    env: { ...process.env, DATABASE_URL: url, PORT: String(PORT), ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'warn', SETTLEMENT_DELAY_MS: process.env.BENCH_SETTLEMENT_DELAY_MS ?? '1000' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('listening on')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`service exited ${code}`)));
  });
  return child;
}

interface Client {
  accountId: number;
  headers: Record<string, string>;
}

async function call(http: Pool, method: 'GET' | 'POST', path: string, headers: Record<string, string>, body?: unknown) {
  const res = await http.request({
    method,
    path,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

async function provision(http: Pool, n: number): Promise<Client> {
  const auth = { authorization: `Bearer ${ADMIN}` };
  const account = await call(http, 'POST', '/admin/accounts', auth, { name: `Bench ${n}`, document: cpf(n) });
  const accountId = account.body.accountId as number;
  const cert = await issueCertificate({ commonName: `bench-${n}` });
  await call(http, 'POST', `/admin/accounts/${accountId}/certificates`, auth, { pem: cert.certPem });
  const key = await call(http, 'POST', `/admin/accounts/${accountId}/pix-keys`, auth, { type: 'evp' });
  await call(http, 'POST', '/sandbox/pix/incoming', auth, {
    pixKey: key.body.key,
    amount: '100000000.00',
    payer: { name: 'Funding', document: '52998224725' },
  });
  const certHeader = encodeURIComponent(cert.certPem);
  const token = await call(http, 'POST', '/api/auth/token', { 'x-ssl-client-cert': certHeader }, {
    clientId: account.body.clientId,
    clientSecret: account.body.clientSecret,
  });
  return { accountId, headers: { authorization: `Bearer ${token.body.access_token as string}`, 'x-ssl-client-cert': certHeader } };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function load(http: Pool, clients: Client[], pick: (worker: number, i: number) => Client, seconds = SECONDS) {
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, worker) => {
      for (let i = 0; performance.now() < deadline; i++) {
        const client = pick(worker, i);
        const started = performance.now();
        const res = await call(http, 'POST', '/dict/pix', { ...client.headers, 'x-idempotency-key': randomUUID() }, {
          pixKey: 'bench-receiver@example.com',
          payment: { currency: 'BRL', amount: 1.23 },
        });
        latencies.push(performance.now() - started);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const ok = statuses.get(201) ?? 0;
  return { tps: ok / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), statuses: Object.fromEntries(statuses) };
}

/** Fills the table to LIST_ROWS transactions over 1000 other accounts' worth of rows and 30 days. */
async function seedTransactions(url: string, accountId: number, rows: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
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
  await client.end();
}

async function listLoad(http: Pool, client: Client, seconds: number) {
  const latencies: number[] = [];
  const deadline = performance.now() + seconds * 1000;
  let ok = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (performance.now() < deadline) {
        const started = performance.now();
        const res = await call(http, 'GET', '/api/transactions?size=20', client.headers);
        latencies.push(performance.now() - started);
        if (res.status === 200) ok++;
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return { rps: ok / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

function pgbench(): number {
  const name = `pix_bench_pgbench_${Date.now()}`;
  execFileSync('createdb', ['-h', '127.0.0.1', '-U', 'postgres', name]);
  try {
    execFileSync('pgbench', ['-h', '127.0.0.1', '-U', 'postgres', '-i', '-q', '-s', '16', name], { stdio: 'ignore' });
    const out = execFileSync('pgbench', ['-h', '127.0.0.1', '-U', 'postgres', '-M', 'prepared', '-c', '16', '-j', '2', '-T', String(SECONDS), name], {
      encoding: 'utf8',
    });
    const match = /tps = ([\d.]+) \(without initial connection time\)/.exec(out);
    return match ? Number(match[1]) : NaN;
  } finally {
    execFileSync('dropdb', ['-h', '127.0.0.1', '-U', 'postgres', '--force', name]);
  }
}

async function queued(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const result = await client.query('select count(*)::int as n from settlement_queue');
  await client.end();
  return result.rows[0].n as number;
}

async function invariants(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
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
  await client.end();
  return {
    sum: total.rows[0].s as string,
    mismatched: mismatched.rows[0].n as number,
    negative: negative.rows[0].n as number,
    unreconciled: unreconciled.rows[0].n as number,
  };
}

/** CPU seconds used so far by every PostgreSQL process and by the service process (Linux /proc). */
function cpuSeconds(servicePid: number): { pg: number; service: number } {
  const ticks = 100; // USER_HZ
  let pg = 0;
  let service = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const used = (Number(fields[11]) + Number(fields[12])) / ticks;
      if (Number(entry) === servicePid) service += used;
      else if (comm === 'postgres' || comm.startsWith('postgres:')) pg += used;
    } catch {
      // the process ended meanwhile
    }
  }
  return { pg, service };
}

/** The server's commits (this database) and WAL so far. */
async function walStats(url: string): Promise<{ commits: number; walBytes: number; walSyncs: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query<{ commits: string; wal_bytes: string; wal_sync: string }>(
    `select (select xact_commit from pg_stat_database where datname = current_database()) as commits, wal_bytes, wal_sync from pg_stat_wal`,
  );
  await client.end();
  return { commits: Number(rows[0]!.commits), walBytes: Number(rows[0]!.wal_bytes), walSyncs: Number(rows[0]!.wal_sync) };
}

/**
 * Runs a load and tells how much CPU PostgreSQL and the service spent per accepted transfer,
 * how many transfers each commit carried and each WAL flush covered, and the WAL per transfer.
 */
async function measured(url: string, servicePid: number, run: () => ReturnType<typeof load>) {
  const [before, walBefore] = [cpuSeconds(servicePid), await walStats(url)];
  const result = await run();
  const [after, walAfter] = [cpuSeconds(servicePid), await walStats(url)];
  const transfers = result.tps * SECONDS;
  return {
    ...result,
    pgMs: ((after.pg - before.pg) * 1000) / transfers,
    serviceMs: ((after.service - before.service) * 1000) / transfers,
    perCommit: transfers / Math.max(1, walAfter.commits - walBefore.commits),
    perSync: transfers / Math.max(1, walAfter.walSyncs - walBefore.walSyncs),
    walBytes: (walAfter.walBytes - walBefore.walBytes) / transfers,
  };
}

async function main() {
  const name = `pix_bench_${Date.now()}`;
  await admin(`create database ${name}`);
  const url = databaseUrl(name);
  const service = await startService(url);
  const http = new Pool(`http://127.0.0.1:${PORT}`, { connections: CLIENTS + 4, pipelining: 1 });
  try {
    await call(http, 'POST', '/sandbox/dict/keys', { authorization: `Bearer ${ADMIN}` }, {
      key: 'bench-receiver@example.com',
      name: 'Bench Receiver',
      document: '11222333000181',
      ispb: '60746948',
    });
    const clients: Client[] = [];
    for (let i = 0; i < ACCOUNTS; i++) clients.push(await provision(http, i + 1));

    // Warm-up (JIT, caches, connections), not measured.
    await load(http, clients, (worker, i) => clients[(worker + i) % clients.length]!, 3);
    const spread = await measured(url, service.pid!, () => load(http, clients, (worker, i) => clients[(worker * 7919 + i) % clients.length]!));
    const backlogAfterSpread = await queued(url);
    const hot = await measured(url, service.pid!, () => load(http, clients, () => clients[0]!));
    const backlogAfterHot = await queued(url);
    const reference = pgbench();
    const check = await invariants(url);
    const LIST_ROWS = Number(process.env.BENCH_LIST_ROWS ?? 1_000_000);
    await seedTransactions(url, clients[1]!.accountId, LIST_ROWS);
    await listLoad(http, clients[1]!, 1);
    const lists = await listLoad(http, clients[1]!, Math.min(SECONDS, 5));

    const row = (label: string, r: Awaited<ReturnType<typeof measured>>) =>
      `| ${label} | ${r.tps.toFixed(0)} | ${(r.tps / reference).toFixed(2)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ` +
      `${r.pgMs.toFixed(2)} | ${r.serviceMs.toFixed(2)} | ${r.perCommit.toFixed(1)} | ${r.perSync.toFixed(1)} | ${r.walBytes.toFixed(0)} | ` +
      `${JSON.stringify(r.statuses)} |`;
    console.log(`\nPOST /dict/pix, ${CLIENTS} concurrent clients, ${SECONDS} s each, PostgreSQL ${url.replace(/\/\/.*@/, '//')}`);
    console.log(
      '| load | transfers/s | × pgbench | p50 ms | p99 ms | PostgreSQL CPU ms/transfer | service CPU ms/transfer | ' +
        'transfers/commit | transfers/WAL flush | WAL bytes/transfer | statuses |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|---|');
    console.log(row(`${ACCOUNTS} accounts`, spread));
    console.log(row('one hot account', hot));
    console.log(`| pgbench TPC-B (prepared, 16 clients, scale 16) | ${reference.toFixed(0)} | 1.00 | | | | | | | | |`);
    console.log(
      `\nGET /api/transactions (size 20, 8 clients) with ${LIST_ROWS} more rows in the table (${LIST_ROWS / 1000} for this account): ` +
        `${lists.rps.toFixed(0)} requests/s, p50 ${lists.p50.toFixed(1)} ms, p99 ${lists.p99.toFixed(1)} ms`,
    );
    console.log(`settlement backlog at the end of each run (NORM settles ${process.env.BENCH_SETTLEMENT_DELAY_MS ?? 1000} ms after arrival): ${backlogAfterSpread}, ${backlogAfterHot} transfers`);
    console.log(
      `\ninvariants: sum of all balances = ${check.sum} (must be 0), balances not equal to their postings = ${check.mismatched}, ` +
        `negative balances = ${check.negative}, accounts whose balance is not what their transactions say = ${check.unreconciled}`,
    );
    if (check.sum !== '0' || check.mismatched !== 0 || check.negative !== 0 || check.unreconciled !== 0) process.exitCode = 1;
  } finally {
    await http.close();
    service.kill('SIGTERM');
    await new Promise((resolve) => service.on('exit', resolve));
    await admin(`drop database if exists ${name} with (force)`);
  }
}

await main();
