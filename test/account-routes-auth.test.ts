/**
 * Certificate-bound tokens on every account route (decisions.md, RFC 8705 §3): each operation of
 * openapi.json that takes the bearer token refuses a token presented without its certificate,
 * with another certificate, or with its own certificate in a header from an address that is not
 * a trusted proxy; and accepts it with the bound certificate, in a header from a trusted proxy
 * or on the service's own mutual TLS. A new account route is covered as soon as it is documented.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { issueCertificate, type IssuedCertificate } from '../src/lib/certificate-authority.ts';
import { assertError, assertErrorShape } from './assertions.ts';
import { createAccount, createClient, creditAccount, externalKey, type TestClient } from './factories.ts';
import { adminHeaders, startTestApp, type TestApp } from './harness.ts';

interface Operation {
  method: string;
  path: string;
}

/** Every operation of openapi.json that takes the account's bearer token. */
function accountOperations(): Operation[] {
  const doc = JSON.parse(readFileSync(new URL('../openapi.json', import.meta.url), 'utf8')) as {
    paths: Record<string, Record<string, { security?: Record<string, unknown>[] }>>;
  };
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      if (op.security?.some((s) => 'bearerAuth' in s)) operations.push({ method: method.toUpperCase(), path });
    }
  }
  return operations;
}

/** Path parameters filled with values of the right shape (the certificate is judged first anyway). */
function concrete(path: string): string {
  return path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    if (name === 'txid') return 'txid00000000000000000000000001';
    if (name === 'e2eid') return `E12345678202611221200${'a'.repeat(11)}`;
    if (name === 'pixKey' || name === 'key') return 'someone@example.com';
    return '1';
  });
}

const OPERATIONS = accountOperations();

describe('certificate-bound tokens on every account route', () => {
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
  const call = (op: Operation, headers: Record<string, string>, remoteAddress = proxy) =>
    t.app.inject({
      method: op.method as 'GET',
      url: concrete(op.path),
      headers: { ...headers, 'x-idempotency-key': randomUUID() },
      remoteAddress,
      ...(['POST', 'PUT', 'PATCH'].includes(op.method) ? { payload: {} } : {}),
    });

  it('openapi.json lists the account routes', () => {
    assert.ok(OPERATIONS.length >= 20, `${OPERATIONS.length} account operations`);
    assert.ok(OPERATIONS.some((op) => op.method === 'POST' && op.path === '/dict/pix'));
  });

  for (const op of OPERATIONS) {
    describe(`${op.method} ${op.path}`, () => {
      it('a token without its certificate is 401 CERTIFICATE_REQUIRED', async () => {
        assertError(await call(op, { authorization: a.headers.authorization! }), 401, /bound to a client certificate/, 'CERTIFICATE_REQUIRED');
      });

      it("a token with another account's certificate is 401 CERTIFICATE_MISMATCH", async () => {
        assertError(await call(op, { authorization: a.headers.authorization!, 'x-ssl-client-cert': b.cert.header }), 401, undefined, 'CERTIFICATE_MISMATCH');
      });

      it('the bound certificate from an address that is not a trusted proxy is 401', async () => {
        assertError(await call(op, a.headers, '192.0.2.10'), 401, /trusted proxy/, 'CERTIFICATE_REQUIRED');
      });

      it('the bound certificate from the trusted proxy gets past authentication', async () => {
        const res = await call(op, a.headers);
        assert.notEqual(res.statusCode, 401, res.body);
        if (res.statusCode >= 400) assertErrorShape(res.json(), res.statusCode);
      });
    });
  }

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
      const body = ['POST', 'PUT', 'PATCH'].includes(op.method) ? {} : undefined;
      const headers = { authorization: `Bearer ${token}`, 'x-idempotency-key': randomUUID() };
      const without = await send(agent(), op.method, concrete(op.path), headers, body);
      assert.equal(without.status, 401, JSON.stringify(without.body));
      assert.equal(assertErrorShape(without.body, 401).code, 'CERTIFICATE_REQUIRED');
      const bound = await send(agent(client), op.method, concrete(op.path), headers, body);
      assert.notEqual(bound.status, 401, JSON.stringify(bound.body));
    });
  }
});
