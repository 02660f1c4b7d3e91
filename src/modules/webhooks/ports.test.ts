import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertError } from '../../../test/assertions.ts';
import { createClient, evpKey, incomingPix, type TestClient } from '../../../test/factories.ts';
import { startTestApp, type TestApp } from '../../../test/harness.ts';
import { startWebhookReceiver, webhookMessage, type WebhookReceiver } from '../../../test/webhook-receiver.ts';
import { DestinationError, guardedLookup, parseDestination, type DestinationPolicy } from './destination.ts';
import { WebhookSender } from './sender.ts';

/** Production's policy with private destinations allowed: private ones get no port exemption there. */
const PRODUCTION_PRIVATE: DestinationPolicy = { allowPrivate: true, allowedPorts: [], anyPortWhenPrivate: false };
const SANDBOX: DestinationPolicy = { allowPrivate: true, allowedPorts: [], anyPortWhenPrivate: true };

describe('destination ports', () => {
  it('443 always; another port only when listed, or for a private address in sandbox mode', () => {
    const listed: DestinationPolicy = { allowPrivate: false, allowedPorts: [8443], anyPortWhenPrivate: false };
    assert.equal(parseDestination('https://8.8.8.8:443/', PRODUCTION_PRIVATE).href, 'https://8.8.8.8/');
    assert.throws(() => parseDestination('https://8.8.8.8:8443/', PRODUCTION_PRIVATE), /^DestinationError: port not allowed: 8443 .*WEBHOOK_ALLOWED_PORTS/);
    assert.doesNotThrow(() => parseDestination('https://8.8.8.8:8443/', listed));
    assert.throws(() => parseDestination('https://8.8.8.8:9443/', listed), /WEBHOOK_ALLOWED_PORTS/);
    // Private destinations: any port in sandbox mode, the list's ports in production.
    assert.doesNotThrow(() => parseDestination('https://127.0.0.1:8080/', SANDBOX));
    assert.doesNotThrow(() => parseDestination('https://[::1]:22/', SANDBOX));
    assert.throws(() => parseDestination('https://127.0.0.1:8080/', PRODUCTION_PRIVATE), /port not allowed/);
    // The exemption is for private addresses only: a public one on port 22 is still refused.
    assert.throws(() => parseDestination('https://8.8.8.8:22/', SANDBOX), /port not allowed/);
  });

  it('a name on a port outside the list must resolve to private addresses only, and only in sandbox mode', async () => {
    const lookup = (policy: DestinationPolicy, port: number) =>
      new Promise<NodeJS.ErrnoException | null>((done) => guardedLookup(policy, port)('localhost', { all: true }, (error) => done(error)));
    assert.equal(await lookup(SANDBOX, 8080), null);
    const refused = await lookup(PRODUCTION_PRIVATE, 8080);
    assert.ok(refused instanceof DestinationError);
    assert.equal(refused.failure, 'port not allowed');
    assert.equal(await lookup(PRODUCTION_PRIVATE, 443), null);
  });
});

describe('destination rules at registration, resend and delivery', () => {
  let rcv: WebhookReceiver;
  let port: number;
  const apps: TestApp[] = [];

  before(async () => {
    rcv = await startWebhookReceiver();
    port = Number(new URL(rcv.origin).port);
  });
  after(async () => {
    for (const t of apps) await t.close();
    await rcv?.close();
  });

  async function app(env: Record<string, string>) {
    const t = await startTestApp({ env: { WEBHOOK_CA_FILE: rcv.caFile, ...env } });
    apps.push(t);
    return { t, client: await createClient(t) };
  }

  const register = (t: TestApp, client: TestClient, url: string) =>
    t.app.inject({ method: 'POST', url: '/api/webhooks', headers: client.headers, payload: { url, eventType: 'cash_in' } });

  it('sandbox mode by default: loopback destinations on any port; a public one only on 443', async () => {
    const { t, client } = await app({});
    assert.equal(t.config.webhookAllowPrivate, true);
    for (const url of [`${rcv.origin}/a`, `https://127.0.0.1:${port}/b`, 'https://8.8.8.8/c']) {
      const res = await register(t, client, url);
      assert.equal(res.statusCode, 201, `${url}: ${res.body}`);
    }
    assertError(await register(t, client, 'https://8.8.8.8:8443/d'), 400, /port not allowed: 8443 .*WEBHOOK_ALLOWED_PORTS/, 'INVALID_WEBHOOK_URL');
  });

  it('WEBHOOK_ALLOWED_PORTS opens a port for public destinations', async () => {
    const { t, client } = await app({ WEBHOOK_ALLOWED_PORTS: '8443' });
    assert.equal((await register(t, client, 'https://8.8.8.8:8443/d')).statusCode, 201);
    assertError(await register(t, client, 'https://8.8.8.8:9443/d'), 400, /WEBHOOK_ALLOWED_PORTS/);
  });

  it('production mode: private destinations refused naming WEBHOOK_ALLOW_PRIVATE; allowed, they still need an allowed port', async () => {
    const production = { PIX_MODE: 'production', DATABASE_URL: 'postgres://unused.invalid/pix' };
    const strict = await app(production);
    assert.equal(strict.t.config.webhookAllowPrivate, false);
    assertError(await register(strict.t, strict.client, `https://127.0.0.1:${port}/x`), 400, /non-public address.*WEBHOOK_ALLOW_PRIVATE/, 'INVALID_WEBHOOK_URL');
    assertError(await register(strict.t, strict.client, `${rcv.origin}/x`), 400, /non-public address.*WEBHOOK_ALLOW_PRIVATE/, 'INVALID_WEBHOOK_URL');
    const allowed = await app({ ...production, WEBHOOK_ALLOW_PRIVATE: 'true' });
    assertError(await register(allowed.t, allowed.client, `${rcv.origin}/x`), 400, /port not allowed.*WEBHOOK_ALLOWED_PORTS/, 'INVALID_WEBHOOK_URL');
    assert.equal((await register(allowed.t, allowed.client, 'https://localhost/x')).statusCode, 201);
    const listed = await app({ ...production, WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_ALLOWED_PORTS: String(port) });
    assert.equal((await register(listed.t, listed.client, `${rcv.origin}/x`)).statusCode, 201);
  });

  it('a resend to a port not allowed is refused before anything is sent, naming the setting', async () => {
    const { t, client } = await app({});
    const pix = await incomingPix(t, await evpKey(t, client.accountId), '1.00');
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/resend-webhook/${pix.transactionId}`,
      headers: client.headers,
      payload: { url: 'https://8.8.8.8:22/' },
    });
    assertError(res, 400, /port not allowed: 22 .*WEBHOOK_ALLOWED_PORTS/, 'INVALID_WEBHOOK_URL');
  });

  it('at delivery time too: a private receiver on its own port is reached in sandbox mode, refused by the production rules', async () => {
    rcv.received.length = 0;
    const refusing = new WebhookSender({ policy: PRODUCTION_PRIVATE, caFile: rcv.caFile, timeoutMs: 2000 });
    const sandbox = new WebhookSender({ policy: SANDBOX, caFile: rcv.caFile, timeoutMs: 2000 });
    try {
      for (const url of [`${rcv.origin}/by-name`, `https://127.0.0.1:${port}/by-ip`]) {
        const refused = await refusing.send(webhookMessage(url), () => new Date());
        assert.deepEqual([refused.success, refused.statusCode, refused.failure], [false, null, 'port not allowed'], url);
        assert.match(refused.error ?? '', /^port not allowed.*WEBHOOK_ALLOWED_PORTS/);
      }
      assert.equal(rcv.received.length, 0, 'nothing was sent');
      const sent = await sandbox.send(webhookMessage(`${rcv.origin}/by-name`), () => new Date());
      assert.equal(sent.success, true, sent.error ?? '');
    } finally {
      await refusing.close();
      await sandbox.close();
    }
  });
});
