// The replicated PostgreSQL of npm run cluster against the machine's single server, in one run:
// POST /dict/pix closed loop (transfers per second) on the service over each, by turns; pgbench
// TPC-B on each; then the recovery after the cluster's primary is lost (kill -9 of its postmaster
// and keeper), BENCH_FAILOVERS times (5): the time from the kill to the first transfer
// acknowledged, its median and worst. The cluster is one of its own, in a temporary folder.
//
//   BENCH_SECONDS=10 BENCH_CLIENTS=32 BENCH_ACCOUNTS=16 BENCH_ROUNDS=3 BENCH_FAILOVERS=5 node scripts/bench-cluster.ts
//   BENCH_ONLY=cluster npm run bench
//
// What the figures decided: docs/decisions/0036-failover-manager.md.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { pgbenchDatabase } from './bench-db.ts';
import { closedLoop, percentile, type LoadResult } from './bench-load.ts';
import { ApiClient, undiciTransport, type AccountApi, type ApiRequest } from './lib/api-client.ts';
import { PgCluster } from './lib/cluster.ts';
import { DATABASE_SERVER, envNumber } from './lib/env.ts';
import { query } from './lib/pg.ts';
import { databaseUrl, freePort, freePortRange, SERVICE_MAIN, startChild, stopChild } from './lib/processes.ts';
import { provisionAccount } from './lib/provision.ts';

const SECONDS = envNumber('BENCH_SECONDS', 10);
const CLIENTS = envNumber('BENCH_CLIENTS', 32);
const ACCOUNTS = envNumber('BENCH_ACCOUNTS', 16);
const ROUNDS = Math.max(1, envNumber('BENCH_ROUNDS', 3));
const FAILOVERS = Math.max(1, envNumber('BENCH_FAILOVERS', 5));
const ADMIN = 'bench-cluster-admin-token-0123456789';
const EXTERNAL_KEY = 'bench-cluster-receiver@example.com';
const round1 = (n: number) => Math.round(n * 10) / 10;

/** The service on one database, with its accounts. */
interface Target {
  name: string;
  url: string;
  api: ApiClient;
  accounts: AccountApi[];
  close(): Promise<void>;
}

async function startTarget(name: string, url: string): Promise<Target> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pix-bench-cluster-'));
  const port = await freePort();
  const { child } = await startChild([SERVICE_MAIN, 'serve'], { DATABASE_URL: url, PORT: String(port), ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'error', SETTLEMENT_DELAY_MS: '250', DATA_DIR: dataDir });
  const http = new Pool(`http://127.0.0.1:${port}`, { connections: CLIENTS + 4, pipelining: 1 });
  const api = new ApiClient(undiciTransport(http, { timeoutMs: 60_000 }));
  await api.operator(ADMIN).registerExternalKey({ key: EXTERNAL_KEY, name: 'Bench Receiver', document: '11222333000181', ispb: '60746948' });
  const accounts: AccountApi[] = [];
  for (let i = 0; i < ACCOUNTS; i++) accounts.push((await provisionAccount(api, ADMIN, { name: `Bench ${i}`, commonName: `bench-cluster-${i}`, fund: '100000000.00' })).api);
  const close = async () => {
    await http.close();
    await stopChild(child);
    rmSync(dataDir, { recursive: true, force: true });
  };
  return { name, url, api, accounts, close };
}

const transfer = (t: Target) => (worker: number, i: number): ApiRequest =>
  t.accounts[(worker * 7919 + i) % t.accounts.length]!.transferRequest({ pixKey: EXTERNAL_KEY, payment: { currency: 'BRL', amount: 1.23 } });

/** ROUNDS closed-loop runs on each target by turns, after a second of warm-up on each; the median run of each. */
async function transferRuns(targets: Target[]): Promise<Map<string, { median: LoadResult; rates: number[] }>> {
  for (const t of targets) await closedLoop(t.api, CLIENTS, 1, transfer(t));
  const runs = new Map<string, LoadResult[]>(targets.map((t) => [t.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const t of targets) runs.get(t.name)!.push(await closedLoop(t.api, CLIENTS, SECONDS, transfer(t)));
  }
  return new Map(
    [...runs].map(([name, all]) => {
      const sorted = [...all].sort((a, b) => a.rate - b.rate);
      return [name, { median: sorted[Math.floor((sorted.length - 1) / 2)]!, rates: all.map((r) => Math.round(r.rate)) }];
    }),
  );
}

/** pgbench TPC-B (scale 16, 16 clients, prepared) on the server of each port, by turns: the median of ROUNDS runs each. */
function pgbenchRuns(ports: Record<string, number>): Record<string, number> {
  const databases = Object.entries(ports).map(([name, port]) => ({ name, db: pgbenchDatabase(port), tps: [] as number[] }));
  try {
    for (let round = 0; round < ROUNDS; round++) for (const d of databases) d.tps.push(d.db.run(SECONDS));
  } finally {
    for (const d of databases) d.db.drop();
  }
  return Object.fromEntries(databases.map((d) => [d.name, [...d.tps].sort((a, b) => a - b)[Math.floor((d.tps.length - 1) / 2)]!]));
}

/** One failover under a light load (4 clients): from the kill to the first transfer acknowledged that was sent after it. */
async function failoverOnce(cluster: PgCluster, target: Target): Promise<{ node: string; promotedMs: number; writeMs: number }> {
  await cluster.waitHealthy(120_000);
  const node = await cluster.primary();
  let killAt = Infinity;
  let firstWrite = Infinity;
  const deadline = performance.now() + 120_000;
  const load = Promise.all(
    Array.from({ length: 4 }, async (_, worker) => {
      for (let i = 0; firstWrite === Infinity && performance.now() < deadline; i++) {
        const sentAt = performance.now();
        const answer = await target.api.send(transfer(target)(worker, i)).catch(() => null);
        if (answer?.status === 201 && sentAt > killAt) firstWrite = Math.min(firstWrite, performance.now());
        if (answer?.status !== 201) await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }),
  );
  await new Promise((resolve) => setTimeout(resolve, 1000));
  cluster.killNode(node);
  killAt = performance.now();
  await cluster.waitFor('the standby promoted', (s) => s.some((n) => n.name !== node.name && (n.reported === 'wait_primary' || n.reported === 'primary') && n.goal === n.reported), 120_000);
  const promotedMs = performance.now() - killAt;
  await load;
  await cluster.restartNode(node);
  return { node: node.name, promotedMs: Math.round(promotedMs), writeMs: Math.round(firstWrite - killAt) };
}

async function freshDatabase(server: string): Promise<string> {
  const name = `pix_bench_cluster_${randomUUID().slice(0, 8)}`;
  await query(server, `create database ${name}`);
  return databaseUrl(server, name);
}

function report(build: number, transfers: Awaited<ReturnType<typeof transferRuns>>, pgbench: Record<string, number>, failovers: Awaited<ReturnType<typeof failoverOnce>>[]): void {
  console.log(`\ncluster (pg_auto_failover, synchronous standby) against the single server, ${CLIENTS} clients, ${SECONDS} s runs, median of ${ROUNDS}`);
  console.log(`cluster built in ${round1(build / 1000)} s`);
  for (const [name, { median, rates }] of transfers) {
    console.log(`POST /dict/pix on ${name}: ${Math.round(median.rate)}/s (runs ${rates.join(', ')}), p50 ${round1(median.p50)} ms, p99 ${round1(median.p99)} ms, statuses ${JSON.stringify(median.statuses)}`);
  }
  const single = transfers.get('single')!.median.rate;
  console.log(`cluster / single: transfers ${Math.round((transfers.get('cluster')!.median.rate / single) * 100)} %, pgbench ${Math.round((pgbench.cluster! / pgbench.single!) * 100)} %`);
  console.log(`pgbench TPC-B (scale 16, 16 clients): single ${Math.round(pgbench.single!)} tps, cluster ${Math.round(pgbench.cluster!)} tps`);
  for (const f of failovers) console.log(`failover from ${f.node}: standby promoted ${f.promotedMs} ms after the kill, first transfer acknowledged ${f.writeMs} ms after it`);
  const writes = failovers.map((f) => f.writeMs).sort((a, b) => a - b);
  console.log(`kill to first write over ${writes.length} failovers: median ${percentile(writes, 50)} ms, worst ${writes.at(-1)} ms`);
}

export async function clusterBench(): Promise<void> {
  const cluster = new PgCluster({ dir: join(tmpdir(), `pix-bench-cluster-${process.pid}`), basePort: await freePortRange(3) });
  const targets: Target[] = [];
  try {
    const { ms: build } = await cluster.up();
    targets.push(await startTarget('single', await freshDatabase(DATABASE_SERVER)));
    targets.push(await startTarget('cluster', await freshDatabase(databaseUrl(cluster.url, 'postgres'))));
    const transfers = await transferRuns(targets);
    const pgbench = pgbenchRuns({ single: 5432, cluster: (await cluster.primary()).port });
    const failovers = [];
    for (let i = 0; i < FAILOVERS; i++) failovers.push(await failoverOnce(cluster, targets[1]!));
    report(build, transfers, pgbench, failovers);
  } finally {
    for (const t of targets) await t.close();
    await cluster.down();
    const single = targets.find((t) => t.name === 'single');
    if (single) await query(DATABASE_SERVER, `drop database if exists ${new URL(single.url).pathname.slice(1)} with (force)`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await clusterBench();
