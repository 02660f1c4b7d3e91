import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { Webhook } from 'standardwebhooks';
import { buildApp } from '../../app.ts';
import { MemoryRateLimiter, RedisRateLimiter } from '../../http/rate-limit.ts';
import { assertError } from '../../../test/assertions.ts';
import { createClient, creditAccount, evpKey, incomingPix, randomCpf, type TestClient } from '../../../test/factories.ts';
import { adminHeaders, startTestApp, testConfig, type TestApp } from '../../../test/harness.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/webhook-receiver.ts';
import { redisAnswers, TEST_REDIS_URL } from '../../../test/redis.ts';
import type { ResendAnswer } from '../../../scripts/lib/api-types.ts';


const redisUp = await redisAnswers();

type ResendBody = ResendAnswer;

describe('POST /api/resend-webhook/{transactionIdentifier}', () => {
  let t: TestApp;
  let rcv: WebhookReceiver;
  let c: TestClient & { pixKey: string };
  let other: TestClient;
  /** c's received PIX and settled transfer. */
  let pix: { transactionId: number; endToEndId: string };
  let transfer: { id: number; endToEndId: string; externalId: string };

  const at = (prefix: string) => rcv.received.filter((r) => r.path.startsWith(prefix));
  const resend = (client: TestClient, identifier: string | number, payload?: object, app: FastifyInstance = t.app) =>
    app.inject({
      method: 'POST',
      url: `/api/resend-webhook/${encodeURIComponent(String(identifier))}`,
      headers: client.headers,
      ...(payload === undefined ? {} : { payload }),
    });
  const register = async (client: TestClient, path: string, eventType: string, headers: { key: string; value: string }[] = []) => {
    const res = await t.app.inject({ method: 'POST', url: '/api/webhooks', headers: client.headers, payload: { url: `${rcv.origin}${path}`, eventType, headers } });
    assert.equal(res.statusCode, 201, res.body);
  };
  const webhooksOf = async (client: TestClient) => (await t.app.inject({ method: 'GET', url: '/api/webhooks', headers: client.headers })).json();
  const outboxOf = (transactionId: number) =>
    t.db.selectFrom('outbox').selectAll().where('transaction_id', '=', BigInt(transactionId)).orderBy('id', 'desc').executeTakeFirstOrThrow();

  const withKey = async (client: TestClient) => ({ ...client, pixKey: await evpKey(t, client.accountId) });
  const cashIn = (pixKey: string) => incomingPix(t, pixKey, '7.50', { name: 'Pagador Externo' });

  async function sendTransfer(client: TestClient, externalId: string) {
    const dest = await t.app.inject({
      method: 'POST',
      url: '/sandbox/dict/keys',
      headers: adminHeaders,
      payload: { key: randomUUID(), name: 'Joana Destino', document: randomCpf(), ispb: '87654321', bankName: 'Outro Banco' },
    });
    assert.equal(dest.statusCode, 201, dest.body);
    const res = await t.app.inject({
      method: 'POST',
      url: '/dict/pix',
      headers: { ...client.headers, 'x-idempotency-key': randomUUID() },
      payload: { pixKey: dest.json().key, payment: { currency: 'BRL', amount: 2.5 }, externalId },
    });
    assert.equal(res.statusCode, 201, res.body);
    return { ...res.json<{ id: number; endToEndId: string }>(), externalId };
  }

  before(async () => {
    rcv = await startWebhookReceiver();
    t = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_CA_FILE: rcv.caFile } });
    c = await withKey(await createClient(t));
    other = await createClient(t);
    await creditAccount(t.db, c.accountId, 100_00n);
    await register(c, `/r/${c.accountId}/in-1`, 'cash_in', [{ key: 'X-Tenant', value: 'one' }]);
    await register(c, `/r/${c.accountId}/in-2`, 'cash_in');
    await register(c, `/r/${c.accountId}/out`, 'cash_out');
    pix = await cashIn(c.pixKey);
    transfer = await sendTransfer(c, `pedido-${randomUUID()}`);
    const settled = await t.app.inject({ method: 'POST', url: '/sandbox/settle', headers: adminHeaders });
    assert.equal(settled.statusCode, 200, settled.body);
  });
  after(async () => {
    await t?.close();
    await rcv?.close();
  });

  it('200 by numeric id: to every active URL of the event type, signed, with the notification\'s webhook-id', async () => {
    const before = rcv.received.length;
    const res = await resend(c, pix.transactionId);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json<ResendBody>();
    assert.deepEqual(Object.keys(body).sort(), ['deliveries', 'message', 'sentAt', 'statusCode', 'webhookId', 'webhookLogId']);
    const outbox = await outboxOf(pix.transactionId);
    assert.equal(body.webhookId, outbox.message_id);
    assert.equal(body.statusCode, 200);
    assert.equal(body.sentAt, t.clock.now().toISOString());
    assert.equal(typeof body.message, 'string');
    assert.deepEqual(
      body.deliveries.map((d) => [d.url.replace(rcv.origin, ''), d.statusCode, d.success, d.error]),
      [
        [`/r/${c.accountId}/in-1`, 200, true, null],
        [`/r/${c.accountId}/in-2`, 200, true, null],
      ],
    );
    assert.equal(body.webhookLogId, body.deliveries[0]!.webhookLogId);

    const got = rcv.received.slice(before);
    assert.equal(got.length, 2);
    const secret = (await t.app.inject({ method: 'GET', url: '/api/webhooks/signing-secret', headers: c.headers })).json().secret as string;
    for (const r of got) {
      assert.equal(r.headers['webhook-id'], outbox.message_id);
      assert.deepEqual(new Webhook(secret).verify(r.body, r.headers), outbox.payload);
      assert.equal(JSON.parse(r.body).type, 'RECEIVE');
    }
    assert.equal(got.find((r) => r.path.endsWith('/in-1'))!.headers['x-tenant'], 'one');

    // One log entry per delivery, marked as a resend.
    const logs = (await t.app.inject({ method: 'GET', url: `/api/webhooks/logs?transactionId=${pix.transactionId}`, headers: c.headers })).json().data;
    for (const d of body.deliveries) {
      const entry = logs.find((l: { webhookLogId: number }) => l.webhookLogId === d.webhookLogId);
      assert.deepEqual(
        [entry.isResend, entry.success, entry.statusCode, entry.webhookId, entry.transactionId, entry.eventType, entry.url],
        [true, true, 200, outbox.message_id, pix.transactionId, 'cash_in', d.url],
      );
    }
  });

  it('200 by endToEndId', async () => {
    const res = await resend(c, pix.endToEndId);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json<ResendBody>().webhookId, (await outboxOf(pix.transactionId)).message_id);
    assert.equal(res.json<ResendBody>().deliveries.length, 2);
  });

  it("200 by a transfer's externalId (and its endToEndId): the cash_out TRANSFER notification", async () => {
    const before = at(`/r/${c.accountId}/out`).length;
    for (const identifier of [transfer.externalId, transfer.endToEndId, transfer.id]) {
      const res = await resend(c, identifier);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json<ResendBody>();
      assert.deepEqual(
        body.deliveries.map((d) => d.url),
        [`${rcv.origin}/r/${c.accountId}/out`],
      );
      assert.equal(body.webhookId, (await outboxOf(transfer.id)).message_id);
    }
    const got = at(`/r/${c.accountId}/out`).slice(before);
    assert.equal(got.length, 3);
    const payload = JSON.parse(got[0]!.body);
    assert.equal(payload.type, 'TRANSFER');
    assert.deepEqual([payload.data.id, payload.data.endToEndId, payload.data.status], [transfer.id, transfer.endToEndId, 'LIQUIDATED']);
  });

  it('the body url is used once and not stored; registered URLs are not called', async () => {
    const registered = await webhooksOf(c);
    const before = at(`/r/${c.accountId}/`).length;
    const res = await resend(c, pix.transactionId, { url: `${rcv.origin}/once/${c.accountId}` });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(
      res.json<ResendBody>().deliveries.map((d) => d.url),
      [`${rcv.origin}/once/${c.accountId}`],
    );
    const [got] = at(`/once/${c.accountId}`);
    assert.ok(got);
    assert.equal(got.headers['x-tenant'], undefined);
    assert.equal(at(`/r/${c.accountId}/`).length, before);
    assert.deepEqual(await webhooksOf(c), registered);
    assertError(await resend(c, pix.transactionId, { url: `http://localhost/once` }), 400, /HTTPS/);
    assertError(await resend(c, pix.transactionId, { url: `${rcv.origin}/x`, extra: true }), 400);
  });

  it('a failed delivery is reported (statusCode of the destination) and logged as a failed resend', async () => {
    rcv.respond = (r) => (r.path.startsWith('/fail') ? 503 : 200);
    try {
      const res = await resend(c, pix.transactionId, { url: `${rcv.origin}/fail/${c.accountId}` });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json<ResendBody>();
      assert.deepEqual([body.statusCode, body.deliveries[0]!.success], [503, false]);
      assert.match(body.message, /fail/i);
      const logs = (await t.app.inject({ method: 'GET', url: '/api/webhooks/logs?success=false', headers: c.headers })).json().data;
      assert.ok(logs.some((l: { webhookLogId: number; isResend: boolean }) => l.webhookLogId === body.webhookLogId && l.isResend));
    } finally {
      rcv.respond = () => 200;
    }
  });

  it('a failure is reported as a status or a class of failure, never the destination\'s body or error text; the log says the same', async () => {
    const secretBody = 'stack trace: db password hunter2';
    rcv.respond = (r) => (r.path.startsWith('/leaky') ? { status: 500, body: secretBody } : 200);
    // A port where nothing listens, a plain-HTTP service, a receiver whose CA is not trusted, a name that does not resolve.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const plain = createHttpServer((_req, res) => res.end('plain http here'));
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    const untrusted = await startWebhookReceiver();
    try {
      const cases: [string, number, RegExp][] = [
        [`${rcv.origin}/leaky/${c.accountId}`, 500, /^HTTP 500$/],
        // At a private address a refused connection and a TLS failure (a plain-HTTP service, an
        // untrusted CA) are one class: nothing to tell a listening service from none.
        [`https://127.0.0.1:${closedPort}/`, 0, /^unreachable: .*WEBHOOK_CA_FILE/],
        [`https://127.0.0.1:${(plain.address() as AddressInfo).port}/`, 0, /^unreachable: .*WEBHOOK_CA_FILE/],
        [`${untrusted.origin}/`, 0, /^unreachable: .*WEBHOOK_CA_FILE/],
        ['https://no-such-host.invalid/', 0, /^DNS failure/],
      ];
      for (const [url, status, error] of cases) {
        const res = await resend(c, pix.transactionId, { url });
        assert.equal(res.statusCode, 200, res.body);
        const body = res.json<ResendBody>();
        assert.deepEqual([body.statusCode, body.deliveries[0]!.success], [status, false], url);
        assert.match(body.deliveries[0]!.error ?? '', error, url);
        assert.match(body.message, /^Webhook resend failed: /);
        assert.doesNotMatch(res.body, /hunter2|plain http|ECONN|wrong version|self.signed|certificate chain/i, url);
        const [log] = (await t.app.inject({ method: 'GET', url: `/api/webhooks/logs?size=1`, headers: c.headers })).json().data;
        assert.deepEqual([log.webhookLogId, log.statusCode, log.error], [body.webhookLogId, status === 0 ? null : status, body.deliveries[0]!.error]);
      }
      assert.equal(untrusted.received.length, 0);
      const stored = await t.db.selectFrom('webhook_logs').select('error').where('account_id', '=', BigInt(c.accountId)).execute();
      assert.ok(stored.every((l) => !/hunter2|plain http/.test(l.error ?? '')), 'no body is kept');
    } finally {
      rcv.respond = () => 200;
      await new Promise<void>((resolve) => plain.close(() => resolve()));
      await untrusted.close();
    }
  });

  it('400 when there is no url in the body and none registered for the event type', async () => {
    const lonely = await withKey(await createClient(t));
    const received = await cashIn(lonely.pixKey);
    assertError(await resend(lonely, received.transactionId), 400, /No active webhook URL/);
    await register(lonely, `/off/${lonely.accountId}`, 'cash_in');
    const [w] = (await webhooksOf(lonely)).webhooks;
    await t.app.inject({ method: 'PATCH', url: `/api/webhooks/${w.id}`, headers: lonely.headers, payload: { isActive: false } });
    assertError(await resend(lonely, received.transactionId), 400, /No active webhook URL/);
    assert.equal(at(`/off/${lonely.accountId}`).length, 0);
  });

  it('400 for a transfer not settled yet (no notification to resend)', async () => {
    const pending = await sendTransfer(c, `pendente-${randomUUID()}`);
    assertError(await resend(c, pending.externalId), 400);
  });

  it("404 for an unknown identifier and for another account's transaction", async () => {
    for (const identifier of ['999999999', `E00000000202601011200${'A'.repeat(11)}`, 'no-such-external-id']) {
      assertError(await resend(c, identifier), 404);
    }
    for (const identifier of [pix.transactionId, pix.endToEndId, transfer.externalId]) {
      assertError(await resend(other, identifier), 404);
      assertError(await resend(other, identifier, { url: `${rcv.origin}/stolen` }), 404);
    }
    assert.equal(at('/stolen').length, 0);
  });

  it('401 without a token', async () => {
    assertError(await t.app.inject({ method: 'POST', url: `/api/resend-webhook/${pix.transactionId}` }), 401);
  });

  it('the 61st resend within a minute is 429 with Retry-After; a minute later it is allowed again', async () => {
    const limited = await withKey(await createClient(t));
    const received = await cashIn(limited.pixKey);
    const url = `${rcv.origin}/limit/${limited.accountId}`;
    for (let i = 1; i <= 60; i++) {
      const res = await resend(limited, received.transactionId, { url });
      assert.equal(res.statusCode, 200, `resend ${i}: ${res.body}`);
    }
    const refused = await resend(limited, received.transactionId, { url });
    assertError(refused, 429, /60 resends per minute/);
    assert.equal(refused.headers['retry-after'], '60');
    // The limit is per account.
    assert.equal((await resend(c, pix.transactionId)).statusCode, 200);

    t.clock.advance(30_000);
    const stillRefused = await resend(limited, received.transactionId, { url });
    assertError(stillRefused, 429);
    assert.equal(stillRefused.headers['retry-after'], '30');
    t.clock.advance(30_000);
    assert.equal((await resend(limited, received.transactionId, { url })).statusCode, 200);
    assert.equal(at(`/limit/${limited.accountId}`).length, 61);
  });
});

describe('resend rate limiters', () => {
  it('MemoryRateLimiter: a sliding window per key, with the seconds to wait', async () => {
    const limiter = new MemoryRateLimiter(3, 60_000);
    const t0 = 1_000_000;
    for (const at of [t0, t0 + 10_000, t0 + 20_000]) assert.deepEqual(await limiter.hit('a', at), { allowed: true, retryAfterSeconds: 0 });
    assert.deepEqual(await limiter.hit('a', t0 + 30_000), { allowed: false, retryAfterSeconds: 30 });
    assert.deepEqual(await limiter.hit('b', t0 + 30_000), { allowed: true, retryAfterSeconds: 0 });
    assert.deepEqual(await limiter.hit('a', t0 + 59_999), { allowed: false, retryAfterSeconds: 1 });
    // The first hit leaves the window: one more is allowed, then the second must leave too.
    assert.deepEqual(await limiter.hit('a', t0 + 60_000), { allowed: true, retryAfterSeconds: 0 });
    assert.deepEqual(await limiter.hit('a', t0 + 60_001), { allowed: false, retryAfterSeconds: 10 });
  });

  it('RedisRateLimiter counts in this process when Redis cannot be reached', async () => {
    const errors: unknown[] = [];
    const limiter = new RedisRateLimiter('redis://127.0.0.1:1', { limit: 3, windowMs: 60_000, prefix: `test:${randomUUID()}:`, onError: (e) => errors.push(e) });
    try {
      const started = performance.now();
      const decisions = [];
      for (let i = 0; i < 4; i++) decisions.push(await limiter.hit('acct', 1_000_000));
      assert.deepEqual(
        decisions.map((d) => d.allowed),
        [true, true, true, false],
      );
      assert.equal(decisions[3]!.retryAfterSeconds, 60);
      assert.equal(errors.length, 4);
      assert.ok(performance.now() - started < 1_000, 'no waiting for Redis');
    } finally {
      await limiter.close();
    }
  });

  describe('with Redis', { skip: redisUp ? false : `no Redis answers at ${TEST_REDIS_URL}` }, () => {
    it('RedisRateLimiter: a sliding window shared by every limiter on one Redis', async () => {
      const prefix = `test:${randomUUID()}:`;
      const options = { limit: 3, windowMs: 60_000, prefix, onError: (e: unknown) => assert.fail(String(e)) };
      const [one, two] = [new RedisRateLimiter(TEST_REDIS_URL, options), new RedisRateLimiter(TEST_REDIS_URL, options)];
      try {
        const t0 = Date.now();
        assert.equal((await one.hit('k', t0)).allowed, true);
        assert.equal((await two.hit('k', t0 + 10_000)).allowed, true);
        assert.equal((await one.hit('k', t0 + 20_000)).allowed, true);
        assert.deepEqual(await two.hit('k', t0 + 30_000), { allowed: false, retryAfterSeconds: 30 });
        assert.equal((await two.hit('other', t0 + 30_000)).allowed, true);
        assert.equal((await one.hit('k', t0 + 60_000)).allowed, true);
        assert.deepEqual(await one.hit('k', t0 + 60_001), { allowed: false, retryAfterSeconds: 10 });
      } finally {
        await one.close();
        await two.close();
      }
    });

    describe('two app instances with REDIS_URL', () => {
      let t: TestApp;
      let second: FastifyInstance;
      let rcv: WebhookReceiver;
      let redis: Redis;
      let client: TestClient & { transactionId: number };
      const key = () => `pix-api:resend:${client.accountId}`;

      before(async () => {
        rcv = await startWebhookReceiver();
        const env = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_CA_FILE: rcv.caFile, REDIS_URL: TEST_REDIS_URL };
        t = await startTestApp({ env });
        second = await buildApp({ config: testConfig(env), db: t.db, clock: t.clock, logLevel: false });
        const created = await createClient(t);
        const pix = await incomingPix(t, await evpKey(t, created.accountId), '1.00');
        client = { ...created, transactionId: pix.transactionId };
        // Account ids start at 1 in every fresh test database: forget what an earlier run counted.
        redis = new Redis(TEST_REDIS_URL);
        await redis.del(key());
      });
      after(async () => {
        await redis?.del(key());
        redis?.disconnect();
        await second?.close();
        await t?.close();
        await rcv?.close();
      });

      it('share the limit: 30 resends on each, then the 61st is 429 on either', async () => {
        const url = `${rcv.origin}/shared/${client.accountId}`;
        const send = (app: FastifyInstance) =>
          app.inject({ method: 'POST', url: `/api/resend-webhook/${client.transactionId}`, headers: client.headers, payload: { url } });
        for (let i = 0; i < 30; i++) {
          for (const app of [t.app, second]) {
            const res = await send(app);
            assert.equal(res.statusCode, 200, res.body);
          }
        }
        for (const app of [t.app, second]) {
          const refused = await send(app);
          assertError(refused, 429);
          assert.equal(refused.headers['retry-after'], '60');
        }
        assert.equal(await redis.zcard(key()), 60);
        t.clock.advance(60_000);
        assert.equal((await send(second)).statusCode, 200);
      });
    });
  });
});
