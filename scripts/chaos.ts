// npm run chaos: the bank test over HTTP (after Jepsen's), with faults.
//
// Several service processes (API + worker) and an extra worker share one fresh PostgreSQL
// database. Clients move money at random among many accounts (transfers between them and to
// other institutions, PIX arriving from outside, refunds) while processes are killed with
// SIGKILL and restarted, and PostgreSQL itself is restarted once. Snapshots taken during the run
// check that money is conserved; at the end every acknowledged answer is reconciled against the
// database, and every notification against what a local HTTPS receiver got.
//
//   CHAOS_SECONDS=60 CHAOS_ACCOUNTS=12 CHAOS_CLIENTS=12 CHAOS_RESTART_PG=1 npm run chaos
//
// `npm run chaos -- --failover` runs the same on a replicated PostgreSQL of its own (pg_auto_failover,
// as npm run cluster builds it) instead of the machine's server, and in place of the restart loses
// the primary CHAOS_FAILOVERS times (1): kill -9 of its postmaster and keeper while transfers flow;
// the monitor promotes the standby, the old primary comes back as a standby, and the time from
// each kill to the first acknowledged write is reported (scripts/chaos/failover.ts).
//
// Beside them, a company's recurring charges of Pix Automático (CHAOS_SUBSCRIPTIONS, 120) are
// scheduled before the faults begin, and settled under kills of their own once the clients'
// requests have their answers: the test clock moves days ahead to their morning slot while
// processes are killed for CHAOS_SETTLE_SECONDS (8) (scripts/chaos/automatico.ts).
//
// This service is also the payer's PSP of its own holders: CHAOS_PAYER_SUBSCRIPTIONS (60) payers
// here approve recurrences of that company and of the sandbox's receiver at another institution,
// charged for the same morning slot, their `available` debited under those kills; a tenth lack
// the money and wait for the evening's retry, which the clock reaches under CHAOS_EVENING_SECONDS
// (4) of kills, some of them funded in between (scripts/chaos/debits.ts).
//
// The workload, the faults and the checks are in scripts/chaos/. Exit code 0 only when every
// check holds.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startWebhookReceiver, type WebhookReceiver } from '../test/webhook-receiver.ts';
import { check, failures, runChecks, snapshots } from './chaos/checks.ts';
import { log } from './chaos/common.ts';
import { chaosCluster, injectFailovers, killToFirstWrite, standbyMatches, type Failover } from './chaos/failover.ts';
import { Cluster, injectFaults, waitForPostgres } from './chaos/faults.ts';
import { postgresTarget } from '../src/db/connection.ts';
import type { PgCluster } from './lib/cluster.ts';
import { idempotencyStorm, logFirstAnswers, openBank, quiesce, receive, resendUnknown, runClients } from './chaos/workload.ts';
import { query } from './lib/pg.ts';
import type { ApiClient } from './lib/api-client.ts';
import { checkSubscriptions, moveToSettlement, openSubscriptions } from './chaos/automatico.ts';
import { afterMorning, CHAOS_ISPB, checkDebits, moveToEvening, openDebits, type Debits } from './chaos/debits.ts';
import { databaseUrl } from './lib/processes.ts';
import { DATABASE_SERVER, envNumber } from './lib/env.ts';

const SECONDS = envNumber('CHAOS_SECONDS', 60);
const ACCOUNTS = envNumber('CHAOS_ACCOUNTS', 12);
const CLIENTS = envNumber('CHAOS_CLIENTS', 12);
const SERVE_PROCESSES = envNumber('CHAOS_PROCESSES', 2);
const KILL_EVERY_MS = envNumber('CHAOS_KILL_EVERY_MS', 2500);
const RESTART_PG = (process.env.CHAOS_RESTART_PG ?? '1') === '1';
const FAILOVER = parseArgs({ options: { failover: { type: 'boolean' } } }).values.failover === true;
const FAILOVERS = envNumber('CHAOS_FAILOVERS', 1);
const ADMIN = `chaos-admin-${randomUUID()}`;
/** Recurring charges of Pix Automático settled under the faults. */
const SUBSCRIPTIONS = envNumber('CHAOS_SUBSCRIPTIONS', 120);
/** How long processes are killed while they settle. */
const SETTLE_SECONDS = envNumber('CHAOS_SETTLE_SECONDS', 8);
/** Payers here with a recurring debit in that slot (a tenth of them without the money). */
const PAYER_SUBSCRIPTIONS = envNumber('CHAOS_PAYER_SUBSCRIPTIONS', 60);
/** How long processes are killed while the evening's retry runs. */
const EVENING_SECONDS = envNumber('CHAOS_EVENING_SECONDS', 4);

/** The accounts, the clients' run under faults with snapshots beside it, then the storm, the resends and the quiet end. */
async function bankTest(cluster: Cluster, url: string, receiver: WebhookReceiver, pg: PgCluster | undefined): Promise<void> {
  const bank = await openBank(cluster.first(), ADMIN, receiver, ACCOUNTS);
  const any = () => cluster.any();
  for (const a of bank.accounts) await receive(bank, any(), ADMIN, a, '500.00');
  const subscriptions = await openSubscriptions(cluster.first(), ADMIN, SUBSCRIPTIONS);
  const debits = await openDebits(cluster.first(), ADMIN, url, subscriptions, PAYER_SUBSCRIPTIONS);

  const stop = new AbortController();
  const faults = injectFaults(cluster, { seconds: SECONDS, killEveryMs: KILL_EVERY_MS, restartPg: RESTART_PG && !pg, server: DATABASE_SERVER }, stop.signal);
  const failing = pg ? injectFailovers(pg, { seconds: SECONDS, count: FAILOVERS }, stop.signal) : Promise.resolve([]);
  const snapshotting = snapshots(url, stop.signal);
  const operations = await runClients(bank, any, ADMIN, CLIENTS, SECONDS);
  stop.abort();
  await faults;
  const taken = await snapshotting;
  const failovers = await failing;
  await cluster.startStopped();
  log(`${operations} operations in ${SECONDS} s; kills: ${cluster.procs.map((p) => `${p.name} ${p.kills}`).join(', ')}`);

  const storm = await idempotencyStorm(bank.accounts[0]!, any);
  logFirstAnswers(bank);
  const retried = await resendUnknown(bank, any, CLIENTS);
  await settleUnderFaults(cluster, any, subscriptions, url, debits);
  const pendingDeliveries = await quiesce(cluster.first(), ADMIN, url);
  await runChecks({ url, bank, crashes: cluster.crashes, snapshots: taken, storm, retried, pendingDeliveries, receiver });
  await checkSubscriptions(url, subscriptions);
  await checkDebits(url, debits);
  if (pg) await checkFailovers(pg, url, bank, failovers);
}

/**
 * The recurring charges' morning slot, under kills of their own: the clock moves there (days
 * ahead) and workers and the advancing request settle the charges, crediting the company and
 * debiting the payers here, while processes are killed. After every transfer has its definite
 * answer: a jump of days expires the idempotency keys their resends would have used (24 hours of
 * business time). Then the same day's evening retry of the debits that lacked the money, past its
 * slot (21:05), under kills again.
 */
async function settleUnderFaults(cluster: Cluster, any: () => ApiClient, subscriptions: Awaited<ReturnType<typeof openSubscriptions>>, url: string, debits: Debits): Promise<void> {
  // The advance settles the morning's 180 charges before it answers (a second or so): the first kill lands in it.
  await underFaults(cluster, SETTLE_SECONDS, 300 + Math.random() * 600, () => moveToSettlement(any, ADMIN, subscriptions));
  log(`the recurring charges' slot under kills for ${SETTLE_SECONDS} s; kills: ${cluster.procs.map((p) => `${p.name} ${p.kills}`).join(', ')}`);
  // The payers without the money wait for 18:00; some get it in between. Then the evening's retry, under kills too.
  await afterMorning(cluster.first(), ADMIN, url, debits);
  if (!debits.payers.some((p) => p.plan !== 'morning')) return;
  // A few steps in the evening: the first kill soon after the advance is sent.
  await underFaults(cluster, EVENING_SECONDS, 30 + Math.random() * 120, () => moveToEvening(any, ADMIN, debits));
  log(`the evening's retry under kills for ${EVENING_SECONDS} s; kills: ${cluster.procs.map((p) => `${p.name} ${p.kills}`).join(', ')}`);
}

/** `act` while processes are killed (the first `firstKillAfterMs` after it starts), for `seconds` from its start; then every process up again. */
async function underFaults(cluster: Cluster, seconds: number, firstKillAfterMs: number, act: () => Promise<void>): Promise<void> {
  const stop = new AbortController();
  const faults = injectFaults(cluster, { seconds, killEveryMs: KILL_EVERY_MS, restartPg: false, server: DATABASE_SERVER, firstKillAfterMs }, stop.signal);
  await act();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  stop.abort();
  await faults;
  await cluster.startStopped();
}

/** What each failover took, and the checks that are the cluster's: each ended in writes, the standby holds what the primary holds. */
async function checkFailovers(pg: PgCluster, url: string, bank: Parameters<typeof killToFirstWrite>[1], failovers: Failover[]): Promise<void> {
  const times = killToFirstWrite(failovers, bank);
  failovers.forEach((f, i) =>
    log(`failover from ${f.node}: promoted ${f.promotedMs} ms after the kill, first acknowledged write ${times[i] ?? 'none'} ms after it, old primary a standby again after ${f.rejoinedMs ?? 'never'} ms`),
  );
  check(failovers.length === FAILOVERS, `${failovers.length} of ${FAILOVERS} failovers made while the clients ran`);
  check(times.every((t) => t !== null), `after every failover the clients' writes went on (kill to first write: ${times.join(', ')} ms)`);
  check(failovers.every((f) => f.rejoinedMs !== null), 'every old primary came back as a standby');
  const counts = await standbyMatches(pg, postgresTarget(url).database);
  check(counts.primary === counts.standby, `the standby holds every movement the primary holds (${counts.standby} of ${counts.primary})`);
}

async function main() {
  const pg = FAILOVER ? await chaosCluster() : undefined;
  const server = pg ? databaseUrl(pg.url, 'postgres') : DATABASE_SERVER;
  try {
    await run(server, pg);
  } finally {
    await pg?.down();
  }
  console.log(`\n${failures.length === 0 ? 'chaos: every check held' : `chaos: ${failures.length} check(s) failed`}`);
  if (failures.length > 0) process.exitCode = 1;
}

async function run(server: string, pg: PgCluster | undefined) {
  const name = `pix_chaos_${Date.now()}`;
  await query(server, `create database ${name}`);
  const url = databaseUrl(server, name);
  const receiver = await startWebhookReceiver();
  const dataDir = mkdtempSync(join(tmpdir(), 'pix-chaos-'));
  const cluster = await Cluster.create(SERVE_PROCESSES, {
    DATABASE_URL: url,
    ADMIN_TOKEN: ADMIN,
    DATA_DIR: dataDir,
    SETTLEMENT_DELAY_MS: '300',
    PSP_ISPB: CHAOS_ISPB,
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_CA_FILE: receiver.caFile,
    LOG_LEVEL: 'error',
  });
  try {
    await cluster.startStopped();
    log(`${SERVE_PROCESSES} service processes and a worker on ${url.replace(/\/\/.*@/, '//')}; receiver ${receiver.origin}`);
    await bankTest(cluster, url, receiver, pg);
  } finally {
    await cluster.close();
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
    // The cluster goes whole; the machine's server keeps only what it had.
    if (!pg) {
      await waitForPostgres(server);
      await query(server, `drop database if exists ${name} with (force)`);
    }
  }
}

await main();
