import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { issueCertificate } from '../../../lib/certificate-authority.ts';
import { mutualTlsReceiver } from '../../../../test/support/mutual-tls-receiver.ts';
import { webhookClientCertificate } from '../../../modules/webhooks/client-certificate.ts';
import { deliverDue } from '../../../modules/webhooks/delivery.ts';
import { WebhookSender } from '../../../modules/webhooks/sender.ts';
import { createClient, evpKey, operator, randomCpf, type TestClient } from '../../../../test/factories.ts';
import { startTestApp, type TestApp } from '../../../../test/harness.ts';
import { assertBcbAnswer, assertBcbDefinition, assertBcbProblem } from '../../../../test/support/bcb-schemas.ts';
import { headersWithScope } from '../../../../test/support/bcb-tokens.ts';
import type { ResendAnswer } from '../../../../scripts/lib/api-types.ts';


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
    receiver = await mutualTlsReceiver(dir);
    // The API trusts the receiver too: a resend is delivered by the API process itself.
    t = await startTestApp({
      env: { WEBHOOK_CLIENT_CERT_FILE: join(dir, 'client.crt'), WEBHOOK_CLIENT_KEY_FILE: join(dir, 'client.key'), WEBHOOK_CA_FILE: receiver.caFile, WEBHOOK_ALLOW_PRIVATE: 'true' },
    });
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
    assertBcbProblem(await call('GET', `/webhook/${key}`, other.headers), 404, 'WebhookNaoEncontrado');
    assertBcbProblem(await call('DELETE', `/webhook/${key}`, other.headers), 404, 'WebhookNaoEncontrado');
    assert.deepEqual((await call('GET', '/webhook', other.headers)).json<{ webhooks: unknown[] }>().webhooks, []);
    assert.equal((await call('DELETE', `/webhook/${key}`)).statusCode, 204);
    assertBcbProblem(await call('GET', `/webhook/${key}`), 404, 'WebhookNaoEncontrado');
  });

  it('PUT: a key of another account, a URL that is not HTTPS or a body off the schema is 400 WebhookOperacaoInvalida', async () => {
    const otherKey = await evpKey(t, other.accountId);
    assertBcbProblem(await call('PUT', `/webhook/${otherKey}`, owner.headers, { webhookUrl: `${receiver.origin}/bcb` }), 400, 'WebhookOperacaoInvalida');
    assertBcbProblem(await call('PUT', `/webhook/${key}`, owner.headers, { webhookUrl: 'http://localhost/bcb' }), 400, 'WebhookOperacaoInvalida');
    assertBcbProblem(await call('PUT', `/webhook/${key}`, owner.headers, { url: `${receiver.origin}/bcb` }), 400, 'WebhookOperacaoInvalida');
    const corrected = await call('PUT', `/webhook/${otherKey}`, other.headers, { webhookUrl: `${receiver.origin}/other` });
    assert.equal(corrected.statusCode, 200, corrected.body);
  });

  it('requires webhook.write to change and webhook.read to read (403 AcessoNegado)', async () => {
    const readOnly = await headersWithScope(t, owner, 'webhook.read');
    const writeOnly = await headersWithScope(t, owner, 'webhook.write');
    assertBcbProblem(await call('PUT', `/webhook/${key}`, readOnly, { webhookUrl: `${receiver.origin}/bcb` }), 403, 'AcessoNegado');
    assertBcbProblem(await call('DELETE', `/webhook/${key}`, readOnly), 403, 'AcessoNegado');
    assertBcbProblem(await call('GET', '/webhook', writeOnly), 403, 'AcessoNegado');
    assertBcbProblem(await call('GET', `/webhook/${key}`, writeOnly), 403, 'AcessoNegado');
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
  it("a refund of that Pix refused by the payer's institution (NAO_REALIZADO) is the same callback, its devolucoes saying so", async () => {
    const txid = 'callback20260000000000000003';
    const charge = await t.app.inject({ method: 'PUT', url: `/cob/${txid}`, headers: owner.headers, payload: { calendario: { expiracao: 3600 }, valor: { original: '25.00' }, chave: key } });
    assert.equal(charge.statusCode, 201, charge.body);
    // The sandbox's payer whose institution refuses refunds of its Pix: the refund fails when it settles.
    const paid = await operator(t).incomingPix({ pixKey: key, amount: '25.00', txid, payer: { name: 'Pagador', document: randomCpf(), behavior: 'reject' } });
    await deliver();
    receiver.received.length = 0;
    const refund = await call('PUT', `/pix/${paid.endToEndId}/devolucao/nr1`, owner.headers, { valor: '10.00' });
    assert.equal(refund.statusCode, 201, refund.body);
    await deliver();
    assert.equal(receiver.received.filter((r) => r.path === '/bcb/pix').length, 0, 'nothing while EM_PROCESSAMENTO');
    assert.equal((await operator(t).settle()).failed, 1);
    await deliver();
    const callbacks = receiver.received.filter((r) => r.path === '/bcb/pix');
    assert.equal(callbacks.length, 1, 'one callback once NAO_REALIZADO');
    const [callback] = callbacks;
    assert.equal(callback!.client, clientFingerprint, 'over mutual TLS');
    const secret = (await t.app.inject({ method: 'GET', url: '/api/webhooks/signing-secret', headers: owner.headers })).json<{ secret: string }>().secret;
    const body = new Webhook(secret).verify(callback!.body, callback!.headers as Record<string, string>) as {
      pix: { endToEndId: string; txid: string; devolucoes: { id: string; status: string; valor: string; motivo?: string; horario: object }[] }[];
    };
    assert.equal(body.pix.length, 1);
    assertBcbDefinition('Pix', body.pix[0]);
    assert.deepEqual([body.pix[0]!.endToEndId, body.pix[0]!.txid], [paid.endToEndId, txid]);
    const [devolucao] = body.pix[0]!.devolucoes;
    assert.deepEqual([body.pix[0]!.devolucoes.length, devolucao!.id, devolucao!.valor, devolucao!.status], [1, 'nr1', '10.00', 'NAO_REALIZADO']);
    assert.equal('liquidacao' in devolucao!.horario, false, 'a refund that failed has no settlement time');
    // The callback says what GET /v2/pix/{e2eid}/devolucao/{id} says.
    const got = await call('GET', `/pix/${paid.endToEndId}/devolucao/nr1`);
    assert.equal(got.statusCode, 200, got.body);
    assert.deepEqual(devolucao, got.json());
  });

  describe("a resend of a received Pix (POST /api/resend-webhook) also resends its key's callback", () => {
    type ResendBody = ResendAnswer;
    let holder: TestClient;
    let holderKey: string;
    let paid: { endToEndId: string; transactionId: number };
    /** The callback as the worker delivered it. */
    let delivered: { body: string; webhookId: string };
    const base = () => `${receiver.origin}/resend/${holder.accountId}`;
    const resend = (identifier: string | number, payload?: object) =>
      t.app.inject({ method: 'POST', url: `/api/resend-webhook/${identifier}`, headers: holder.headers, ...(payload ? { payload } : {}) });
    const at = (path: string) => receiver.received.filter((r) => r.path === path);
    const secret = async () => (await t.app.inject({ method: 'GET', url: '/api/webhooks/signing-secret', headers: holder.headers })).json<{ secret: string }>().secret;

    before(async () => {
      holder = await createClient(t);
      holderKey = await evpKey(t, holder.accountId);
      const put = await call('PUT', `/webhook/${holderKey}`, holder.headers, { webhookUrl: base() });
      assert.equal(put.statusCode, 200, put.body);
      const txid = 'callbackresend000000000000001';
      const charge = await t.app.inject({ method: 'PUT', url: `/cob/${txid}`, headers: holder.headers, payload: { calendario: { expiracao: 3600 }, valor: { original: '12.00' }, chave: holderKey } });
      assert.equal(charge.statusCode, 201, charge.body);
      paid = await operator(t).incomingPix({ pixKey: holderKey, amount: '12.00', txid, payer: { name: 'Pagador', document: randomCpf() } });
      await deliver();
      const [first] = at(`/resend/${holder.accountId}/pix`);
      assert.ok(first, 'the callback was delivered');
      delivered = { body: first.body, webhookId: String(first.headers['webhook-id']) };
    });

    it('with only a /v2 webhook: 200, the same {"pix": [...]} body and webhook-id, signed, over mutual TLS, to {webhookUrl}/pix, logged as a resend', async () => {
      receiver.received.length = 0;
      const res = await resend(paid.endToEndId);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json<ResendBody>();
      assert.deepEqual(Object.keys(body).sort(), ['deliveries', 'message', 'sentAt', 'statusCode', 'webhookId', 'webhookLogId']);
      assert.deepEqual(
        body.deliveries.map((d) => [d.url, d.statusCode, d.success, d.error]),
        [[`${base()}/pix`, 200, true, null]],
      );
      assert.deepEqual([body.webhookId, body.statusCode, body.webhookLogId, body.message], [delivered.webhookId, 200, body.deliveries[0]!.webhookLogId, 'Webhook resent']);
      assert.equal(receiver.received.length, 1);
      const [got] = at(`/resend/${holder.accountId}/pix`);
      assert.equal(got!.client, clientFingerprint, 'the configured client certificate');
      assert.equal(got!.headers['webhook-id'], delivered.webhookId);
      assert.equal(got!.body, delivered.body);
      const verified = new Webhook(await secret()).verify(got!.body, got!.headers as Record<string, string>) as { pix: Record<string, unknown>[] };
      assertBcbDefinition('Pix', verified.pix[0]);
      assert.equal(verified.pix[0]!.endToEndId, paid.endToEndId);
      const logs = (await t.app.inject({ method: 'GET', url: `/api/webhooks/logs?transactionId=${paid.transactionId}`, headers: holder.headers })).json<{
        data: { webhookLogId: number; eventType: string; url: string; webhookId: string; isResend: boolean; success: boolean; statusCode: number }[];
      }>().data;
      const entry = logs.find((l) => l.webhookLogId === body.webhookLogId);
      assert.deepEqual(
        [entry?.eventType, entry?.url, entry?.webhookId, entry?.isResend, entry?.success, entry?.statusCode],
        ['pix', `${base()}/pix`, delivered.webhookId, true, true, 200],
      );
      // The log's filter takes every value its entries carry: pix included.
      for (const eventType of new Set(logs.map((l) => l.eventType))) {
        const filtered = await t.app.inject({ method: 'GET', url: `/api/webhooks/logs?transactionId=${paid.transactionId}&eventType=${eventType}`, headers: holder.headers });
        assert.equal(filtered.statusCode, 200, filtered.body);
        const found = filtered.json<{ data: { eventType: string }[] }>().data;
        assert.deepEqual([...new Set(found.map((l) => l.eventType))], [eventType]);
        assert.equal(found.length, logs.filter((l) => l.eventType === eventType).length);
      }
      // By numeric id too.
      assert.equal((await resend(paid.transactionId)).json<ResendBody>().deliveries[0]!.url, `${base()}/pix`);
    });

    it("a failed callback is reported and logged like the root's", async () => {
      receiver.answer([503]);
      const res = await resend(paid.endToEndId);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json<ResendBody>();
      assert.deepEqual([body.statusCode, body.deliveries[0]!.success, body.deliveries[0]!.error], [503, false, 'HTTP 503']);
      assert.match(body.message, /^Webhook resend failed: /);
      const [log] = (await t.app.inject({ method: 'GET', url: `/api/webhooks/logs?transactionId=${paid.transactionId}&success=false&size=1`, headers: holder.headers })).json<{
        data: { webhookLogId: number; eventType: string; isResend: boolean; error: string | null }[];
      }>().data;
      assert.deepEqual([log?.webhookLogId, log?.eventType, log?.isResend, log?.error], [body.webhookLogId, 'pix', true, 'HTTP 503']);
    });

    it("with the root's webhook as well: the root's notification first, in its format, then the callback", async () => {
      const root = await t.app.inject({ method: 'POST', url: '/api/webhooks', headers: holder.headers, payload: { url: `${base()}/root`, eventType: 'cash_in' } });
      assert.equal(root.statusCode, 201, root.body);
      try {
        receiver.received.length = 0;
        const res = await resend(paid.endToEndId);
        assert.equal(res.statusCode, 200, res.body);
        const body = res.json<ResendBody>();
        // This receiver answers 401 to a caller without a client certificate: the root's webhooks present none.
        assert.deepEqual(
          body.deliveries.map((d) => [d.url, d.statusCode]),
          [
            [`${base()}/root`, 401],
            [`${base()}/pix`, 200],
          ],
        );
        const outbox = await t.db.selectFrom('outbox').select('message_id').where('transaction_id', '=', BigInt(paid.transactionId)).where('event_type', '=', 'cash_in').executeTakeFirstOrThrow();
        assert.equal(body.webhookId, outbox.message_id, "the first delivery's notification");
        assert.equal(JSON.parse(at(`/resend/${holder.accountId}/root`)[0]!.body).type, 'RECEIVE');
        assert.equal(at(`/resend/${holder.accountId}/pix`)[0]!.body, delivered.body);
      } finally {
        await t.app.inject({ method: 'DELETE', url: `/api/webhooks/${root.json<{ id: number }>().id}`, headers: holder.headers });
      }
    });

    it('with a url in the body: the root\'s notification to it and the callback to {url}/pix, instead of the registered URLs', async () => {
      receiver.received.length = 0;
      const url = `${receiver.origin}/once/${holder.accountId}`;
      const res = await resend(paid.endToEndId, { url });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(
        res.json<ResendBody>().deliveries.map((d) => [d.url, d.statusCode]),
        [
          [url, 401],
          [`${url}/pix`, 200],
        ],
      );
      const [rootNotification] = at(`/once/${holder.accountId}`);
      assert.deepEqual([JSON.parse(rootNotification!.body).type, rootNotification!.client], ['RECEIVE', undefined]);
      const [callback] = at(`/once/${holder.accountId}/pix`);
      assert.equal(callback!.body, delivered.body);
      assert.equal(callback!.client, clientFingerprint);
      assert.equal(at(`/resend/${holder.accountId}/pix`).length, 0, 'the registered URL is not called');
    });

    it('after a refund, the latest callback (with its devolucoes); at the URL the key has now', async () => {
      const refund = await call('PUT', `/pix/${paid.endToEndId}/devolucao/rs1`, holder.headers, { valor: '2.00' });
      assert.equal(refund.statusCode, 201, refund.body);
      await operator(t).settle();
      await deliver();
      const moved = await call('PUT', `/webhook/${holderKey}`, holder.headers, { webhookUrl: `${base()}/moved/` });
      assert.equal(moved.statusCode, 200, moved.body);
      receiver.received.length = 0;
      const res = await resend(paid.endToEndId);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json<ResendBody>().deliveries.map((d) => d.url), [`${base()}/moved/pix`]);
      const body = JSON.parse(at(`/resend/${holder.accountId}/moved/pix`)[0]!.body) as { pix: { devolucoes?: { id: string; status: string }[] }[] };
      assertBcbDefinition('Pix', body.pix[0]);
      assert.deepEqual(body.pix[0]!.devolucoes?.map((d) => [d.id, d.status]), [['rs1', 'DEVOLVIDO']]);
    });

    it('the key\'s webhook removed, and no root webhook: 400 NO_WEBHOOK_URL, as for any account without one', async () => {
      assert.equal((await call('DELETE', `/webhook/${holderKey}`, holder.headers)).statusCode, 204);
      receiver.received.length = 0;
      const res = await resend(paid.endToEndId);
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json<{ code: string }>().code, 'NO_WEBHOOK_URL');
      assert.equal(receiver.received.length, 0);
    });

    it('a Pix without a txid has no callback: the resend is the root\'s alone', async () => {
      assert.equal((await call('PUT', `/webhook/${holderKey}`, holder.headers, { webhookUrl: base() })).statusCode, 200);
      const plain = await operator(t).incomingPix({ pixKey: holderKey, amount: '3.00', payer: { name: 'Pagador', document: randomCpf() } });
      const res = await resend(plain.endToEndId);
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json<{ code: string }>().code, 'NO_WEBHOOK_URL');
      const once = await resend(plain.endToEndId, { url: `${receiver.origin}/plain/${holder.accountId}` });
      assert.deepEqual(once.json<ResendBody>().deliveries.map((d) => d.url), [`${receiver.origin}/plain/${holder.accountId}`]);
    });
  });
});
