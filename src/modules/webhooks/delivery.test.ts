import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { assertError, errorMessage } from '../../../test/assertions.ts';
import { masked, notifyDue, receivePayload } from '../../../test/events.ts';
import { createClient, evpKey, incomingPix, randomCpf, type TestClient } from '../../../test/factories.ts';
import { onPostgres, startTestApp, type TestApp } from '../../../test/harness.ts';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../../../test/webhook-receiver.ts';
import { enqueue } from '../notifications/repo.ts';
import { Worker } from '../../worker/worker.ts';
import { deliverDue, LEASE_MS, MAX_ATTEMPTS, RETRY_DELAYS_MS, RETRY_JITTER, retryDelayMs } from './delivery.ts';
import { insertLog } from './repo.ts';
import { WebhookSender, type Attempt, type Message } from './sender.ts';


describe('retryDelayMs', () => {
  it('about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h within ±10%, then null (8 attempts in all)', () => {
    const expected = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];
    assert.deepEqual([...RETRY_DELAYS_MS], expected);
    assert.equal(MAX_ATTEMPTS, 8);
    assert.equal(RETRY_JITTER, 0.1);
    for (const [i, base] of expected.entries()) {
      const attempt = i + 1;
      assert.equal(retryDelayMs(attempt, () => 0), Math.round(base * 0.9));
      assert.equal(retryDelayMs(attempt, () => 0.5), base);
      assert.ok(retryDelayMs(attempt, () => 0.999999)! <= base * 1.1);
      for (let k = 0; k < 50; k++) {
        const delay = retryDelayMs(attempt)!;
        assert.ok(delay >= base * 0.9 && delay <= base * 1.1, `attempt ${attempt}: ${delay}`);
      }
    }
    assert.equal(retryDelayMs(8), null);
    assert.equal(retryDelayMs(9), null);
  });
});

describe('webhook delivery', () => {
  let t: TestApp;
  let rcv: WebhookReceiver;
  let sender: WebhookSender;
  let port: string;

  const deps = () => ({ db: t.db, clock: t.clock, sender });
  /** Whatever reached `prefix` (each test has its own path, so earlier tests cannot disturb it). */
  const at = (prefix: string) => rcv.received.filter((r) => r.path.startsWith(prefix));

  async function register(client: TestClient, path: string, eventType = 'cash_in', headers: { key: string; value: string }[] = []) {
    const res = await t.app.inject({ method: 'POST', url: '/api/webhooks', headers: client.headers, payload: { url: `${rcv.origin}${path}`, eventType, headers } });
    assert.equal(res.statusCode, 201, res.body);
    return res.json<{ id: number }>().id;
  }

  /** A client with an EVP key, and a helper that makes a PIX arrive on it. */
  async function receiver(): Promise<TestClient & { pixKey: string }> {
    const client = await createClient(t);
    return { ...client, pixKey: await evpKey(t, client.accountId) };
  }

  const cashIn = (client: { pixKey: string }, amount = '12.34', document = randomCpf()) => incomingPix(t, client.pixKey, amount, { name: 'Pagador Externo', document });

  const deliveriesOf = (accountId: number) =>
    t.db.selectFrom('webhook_deliveries').selectAll().where('account_id', '=', BigInt(accountId)).orderBy('id').execute();
  const logsOf = (accountId: number) => t.db.selectFrom('webhook_logs').selectAll().where('account_id', '=', BigInt(accountId)).orderBy('id').execute();

  /** Deletes the client's registrations, so that nothing it left pending is attempted in later tests. */
  async function retire(client: TestClient) {
    for (const w of (await t.app.inject({ method: 'GET', url: '/api/webhooks', headers: client.headers })).json().webhooks) {
      assert.equal((await t.app.inject({ method: 'DELETE', url: `/api/webhooks/${w.id}`, headers: client.headers })).statusCode, 204);
    }
  }

  before(async () => {
    rcv = await startWebhookReceiver();
    port = new URL(rcv.origin).port;
    t = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_CA_FILE: rcv.caFile } });
    // Signatures on the test's clock, which is the real one for the checks of Standard Webhooks below.
    sender = new WebhookSender({ allowPrivate: true, caFile: rcv.caFile, timeoutMs: 3000, realClock: t.clock });
  });
  after(async () => {
    await sender?.close();
    await t?.close();
    await rcv?.close();
  });

  it('a cash_in reaches every active cash_in URL, with its custom headers, signed, the V2 RECEIVE envelope as body', async () => {
    const c = await receiver();
    const other = await receiver();
    const p = `/fan/${c.accountId}`;
    await register(c, `${p}/a`, 'cash_in', [{ key: 'X-Api-Key', value: 'key-a' }, { key: 'Authorization', value: 'Bearer a' }]);
    await register(c, `${p}/b`, 'cash_in', [{ key: 'X-Api-Key', value: 'key-b' }]);
    await register(c, `${p}/cash-out`, 'cash_out');
    await register(c, `${p}/refund`, 'refund_in');
    const off = await register(c, `${p}/off`, 'cash_in');
    assert.equal((await t.app.inject({ method: 'PATCH', url: `/api/webhooks/${off}`, headers: c.headers, payload: { isActive: false } })).statusCode, 200);
    await register(other, `${p}/other-account`, 'cash_in');
    const secret = (await t.app.inject({ method: 'GET', url: '/api/webhooks/signing-secret', headers: c.headers })).json().secret as string;

    const payer = randomCpf();
    const pix = await cashIn(c, '12.34', payer);
    assert.equal(await deliverDue(deps()), 2);
    const got = at(p).sort((x, y) => x.path.localeCompare(y.path));
    assert.deepEqual(
      got.map((r) => r.path),
      [`${p}/a`, `${p}/b`],
    );

    const outbox = await t.db.selectFrom('outbox').selectAll().where('transaction_id', '=', BigInt(pix.transactionId)).executeTakeFirstOrThrow();
    const expectedBody = receivePayload({ id: pix.transactionId, amount: '12.34', endToEndId: pix.endToEndId, debtor: { name: 'Pagador Externo', document: masked(payer) } });
    for (const [r, key] of [[got[0]!, 'key-a'], [got[1]!, 'key-b']] as const) {
      assert.equal(r.headers['content-type'], 'application/json');
      assert.equal(r.headers['x-api-key'], key);
      assert.match(r.headers['user-agent']!, /^pix-api-webhooks\//);
      assert.equal(r.headers['webhook-id'], outbox.message_id);
      assert.match(r.headers['webhook-id']!, /^msg_[0-9a-f]{32}$/);
      assert.equal(r.headers['webhook-timestamp'], String(Math.floor(t.clock.now().getTime() / 1000)));
      assert.deepEqual(JSON.parse(r.body), expectedBody);
      assert.ok(r.body.startsWith('{"type":"RECEIVE","data":{'), r.body);
      assert.deepEqual(new Webhook(secret).verify(r.body, r.headers), expectedBody);
      // A body changed on the way fails the check.
      assert.throws(() => new Webhook(secret).verify(r.body.replace('12.34', '99.99'), r.headers));
    }
    assert.equal(got[0]!.headers.authorization, 'Bearer a');
    assert.equal(got[1]!.headers.authorization, undefined);

    // The two attempts run at once; each is logged when it finishes, so in either order.
    const logs = (await logsOf(c.accountId)).sort((x, y) => x.url.localeCompare(y.url));
    assert.deepEqual(
      logs.map((l) => [l.url.replace(rcv.origin, ''), l.attempt, l.status_code, l.success, l.is_resend, l.event_type, Number(l.transaction_id), l.message_id]),
      [`${p}/a`, `${p}/b`].map((path) => [path, 1, 200, true, false, 'cash_in', pix.transactionId, outbox.message_id]),
    );
    // Delivered: the deliveries are gone, their log stays.
    assert.deepEqual(await deliveriesOf(c.accountId), []);
    // Nothing more to do, and the other account's URL never heard of it.
    assert.equal(await deliverDue(deps()), 0);
    assert.equal(at(`${p}/other-account`).length, 0);
    await retire(c);
    await retire(other);
  });

  it('a notification with no active URL is dispatched without deliveries', async () => {
    const c = await receiver();
    const pix = await cashIn(c);
    const row = await t.db.selectFrom('outbox').selectAll().where('transaction_id', '=', BigInt(pix.transactionId)).executeTakeFirstOrThrow();
    assert.notEqual(row.dispatched_at, null);
    assert.deepEqual(await deliveriesOf(c.accountId), []);
  });

  it('after a 500: logged as a failure, not retried before ~5 s, then retried with the same webhook-id as attempt 2', async () => {
    const c = await receiver();
    const p = `/retry/${c.accountId}`;
    await register(c, p);
    rcv.respond = (r) => (r.path === p && at(p).length === 1 ? 500 : 200);
    const pix = await cashIn(c);
    assert.equal(await deliverDue(deps()), 1);
    let logs = await logsOf(c.accountId);
    assert.deepEqual(
      logs.map((l) => [l.attempt, l.success, l.status_code]),
      [[1, false, 500]],
    );
    assert.match(logs[0]!.error!, /^HTTP 500/);
    const [pending] = await deliveriesOf(c.accountId);
    assert.equal(pending!.status, 'PENDING');
    const delay = pending!.next_attempt_at.getTime() - t.clock.now().getTime();
    assert.ok(delay >= 4_500 && delay <= 5_500, `next attempt in ${delay} ms`);

    assert.equal(await deliverDue(deps()), 0);
    t.clock.advance(4_400);
    assert.equal(await deliverDue(deps()), 0);
    t.clock.advance(1_600);
    assert.equal(await deliverDue(deps()), 1);
    const got = at(p);
    assert.equal(got.length, 2);
    assert.equal(got[1]!.headers['webhook-id'], got[0]!.headers['webhook-id']);
    logs = await logsOf(c.accountId);
    assert.deepEqual(
      logs.map((l) => [l.attempt, l.success, l.status_code, Number(l.transaction_id)]),
      [
        [1, false, 500, pix.transactionId],
        [2, true, 200, pix.transactionId],
      ],
    );
    assert.deepEqual(await deliveriesOf(c.accountId), []);
    rcv.respond = () => 200;
  });

  it('after 8 failed attempts on the schedule the delivery is FAILED and never attempted again', async () => {
    const c = await receiver();
    const p = `/always-500/${c.accountId}`;
    await register(c, p);
    rcv.respond = (r) => (r.path === p ? 503 : 200);
    await cashIn(c);
    const half = () => 0.5; // no jitter: the delays are the schedule itself
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      assert.equal(await deliverDue(deps(), { random: half }), 1, `attempt ${attempt}`);
      const [d] = await deliveriesOf(c.accountId);
      assert.equal(d!.attempts, attempt);
      if (attempt < MAX_ATTEMPTS) {
        assert.equal(d!.status, 'PENDING');
        assert.equal(d!.next_attempt_at.getTime() - t.clock.now().getTime(), RETRY_DELAYS_MS[attempt - 1]);
        t.clock.advance(RETRY_DELAYS_MS[attempt - 1]! - 1);
        assert.equal(await deliverDue(deps()), 0, `not before the delay (attempt ${attempt})`);
        t.clock.advance(1);
      } else {
        assert.equal(d!.status, 'FAILED');
      }
    }
    t.clock.advance(100 * 3_600_000);
    assert.equal(await deliverDue(deps()), 0);
    const got = at(p);
    assert.equal(got.length, 8);
    assert.equal(new Set(got.map((r) => r.headers['webhook-id'])).size, 1);
    assert.deepEqual(
      (await logsOf(c.accountId)).map((l) => [l.attempt, l.success, l.status_code]),
      [1, 2, 3, 4, 5, 6, 7, 8].map((n) => [n, false, 503]),
    );
    rcv.respond = () => 200;
    // Back to real time, for the tests that check signature timestamps.
    t.clock.set(new Date());
  });

  it('a receiver slower than the timeout fails the attempt', async () => {
    const c = await receiver();
    const p = `/slow/${c.accountId}`;
    await register(c, p);
    rcv.respond = (r) => (r.path === p ? new Promise((resolve) => setTimeout(() => resolve(200), 1_000)) : 200);
    const quick = new WebhookSender({ allowPrivate: true, caFile: rcv.caFile, timeoutMs: 150 });
    try {
      await cashIn(c);
      assert.equal(await deliverDue({ db: t.db, clock: t.clock, sender: quick }), 1);
    } finally {
      await quick.close();
      rcv.respond = () => 200;
    }
    const [log] = await logsOf(c.accountId);
    assert.deepEqual([log!.success, log!.status_code], [false, null]);
    // A private address: a time-out reads as every other failure there.
    assert.match(log!.error!, /^unreachable: .*no answer in time/);
    assert.ok(log!.duration_ms >= 140 && log!.duration_ms < 1_000, `${log!.duration_ms} ms`);
    assert.equal((await deliveriesOf(c.accountId))[0]!.status, 'PENDING');
    await retire(c);
  });

  it('a 302 to a private address is not followed: a failed attempt logged with status 302', async () => {
    const c = await receiver();
    const p = `/redirect/${c.accountId}`;
    await register(c, p);
    rcv.respond = (r) => (r.path === p ? { status: 302, headers: { location: `https://127.0.0.1:${port}/internal/${c.accountId}` } } : 200);
    try {
      await cashIn(c);
      assert.equal(await deliverDue(deps()), 1);
    } finally {
      rcv.respond = () => 200;
    }
    const [log] = await logsOf(c.accountId);
    assert.deepEqual([log!.success, log!.status_code], [false, 302]);
    assert.equal(at(p).length, 1);
    assert.equal(at(`/internal/${c.accountId}`).length, 0);
    await retire(c);
  });

  it('switching a registration off or deleting it stops its pending retries', async () => {
    const c = await receiver();
    const p = `/stop/${c.accountId}`;
    const [offId] = [await register(c, `${p}/off`), await register(c, `${p}/deleted`)];
    rcv.respond = (r) => (r.path.startsWith(p) ? 500 : 200);
    await cashIn(c);
    assert.equal(await deliverDue(deps()), 2);
    rcv.respond = () => 200;
    const deleted = (await t.app.inject({ method: 'GET', url: '/api/webhooks', headers: c.headers })).json().webhooks.find((w: { url: string }) => w.url.endsWith('/deleted')).id;
    await t.app.inject({ method: 'PATCH', url: `/api/webhooks/${offId}`, headers: c.headers, payload: { isActive: false } });
    await t.app.inject({ method: 'DELETE', url: `/api/webhooks/${deleted}`, headers: c.headers });
    t.clock.advance(6_000);
    await deliverDue(deps());
    assert.equal(at(p).length, 2);
    assert.deepEqual(
      (await deliveriesOf(c.accountId)).map((d) => d.status),
      ['FAILED', 'FAILED'],
    );
    const last = (await logsOf(c.accountId)).at(-1)!;
    assert.deepEqual([last.attempt, last.success, last.error], [2, false, 'registration switched off or removed']);
  });

  it('a notification whose transaction rolled back is never sent; a committed one is', async () => {
    const c = await receiver();
    const p = `/outbox/${c.accountId}`;
    await register(c, p);
    const event = (tag: string) => ({
      accountId: BigInt(c.accountId),
      eventType: 'cash_in' as const,
      transactionId: null,
      payload: { type: 'RECEIVE' as const, data: { tag } },
      now: t.clock.now(),
    });
    await assert.rejects(
      t.db.transaction().execute(async (trx) => {
        await enqueue(trx, event('rolled-back'));
        throw new Error('the movement failed');
      }),
      /the movement failed/,
    );
    await t.db.transaction().execute((trx) => enqueue(trx, event('committed')));
    await deliverDue(deps());
    assert.deepEqual(
      at(p).map((r) => JSON.parse(r.body).data.tag),
      ['committed'],
    );
    const outbox = await t.db.selectFrom('outbox').select('payload').where('account_id', '=', BigInt(c.accountId)).execute();
    assert.deepEqual(
      outbox.map((o) => o.payload.data.tag),
      ['committed'],
    );
  });

  it('the worker delivery loop sends notifications as they appear and stops cleanly', async () => {
    const c = await receiver();
    const p = `/worker/${c.accountId}`;
    await register(c, p);
    const loopSender = new WebhookSender({ allowPrivate: true, caFile: rcv.caFile, timeoutMs: 3000 });
    const log = { info: () => undefined, warn: () => undefined, error: (o: unknown) => assert.fail(String(o)) };
    const worker = new Worker({ db: t.db, clock: t.clock, ispb: t.config.pspIspb, settlementDelayMs: 0, log, webhookSender: loopSender, deliveryPollMs: 10 });
    worker.start();
    try {
      const before = rcv.received.length;
      await cashIn(c);
      await rcv.waitFor(before + 1, 5_000);
      assert.equal(at(p).length, 1);
    } finally {
      await worker.stop();
    }
  });

  describe('logs: GET /api/webhooks/logs', () => {
    let c: TestClient & { pixKey: string };
    let pix: { transactionId: number }[];

    before(async () => {
      c = await receiver();
      const p = `/logs/${c.accountId}`;
      await register(c, `${p}/ok`);
      await register(c, `${p}/fails`);
      await register(c, `${p}/med`, 'med_created');
      rcv.respond = (r) => (r.path === `${p}/fails` ? 500 : 200);
      pix = [await cashIn(c), await cashIn(c), await cashIn(c)];
      await t.db.transaction().execute((trx) =>
        enqueue(trx, { accountId: BigInt(c.accountId), eventType: 'med_created', transactionId: null, payload: { type: 'MED', data: { id: 1 } }, now: t.clock.now() }),
      );
      assert.equal(await deliverDue(deps()), 7);
      rcv.respond = () => 200;
      await retire(c);
    });

    const logs = (query: string, client: TestClient = c) => t.app.inject({ method: 'GET', url: `/api/webhooks/logs${query}`, headers: client.headers });

    it('200 newest first, every entry in full, paginated with metadata', async () => {
      const res = await logs('?page=1&size=2');
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.deepEqual(Object.keys(body).sort(), ['data', 'metadata']);
      assert.deepEqual(body.metadata, { page: 1, size: 2, total: 7, totalPages: 4, hasNext: true, hasPrevious: false });
      assert.equal(body.data.length, 2);
      const entry = body.data[0];
      assert.deepEqual(Object.keys(entry).sort(), [
        'attempt', 'createdAt', 'durationMs', 'error', 'eventType', 'isResend', 'statusCode', 'success', 'transactionId', 'url', 'webhookId', 'webhookLogId',
      ]);
      const all = (await logs('?size=100')).json().data as { webhookLogId: number; success: boolean; statusCode: number; error: string | null; isResend: boolean; url: string }[];
      assert.equal(all.length, 7);
      assert.deepEqual(all.map((e) => e.webhookLogId), all.map((e) => e.webhookLogId).sort((x, y) => y - x));
      assert.deepEqual(body.data, all.slice(0, 2));
      assert.deepEqual((await logs('?page=4&size=2')).json().data, all.slice(6));
      assert.deepEqual((await logs('?page=4&size=2')).json().metadata, { page: 4, size: 2, total: 7, totalPages: 4, hasNext: false, hasPrevious: true });
      assert.deepEqual((await logs('?page=9&size=2')).json().data, []);
      for (const e of all) {
        assert.equal(e.isResend, false);
        assert.equal(e.success, e.statusCode === 200);
        assert.equal(e.error === null, e.success);
      }
      assert.deepEqual((await logs('')).json().metadata, { page: 1, size: 20, total: 7, totalPages: 1, hasNext: false, hasPrevious: false });
    });

    it('filters by eventType, transactionId and success, together too', async () => {
      const count = async (query: string) => {
        const res = await logs(query);
        assert.equal(res.statusCode, 200, res.body);
        return res.json().metadata.total as number;
      };
      assert.equal(await count('?eventType=med_created'), 1);
      assert.equal(await count('?eventType=cash_in'), 6);
      assert.equal(await count('?eventType=cash_out'), 0);
      assert.equal(await count(`?transactionId=${pix[1]!.transactionId}`), 2);
      assert.equal(await count('?success=false'), 3);
      assert.equal(await count('?success=true'), 4);
      assert.equal(await count(`?success=false&transactionId=${pix[0]!.transactionId}`), 1);
      const one = (await logs(`?success=true&eventType=cash_in&transactionId=${pix[2]!.transactionId}`)).json().data;
      assert.equal(one.length, 1);
      assert.deepEqual([one[0].transactionId, one[0].success, one[0].statusCode, one[0].attempt], [pix[2]!.transactionId, true, 200, 1]);
    });

    it('400 for size 101, size 0, page 0, an unknown event type, a bad success or transactionId, an unknown parameter', async () => {
      for (const query of ['?size=101', '?size=0', '?page=0', '?eventType=cash', '?success=maybe', '?transactionId=abc', '?foo=1']) {
        assertError(await logs(query), 400);
      }
    });

    it('an interval of at most 31 days, the last 31 by default: older attempts are read by naming their interval', async () => {
      const old = new Date(t.clock.now().getTime() - 40 * 86_400_000);
      const entry = { accountId: BigInt(c.accountId), transactionId: null, eventType: 'cash_in', url: 'https://old.example.com/', messageId: 'msg_old', statusCode: 200, success: true, durationMs: 5, error: null };
      const { id } = await insertLog(t.db, { ...entry, at: old });
      const total = async (query: string) => {
        const res = await logs(query);
        assert.equal(res.statusCode, 200, res.body);
        return res.json().metadata.total as number;
      };
      assert.equal(await total(''), 7);
      const day = (at: Date, days: number) => new Date(at.getTime() + days * 86_400_000).toISOString();
      const around = `?startDate=${encodeURIComponent(day(old, -1))}&endDate=${encodeURIComponent(day(old, 1))}`;
      assert.equal(await total(around), 1);
      assert.equal((await logs(around)).json().data[0].webhookLogId, Number(id));
      assert.equal(await total(`?startDate=${encodeURIComponent(day(old, -1))}&endDate=${encodeURIComponent(day(old, 30))}`), 1);
      for (const query of [`?startDate=${encodeURIComponent(day(old, -1))}`, `?startDate=${encodeURIComponent(day(old, 0))}&endDate=${encodeURIComponent(day(old, 31.001))}`]) {
        assert.match(errorMessage(await logs(query), 400, 'INTERVAL_TOO_LONG'), /at most 31 days/, query);
      }
      errorMessage(await logs(`?startDate=${encodeURIComponent(day(old, 1))}&endDate=${encodeURIComponent(day(old, 0))}`), 400, 'INVALID_INTERVAL');
      errorMessage(await logs('?startDate=yesterday'), 400);
    });

    it("another account sees none of them; 401 without a token", async () => {
      const other = await createClient(t);
      assert.deepEqual((await logs('', other)).json().metadata.total, 0);
      assertError(await t.app.inject({ method: 'GET', url: '/api/webhooks/logs' }), 401);
    });
  });

  describe('claims and leases', () => {
    /** A sender whose attempts wait until the test lets them go, and report when they start. */
    function heldSender() {
      const started: Message[] = [];
      const release: ((attempt: Attempt) => void)[] = [];
      const sender = {
        send: (message: Message) => {
          started.push(message);
          return new Promise<Attempt>((resolve) => release.push(resolve));
        },
        close: async () => undefined,
      } as unknown as WebhookSender;
      return { sender, started, release };
    }

    const until = async (condition: () => boolean) => {
      for (let i = 0; i < 400 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
      assert.ok(condition(), 'condition never held');
    };

    async function dueDeliveries(client: TestClient, path: string, count: number) {
      await register(client, path);
      await notifyDue(t, client.accountId, count);
      assert.equal((await deliveriesOf(client.accountId)).length, count);
    }

    it('a worker that died mid-attempt: after LEASE_MS another delivers it, with the same webhook-id', async () => {
      const c = await createClient(t);
      const p = `/lease/${c.accountId}`;
      await dueDeliveries(c, p, 1);
      const dead = heldSender();
      const abandoned = deliverDue({ db: t.db, clock: t.clock, sender: dead.sender });
      await until(() => dead.started.length === 1);

      assert.equal(await deliverDue(deps()), 0, 'leased to the dead worker');
      t.clock.advance(LEASE_MS - 1);
      assert.equal(await deliverDue(deps()), 0, 'still leased');
      t.clock.advance(1);
      assert.equal(await deliverDue(deps()), 1);
      const got = at(p);
      assert.equal(got.length, 1);
      assert.equal(got[0]!.headers['webhook-id'], dead.started[0]!.messageId);
      assert.deepEqual(await deliveriesOf(c.accountId), [], 'delivered by attempt 2');
      assert.deepEqual(
        (await logsOf(c.accountId)).map((l) => [l.attempt, l.success, l.message_id]),
        [[2, true, dead.started[0]!.messageId]],
      );

      // The "dead" worker wakes up late: its attempt is logged, and brings nothing back to do.
      dead.release[0]!({ success: false, statusCode: null, durationMs: 1, error: 'late', sentAt: t.clock.now() });
      await abandoned;
      assert.deepEqual(await deliveriesOf(c.accountId), []);
      assert.equal(await deliverDue(deps()), 0);
      assert.deepEqual(
        (await logsOf(c.accountId)).map((l) => [l.attempt, l.success]),
        [
          [2, true],
          [1, false],
        ],
      );
    });

    it('claims only what it can send at once, so the lease covers the wait; a second worker takes the rest', async () => {
      const c = await createClient(t);
      const p = `/slots/${c.accountId}`;
      await dueDeliveries(c, p, 3);
      const slow = heldSender();
      const first = deliverDue({ db: t.db, clock: t.clock, sender: slow.sender }, { concurrency: 1 });
      await until(() => slow.started.length === 1);
      const claimed = async () => (await deliveriesOf(c.accountId)).filter((d) => d.attempts > 0).length;
      assert.equal(await claimed(), 1);
      // Another worker meanwhile delivers the two that are not claimed.
      assert.equal(await deliverDue(deps()), 2);
      assert.equal(at(p).length, 2);
      slow.release[0]!({ success: true, statusCode: 200, durationMs: 1, error: null, sentAt: t.clock.now() });
      assert.equal(await first, 1);
      assert.deepEqual(await deliveriesOf(c.accountId), []);
      assert.deepEqual(
        (await logsOf(c.accountId)).map((l) => [l.attempt, l.success]),
        [
          [1, true],
          [1, true],
          [1, true],
        ],
      );
    });

    it(
      'two workers running at once over 30 due deliveries deliver each exactly once',
      { skip: onPostgres ? false : 'needs concurrent connections to one server: set TEST_DATABASE_URL' },
      async () => {
        const c = await createClient(t);
        const p = `/race/${c.accountId}`;
        await dueDeliveries(c, p, 30);
        rcv.respond = (r) => (r.path === p ? new Promise((resolve) => setTimeout(() => resolve(200), 5)) : 200);
        const other = new WebhookSender({ allowPrivate: true, caFile: rcv.caFile, timeoutMs: 3000 });
        try {
          const counts = await Promise.all([
            deliverDue(deps(), { concurrency: 4 }),
            deliverDue({ db: t.db, clock: t.clock, sender: other }, { concurrency: 4 }),
          ]);
          assert.equal(counts[0] + counts[1], 30);
          assert.ok(counts[0] > 0 && counts[1] > 0, `both workers took part: ${counts.join(' + ')}`);
        } finally {
          rcv.respond = () => 200;
          await other.close();
        }
        const got: ReceivedWebhook[] = at(p);
        assert.equal(got.length, 30);
        assert.equal(new Set(got.map((r) => r.headers['webhook-id'])).size, 30);
        assert.deepEqual(await deliveriesOf(c.accountId), []);
        const logs = await logsOf(c.accountId);
        assert.equal(logs.length, 30);
        assert.ok(logs.every((l) => l.attempt === 1 && l.success));
        assert.equal(new Set(logs.map((l) => l.delivery_id)).size, 30);
      },
    );
  });
});
