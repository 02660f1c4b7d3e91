/**
 * What a newcomer does in the console on day one, through its actions and pages: webhooks of both
 * kinds registered at the sandbox's inbox, a charge paid from its own row, deliveries shown
 * readable with a signature that verifies, and a received Pix's timeline naming what it paid.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createClient, evpKey, incomingPix, type TestClient } from '../../../test/factories.ts';
import { startTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../../../test/harness.ts';
import { deliverDue } from '../webhooks/delivery.ts';
import { WebhookSender } from '../webhooks/sender.ts';
import { destinationPolicy } from '../webhooks/destination.ts';
import { senderFaults } from '../../app.ts';

const form = { 'content-type': 'application/x-www-form-urlencoded' };
const encode = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const csrfOf = (body: string) => /name="_csrf" value="([^"]+)"/.exec(body)![1]!;

describe('the console on day one', () => {
  let t: TestApp;
  let client: TestClient;
  let key: string;
  let cookie: string;
  let csrf: string;
  let sender: WebhookSender;

  before(async () => {
    t = await startTestApp();
    client = await createClient(t, { name: 'Padaria Primeiro Dia' });
    key = await evpKey(t, client.accountId);
    const signedIn = await t.app.inject({ method: 'POST', url: '/console/sign-in', headers: form, payload: encode({ token: TEST_ADMIN_TOKEN }) });
    cookie = String(signedIn.headers['set-cookie']).split(';')[0]!;
    csrf = csrfOf((await page(`/console/accounts/${client.accountId}/webhooks`)).body);
    sender = new WebhookSender({ policy: destinationPolicy(t.config), ...senderFaults(t.controls) });
  });
  after(async () => {
    await sender.close();
    await t.close();
  });

  function page(url: string) {
    return t.app.inject({ method: 'GET', url, headers: { cookie } });
  }
  function act(name: string, fields: Record<string, string>): Promise<LightMyRequestResponse> {
    return t.app.inject({ method: 'POST', url: `/console/actions/${name}`, headers: { ...form, cookie, 'x-console-request': 'fetch' }, payload: encode({ _csrf: csrf, ...fields }) });
  }
  const inbox = () => t.controls!.inboxUrl(`account-${client.accountId}`);

  it("offers the account's inbox to the webhook forms, and registers webhooks of both kinds there", async () => {
    const webhooks = (await page(`/console/accounts/${client.accountId}/webhooks`)).body;
    assert.ok(webhooks.includes(`value="${inbox()}"`), 'the inbox URL is offered');
    assert.ok(webhooks.includes(`<option value="${key}">`), "the account's keys are offered");
    const byEvent = await act('register-webhook', { accountId: String(client.accountId), eventType: 'cash_in', url: inbox() });
    assert.equal(byEvent.statusCode, 200, byEvent.body);
    assert.match(byEvent.body, /^Webhook registered: cash_in to .*\/sandbox\/inbox\/account-\d+ \(id \d+, version 1\)$/);
    const perKey = await act('register-key-webhook', { accountId: String(client.accountId), chave: key, webhookUrl: inbox() });
    assert.equal(perKey.statusCode, 200, perKey.body);
    assert.equal(perKey.body, `Webhook of the key ${key} set: its callbacks go to ${inbox()}/pix`);
    const refused = await act('register-webhook', { accountId: String(client.accountId), eventType: 'cash_in', url: 'http://example.com/hook' });
    assert.equal(refused.statusCode, 400);
    assert.match(refused.body, /HTTPS/);
  });

  it('pays a charge from its own row; the received Pix names the charge it paid, and the deliveries show readable bodies whose signature verifies', async () => {
    const created = await act('create-charge', { accountId: String(client.accountId), amount: '12,50', expiration: '', txid: '', message: '' });
    assert.equal(created.statusCode, 200, created.body);
    const txid = /^Charge (\w+) of /.exec(created.body)![1]!;
    const charges = (await page(`/console/accounts/${client.accountId}/charges`)).body;
    const row = new RegExp(`<tr>\\s*<th scope="row"><code>${txid}</code></th>[\\s\\S]*?</tr>`).exec(charges)![0];
    assert.match(row, new RegExp(`aria-label="Simulate a payment of charge ${txid}"`));
    const code = /name="pixCopiaECola" value="([^"]+)"/.exec(row)![1]!;
    const paid = await act('pay-brcode', { pixCopiaECola: code, payerName: 'Pagador Sandbox', payerDocument: '52998224725', amount: '' });
    assert.equal(paid.statusCode, 200, paid.body);
    assert.match(paid.body, new RegExp(`^The charge ${txid} was paid: R\\$\\s12,50 \\(endToEndId E\\w+\\)$`));
    const after = (await page(`/console/accounts/${client.accountId}/charges`)).body;
    const paidRow = new RegExp(`<tr>\\s*<th scope="row"><code>${txid}</code></th>[\\s\\S]*?</tr>`).exec(after)![0];
    assert.match(paidRow, /CONCLUIDA/);
    assert.doesNotMatch(paidRow, /Simulate a payment/, 'a paid charge offers no payment');

    const transactions = (await page(`/console/accounts/${client.accountId}`)).body;
    assert.ok(transactions.includes(`Paid the charge ${txid} (cob)`), 'the timeline names the charge');
    await incomingPix(t, key, '3.00');
    await deliverDue({ db: t.db, clock: t.controls!.clock, sender });
    const webhooks = (await page(`/console/accounts/${client.accountId}/webhooks`)).body;
    assert.match(webhooks, /<pre class="payload">\{\n {2}&quot;type&quot;: &quot;RECEIVE&quot;,\n {2}&quot;data&quot;: \{/, 'bodies indented for reading');
    assert.match(webhooks, /Signature valid: it verifies with the account's signing secret\./);
    t.clock.advance(1000);
    const rotated = await t.app.inject({ method: 'POST', url: '/api/webhooks/signing-secret/rotate', headers: client.headers });
    assert.equal(rotated.statusCode, 200, rotated.body);
    assert.match((await page(`/console/accounts/${client.accountId}/webhooks`)).body, /Signed with a secret rotated since/);
  });
});
