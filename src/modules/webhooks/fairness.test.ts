import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { notifyDue } from '../../../test/events.ts';
import { createClient, type TestClient } from '../../../test/factories.ts';
import { onPostgres, startTestApp, type TestApp } from '../../../test/harness.ts';
import { startWebhookReceiver, type ReceiverAnswer, type WebhookReceiver } from '../../../test/webhook-receiver.ts';
import { Worker, type WorkerOptions } from '../../worker/worker.ts';
import { deliverDue } from './delivery.ts';
import { allocate, breakerChanges, type DestinationState } from './fairness.ts';
import { WebhookSender, type Attempt } from './sender.ts';

const POSTGRES_ONLY = { skip: onPostgres ? false : 'needs concurrent connections to one server: set TEST_DATABASE_URL' };
const LIMITS = { perDestination: 16, perAccount: 32 };
const BREAKER = { threshold: 5, openMs: 30_000, maxOpenMs: 3_600_000 };

describe('allocate', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const dest = (id: number, accountId: number, due: number, extra: Partial<DestinationState> = {}): DestinationState => ({
    id: BigInt(id),
    accountId: BigInt(accountId),
    dueSince: id,
    failures: 0,
    openUntil: null,
    inFlight: 0,
    accountInFlight: 0,
    due,
    ...extra,
  });
  const takes = (plan: ReturnType<typeof allocate>) => Object.fromEntries(plan.map((p) => [String(p.id), [p.take, p.blocked]]));

  it('shares free slots round robin between accounts, then between an account\'s destinations', () => {
    const plan = allocate([dest(1, 1, 17), dest(2, 1, 17), dest(3, 2, 17), dest(4, 3, 1)], 10, now, LIMITS, BREAKER);
    // Rounds: accounts 1, 2, 3; then 1 and 2 only (3 has nothing more), account 1 alternating its destinations.
    assert.deepEqual(takes(plan), { 1: [3, false], 2: [2, false], 3: [4, false], 4: [1, false] });
  });

  it('never passes a destination\'s or an account\'s bound; what they keep back is blocked', () => {
    const plan = allocate([dest(1, 1, 17, { inFlight: 10, accountInFlight: 10 }), dest(2, 1, 17, { accountInFlight: 10 }), dest(3, 2, 3)], 100, now, LIMITS, BREAKER);
    // Account 1 may have 22 more in flight; its first destination 6 more.
    assert.deepEqual(takes(plan), { 1: [6, true], 2: [16, true], 3: [3, false] });
    const full = allocate([dest(1, 1, 5, { inFlight: 16, accountInFlight: 16 })], 100, now, LIMITS, BREAKER);
    assert.deepEqual(takes(full), { 1: [0, true] });
  });

  it('an open breaker takes nothing; past its interval one probe goes at a time', () => {
    const open = { failures: 5, openUntil: new Date(now.getTime() + 1) };
    assert.deepEqual(takes(allocate([dest(1, 1, 9, open)], 100, now, LIMITS, BREAKER)), { 1: [0, true] });
    const halfOpen = { failures: 5, openUntil: now };
    assert.deepEqual(takes(allocate([dest(1, 1, 9, halfOpen)], 100, now, LIMITS, BREAKER)), { 1: [1, true] });
    assert.deepEqual(takes(allocate([dest(1, 1, 9, { ...halfOpen, inFlight: 1 })], 100, now, LIMITS, BREAKER)), { 1: [0, true] });
  });

  it('a worker short of slots leaves the rest unblocked (it is not the destination that keeps them back)', () => {
    assert.deepEqual(takes(allocate([dest(1, 1, 9)], 4, now, LIMITS, BREAKER)), { 1: [4, false] });
  });

  it('breakerChanges: timeouts, connection failures and 5xx count; a success resets; 4xx and refusals count for nothing', () => {
    const at = new Date();
    const a = (x: Partial<Attempt>): Attempt => ({ success: false, statusCode: null, durationMs: 1, error: 'x', sentAt: at, ...x });
    const changes = breakerChanges([
      { destinationId: 1n, attempt: a({ failure: 'timeout' }), counts: true },
      { destinationId: 1n, attempt: a({ success: true, statusCode: 200 }), counts: true },
      { destinationId: 1n, attempt: a({ statusCode: 503 }), counts: true },
      { destinationId: 1n, attempt: a({ failure: 'connection refused' }), counts: true },
      { destinationId: 1n, attempt: a({ statusCode: 404 }), counts: true },
      { destinationId: 2n, attempt: a({ failure: 'port not allowed' }), counts: true },
      { destinationId: 3n, attempt: a({ failure: 'timeout' }), counts: false },
    ]);
    assert.deepEqual(changes, [
      { destinationId: 1n, reset: true, failures: 2 },
      { destinationId: 2n, reset: false, failures: 0 },
    ]);
  });
});

describe('fair delivery', () => {
  let t: TestApp;
  let fast: WebhookReceiver;
  let slow: WebhookReceiver;
  /** Both receivers' CAs, so that any worker reaches either. */
  let caDir: string;
  let caFile: string;
  const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

  before(async () => {
    fast = await startWebhookReceiver();
    slow = await startWebhookReceiver();
    caDir = mkdtempSync(join(tmpdir(), 'pix-fairness-'));
    caFile = join(caDir, 'both.pem');
    writeFileSync(caFile, readFileSync(fast.caFile, 'utf8') + readFileSync(slow.caFile, 'utf8'));
    t = await startTestApp({ env: { WEBHOOK_CA_FILE: caFile } });
  });
  after(async () => {
    await t?.close();
    await fast?.close();
    await slow?.close();
    rmSync(caDir, { recursive: true, force: true });
  });

  async function register(client: TestClient, url: string) {
    const res = await t.app.inject({ method: 'POST', url: '/api/webhooks', headers: client.headers, payload: { url, eventType: 'cash_in' } });
    assert.equal(res.statusCode, 201, res.body);
  }

  const notify = (client: TestClient, count: number, data?: (i: number) => Record<string, unknown>) => notifyDue(t, client.accountId, count, data);

  /** Two workers on this database, each sending through `sender(i)`, polling every 20 ms. */
  const twoWorkers = (sender: (i: number) => WebhookSender, options: Pick<WorkerOptions, 'delivery'> = {}) =>
    [0, 1].map(
      (i) => new Worker({ db: t.db, clock: t.clock, ispb: '99999999', settlementDelayMs: 1000, log: silent, webhookSender: sender(i), deliveryPollMs: 20, ...options }),
    );

  const deliveriesOf = (client: TestClient) =>
    t.db.selectFrom('webhook_deliveries').selectAll().where('account_id', '=', BigInt(client.accountId)).orderBy('id').execute();

  /** Attempts in flight at once, as the workers' senders see them (one count over all of them). */
  function inFlight() {
    const seen = { now: 0, max: 0, byOrigin: new Map<string, { now: number; max: number }>(), sends: [] as number[] };
    const wrap = (real: WebhookSender, worker: number, counts: (url: string) => boolean) =>
      ({
        timeoutMs: real.timeoutMs,
        send: async (...args: Parameters<WebhookSender['send']>) => {
          seen.sends[worker] = (seen.sends[worker] ?? 0) + 1;
          if (!counts(args[0].url)) return real.send(...args);
          const origin = new URL(args[0].url).origin;
          const perOrigin = seen.byOrigin.get(origin) ?? { now: 0, max: 0 };
          seen.byOrigin.set(origin, perOrigin);
          seen.max = Math.max(seen.max, ++seen.now);
          perOrigin.max = Math.max(perOrigin.max, ++perOrigin.now);
          try {
            return await real.send(...args);
          } finally {
            seen.now--;
            perOrigin.now--;
          }
        },
        close: () => real.close(),
      }) as unknown as WebhookSender;
    return { seen, wrap };
  }

  it('a slow receiver flooded by one account does not delay another account\'s deliveries', POSTGRES_ONLY, async () => {
    const attacker = await createClient(t);
    const victim = await createClient(t);
    for (const path of ['/a1', '/a2', '/a3']) await register(attacker, `${slow.origin}/flood/${attacker.accountId}${path}`);
    await register(victim, `${fast.origin}/victim/${victim.accountId}`);
    // The slow receiver answers after the sender's 1.5 s timeout, or when the test ends.
    let release!: () => void;
    const released = new Promise<ReceiverAnswer>((resolve) => (release = () => resolve(200)));
    slow.respond = () => released;
    const flood = inFlight();
    const workers = twoWorkers((i) => flood.wrap(new WebhookSender({ allowPrivate: true, caFile, timeoutMs: 1500 }), i, (url) => url.includes('/flood/')));
    try {
      await notify(attacker, 60);
      for (const w of workers) w.start();
      const sent = new Map<number, number>();
      for (let i = 0; i < 80; i++) {
        sent.set(i, Date.now());
        await notify(victim, 1, () => ({ n: i }));
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      const arrived = await fast.waitFor(80, 15_000);
      const lags = arrived
        .filter((r) => r.path.startsWith('/victim/'))
        .map((r) => r.at.getTime() - sent.get((JSON.parse(r.body) as { data: { n: number } }).data.n)!)
        .sort((x, y) => x - y);
      const p99 = lags[Math.ceil(lags.length * 0.99) - 1]!;
      // Claimed globally in due order, the attacker's 180 deliveries took every slot of a round
      // and the victim's waited for their 1.5 s timeouts.
      assert.ok(p99 < 750, `victim lag p99 ${p99} ms (median ${lags[lags.length >> 1]} ms)`);
      assert.ok(flood.seen.max <= LIMITS.perDestination, `attacker in flight at once: ${flood.seen.max}`);
      assert.ok(slow.received.length >= LIMITS.perDestination, `the slow receiver was reached: ${slow.received.length}`);
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
      release();
      slow.respond = () => 200;
    }
    // The breaker opened: most of the attacker's deliveries were never attempted, nor spent an attempt.
    const left = await deliveriesOf(attacker);
    assert.ok(left.filter((d) => d.attempts === 0).length >= 180 - 2 * LIMITS.perDestination, `${left.filter((d) => d.attempts > 0).length} attempted`);
    const [destination] = await t.db.selectFrom('webhook_destinations').selectAll().where('account_id', '=', BigInt(attacker.accountId)).execute();
    assert.ok(destination!.failures >= BREAKER.threshold && destination!.open_until! > t.clock.now(), `${destination!.failures} failures`);
  });

  it('in flight per destination and per account never pass their bounds, with two workers on one database', POSTGRES_ONLY, async () => {
    const c = await createClient(t);
    const port = new URL(fast.origin).port;
    // Two origins of one receiver: two destinations of the account.
    await register(c, `https://localhost:${port}/bound/${c.accountId}/a`);
    await register(c, `https://127.0.0.1:${port}/bound/${c.accountId}/b`);
    fast.respond = (r) => (r.path.startsWith(`/bound/${c.accountId}/`) ? new Promise((resolve) => setTimeout(() => resolve(200), 30)) : 200);
    await notify(c, 40);
    // Each worker alone stays under the account's bound: only counting both, from the
    // database, keeps the two under it and each destination under its own.
    const limits = { perDestination: 3, perAccount: 5 };
    const { seen, wrap } = inFlight();
    const workers = twoWorkers((i) => wrap(new WebhookSender({ allowPrivate: true, caFile, timeoutMs: 3000 }), i, () => true), { delivery: { concurrency: 4, limits } });
    try {
      for (const w of workers) w.start();
      await fast.waitFor(fast.received.length + 80, 20_000);
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
      fast.respond = () => 200;
    }
    const [one = 0, two = 0] = seen.sends;
    assert.equal(one + two, 80);
    assert.ok(one > 0 && two > 0, `both workers took part: ${one} + ${two}`);
    assert.ok(seen.max <= limits.perAccount, `account in flight at once: ${seen.max}`);
    for (const [origin, { max }] of seen.byOrigin) assert.ok(max <= limits.perDestination, `${origin} in flight at once: ${max}`);
    assert.ok(seen.max >= limits.perDestination, `the bounds were reached: ${seen.max}`);
    assert.deepEqual(await deliveriesOf(c), []);
    const received = fast.received.filter((r) => r.path.startsWith(`/bound/${c.accountId}/`));
    assert.equal(new Set(received.map((r) => `${r.path} ${r.headers['webhook-id']}`)).size, 80, 'each delivered once');
  });

  it('a destination that keeps failing: the breaker opens, defers without spending attempts, probes after a growing interval, and a success closes it', async () => {
    const c = await createClient(t);
    const prefix = `/breaker/${c.accountId}`;
    await register(c, `${fast.origin}${prefix}`);
    let status = 503;
    fast.respond = (r) => (r.path.startsWith(prefix) ? status : 200);
    const arrived = () => fast.received.filter((r) => r.path.startsWith(prefix)).length;
    const sender = new WebhookSender({ allowPrivate: true, caFile, timeoutMs: 3000 });
    const breaker = { threshold: 3, openMs: 1000, maxOpenMs: 8000 };
    // One at a time, so that the breaker sees the failures as they come.
    const round = () => deliverDue({ db: t.db, clock: t.clock, sender }, { limits: { perDestination: 1, perAccount: 32 }, breaker, random: () => 0.5 });
    const destination = async () => {
      const [d] = await t.db.selectFrom('webhook_destinations').selectAll().where('account_id', '=', BigInt(c.accountId)).execute();
      return { failures: d!.failures, opens: d!.opens, openFor: d!.open_until === null ? null : d!.open_until.getTime() - t.clock.now().getTime() };
    };
    const unattempted = async () => (await deliveriesOf(c)).filter((d) => d.attempts === 0).length;
    try {
      await notify(c, 10);
      assert.equal(await round(), 3, 'three failures, then the breaker is open');
      assert.equal(arrived(), 3);
      assert.deepEqual(await destination(), { failures: 3, opens: 1, openFor: 1000 });
      assert.equal(await unattempted(), 7, 'the rest deferred, their attempts unspent');

      t.clock.advance(999);
      assert.equal(await round(), 0, 'still open');
      t.clock.advance(1);
      assert.equal(await round(), 1, 'one probe');
      assert.deepEqual(await destination(), { failures: 4, opens: 2, openFor: 2000 }, 'the probe failed: open twice as long');
      assert.equal(await unattempted(), 6);

      t.clock.advance(1999);
      assert.equal(await round(), 0);
      status = 200;
      t.clock.advance(1);
      assert.equal(await round(), 6, 'the probe succeeded: closed, and the deferred ones went');
      assert.deepEqual(await destination(), { failures: 0, opens: 0, openFor: null });
      assert.equal(await unattempted(), 0);

      // The failed attempts' retries keep their own schedule (about 5 s after each).
      t.clock.advance(10_000);
      assert.equal(await round(), 4);
      assert.deepEqual(await deliveriesOf(c), []);
      assert.equal(arrived(), 14);
      const logs = await t.db.selectFrom('webhook_logs').selectAll().where('account_id', '=', BigInt(c.accountId)).execute();
      assert.equal(logs.length, 14);
      assert.equal(logs.filter((l) => l.success && l.attempt === 1).length, 6, 'delivered at their first attempt');
    } finally {
      fast.respond = () => 200;
      await sender.close();
    }
  });
});
