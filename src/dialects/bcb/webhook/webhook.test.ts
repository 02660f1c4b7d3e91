import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { Webhook } from 'standardwebhooks';
import { issueCertificate } from '../../../lib/certificate-authority.ts';
import { mutualTlsReceiver } from '../../../../test/support/mutual-tls-receiver.ts';
import { webhookClientCertificate } from '../../../modules/webhooks/client-certificate.ts';
import { deliverDue } from '../../../modules/webhooks/delivery.ts';
import { WebhookSender } from '../../../modules/webhooks/sender.ts';
import { createClient, evpKey, operator, randomCpf, type TestClient } from '../../../../test/factories.ts';
import { startTestApp, type TestApp } from '../../../../test/harness.ts';
import { assertBcbAnswer, assertBcbDefinition } from '../../../../test/support/bcb-schemas.ts';
import { headersWithScope } from '../../../../test/support/bcb-tokens.ts';

function assertProblem(res: LightMyRequestResponse, status: number, name: string): void {
  assert.equal(res.statusCode, status, res.body);
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
  assert.equal(res.json<{ type: string }>().type, `https://pix.bcb.gov.br/api/v2/error/${name}`);
}

describe('BCB dialect: webhooks per key (/v2/webhook) and their callbacks', () => {
  let t: TestApp;
  let owner: TestClient;
  let other: TestClient;
  let key: string;
  let receiver: Awaited<ReturnType<typeof mutualTlsReceiver>>;
  let sender: WebhookSender;
  let clientFingerprint: string;
  const dir = mkdtempSync(join(tmpdir(), 'pix-callback-'));

  const call = (method: 'GET' | 'PUT' | 'DELETE', url: string, headers: Record<string, string> = owner.headers, payload?: object) =>
    t.app.inject({ method, url: `/v2${url}`, headers, ...(payload ? { payload } : {}) });
  const deliver = () => deliverDue({ db: t.db, clock: t.clock, sender });

  before(async () => {
    const client = await issueCertificate({ commonName: 'pix-api callbacks' });
    writeFileSync(join(dir, 'client.crt'), client.certPem);
    writeFileSync(join(dir, 'client.key'), client.keyPem);
    clientFingerprint = new X509Certificate(client.certPem).fingerprint256;
    t = await startTestApp({ env: { WEBHOOK_CLIENT_CERT_FILE: join(dir, 'client.crt'), WEBHOOK_CLIENT_KEY_FILE: join(dir, 'client.key') } });
    receiver = await mutualTlsReceiver(dir);
    sender = new WebhookSender({ allowPrivate: true, caFile: receiver.caFile, timeoutMs: 3000, clientCertificate: webhookClientCertificate(t.config) });
    owner = await createClient(t);
    other = await createClient(t);
    key = await evpKey(t, owner.accountId);
  });
  after(async () => {
    await sender.close();
    await receiver.close();
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('PUT, GET, list and DELETE a key\'s webhook; another account sees none of it', async () => {
    const put = await call('PUT', `/webhook/${key}`, owner.headers, { webhookUrl: `${receiver.origin}/bcb/` });
    assert.equal(put.statusCode, 200, put.body);
    const got = await call('GET', `/webhook/${key}`);
    assertBcbAnswer('GET /webhook/{chave}', got);
    assert.deepEqual({ ...got.json<object>(), criacao: undefined }, { webhookUrl: `${receiver.origin}/bcb/`, chave: key, criacao: undefined });
    const list = await call('GET', '/webhook');
    assertBcbAnswer('GET /webhook', list);
    assert.deepEqual(list.json<{ webhooks: { chave: string }[] }>().webhooks.map((w) => w.chave), [key]);
    assertProblem(await call('GET', `/webhook/${key}`, other.headers), 404, 'WebhookNaoEncontrado');
    assertProblem(await call('DELETE', `/webhook/${key}`, other.headers), 404, 'WebhookNaoEncontrado');
    assert.deepEqual((await call('GET', '/webhook', other.headers)).json<{ webhooks: unknown[] }>().webhooks, []);
    assert.equal((await call('DELETE', `/webhook/${key}`)).statusCode, 204);
    assertProblem(await call('GET', `/webhook/${key}`), 404, 'WebhookNaoEncontrado');
  });

  it('PUT: a key of another account, a URL that is not HTTPS or a body off the schema is 400 WebhookOperacaoInvalida', async () => {
    const otherKey = await evpKey(t, other.accountId);
    assertProblem(await call('PUT', `/webhook/${otherKey}`, owner.headers, { webhookUrl: `${receiver.origin}/bcb` }), 400, 'WebhookOperacaoInvalida');
    assertProblem(await call('PUT', `/webhook/${key}`, owner.headers, { webhookUrl: 'http://localhost/bcb' }), 400, 'WebhookOperacaoInvalida');
    assertProblem(await call('PUT', `/webhook/${key}`, owner.headers, { url: `${receiver.origin}/bcb` }), 400, 'WebhookOperacaoInvalida');
    const corrected = await call('PUT', `/webhook/${otherKey}`, other.headers, { webhookUrl: `${receiver.origin}/other` });
    assert.equal(corrected.statusCode, 200, corrected.body);
  });

  it('requires webhook.write to change and webhook.read to read (403 AcessoNegado)', async () => {
    const readOnly = await headersWithScope(t, owner, 'webhook.read');
    const writeOnly = await headersWithScope(t, owner, 'webhook.write');
    assertProblem(await call('PUT', `/webhook/${key}`, readOnly, { webhookUrl: `${receiver.origin}/bcb` }), 403, 'AcessoNegado');
    assertProblem(await call('DELETE', `/webhook/${key}`, readOnly), 403, 'AcessoNegado');
    assertProblem(await call('GET', '/webhook', writeOnly), 403, 'AcessoNegado');
    assertProblem(await call('GET', `/webhook/${key}`, writeOnly), 403, 'AcessoNegado');
    assertBcbAnswer('GET /webhook', await call('GET', '/webhook', readOnly));
  });

  it('a Pix with a txid reaches the key: POST {webhookUrl}/pix over mutual TLS, signed, retried after a 500; the root webhook gets its own', async () => {
    assert.equal((await call('PUT', `/webhook/${key}`, owner.headers, { webhookUrl: `${receiver.origin}/bcb/` })).statusCode, 200);
    const root = await t.app.inject({ method: 'POST', url: '/api/webhooks', headers: owner.headers, payload: { url: `${receiver.origin}/root`, eventType: 'cash_in' } });
    assert.equal(root.statusCode, 201, root.body);
    const txid = 'callback20260000000000000001';
    const charge = await t.app.inject({ method: 'PUT', url: `/cob/${txid}`, headers: owner.headers, payload: { calendario: { expiracao: 3600 }, valor: { original: '30.00' }, chave: key } });
    assert.equal(charge.statusCode, 201, charge.body);
    // A Pix without txid is not BCB's to notify.
    await operator(t).incomingPix({ pixKey: key, amount: '1.00', payer: { name: 'Pagador', document: randomCpf() } });
    const paid = await operator(t).incomingPix({ pixKey: key, amount: '30.00', txid, payer: { name: 'Pagador', document: randomCpf() } });
    receiver.answer([500]);
    receiver.received.length = 0;
    await deliver();
    const first = receiver.received.filter((r) => r.path === '/bcb/pix');
    assert.equal(first.length, 1);
    assert.equal(receiver.received.filter((r) => r.path === '/root').length, 2, 'the root webhook gets both Pix in its format');
    t.clock.advance(10_000);
    await deliver();
    const callbacks = receiver.received.filter((r) => r.path === '/bcb/pix');
    assert.equal(callbacks.length, 2, 'retried after the 500');
    for (const callback of callbacks) {
      assert.equal(callback.client, clientFingerprint, 'the configured client certificate');
      assert.equal(callback.headers['webhook-id'], first[0]!.headers['webhook-id']);
      assert.match(String(callback.headers['webhook-signature']), /^v1,/);
      assert.ok(callback.headers['webhook-timestamp']);
    }
    const secret = (await t.app.inject({ method: 'GET', url: '/api/webhooks/signing-secret', headers: owner.headers })).json<{ secret: string }>().secret;
    const body = new Webhook(secret).verify(callbacks[1]!.body, callbacks[1]!.headers as Record<string, string>) as { pix: Record<string, unknown>[] };
    assert.equal(body.pix.length, 1);
    for (const pix of body.pix) assertBcbDefinition('Pix', pix);
    assert.equal(body.pix[0]!.endToEndId, paid.endToEndId);
    assert.equal(body.pix[0]!.txid, txid);
    const rootBody = JSON.parse(receiver.received.find((r) => r.path === '/root')!.body) as { type: string };
    assert.equal(rootBody.type, 'RECEIVE');
    const logs = await t.db.selectFrom('webhook_logs').select(['event_type', 'success', 'status_code']).where('event_type', '=', 'pix').orderBy('id').execute();
    assert.deepEqual(logs.map((l) => [l.success, l.status_code]), [[false, 500], [true, 200]]);
  });

  it('a refund of that Pix reaching DEVOLVIDO is the same callback with its devolucoes', async () => {
    const txid = 'callback20260000000000000002';
    await t.app.inject({ method: 'PUT', url: `/cob/${txid}`, headers: owner.headers, payload: { calendario: { expiracao: 3600 }, valor: { original: '40.00' }, chave: key } });
    const paid = await operator(t).incomingPix({ pixKey: key, amount: '40.00', txid, payer: { name: 'Pagador', document: randomCpf() } });
    await deliver();
    receiver.received.length = 0;
    const refund = await call('PUT', `/pix/${paid.endToEndId}/devolucao/cb1`, owner.headers, { valor: '15.00' });
    assert.equal(refund.statusCode, 201, refund.body);
    await deliver();
    assert.equal(receiver.received.filter((r) => r.path === '/bcb/pix').length, 0, 'nothing while EM_PROCESSAMENTO');
    await operator(t).settle();
    await deliver();
    const callback = receiver.received.find((r) => r.path === '/bcb/pix');
    assert.ok(callback, 'a callback once DEVOLVIDO');
    assert.equal(callback.client, clientFingerprint);
    const body = JSON.parse(callback.body) as { pix: { endToEndId: string; devolucoes: { id: string; status: string }[] }[] };
    assertBcbDefinition('Pix', body.pix[0]);
    assert.equal(body.pix[0]!.endToEndId, paid.endToEndId);
    assert.deepEqual(body.pix[0]!.devolucoes.map((d) => [d.id, d.status]), [['cb1', 'DEVOLVIDO']]);
  });
});
