/**
 * BCB's dialect end to end, over real HTTP: an integrator creates a charge through /v2 and takes
 * its pixCopiaECola; an independent library decodes it; the location is fetched and its JWS
 * verified with `jose` against the JWK Set and its chain; the sandbox payer pays it; the BCB
 * callback reaches a receiver on HTTPS that demands a client certificate; a refund follows, and
 * its callback too.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { compactVerify, decodeProtectedHeader, importJWK, type JWK } from 'jose';
import { hasError, isDynamicPix, parsePix } from 'pix-utils';
import { issueCertificate } from '../src/lib/certificate-authority.ts';
import { webhookClientCertificate } from '../src/modules/webhooks/client-certificate.ts';
import { deliverDue } from '../src/modules/webhooks/delivery.ts';
import { WebhookSender } from '../src/modules/webhooks/sender.ts';
import { createClient, evpKey, operator, randomCpf, type TestClient } from './factories.ts';
import { adminHeaders, startTestApp, type TestApp } from './harness.ts';
import { assertBcbDefinition } from './support/bcb-schemas.ts';
import { freePort } from './processes.ts';
import { mutualTlsReceiver } from './support/mutual-tls-receiver.ts';

type Json = Record<string, unknown>;

const base64url = (der: Buffer, hash: 'sha1' | 'sha256') => createHash(hash).update(der).digest('base64url');

describe("BCB's API Pix end to end: charge, signed location, payer, callbacks over mutual TLS, refund", () => {
  const dir = mkdtempSync(join(tmpdir(), 'pix-e2e-'));
  let t: TestApp;
  let origin: string;
  let holder: TestClient;
  let key: string;
  let headers: Record<string, string>;
  let receiver: Awaited<ReturnType<typeof mutualTlsReceiver>>;
  let sender: WebhookSender;
  let clientFingerprint: string;
  const txid = `e2e${randomBytes(14).toString('hex')}`;
  let pixCopiaECola: string;
  let endToEndId: string;

  const v2 = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${origin}/v2${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const callbacks = () => receiver.received.filter((r) => r.path === '/bcb/pix');
  const deliver = () => deliverDue({ db: t.db, clock: t.clock, sender });

  before(async () => {
    const client = await issueCertificate({ commonName: 'pix-api callbacks' });
    writeFileSync(join(dir, 'client.crt'), client.certPem);
    writeFileSync(join(dir, 'client.key'), client.keyPem);
    clientFingerprint = new X509Certificate(client.certPem).fingerprint256;
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    t = await startTestApp({
      env: { PUBLIC_URL: origin, WEBHOOK_CLIENT_CERT_FILE: join(dir, 'client.crt'), WEBHOOK_CLIENT_KEY_FILE: join(dir, 'client.key') },
    });
    await t.app.listen({ port, host: '127.0.0.1' });
    receiver = await mutualTlsReceiver(dir);
    sender = new WebhookSender({ allowPrivate: true, caFile: receiver.caFile, timeoutMs: 3000, clientCertificate: webhookClientCertificate(t.config) });
    holder = await createClient(t, { name: 'Padaria Pao Quente' });
    key = await evpKey(t, holder.accountId);
  });
  after(async () => {
    await sender?.close();
    await receiver?.close();
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a token from the standard OAuth request (form body, HTTP Basic, the certificate)', async () => {
    const res = await fetch(`${origin}/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${holder.clientId}:${holder.clientSecret}`).toString('base64')}`,
        'x-ssl-client-cert': holder.cert.header,
      },
      body: 'grant_type=client_credentials',
    });
    assert.equal(res.status, 200);
    const token = (await res.json()) as { access_token: string; token_type: string; scope: string };
    assert.equal(token.token_type, 'Bearer');
    assert.match(token.scope, /\bcob\.write\b/);
    headers = { authorization: `Bearer ${token.access_token}`, 'x-ssl-client-cert': holder.cert.header };
  });

  it('registers the webhook of its key, and creates a cob whose pixCopiaECola pix-utils reads as dynamic', async () => {
    assert.equal((await v2('PUT', `/webhook/${key}`, { webhookUrl: `${receiver.origin}/bcb/` })).status, 200);
    const cob = await v2('PUT', `/cob/${txid}`, { calendario: { expiracao: 3600 }, valor: { original: '42.50' }, chave: key, solicitacaoPagador: 'Pedido 77' });
    assert.equal(cob.status, 201, JSON.stringify(cob.body));
    pixCopiaECola = cob.body.pixCopiaECola as string;
    const decoded = parsePix(pixCopiaECola);
    assert.ok(!hasError(decoded) && isDynamicPix(decoded), pixCopiaECola);
    assert.equal(decoded.url, cob.body.location);
    assert.ok(String(cob.body.location).length <= 77);
  });

  it('the location answers a JWS that jose verifies against the JWK Set, whose x5c chain ends in the root', async () => {
    const { url: location } = parsePix(pixCopiaECola) as { url: string };
    const answer = await fetch(`http://${location}`);
    assert.equal(answer.status, 200);
    assert.match(String(answer.headers.get('content-type')), /^application\/jose/);
    const jws = await answer.text();
    const header = decodeProtectedHeader(jws);
    assert.equal(header.alg, 'PS256');
    assert.equal(new URL(String(header.jku)).host, new URL(`http://${location}`).host, 'jku on the location host');
    const set = (await (await fetch(String(header.jku))).json()) as { keys: (JWK & { kid: string; x5c: string[]; x5t: string; 'x5t#S256': string })[] };
    const jwk = set.keys.find((k) => k.kid === header.kid);
    assert.ok(jwk, 'the kid is in the JWK Set');
    assert.equal(jwk.alg, header.alg);
    const chain = jwk.x5c.map((c) => Buffer.from(c, 'base64'));
    assert.equal(header.x5t, base64url(chain[0]!, 'sha1'));
    assert.equal(header['x5t#S256'], base64url(chain[0]!, 'sha256'));
    const certificates = chain.map((der) => new X509Certificate(der));
    for (let i = 0; i + 1 < certificates.length; i++) assert.ok(certificates[i]!.verify(certificates[i + 1]!.publicKey), `certificate ${i} is signed by the next`);
    const root = certificates.at(-1)!;
    assert.ok(root.ca && root.verify(root.publicKey), 'the chain ends in a self-signed root');
    const { payload } = await compactVerify(jws, await importJWK(jwk, header.alg));
    const cob = JSON.parse(Buffer.from(payload).toString('utf8')) as Json;
    assertBcbDefinition('CobPayload', cob);
    assert.equal(cob.txid, txid);
    assert.equal(cob.status, 'ATIVA');
    assert.deepEqual(cob.valor, { original: '42.50', modalidadeAlteracao: 0 });
  });

  it('the sandbox payer pays it; the charge is CONCLUIDA with its Pix', async () => {
    const before = (await v2('GET', `/cob/${txid}`)).body;
    assert.equal(before.status, 'ATIVA');
    const paid = await fetch(`${origin}/sandbox/payer/pay`, {
      method: 'POST',
      headers: { ...adminHeaders, 'content-type': 'application/json' },
      body: JSON.stringify({ pixCopiaECola, payer: { name: 'Maria Pagadora', document: randomCpf() } }),
    });
    const body = (await paid.json()) as { endToEndId: string; amount: string; txid: string };
    assert.equal(paid.status, 201, JSON.stringify(body));
    assert.equal(body.amount, '42.50');
    assert.equal(body.txid, txid);
    endToEndId = body.endToEndId;
    const after = (await v2('GET', `/cob/${txid}`)).body as { status: string; pix: Json[] };
    assert.equal(after.status, 'CONCLUIDA');
    assert.equal(after.pix[0]!.endToEndId, endToEndId);
    const again = await fetch(`${origin}/sandbox/payer/pay`, {
      method: 'POST',
      headers: { ...adminHeaders, 'content-type': 'application/json' },
      body: JSON.stringify({ pixCopiaECola, payer: { name: 'Maria Pagadora', document: randomCpf() } }),
    });
    assert.equal(again.status, 422, 'a paid charge is not paid twice');
  });

  it('the callback POST {webhookUrl}/pix arrives over mutual TLS with the Pix', async () => {
    await deliver();
    const [callback] = callbacks();
    assert.ok(callback, 'a callback arrived');
    assert.equal(callback.client, clientFingerprint, 'presented the configured client certificate');
    assert.match(String(callback.headers['webhook-signature']), /^v1,/);
    const body = JSON.parse(callback.body) as { pix: Json[] };
    assertBcbDefinition('Pix', body.pix[0]);
    assert.equal(body.pix[0]!.endToEndId, endToEndId);
    assert.equal(body.pix[0]!.txid, txid);
  });

  it('a refund through /v2 reaches DEVOLVIDO, and its callback carries the devolucao', async () => {
    const refund = await v2('PUT', `/pix/${endToEndId}/devolucao/e2e1`, { valor: '12.50' });
    assert.equal(refund.status, 201, JSON.stringify(refund.body));
    assertBcbDefinition('Devolucao', refund.body);
    await operator(t).settle();
    await deliver();
    const last = callbacks().at(-1)!;
    const body = JSON.parse(last.body) as { pix: { endToEndId: string; devolucoes?: { id: string; status: string; valor: string }[] }[] };
    assertBcbDefinition('Pix', body.pix[0]);
    assert.equal(body.pix[0]!.endToEndId, endToEndId);
    assert.deepEqual(body.pix[0]!.devolucoes?.map((d) => [d.id, d.status, d.valor]), [['e2e1', 'DEVOLVIDO', '12.50']]);
    assert.equal(last.client, clientFingerprint);
    const pix = (await v2('GET', `/pix/${endToEndId}`)).body as { devolucoes: { status: string }[] };
    assert.equal(pix.devolucoes[0]!.status, 'DEVOLVIDO');
  });
});
