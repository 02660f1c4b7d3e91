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
// The workload, the faults and the checks are in scripts/chaos/. Exit code 0 only when every
// check holds.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startWebhookReceiver, type WebhookReceiver } from '../test/webhook-receiver.ts';
import { failures, runChecks, snapshots } from './chaos/checks.ts';
import { log } from './chaos/common.ts';
import { Cluster, injectFaults, waitForPostgres } from './chaos/faults.ts';
import { idempotencyStorm, logFirstAnswers, openBank, quiesce, receive, resendUnknown, runClients } from './chaos/workload.ts';
import { query } from './lib/pg.ts';
import { databaseUrl } from './lib/processes.ts';
import { DATABASE_SERVER, envNumber } from './lib/env.ts';

const SECONDS = envNumber('CHAOS_SECONDS', 60);
const ACCOUNTS = envNumber('CHAOS_ACCOUNTS', 12);
const CLIENTS = envNumber('CHAOS_CLIENTS', 12);
const SERVE_PROCESSES = envNumber('CHAOS_PROCESSES', 2);
const KILL_EVERY_MS = envNumber('CHAOS_KILL_EVERY_MS', 2500);
const RESTART_PG = (process.env.CHAOS_RESTART_PG ?? '1') === '1';
const ADMIN = `chaos-admin-${randomUUID()}`;

/** The accounts, the clients' run under faults with snapshots beside it, then the storm, the resends and the quiet end. */
async function bankTest(cluster: Cluster, url: string, receiver: WebhookReceiver): Promise<void> {
  const bank = await openBank(cluster.first(), ADMIN, receiver, ACCOUNTS);
  const any = () => cluster.any();
  for (const a of bank.accounts) await receive(bank, any(), ADMIN, a, '500.00');

  const stop = new AbortController();
  const faults = injectFaults(cluster, { seconds: SECONDS, killEveryMs: KILL_EVERY_MS, restartPg: RESTART_PG, server: DATABASE_SERVER }, stop.signal);
  const snapshotting = snapshots(url, stop.signal);
  const operations = await runClients(bank, any, ADMIN, CLIENTS, SECONDS);
  stop.abort();
  await faults;
  const taken = await snapshotting;
  await cluster.startStopped();
  log(`${operations} operations in ${SECONDS} s; kills: ${cluster.procs.map((p) => `${p.name} ${p.kills}`).join(', ')}`);

  const storm = await idempotencyStorm(bank.accounts[0]!, any);
  logFirstAnswers(bank);
  const retried = await resendUnknown(bank, any, CLIENTS);
  const pendingDeliveries = await quiesce(cluster.first(), ADMIN, url);
  await runChecks({ url, bank, crashes: cluster.crashes, snapshots: taken, storm, retried, pendingDeliveries, receiver });
}

async function main() {
  const name = `pix_chaos_${Date.now()}`;
  await query(DATABASE_SERVER, `create database ${name}`);
  const url = databaseUrl(DATABASE_SERVER, name);
  const receiver = await startWebhookReceiver();
  const dataDir = mkdtempSync(join(tmpdir(), 'pix-chaos-'));
  const cluster = await Cluster.create(SERVE_PROCESSES, {
    DATABASE_URL: url,
    ADMIN_TOKEN: ADMIN,
    DATA_DIR: dataDir,
    SETTLEMENT_DELAY_MS: '300',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_CA_FILE: receiver.caFile,
    LOG_LEVEL: 'error',
  });
  try {
    await cluster.startStopped();
    log(`${SERVE_PROCESSES} service processes and a worker on ${url.replace(/\/\/.*@/, '//')}; receiver ${receiver.origin}`);
    await bankTest(cluster, url, receiver);
  } finally {
    await cluster.close();
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
    await waitForPostgres(DATABASE_SERVER);
    await query(DATABASE_SERVER, `drop database if exists ${name} with (force)`);
  }
  console.log(`\n${failures.length === 0 ? 'chaos: every check held' : `chaos: ${failures.length} check(s) failed`}`);
  if (failures.length > 0) process.exitCode = 1;
}

await main();
