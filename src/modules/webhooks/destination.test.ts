import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { after, before, describe, it } from 'node:test';
import { assertError } from '../../../test/assertions.ts';
import { createClient, evpKey, incomingPix, type TestClient } from '../../../test/factories.ts';
import { startTestApp, type TestApp } from '../../../test/harness.ts';
import { startWebhookReceiver, webhookMessage, type WebhookReceiver } from '../../../test/webhook-receiver.ts';
import { DestinationError, guardedLookup, isPublicAddress, parseDestination, SANDBOX_POLICY, STRICT_POLICY } from './destination.ts';
import { WebhookSender } from './sender.ts';

/** Private, loopback, link-local, CGNAT and unique-local destinations, in the spellings that hide them. */
const PRIVATE_URLS = [
  'https://127.0.0.1/',
  'https://[::1]/',
  'https://169.254.169.254/latest/meta-data/',
  'https://10.0.0.1/',
  'https://172.16.0.1/',
  'https://192.168.1.1/',
  'https://2130706433/',
  'https://0x7f.1/',
  'https://127.1/',
  'https://0177.0.0.1/',
  'https://[::ffff:127.0.0.1]/',
  'https://[::127.0.0.1]/',
  'https://[fd00::1]/',
  'https://[fe80::1]/',
  'https://100.64.0.1/',
  'https://0.0.0.0/',
  'https://localhost/',
];

describe('isPublicAddress', () => {
  it('true for public unicast IPv4 and IPv6 addresses', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '200.160.2.3', '2001:4860:4860::8888', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      assert.equal(isPublicAddress(address), true, address);
    }
  });

  it('false for private, loopback, link-local, CGNAT, unique-local, multicast, reserved and embedded-IPv4 addresses', () => {
    const refused = [
      '127.0.0.1', '127.255.255.254', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1',
      '0.0.0.0', '255.255.255.255', '224.0.0.1', '192.0.2.1', '198.18.0.1', '240.0.0.1',
      '::1', '::', 'fe80::1', 'fe80::1%eth0', 'fd00::1', 'fc00::1', 'ff02::1', '2001:db8::1',
      '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::7f00:1', '64:ff9b::7f00:1', '2002:7f00:1::1',
    ];
    for (const address of refused) assert.equal(isPublicAddress(address), false, address);
  });

  it('false for what is not an address', () => {
    for (const value of ['', 'localhost', 'example.com', '[::1]x', '1.2.3.4.5']) assert.equal(isPublicAddress(value), false, value);
  });
});

describe('parseDestination', () => {
  it('accepts an HTTPS URL on a public address or a name, normalised', () => {
    assert.equal(parseDestination('https://8.8.8.8/hook', STRICT_POLICY).href, 'https://8.8.8.8/hook');
    assert.equal(parseDestination('https://Hooks.Example.COM/a?b=1', STRICT_POLICY).href, 'https://hooks.example.com/a?b=1');
  });

  it('refuses other schemes, credentials, and over-long URLs', () => {
    for (const raw of ['http://8.8.8.8/', 'ftp://8.8.8.8/', 'not a url', 'https://user:pass@8.8.8.8/', `https://8.8.8.8/${'a'.repeat(2048)}`]) {
      assert.throws(() => parseDestination(raw, STRICT_POLICY), DestinationError, raw);
    }
  });

  it('refuses every private IP literal (names are judged by guardedLookup), unless private destinations are allowed', () => {
    for (const raw of PRIVATE_URLS.filter((u) => !u.includes('localhost'))) {
      assert.throws(() => parseDestination(raw, STRICT_POLICY), /non-public address.*WEBHOOK_ALLOW_PRIVATE/, raw);
      assert.doesNotThrow(() => parseDestination(raw, SANDBOX_POLICY), raw);
    }
  });
});

describe('guardedLookup', () => {
  const resolve = (allowPrivate: boolean, host: string, all: boolean) =>
    new Promise<{ error: NodeJS.ErrnoException | null; address: unknown }>((done) =>
      guardedLookup(allowPrivate ? SANDBOX_POLICY : STRICT_POLICY)(host, { all }, (error, address) => done({ error, address })),
    );

  it('refuses a name that resolves to loopback', async () => {
    for (const all of [true, false]) {
      const { error } = await resolve(false, 'localhost', all);
      assert.ok(error instanceof DestinationError);
      assert.equal((error as DestinationError).failure, 'non-public address');
      assert.match(error.message, /^non-public address: .*WEBHOOK_ALLOW_PRIVATE/);
      assert.doesNotMatch(error.message, /127\.0\.0\.1/, 'the resolved address is not told');
    }
  });

  it('resolves it when private destinations are allowed, in both callback forms', async () => {
    assert.deepEqual(await resolve(true, 'localhost', false), { error: null, address: '127.0.0.1' });
    const { error, address } = await resolve(true, 'localhost', true);
    assert.equal(error, null);
    assert.ok(Array.isArray(address) && address.some((a: { address: string }) => a.address === '127.0.0.1'));
  });
});

describe('SSRF guard', () => {
  let t: TestApp;
  let client: TestClient;
  let rcv: WebhookReceiver;
  let port: string;

  before(async () => {
    rcv = await startWebhookReceiver();
    port = new URL(rcv.origin).port;
    t = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'false' } });
    client = await createClient(t);
  });
  after(async () => {
    await t?.close();
    await rcv?.close();
  });

  it('400 at registration for every private destination (WEBHOOK_ALLOW_PRIVATE off)', async () => {
    assert.equal(t.config.webhookAllowPrivate, false);
    for (const url of [...PRIVATE_URLS, `${rcv.origin}/hook`, `https://127.0.0.1:${port}/hook`]) {
      const res = await t.app.inject({ method: 'POST', url: '/api/webhooks', headers: client.headers, payload: { url, eventType: 'cash_in' } });
      assertError(res, 400, /non-public address.*WEBHOOK_ALLOW_PRIVATE/, 'INVALID_WEBHOOK_URL');
    }
    const list = await t.app.inject({ method: 'GET', url: '/api/webhooks', headers: client.headers });
    assert.equal(list.json().total, 0);
  });

  it('400 for a name that does not resolve', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/webhooks',
      headers: client.headers,
      payload: { url: 'https://no-such-host.invalid/hook', eventType: 'cash_in' },
    });
    assertError(res, 400, /DNS failure/, 'INVALID_WEBHOOK_URL');
  });

  it('400 when a resend names a private url in its body', async () => {
    const pix = await incomingPix(t, await evpKey(t, client.accountId), '1.00');
    for (const url of ['https://169.254.169.254/', 'https://[::1]/', `https://localhost:${port}/`]) {
      const res = await t.app.inject({ method: 'POST', url: `/api/resend-webhook/${pix.transactionId}`, headers: client.headers, payload: { url } });
      assertError(res, 400, /non-public address/);
    }
  });

  describe('WebhookSender with allowPrivate false', () => {
    let sender: WebhookSender;
    before(() => {
      sender = new WebhookSender({ allowPrivate: false, caFile: rcv.caFile, timeoutMs: 2000 });
    });
    after(() => sender?.close());

    it('does not connect to the local receiver by name (localhost) or by IP literal', async () => {
      rcv.received.length = 0;
      const byName = await sender.send(webhookMessage(`${rcv.origin}/hook`), () => new Date());
      assert.equal(byName.success, false);
      assert.equal(byName.statusCode, null);
      assert.match(byName.error ?? '', /^non-public address.*WEBHOOK_ALLOW_PRIVATE/);
      assert.equal(byName.failure, 'non-public address');

      for (const host of ['127.0.0.1', '[::ffff:127.0.0.1]', '2130706433']) {
        const byIp = await sender.send(webhookMessage(`https://${host}:${port}/hook`), () => new Date());
        assert.equal(byIp.success, false);
        assert.equal(byIp.statusCode, null);
        assert.match(byIp.error ?? '', /^non-public address.*WEBHOOK_ALLOW_PRIVATE/);
      }
      assert.equal(rcv.received.length, 0);
    });

    it('the same sender allowed private destinations reaches it (the refusal is the guard, not TLS)', async () => {
      rcv.received.length = 0;
      const allowed = new WebhookSender({ allowPrivate: true, caFile: rcv.caFile, timeoutMs: 2000 });
      try {
        const attempt = await allowed.send(webhookMessage(`${rcv.origin}/hook`), () => new Date());
        assert.equal(attempt.success, true, attempt.error ?? '');
        assert.equal(rcv.received.length, 1);
      } finally {
        await allowed.close();
      }
    });
  });

  it("a receiver's answer body: a long one never fails a 2xx, an error's is never kept (only its status), and the signature verifies", async () => {
    rcv.received.length = 0;
    const long = 'x'.repeat(64 * 1024);
    rcv.respond = (request) =>
      request.path === '/long-ok' ? { status: 200, body: long } : request.path === '/long-error' ? { status: 500, body: `boom ${long}` } : 200;
    const sender = new WebhookSender({ allowPrivate: true, caFile: rcv.caFile, timeoutMs: 2000 });
    try {
      const sent = webhookMessage(`${rcv.origin}/long-ok`);
      const ok = await sender.send(sent, () => new Date());
      assert.deepEqual([ok.success, ok.statusCode, ok.error], [true, 200, null]);
      const failed = await sender.send(webhookMessage(`${rcv.origin}/long-error`), () => new Date());
      assert.deepEqual([failed.success, failed.statusCode], [false, 500]);
      assert.equal(failed.error, 'HTTP 500');
      // The sender goes on delivering after both.
      assert.equal((await sender.send(webhookMessage(`${rcv.origin}/after`), () => new Date())).success, true);
      const [received] = rcv.received;
      assert.deepEqual(new Webhook(sent.secrets[0]!).verify(received!.body, received!.headers), JSON.parse(sent.body));
    } finally {
      rcv.respond = () => 200;
      await sender.close();
    }
  });

  it('a redirect is not followed: 302 to a private address is a failed attempt with status 302', async () => {
    rcv.received.length = 0;
    rcv.respond = (request) => (request.path === '/redirect' ? { status: 302, headers: { location: `https://localhost:${port}/internal` } } : 200);
    const sender = new WebhookSender({ allowPrivate: true, caFile: rcv.caFile, timeoutMs: 2000 });
    try {
      const attempt = await sender.send(webhookMessage(`${rcv.origin}/redirect`), () => new Date());
      assert.equal(attempt.success, false);
      assert.equal(attempt.statusCode, 302);
      assert.equal(attempt.error, 'HTTP 302');
      assert.deepEqual(
        rcv.received.map((r) => r.path),
        ['/redirect'],
      );
    } finally {
      rcv.respond = () => 200;
      await sender.close();
    }
  });
});
