import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { createClient, evpKey, incomingPix, operator, randomCpf, type TestClient } from '../../../test/factories.ts';
import { startTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../../../test/harness.ts';
import { mutualTlsReceiver } from '../../../test/support/mutual-tls-receiver.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/webhook-receiver.ts';
import { issueCertificate } from '../../lib/certificate-authority.ts';
import { webhookClientCertificate } from '../webhooks/client-certificate.ts';
import { deliverDue } from '../webhooks/delivery.ts';
import { WebhookSender } from '../webhooks/sender.ts';
import { readMarker } from './changes.ts';
import { CHANGE_SOURCES } from './panels.ts';
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
    assert.ok(res.body.includes(`<pre class="payload">${escapeHtml(JSON.stringify(JSON.parse(delivered.body), null, 2))}</pre>`), 'the body as it was sent, indented for reading');
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

describe("the console's webhooks per key (BCB's PUT /v2/webhook/{chave}) and their callbacks", () => {
  let t: TestApp;
  let receiver: Awaited<ReturnType<typeof mutualTlsReceiver>>;
  let sender: WebhookSender;
  let client: TestClient;
  let key: string;
  let cookie: string;
  const dir = mkdtempSync(join(tmpdir(), 'console-callback-'));
  const page = () => t.app.inject({ method: 'GET', url: `/console/accounts/${client.accountId}/webhooks`, headers: { cookie } });
  const v2 = (method: 'PUT' | 'DELETE', url: string, payload?: object) =>
    t.app.inject({ method, url: `/v2${url}`, headers: client.headers, ...(payload ? { payload } : {}) });
  const marker = () => readMarker(t.db, CHANGE_SOURCES);
  /** The registrations section: the part of the page a change of a webhook per key redraws. */
  const registrations = (body: string) => /<section data-live id="webhook-registrations"[\s\S]*?<\/section>/.exec(body)![0];
  const keyRow = (body: string) => new RegExp(`<tr><th scope="row"><code>${key}</code></th>[\\s\\S]*?</tr>`).exec(registrations(body))?.[0];

  before(async () => {
    const certificate = await issueCertificate({ commonName: 'pix-api callbacks' });
    writeFileSync(join(dir, 'client.crt'), certificate.certPem);
    writeFileSync(join(dir, 'client.key'), certificate.keyPem);
    t = await startTestApp({ env: { WEBHOOK_CLIENT_CERT_FILE: join(dir, 'client.crt'), WEBHOOK_CLIENT_KEY_FILE: join(dir, 'client.key') } });
    receiver = await mutualTlsReceiver(dir);
    sender = new WebhookSender({ allowPrivate: true, caFile: receiver.caFile, timeoutMs: 3000, clientCertificate: webhookClientCertificate(t.config) });
    client = await createClient(t, { name: 'Loja Chave' });
    key = await evpKey(t, client.accountId);
    const signIn = await t.app.inject({ method: 'POST', url: '/console/sign-in', headers: form, payload: `token=${TEST_ADMIN_TOKEN}` });
    cookie = String(signIn.headers['set-cookie']).split(';')[0]!;
  });
  after(async () => {
    await sender?.close();
    await receiver?.close();
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows a webhook per key once PUT, its new URL once moved, none once deleted: each a change the open pages hear of', async () => {
    const none = await page();
    assert.equal(none.statusCode, 200);
    assert.match(registrations(none.body), /No webhook registered by event/);
    assert.match(registrations(none.body), /No webhook registered per key: <code>PUT \/v2\/webhook\/\{chave\}<\/code> registers one\./);

    let before = await marker();
    const put = await v2('PUT', `/webhook/${key}`, { webhookUrl: `${receiver.origin}/bcb/` });
    assert.equal(put.statusCode, 200, put.body);
    assert.notEqual(await marker(), before, 'a new webhook per key is a change');
    const created = await t.db.selectFrom('pix_key_webhooks').select('created_at').where('chave', '=', key).executeTakeFirstOrThrow();
    const shown = (await page()).body;
    assert.doesNotMatch(registrations(shown), /No webhook registered per key/);
    assert.equal(
      keyRow(shown),
      `<tr><th scope="row"><code>${key}</code></th><td><code>${receiver.origin}/bcb/</code></td><td><code>${receiver.origin}/bcb/pix</code></td>` +
        `<td><time datetime="${created.created_at.toISOString()}">${created.created_at.toLocaleString('pt-BR', { timeZone: 'America/Sao_Paulo', dateStyle: 'short', timeStyle: 'medium' })}</time></td></tr>`,
    );

    before = await marker();
    assert.equal((await v2('PUT', `/webhook/${key}`, { webhookUrl: `${receiver.origin}/bcb/v2` })).statusCode, 200);
    assert.notEqual(await marker(), before, 'a new URL is a change');
    assert.match(keyRow((await page()).body)!, new RegExp(`<td><code>${receiver.origin}/bcb/v2</code></td><td><code>${receiver.origin}/bcb/v2/pix</code></td>`));

    before = await marker();
    assert.equal((await v2('DELETE', `/webhook/${key}`)).statusCode, 204);
    assert.notEqual(await marker(), before, 'a removal is a change');
    const removed = (await page()).body;
    assert.equal(keyRow(removed), undefined);
    assert.match(registrations(removed), /No webhook registered per key/);
  });

  it("shows the callbacks' deliveries beside the root's: the body BCB's receiver got, its signature, over mutual TLS", async () => {
    assert.equal((await v2('PUT', `/webhook/${key}`, { webhookUrl: `${receiver.origin}/bcb` })).statusCode, 200);
    const txid = 'console0callback000000000000001';
    const charge = await t.app.inject({ method: 'PUT', url: `/cob/${txid}`, headers: client.headers, payload: { calendario: { expiracao: 3600 }, valor: { original: '30.00' }, chave: key } });
    assert.equal(charge.statusCode, 201, charge.body);
    const paid = await operator(t).incomingPix({ pixKey: key, amount: '30.00', txid, payer: { name: 'Pagador', document: randomCpf() } });
    receiver.answer([500]);
    await deliverDue({ db: t.db, clock: t.clock, sender });
    t.clock.advance(10_000);
    await deliverDue({ db: t.db, clock: t.clock, sender });
    const callbacks = receiver.received.filter((r) => r.path === '/bcb/pix');
    assert.equal(callbacks.length, 2, 'answered 500, then delivered');

    const body = (await page()).body;
    const rows = [...body.matchAll(/<tr>\s*<th scope="row">\d+<\/th>[\s\S]*?<\/tr>/g)].map((m) => m[0]).filter((row) => row.includes('/bcb/pix'));
    assert.equal(rows.length, 2);
    const [delivered, failed] = rows as [string, string];
    for (const row of rows) {
      assert.match(row, new RegExp(`<td>pix<br><span class="note">callback of a webhook per key, over mutual TLS</span><br><span class="note">transaction ${paid.transactionId}</span></td>`));
      assert.ok(row.includes(`<td><code>${receiver.origin}/bcb/pix</code></td>`));
    }
    assert.match(failed, /answered HTTP 500/);
    assert.match(delivered, /badge confirmed">delivered</);
    const sent = callbacks[1]!;
    assert.ok(delivered.includes(`<pre class="payload">${escapeHtml(JSON.stringify(JSON.parse(sent.body), null, 2))}</pre>`), 'the body as it was sent, indented for reading');
    assert.equal(JSON.parse(sent.body).pix[0].endToEndId, paid.endToEndId);
    assert.ok(delivered.includes(`<dt>webhook-signature</dt><dd><code>${String(sent.headers['webhook-signature'])}</code>`), 'the signature as it was sent');
    assert.ok(delivered.includes(`<dt>webhook-id</dt><dd><code>${String(sent.headers['webhook-id'])}</code>`));
  });
});
