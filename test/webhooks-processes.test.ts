import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { LEASE_MS } from '../src/modules/webhooks/delivery.ts';
import { createTestDatabase, onPostgres, type TestDatabase } from './harness.ts';
import { startWebhookReceiver, type ReceiverAnswer, type WebhookReceiver } from './webhook-receiver.ts';
import { redisAnswers, TEST_REDIS_URL } from './redis.ts';
import { assertErrorShape } from './assertions.ts';
import { ApiClient, fetchTransport, type AccountApi } from '../scripts/lib/api-client.ts';
import { provisionAccount } from '../scripts/lib/provision.ts';

/**
 * Webhooks across real service processes (`node src/main.ts serve`) on one PostgreSQL database:
 * the resend rate limit shared through Redis, and at-least-once delivery when the worker holding
 * a delivery dies mid-flight.
 */

const MAIN = new URL('../src/main.ts', import.meta.url).pathname;
const ADMIN_TOKEN = 'processes-test-admin-token-0123';

const redisUp = onPostgres && (await redisAnswers());

interface ServiceProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** http://127.0.0.1:{port} */
  readonly address: string;
  output(): string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running = new Set<ServiceProcess>();
// Belt and braces: a runner that dies leaves no service behind.
process.on('exit', () => running.forEach((p) => p.child.kill('SIGKILL')));

/** Starts `node src/main.ts serve` and resolves once it prints "listening on". */
async function startService(name: string, env: Record<string, string>): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [MAIN, 'serve'], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const proc = { name, child, address: '', output: () => output, exited };
  running.add(proc);
  void exited.then(() => running.delete(proc));
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name}: no "listening on" within 20 s:\n${output}`)), 20_000);
    const check = () => {
      const match = /listening on (http:\/\/[\d.:]+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      } else if (child.exitCode !== null || child.signalCode !== null) {
        clearTimeout(timer);
        reject(new Error(`${name} exited (${child.exitCode ?? child.signalCode}):\n${output}`));
      } else setTimeout(check, 50);
    };
    check();
  });
  return Object.assign(proc, { address });
}

/** SIGTERM, then SIGKILL if it has not stopped within 10 s. */
async function stopService(proc: ServiceProcess): Promise<void> {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  proc.child.kill('SIGTERM');
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), 10_000);
  await proc.exited;
  clearTimeout(timer);
}

/** The API of one service process, over HTTP. */
const api = (proc: ServiceProcess) => new ApiClient(fetchTransport(proc.address));

interface Provisioned {
  accountId: number;
  /** The account routes, with its bearer token and the client certificate it is bound to. */
  account: AccountApi;
  transactionId: number;
}

/**
 * Through one process's HTTP API: an account with a certificate and an EVP key, a token, a cash_in
 * webhook to `webhookUrl`, and a PIX received on the key (its notification goes to the outbox).
 */
async function provision(proc: ServiceProcess, webhookUrl: string): Promise<Provisioned> {
  const client = api(proc);
  const account = await provisionAccount(client, ADMIN_TOKEN, { name: 'Recebedor Processos', document: '52998224725' });
  await account.api.registerWebhook({ url: webhookUrl, eventType: 'cash_in' });
  const pix = await client.operator(ADMIN_TOKEN).incomingPix({ pixKey: account.key!, amount: '10.00', payer: { name: 'Pagador Processos', document: '52998224725' } });
  return { accountId: account.accountId, account: account.api, transactionId: pix.transactionId };
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const needsPostgres = !onPostgres && 'needs TEST_DATABASE_URL (several processes share one PostgreSQL database)';

describe('webhooks across service processes', () => {
  /** Everything one test set up, released in reverse order even when it failed. */
  const cleanups: (() => Promise<unknown> | void)[] = [];
  after(async () => {
    for (const proc of running) await stopService(proc);
    const failures: unknown[] = [];
    for (const cleanup of cleanups.reverse()) await Promise.resolve().then(cleanup).catch((error: unknown) => failures.push(error));
    if (failures.length > 0) throw new AggregateError(failures, 'cleanup failed');
  });

  async function setUp(): Promise<{ testDb: TestDatabase; rcv: WebhookReceiver; env: Record<string, string> }> {
    const dataDir = mkdtempSync(join(tmpdir(), 'pix-processes-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const testDb = await createTestDatabase();
    cleanups.push(() => testDb.drop());
    const rcv = await startWebhookReceiver();
    cleanups.push(() => rcv.close());
    const env = {
      DATABASE_URL: testDb.url!,
      ADMIN_TOKEN,
      // One DATA_DIR: the sandbox's demo account is provisioned once, by the first process.
      DATA_DIR: dataDir,
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_CA_FILE: rcv.caFile,
    };
    return { testDb, rcv, env };
  }

  it('share the resend limit through Redis: 30 resends on each process, then the 61st is 429 on either', { skip: needsPostgres || (!redisUp && `no Redis answers at ${TEST_REDIS_URL}`) }, async () => {
    const { rcv, env } = await setUp();
    const withRedis = { ...env, REDIS_URL: TEST_REDIS_URL };
    const a = await startService('A', withRedis);
    const b = await startService('B', withRedis);
    assert.notEqual(a.address, b.address);

    const redis = new Redis(TEST_REDIS_URL);
    cleanups.push(() => redis.disconnect());
    const p = await provision(a, `${rcv.origin}/resend`);
    // Account ids start again at 1 in every fresh database: forget what an earlier run counted.
    const key = `pix-api:resend:${p.accountId}`;
    await redis.del(key);
    cleanups.push(() => redis.del(key));

    const resend = (proc: ServiceProcess) => api(proc).send(p.account.request('POST', `/api/resend-webhook/${p.transactionId}`));
    // Both processes at once, 30 each: the count in Redis is atomic across them.
    await Promise.all(
      [a, b].map(async (proc) => {
        for (let i = 0; i < 30; i++) {
          const res = await resend(proc);
          assert.equal(res.status, 200, `resend ${i + 1} through ${proc.name}: ${JSON.stringify(res.body)}`);
          assert.equal((res.body as { statusCode: number }).statusCode, 200);
        }
      }),
    );
    assert.equal(await redis.zcard(key), 60);

    for (const proc of [a, b]) {
      const refused = await resend(proc);
      assert.equal(refused.status, 429, `61st through ${proc.name}: ${JSON.stringify(refused.body)}`);
      assert.match(String(refused.headers['content-type']), /^application\/json/);
      const retryAfter = Number(refused.headers['retry-after']);
      assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${refused.headers['retry-after']}`);
      assert.equal(assertErrorShape(refused.body, 429).code, 'RATE_LIMITED');
    }
    // Refusals are not counted.
    assert.equal(await redis.zcard(key), 60);
    // 60 resends went out, plus the worker's own delivery of the notification.
    const received = await rcv.waitFor(61);
    assert.equal(new Set(received.map((r) => r.headers['webhook-id'])).size, 1, 'every resend carries the notification’s webhook-id');

    await Promise.all([stopService(a), stopService(b)]);
    assert.deepEqual(await a.exited, { code: 0, signal: null });
    assert.deepEqual(await b.exited, { code: 0, signal: null });
  });

  it('delivers at least once: a worker killed mid-delivery, another delivers again after the lease with the same webhook-id', { skip: needsPostgres }, async () => {
    const { testDb, rcv, env } = await setUp();
    let releaseFirst: (answer: ReceiverAnswer) => void = () => undefined;
    const firstAnswer = new Promise<ReceiverAnswer>((resolve) => (releaseFirst = resolve));
    // The first delivery is held until the end (its sender is dead by then); later ones are 200.
    rcv.respond = (_request, index) => (index === 0 ? firstAnswer : 200);
    cleanups.push(() => releaseFirst(200));

    const a = await startService('A', env);
    const p = await provision(a, `${rcv.origin}/crash`);
    const [first] = await rcv.waitFor(1, 10_000);
    const claimed = await testDb.db
      .selectFrom('webhook_deliveries')
      .select(['id', 'status', 'attempts', 'next_attempt_at'])
      .where('transaction_id', '=', BigInt(p.transactionId))
      .executeTakeFirstOrThrow();
    assert.equal(claimed.status, 'PENDING');
    assert.equal(claimed.attempts, 1, 'A claimed the first attempt');
    const leaseEnd = claimed.next_attempt_at.getTime();

    a.child.kill('SIGKILL');
    assert.deepEqual(await a.exited, { code: null, signal: 'SIGKILL' });
    const killedAt = Date.now();
    assert.ok(killedAt < leaseEnd, 'killed while the lease still held');

    const b = await startService('B', env);
    const received = await rcv.waitFor(2, LEASE_MS + 10_000);
    const second = received[1]!;
    assert.equal(second.headers['webhook-id'], first!.headers['webhook-id'], 'the same webhook-id');
    assert.equal(second.body, first!.body, 'the same notification');
    assert.equal(second.path, '/crash');
    // Not before the lease: while A might still have been alive, nobody else sent it.
    assert.ok(second.at.getTime() >= leaseEnd - 1_000, `second delivery ${leaseEnd - second.at.getTime()} ms before the lease ended`);

    // Delivered: the delivery is gone (its log stays), after B's attempt 2.
    await until('delivery recorded', 5_000, async () => {
      const row = await testDb.db.selectFrom('webhook_deliveries').select('id').where('id', '=', claimed.id).executeTakeFirst();
      return row === undefined ? true : undefined;
    });

    const logs = await api(b).account(p.account.headers).webhookLogs({ transactionId: p.transactionId });
    // A died before recording attempt 1; B's attempt 2 is the one on record.
    assert.deepEqual(
      logs.data.map(({ attempt, success, statusCode, webhookId, isResend, url }) => ({ attempt, success, statusCode, webhookId, isResend, url })),
      [{ attempt: 2, success: true, statusCode: 200, webhookId: first!.headers['webhook-id'], isResend: false, url: `${rcv.origin}/crash` }],
    );

    // Neither lost nor duplicated: one notification, one delivery (delivered, so no longer
    // waiting), two requests in all.
    const outbox = await testDb.db.selectFrom('outbox').select(['message_id', 'dispatched_at']).where('transaction_id', '=', BigInt(p.transactionId)).execute();
    assert.equal(outbox.length, 1);
    assert.equal(outbox[0]!.message_id, first!.headers['webhook-id']);
    assert.notEqual(outbox[0]!.dispatched_at, null);
    const deliveries = await testDb.db.selectFrom('webhook_deliveries').select('id').where('transaction_id', '=', BigInt(p.transactionId)).execute();
    assert.equal(deliveries.length, 0);
    assert.equal(rcv.received.length, 2);

    await stopService(b);
    assert.deepEqual(await b.exited, { code: 0, signal: null });
  });
});
