// npm run bench:telemetry: what metrics and tracing cost a request. The same service on the same
// PostgreSQL, started twice: as it always runs (metrics on: every answer is observed into a
// histogram), then with OTEL_EXPORTER_OTLP_ENDPOINT set (every span exported to an OTLP receiver
// of this script). GET /accounts/balances and POST /dict/pix, closed loops in alternating rounds;
// each round prints its rate, p99 and the service's CPU per request. Metrics cannot be switched
// off, so their share is measured alone: one histogram observation and one scrape's cost.
//
//   BENCH_SECONDS=5 BENCH_ROUNDS=3 BENCH_CLIENTS=32 DATABASE_SERVER=postgres://postgres@127.0.0.1:5432/postgres npm run bench:telemetry
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { ServiceMetrics } from '../src/http/metrics.ts';
import { closedLoop, type LoadResult } from './bench-load.ts';
import { cpuSeconds } from './bench-db.ts';
import { ApiClient, undiciTransport, type ApiRequest } from './lib/api-client.ts';
import { DATABASE_SERVER, envNumber } from './lib/env.ts';
import { withClient } from './lib/pg.ts';
import { databaseUrl, freePort, SERVICE_MAIN, startChild, stopChild } from './lib/processes.ts';
import { provisionAccount, type ProvisionedAccount } from './lib/provision.ts';

const SECONDS = envNumber('BENCH_SECONDS', 5);
const ROUNDS = envNumber('BENCH_ROUNDS', 3);
const CLIENTS = envNumber('BENCH_CLIENTS', 32);
const ADMIN = 'bench-telemetry-admin-token-01';
const EXTERNAL_KEY = 'bench-telemetry@example.com';

/** An OTLP/HTTP receiver that takes every batch and counts its bytes (a collector's cheapest part). */
async function otlpSink(): Promise<{ url: string; bytes: () => number; close: () => Promise<void> }> {
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bytes: () => bytes, close: () => new Promise((r) => server.close(() => r())) };
}

interface Measured extends LoadResult {
  serviceMsPerOp: number;
}

async function measuredLoop(api: ApiClient, pid: number, request: (worker: number, i: number) => ApiRequest, ok: number): Promise<Measured> {
  const before = cpuSeconds(pid).proc;
  const run = await closedLoop(api, CLIENTS, SECONDS, request, ok);
  return { ...run, serviceMsPerOp: ((cpuSeconds(pid).proc - before) * 1000) / Math.max(1, run.ok) };
}

/** One service (with `env`), provisioned, measured `ROUNDS` times; then stopped. */
async function serviceRounds(url: string, env: Record<string, string>): Promise<{ balances: Measured[]; transfers: Measured[] }> {
  const port = await freePort();
  const { child } = await startChild([SERVICE_MAIN, 'serve'], { DATABASE_URL: url, PORT: String(port), ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'warn', SETTLEMENT_DELAY_MS: '250', ...env });
  const http = new Pool(`http://127.0.0.1:${port}`, { connections: CLIENTS + 4, pipelining: 1 });
  const api = new ApiClient(undiciTransport(http));
  try {
    await api.operator(ADMIN).registerExternalKey({ key: EXTERNAL_KEY, name: 'Bench', document: '11222333000181', ispb: '60746948' }).catch(() => undefined);
    const accounts: ProvisionedAccount[] = [];
    for (let i = 0; i < 16; i++) accounts.push(await provisionAccount(api, ADMIN, { fund: '100000000.00', commonName: `telemetry-${i}` }));
    const pick = (worker: number, i: number) => accounts[(worker * 7919 + i) % accounts.length]!;
    const balances = (worker: number, i: number): ApiRequest => ({ method: 'GET', path: '/accounts/balances', headers: pick(worker, i).headers });
    const transfer = (worker: number, i: number) => pick(worker, i).api.transferRequest({ pixKey: EXTERNAL_KEY, payment: { currency: 'BRL', amount: 1.23 } });
    await closedLoop(api, CLIENTS, 1, balances, 200);
    const out = { balances: [] as Measured[], transfers: [] as Measured[] };
    for (let r = 0; r < ROUNDS; r++) {
      out.balances.push(await measuredLoop(api, child.pid!, balances, 200));
      out.transfers.push(await measuredLoop(api, child.pid!, transfer, 201));
    }
    return out;
  } finally {
    await http.close();
    await stopChild(child);
  }
}

/** What one histogram observation and one scrape cost, alone (metrics are always on). */
function metricsAlone(): { observeUs: number; scrapeMs: Promise<number> } {
  const metrics = new ServiceMetrics();
  const hist = metrics.registry.getSingleMetric('pix_http_request_duration_seconds') as unknown as { observe(labels: Record<string, string>, v: number): void };
  const n = 200_000;
  const started = performance.now();
  for (let i = 0; i < n; i++) hist.observe({ method: 'GET', route: '/accounts/balances', status: '2xx' }, 0.001 + (i % 50) / 10_000);
  const observeUs = ((performance.now() - started) * 1000) / n;
  const scrapeStarted = performance.now();
  return { observeUs, scrapeMs: metrics.text().then(() => performance.now() - scrapeStarted) };
}

const line = (name: string, runs: Measured[]) =>
  `| ${name} | ${runs.map((r) => r.rate.toFixed(0)).join(', ')} | ${runs.map((r) => r.p99.toFixed(1)).join(', ')} | ${runs.map((r) => r.serviceMsPerOp.toFixed(3)).join(', ')} |`;

async function main(): Promise<void> {
  const name = `pix_bench_telemetry_${process.pid}`;
  await withClient(DATABASE_SERVER, (c) => c.query(`create database ${name}`));
  const sink = await otlpSink();
  try {
    const url = databaseUrl(DATABASE_SERVER, name);
    const plain = await serviceRounds(url, {});
    const traced = await serviceRounds(url, { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_BSP_SCHEDULE_DELAY: '1000' });
    const alone = metricsAlone();
    console.log(`${CLIENTS} clients, ${SECONDS} s a round, ${ROUNDS} rounds each; service CPU is the service process's (user + system), per request answered`);
    console.log('| run | per s (rounds) | p99 ms (rounds) | service CPU ms/request (rounds) |\n|---|---|---|---|');
    console.log(line('GET /accounts/balances, metrics on, tracing off', plain.balances));
    console.log(line('GET /accounts/balances, metrics on, tracing on', traced.balances));
    console.log(line('POST /dict/pix, metrics on, tracing off', plain.transfers));
    console.log(line('POST /dict/pix, metrics on, tracing on', traced.transfers));
    console.log(`metrics alone: ${alone.observeUs.toFixed(2)} µs per request observed (one histogram observation); one scrape ${(await alone.scrapeMs).toFixed(1)} ms`);
    console.log(`OTLP bytes exported with tracing on: ${(sink.bytes() / 1e6).toFixed(1)} MB`);
  } finally {
    await sink.close();
    await withClient(DATABASE_SERVER, (c) => c.query(`drop database if exists ${name} with (force)`));
  }
}

await main();
