import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, it, type TestContext } from 'node:test';
import { Agent } from 'undici';
import { ApiClient, undiciTransport, type ApiRequest } from '../scripts/lib/api-client.ts';
import { archiveNow, baseBackup, dropRestored, restore, type Restored } from '../scripts/lib/backup.ts';
import { ClusterUnavailable, installPackages, PgCluster, type ClusterNode } from '../scripts/lib/cluster.ts';
import { query } from '../scripts/lib/pg.ts';
import { freePortRange } from '../scripts/lib/processes.ts';
import { provisionAccount, type ProvisionedAccount } from '../scripts/lib/provision.ts';
import { connectClient } from '../src/db/multi-host.ts';
import { onPostgres, TEST_KEY_ENCRYPTION_KEY } from './harness.ts';
import { killAll, listenAddresses, run, sandboxBanner, started, type Proc } from './processes.ts';

/**
 * The service on a replicated PostgreSQL (npm run cluster's: pg_auto_failover, a primary and a
 * synchronous standby) through its multi-host DATABASE_URL. Transfers with idempotency keys flow
 * while the primary is lost (kill -9 of its postmaster and its keeper); the monitor promotes the
 * standby, the service finds it by itself, every acknowledged transfer is on the new primary,
 * sending each request again completes it exactly once, and no answer is a 500. Then the old
 * primary comes back as a standby, and a base backup with the archived WAL restores the writes
 * made after it. TEST_CLUSTER_FAILOVERS=5 runs five failovers, each way in turn (the long form).
 */
const ADMIN_TOKEN = 'cluster-test-admin-token-0123456789';
const OUTSIDE_KEY = 'failover-receiver@example.com';
const FAILOVERS = Math.max(1, Number(process.env.TEST_CLUSTER_FAILOVERS ?? 1));
const CLIENTS = 4;

/** Why the tests cannot run here, if they cannot: not on PostgreSQL, or no pg_auto_failover to install. */
function unavailable(): string | false {
  if (!onPostgres) return 'the cluster is PostgreSQL: set TEST_DATABASE_URL';
  try {
    installPackages();
    return false;
  } catch (error) {
    if (error instanceof ClusterUnavailable) return error.message;
    throw error;
  }
}

interface Sent {
  key: string;
  request: ApiRequest;
  answers: { status: number | null; sentAt: number; at: number; body: Record<string, unknown>; replayed: boolean; retryAfter?: string | undefined }[];
}

const definite = (status: number | null | undefined) => status !== null && status !== undefined && status < 500 && status !== 409;

describe('the service on a replicated PostgreSQL, through a failover', { skip: unavailable() }, () => {
  let cluster: PgCluster;
  let buildMs = 0;
  let service: Proc;
  let dataDir: string;
  let http: Agent;
  let api: ApiClient;
  let account: ProvisionedAccount;
  const sent: Sent[] = [];

  before(async () => {
    const base = await freePortRange(4);
    cluster = new PgCluster({ dir: join(tmpdir(), `pix-cluster-test-${process.pid}`), basePort: base });
    buildMs = (await cluster.up()).ms;
    dataDir = mkdtempSync(join(tmpdir(), 'pix-cluster-service-'));
    service = run(['serve'], {
      DATABASE_URL: cluster.url,
      ADMIN_TOKEN,
      DATA_DIR: dataDir,
      KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY,
      SETTLEMENT_DELAY_MS: '200',
    });
    await started(service, sandboxBanner);
    http = new Agent({ connections: CLIENTS * 2 });
    api = new ApiClient(undiciTransport(http, { origin: listenAddresses(service.stdout()).main, timeoutMs: 30_000 }));
    await api.operator(ADMIN_TOKEN).registerExternalKey({ key: OUTSIDE_KEY, name: 'Outside', document: '11222333000181', ispb: '60746948' });
    account = await provisionAccount(api, ADMIN_TOKEN, { fund: '1000000.00' });
  });

  after(async () => {
    killAll();
    await http?.close();
    await cluster?.down();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  async function send(entry: Sent): Promise<void> {
    const sentAt = performance.now();
    try {
      const answer = await api.send(entry.request);
      const replayed = answer.headers['idempotent-replayed'] === 'true';
      entry.answers.push({ status: answer.status, sentAt, at: performance.now(), body: answer.body, replayed, retryAfter: answer.headers['retry-after'] });
    } catch {
      entry.answers.push({ status: null, sentAt, at: performance.now(), body: {}, replayed: false });
    }
  }

  /**
   * Clients sending transfers until `until` says stop, as a careful client does: a transfer
   * without a definite answer (a 503) is sent again with its key, 100 ms later, before the next.
   */
  async function flow(until: () => boolean): Promise<void> {
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (!until()) {
          const key = randomUUID();
          const entry: Sent = { key, request: account.api.transferRequest({ pixKey: OUTSIDE_KEY, payment: { currency: 'BRL', amount: 0.01 } }, key), answers: [] };
          sent.push(entry);
          await send(entry);
          while (!definite(entry.answers.at(-1)!.status) && !until()) {
            await delay(100);
            await send(entry);
          }
        }
      }),
    );
  }

  /** Sends every request without a definite answer again, with its key, until each has one. */
  async function resendUnknown(): Promise<number> {
    let resent = 0;
    for (let round = 0; round < 40; round++) {
      const pending = sent.filter((e) => !definite(e.answers.at(-1)?.status));
      if (pending.length === 0) break;
      for (const entry of pending) {
        resent++;
        await send(entry);
      }
      await delay(250);
    }
    return resent;
  }

  /** One failover under load: resolves with the time from the kill to the first transfer acknowledged that was sent after it. */
  async function failover(t: TestContext): Promise<{ killed: ClusterNode; killToWriteMs: number }> {
    const acked = () => sent.filter((e) => e.answers.some((a) => a.status === 201)).length;
    const before = acked();
    let killAt = Infinity;
    const ackedAfterKill = () => sent.filter((e) => e.answers.some((a) => a.status === 201 && a.sentAt > killAt)).length;
    const deadline = performance.now() + 60_000;
    const flowing = flow(() => ackedAfterKill() >= 20 || performance.now() > deadline);
    while (acked() < before + 20) {
      assert.ok(performance.now() < deadline, 'transfers flow before the kill');
      await delay(20);
    }
    const killed = await cluster.primary();
    cluster.killNode(killed);
    killAt = performance.now();
    await flowing;
    // The first transfer made after the kill: sent after it, and not the replay of one made before.
    const firstWrite = Math.min(...sent.flatMap((e) => e.answers.filter((a) => a.status === 201 && !a.replayed && a.sentAt > killAt).map((a) => a.at)));
    assert.ok(Number.isFinite(firstWrite), 'a transfer was acknowledged after the kill within 60 s');
    const killToWriteMs = Math.round(firstWrite - killAt);
    t.diagnostic(`failover from ${killed.name}: first acknowledged write ${killToWriteMs} ms after the kill`);
    return { killed, killToWriteMs };
  }

  /** What the database holds for the account's transfers, by idempotency key, on one node. */
  async function transfersOn(url: string): Promise<Map<string, { n: number; endToEndId: string }>> {
    const rows = await query<{ key: string; n: number; e2e: string }>(
      url,
      `select idempotency_key as key, count(*) over (partition by idempotency_key)::int as n, end_to_end_id as e2e
         from transactions where account_id = $1 and type = 'WITHDRAW'`,
      [account.accountId],
    );
    return new Map(rows.map((r) => [r.key, { n: r.n, endToEndId: r.e2e }]));
  }

  it(`loses no acknowledged transfer and answers no 500 through ${FAILOVERS} failover(s); the old primary comes back as a standby`, { timeout: 120_000 * FAILOVERS + 60_000 }, async (t) => {
    t.diagnostic(`cluster built in ${Math.round(buildMs)} ms`);
    const times: number[] = [];
    for (let round = 0; round < FAILOVERS; round++) {
      const { killed, killToWriteMs } = await failover(t);
      times.push(killToWriteMs);
      const primary = await cluster.primary();
      assert.notEqual(primary.name, killed.name, 'the monitor promoted the standby');

      // The worker's LISTEN followed the primary: wakes from any process reach it again.
      const listening = async () =>
        (await query<{ n: number }>(cluster.nodeUrl(primary), `select count(*)::int as n from pg_stat_activity where application_name = 'pix-api-worker-listen' and query = 'LISTEN pix_settlement'`))[0]!.n;
      const listenDeadline = performance.now() + 15_000;
      while ((await listening()) === 0) {
        assert.ok(performance.now() < listenDeadline, 'the worker LISTENs on the new primary within 15 s');
        await delay(100);
      }

      const resent = await resendUnknown();
      const retried = sent.filter((e) => e.answers.length > 1).length;
      t.diagnostic(`${sent.length} transfers so far, ${retried} of them sent again with their key after a 503 (${resent} after the flow)`);
      // The old primary rejoins as a standby of the new one, and has every transfer too.
      await cluster.restartNode(killed);
      await cluster.waitHealthy(120_000);
      const onPrimary = await transfersOn(cluster.nodeUrl(primary));
      const onStandby = await transfersOn(cluster.nodeUrl(killed));
      assert.deepEqual([...onStandby.keys()].sort(), [...onPrimary.keys()].sort(), 'the rejoined standby holds what the primary holds');
    }
    // A planned switchover under the same load: the old primary's connections end (57P01), the
    // service finds the new one, and every answer is kept as through a failover.
    const before = (await cluster.primary()).name;
    const switched = sent.length;
    let switching = true;
    const flowing = flow(() => !switching);
    await cluster.switchover();
    await delay(500);
    switching = false;
    await flowing;
    assert.notEqual((await cluster.primary()).name, before, 'the switchover promoted the standby');
    t.diagnostic(`switchover: ${sent.length - switched} transfers sent through it, ${sent.slice(switched).filter((e) => e.answers.some((a) => a.status === 503)).length} answered 503 at first`);
    await resendUnknown();
    if (FAILOVERS > 1) {
      const sorted = [...times].sort((a, b) => a - b);
      t.diagnostic(`kill to first write over ${FAILOVERS} failovers: median ${sorted[Math.floor((sorted.length - 1) / 2)]} ms, worst ${sorted.at(-1)} ms`);
    }

    const statuses = sent.flatMap((e) => e.answers.map((a) => a.status));
    assert.deepEqual(statuses.filter((s) => s !== null && s >= 500 && s !== 503), [], 'no answer but 503 among the 5xx');
    assert.deepEqual(statuses.filter((s) => s === null), [], 'every request got an answer');
    assert.ok(statuses.includes(503), 'the failover was seen: some requests were answered 503');
    const unavailable = sent.flatMap((e) => e.answers.filter((a) => a.status === 503));
    assert.deepEqual(unavailable.filter((a) => a.retryAfter !== '1' || a.body.code !== 'SERVICE_UNAVAILABLE'), [], 'every 503 says Retry-After: 1, SERVICE_UNAVAILABLE');
    for (const entry of sent) assert.equal(entry.answers.at(-1)!.status, 201, `${entry.key}: ${JSON.stringify(entry.answers.at(-1))}`);

    // Every acknowledged transfer is on the primary, once, under the answer it was given.
    const stored = await transfersOn(cluster.url);
    for (const entry of sent) {
      const row = stored.get(entry.key);
      assert.ok(row, `acknowledged transfer ${entry.key} is on the new primary`);
      assert.equal(row.n, 1, `${entry.key} made one transfer`);
      for (const a of entry.answers.filter((x) => x.status === 201)) assert.equal(a.body.endToEndId, row.endToEndId);
    }
    assert.equal(stored.size, sent.length, 'no transfer the clients did not ask for');

    // Each request sent once more with its key: the stored answer, replayed; nothing new.
    for (const entry of sent) await send(entry);
    for (const entry of sent) {
      const last = entry.answers.at(-1)!;
      assert.equal(last.status, 201);
      assert.equal(last.replayed, true, `${entry.key} replayed`);
    }
    assert.equal((await transfersOn(cluster.url)).size, sent.length, 'retries with the same keys completed exactly once');
  });

  it('a service started as the primary is lost comes up on the new primary instead of failing its start', { timeout: 240_000 }, async () => {
    await cluster.waitHealthy(120_000);
    const killed = await cluster.primary();
    cluster.killNode(killed);
    const starting = mkdtempSync(join(tmpdir(), 'pix-cluster-starting-'));
    try {
      const late = run(['serve'], { DATABASE_URL: cluster.url, ADMIN_TOKEN, DATA_DIR: starting, KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY });
      await started(late, sandboxBanner);
      assert.notEqual((await cluster.primary()).name, killed.name, 'it started on the promoted standby');
      late.child.kill('SIGTERM');
      assert.equal(await late.exited, 0);
    } finally {
      rmSync(starting, { recursive: true, force: true });
      await cluster.restartNode(killed);
      await cluster.waitHealthy(120_000);
    }
  });

  it('a connection asks each host in turn: a standby first is passed over for the primary, unless any server will do', { timeout: 150_000 }, async () => {
    await cluster.waitHealthy(120_000);
    const primary = await cluster.primary();
    const standby = cluster.nodes.find((n) => n !== primary)!;
    const hosts = `127.0.0.1:${standby.port},127.0.0.1:${primary.port}`;
    await query(cluster.nodeUrl(standby), 'select 1');
    for (const [attrs, expected] of [['read-write', primary.port], ['any', standby.port]] as const) {
      const client = await connectClient(`postgres://postgres@${hosts}/pix?target_session_attrs=${attrs}`);
      try {
        const { rows } = await client.query<{ port: number }>('select inet_server_port() as port');
        assert.equal(rows[0]!.port, expected, attrs);
      } finally {
        await client.end();
      }
    }
  });

  it('restores a base backup with the archived WAL into a new data directory: the writes made after the backup are there', { timeout: 180_000 }, async () => {
    const backup = await baseBackup(cluster);
    const later: Sent[] = [];
    for (let i = 0; i < 5; i++) {
      const key = randomUUID();
      const entry: Sent = { key, request: account.api.transferRequest({ pixKey: OUTSIDE_KEY, payment: { currency: 'BRL', amount: 0.02 } }, key), answers: [] };
      await send(entry);
      assert.equal(entry.answers[0]!.status, 201);
      later.push(entry);
    }
    await archiveNow(cluster);
    let restored: Restored | undefined;
    const pgdata = mkdtempSync(join(tmpdir(), 'pix-restored-'));
    rmSync(pgdata, { recursive: true });
    try {
      restored = await restore(cluster, { backup, pgdata, port: await freePortRange(1) });
      const onRestored = await transfersOn(restored.url);
      for (const entry of later) assert.equal(onRestored.get(entry.key)?.endToEndId, entry.answers[0]!.body.endToEndId, `${entry.key}, made after the backup, is restored`);
      for (const entry of sent) assert.ok(onRestored.has(entry.key), `${entry.key}, made before the backup, is restored`);
    } finally {
      await dropRestored({ pgdata });
    }
  });
});
