/**
 * Certificate-bound tokens (decisions.md, RFC 8705 §3): a stolen token moves no money without its
 * certificate, and every operation of openapi.json that takes the bearer token refuses it on the
 * service's own mutual TLS without a client certificate and accepts it with the bound one. The
 * header cases of every account route (no token, another certificate, an address that is not a
 * trusted proxy) are the shared cases of test/account-routes.test.ts.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { issueCertificate, type IssuedCertificate } from '../src/lib/certificate-authority.ts';
import { assertError, assertErrorShape } from './assertions.ts';
import { createAccount, createClient, creditAccount, externalKey, type TestClient } from './factories.ts';
import { adminHeaders, startTestApp, type TestApp } from './harness.ts';
import { accountOperations, exampleRequest } from './support/route-cases.ts';

const OPERATIONS = accountOperations();

describe('a stolen token', () => {
  let t: TestApp;
  let a: TestClient;
  let b: TestClient;

  before(async () => {
    t = await startTestApp({ env: { TRUSTED_PROXIES: '127.0.0.1,::1,10.9.8.7' } });
    a = await createClient(t);
    b = await createClient(t);
  });
  after(() => t.close());

  const proxy = '10.9.8.7';

  it("a stolen token moves no money: B's token without B's certificate creates no transfer", async () => {
    await creditAccount(t.db, b.accountId, 100_00n);
    const key = await externalKey(t);
    const before = await t.db.selectFrom('transactions').select((eb) => eb.fn.countAll<bigint>().as('n')).where('account_id', '=', BigInt(b.accountId)).executeTakeFirstOrThrow();
    const body = { pixKey: key.key, payment: { currency: 'BRL', amount: 10 } };
    for (const [headers, remoteAddress] of [
      [{ authorization: b.headers.authorization! }, proxy],
      [{ authorization: b.headers.authorization!, 'x-ssl-client-cert': a.cert.header }, proxy],
      [b.headers, '203.0.113.5'],
    ] as const) {
      const res = await t.app.inject({ method: 'POST', url: '/dict/pix', headers: { ...headers, 'x-idempotency-key': randomUUID() }, payload: body, remoteAddress });
      assertError(res, 401);
    }
    const afterwards = await t.db.selectFrom('transactions').select((eb) => eb.fn.countAll<bigint>().as('n')).where('account_id', '=', BigInt(b.accountId)).executeTakeFirstOrThrow();
    assert.equal(afterwards.n, before.n);
    const rightful = await t.app.inject({ method: 'POST', url: '/dict/pix', headers: { ...b.headers, 'x-idempotency-key': randomUUID() }, payload: body, remoteAddress: proxy });
    assert.equal(rightful.statusCode, 201, rightful.body);
  });
});

describe('certificate-bound tokens over the service’s own mutual TLS', () => {
  let dir: string;
  let t: TestApp;
  let port: number;
  let ca: IssuedCertificate;
  let client: IssuedCertificate;
  let token: string;
  const agents: https.Agent[] = [];

  const agent = (cert?: IssuedCertificate) => {
    const made = new https.Agent({ ca: ca.certPem, keepAlive: false, ...(cert ? { cert: cert.certPem, key: cert.keyPem } : {}) });
    agents.push(made);
    return made;
  };

  function send(with_: https.Agent, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
    const text = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = https.request(
        {
          agent: with_,
          host: '127.0.0.1',
          port,
          method,
          path,
          headers: { ...headers, ...(text ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) } : {}) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const raw = Buffer.concat(chunks).toString('utf8');
            resolve({ status: res.statusCode ?? 0, body: raw ? (JSON.parse(raw) as Record<string, unknown>) : {} });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(text);
    });
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pix-bound-'));
    ca = await issueCertificate({ commonName: 'Bound Test CA', isCa: true });
    const server = await issueCertificate({ commonName: 'localhost', issuer: ca, dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
    writeFileSync(join(dir, 'server.crt'), server.certPem);
    writeFileSync(join(dir, 'server.key'), server.keyPem, { mode: 0o600 });
    t = await startTestApp({ env: { TLS_CERT_FILE: join(dir, 'server.crt'), TLS_KEY_FILE: join(dir, 'server.key') } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
    const account = await createAccount(t);
    client = await issueCertificate({ commonName: 'bound-client' });
    const link = await t.app.inject({ method: 'POST', url: `/admin/accounts/${account.accountId}/certificates`, headers: adminHeaders, payload: { pem: client.certPem } });
    assert.equal(link.statusCode, 201, link.body);
    const issued = await send(agent(client), 'POST', '/api/auth/token', {}, { clientId: account.clientId, clientSecret: account.clientSecret });
    assert.equal(issued.status, 201, JSON.stringify(issued.body));
    token = issued.body.access_token as string;
  });
  after(async () => {
    for (const made of agents) made.destroy();
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const op of OPERATIONS) {
    it(`${op.method} ${op.path}: 401 with no client certificate on the handshake, past authentication with the bound one`, async () => {
      const { url } = exampleRequest(op);
      const body = ['POST', 'PUT', 'PATCH'].includes(op.method) ? {} : undefined;
      const headers = { authorization: `Bearer ${token}`, 'x-idempotency-key': randomUUID() };
      const without = await send(agent(), op.method, url, headers, body);
      assert.equal(without.status, 401, JSON.stringify(without.body));
      assert.equal(assertErrorShape(without.body, 401).code, 'CERTIFICATE_REQUIRED');
      const bound = await send(agent(client), op.method, url, headers, body);
      assert.notEqual(bound.status, 401, JSON.stringify(bound.body));
    });
  }
});
