import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { createClient, evpKey, incomingPix, type TestClient } from '../../../test/factories.ts';
import { startTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../../../test/harness.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/webhook-receiver.ts';
import { deliverDue } from '../webhooks/delivery.ts';
import { WebhookSender } from '../webhooks/sender.ts';
import { escapeHtml } from './views/html.ts';

const form = { 'content-type': 'application/x-www-form-urlencoded' };

describe("the console's webhook deliveries and timelines", () => {
  let t: TestApp;
  let rcv: WebhookReceiver;
  let sender: WebhookSender;
  let client: TestClient;
  let cookie: string;
  let transactionId: number;
  const page = (url: string) => t.app.inject({ method: 'GET', url, headers: { cookie } });

  before(async () => {
    rcv = await startWebhookReceiver();
    t = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_CA_FILE: rcv.caFile } });
    sender = new WebhookSender({ allowPrivate: true, caFile: rcv.caFile, timeoutMs: 3000 });
    client = await createClient(t, { name: 'Loja Webhook' });
    const registered = await t.app.inject({
      method: 'POST',
      url: '/api/webhooks',
      headers: client.headers,
      payload: { url: `${rcv.origin}/hooks/in`, eventType: 'cash_in', headers: [{ key: 'X-Tenant', value: 'loja<1>' }] },
    });
    assert.equal(registered.statusCode, 201, registered.body);
    rcv.respond = (_request, index) => (index === 0 ? 503 : 200);
    transactionId = (await incomingPix(t, await evpKey(t, client.accountId), '12.34')).transactionId;
    for (let i = 0; i < 2; i++) {
      await deliverDue({ db: t.db, clock: t.clock, sender });
      t.clock.advance(10 * 60_000);
    }
    await rcv.waitFor(2);
    const signIn = await t.app.inject({ method: 'POST', url: '/console/sign-in', headers: form, payload: `token=${TEST_ADMIN_TOKEN}` });
    cookie = String(signIn.headers['set-cookie']).split(';')[0]!;
  });
  after(async () => {
    await t?.close();
    await sender?.close();
    await rcv?.close();
  });

  it('shows each attempt with its answer, the body and headers it carried, and a signature that verifies', async () => {
    const res = await page(`/console/accounts/${client.accountId}/webhooks`);
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /<td>cash_in<\/td><td><code>https:\/\/[^<]+\/hooks\/in<\/code><\/td><td><dl class="headers"><div><dt>X-Tenant<\/dt><dd><code>loja&lt;1&gt;<\/code>/);
    assert.match(res.body, /answered HTTP 503/);
    assert.match(res.body, /badge confirmed">delivered</);
    const delivered = rcv.received[1]!;
    assert.ok(res.body.includes(`<pre class="payload">${escapeHtml(delivered.body)}</pre>`), 'the body as it was sent');
    const signatures = [...res.body.matchAll(/<dt>webhook-signature<\/dt><dd><code>([^<]+)<\/code>/g)].map((m) => m[1]!);
    assert.ok(signatures.includes(delivered.headers['webhook-signature']!), 'the signature as it was sent');
    const secret = (await t.app.inject({ method: 'GET', url: '/api/webhooks/signing-secret', headers: client.headers })).json<{ secret: string }>().secret;
    // Signed over the delivery's own time (the test clock runs ahead of the real one that verify() would judge it by).
    const at = new Date(Number(delivered.headers['webhook-timestamp']) * 1000);
    assert.equal(new Webhook(secret).sign(delivered.headers['webhook-id']!, at, delivered.body), delivered.headers['webhook-signature']);
    assert.ok(!res.body.includes(secret), 'the secret itself is never shown');
  });

  it("puts the notification and its deliveries on the transaction's timeline, and resends from there", async () => {
    const overview = await page(`/console/accounts/${client.accountId}`);
    const timeline = /<details id="tx-(\d+)">[\s\S]*?<\/details>/.exec(overview.body)![0];
    assert.match(timeline, /Received from the network \(CONFIRMED\)/);
    assert.match(timeline, /Notification cash_in \(webhook-id msg_\w+\)/);
    assert.match(timeline, /Delivery attempt 1 of cash_in to https:\/\/[^:]+:\d+\/hooks\/in: answered HTTP 503/);
    assert.match(timeline, /Delivery attempt 2 of cash_in to https:\/\/[^:]+:\d+\/hooks\/in: delivered/);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(overview.body)![1]!;
    const resent = await t.app.inject({
      method: 'POST',
      url: '/console/actions/resend-webhook',
      headers: { ...form, cookie, 'x-console-request': 'fetch' },
      payload: new URLSearchParams({ _csrf: csrf, accountId: String(client.accountId), transaction: String(transactionId) }).toString(),
    });
    assert.equal(resent.statusCode, 200, resent.body);
    assert.equal(resent.body, 'Webhook resent');
    await rcv.waitFor(3);
    const after = await page(`/console/accounts/${client.accountId}/webhooks`);
    assert.match(after.body, /<td>resend<\/td>/);
  });
});
