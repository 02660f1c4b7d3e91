import assert from 'node:assert/strict';
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { issueCertificate, type IssuedCertificate } from '../src/lib/certificate-authority.ts';
import { assertErrorShape } from './assertions.ts';
import { createAccount, type TestAccount } from './factories.ts';
import { adminHeaders, startTestApp, type TestApp } from './harness.ts';

/**
 * Mutual TLS terminated by the service itself: the client certificate is the TLS peer
 * certificate, read from the socket, with no X-SSL-Client-Cert header.
 */

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
  reusedSocket: boolean;
  sessionReused: boolean;
}

function send(agent: https.Agent, port: number, method: string, path: string, headers: Record<string, string> = {}, payload?: unknown): Promise<Reply> {
  const body = payload === undefined ? undefined : JSON.stringify(payload);
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        agent,
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: { ...headers, ...(body ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } : {}) },
        timeout: 10_000,
      },
      (res) => {
        // Read now: the socket is detached from the response once it ends.
        const sessionReused = (res.socket as TLSSocket).isSessionReused();
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
            reusedSocket: req.reusedSocket,
            sessionReused,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

const thumbprintOf = (pem: string) => createHash('sha256').update(new X509Certificate(pem).raw).digest('base64url');

async function linkPem(t: TestApp, accountId: number, pem: string): Promise<void> {
  const res = await t.app.inject({ method: 'POST', url: `/admin/accounts/${accountId}/certificates`, headers: adminHeaders, payload: { pem } });
  assert.equal(res.statusCode, 201, res.body);
}

async function listen(t: TestApp): Promise<number> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return (t.app.server.address() as AddressInfo).port;
}

describe('mutual TLS terminated by the service', () => {
  let dir: string;
  let ca: IssuedCertificate;
  const files = { cert: '', key: '', ca: '' };
  const agents: https.Agent[] = [];

  /** A client of the test CA trust, presenting `client` when given. */
  function agent(client?: IssuedCertificate, keepAlive = true): https.Agent {
    const made = new https.Agent({ ca: ca.certPem, keepAlive, maxSockets: 1, ...(client ? { cert: client.certPem, key: client.keyPem } : {}) });
    agents.push(made);
    return made;
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pix-tls-'));
    ca = await issueCertificate({ commonName: 'Pix Test CA', isCa: true });
    const server = await issueCertificate({ commonName: 'localhost', issuer: ca, dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
    files.cert = join(dir, 'server.crt');
    files.key = join(dir, 'server.key');
    files.ca = join(dir, 'ca.crt');
    writeFileSync(files.cert, server.certPem);
    writeFileSync(files.key, server.keyPem, { mode: 0o600 });
    writeFileSync(files.ca, ca.certPem);
  });
  after(() => {
    for (const made of agents) made.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('without TLS_CLIENT_CA_FILE (the linked fingerprint is the trust)', () => {
    let t: TestApp;
    let port: number;
    let account: TestAccount;
    let client: IssuedCertificate;
    let credentials: { clientId: string; clientSecret: string };

    before(async () => {
      t = await startTestApp({ env: { TLS_CERT_FILE: files.cert, TLS_KEY_FILE: files.key } });
      port = await listen(t);
      account = await createAccount(t);
      client = await issueCertificate({ commonName: 'tls-client' });
      await linkPem(t, account.accountId, client.certPem);
      credentials = { clientId: account.clientId, clientSecret: account.clientSecret };
    });
    after(() => t.close());

    it('issues a token bound to the peer certificate, then serves /balance on the same connection', async () => {
      const conn = agent(client);
      const issued = await send(conn, port, 'POST', '/api/auth/token', {}, credentials);
      assert.equal(issued.status, 201, JSON.stringify(issued.body));
      assert.equal(issued.body.token_type, 'Bearer');
      assert.equal(issued.body.expires_in, 1800);
      const accessToken = issued.body.access_token as string;
      assert.deepEqual(decodeJwt(accessToken).cnf, { 'x5t#S256': thumbprintOf(client.certPem) });

      const read = await send(conn, port, 'GET', '/balance', { authorization: `Bearer ${accessToken}` });
      assert.equal(read.status, 200, JSON.stringify(read.body));
      assert.equal(read.reusedSocket, true, 'the second request travels on the same TLS connection');
      assert.equal(read.body.netBalance, 0);
    });

    it('a resumed TLS session still carries the peer certificate', async () => {
      // No keep-alive: each request opens a new connection, resuming the cached session.
      const conn = agent(client, false);
      const first = await send(conn, port, 'POST', '/api/auth/token', {}, credentials);
      assert.equal(first.status, 201, JSON.stringify(first.body));
      const second = await send(conn, port, 'POST', '/api/auth/token', {}, credentials);
      assert.equal(second.status, 201, JSON.stringify(second.body));
      assert.equal(second.reusedSocket, false);
      assert.equal(second.sessionReused, true, 'the second connection resumed the TLS session');
      const read = await send(conn, port, 'GET', '/balance', { authorization: `Bearer ${second.body.access_token as string}` });
      assert.equal(read.status, 200, JSON.stringify(read.body));
    });

    it('a client without a certificate gets 400 at the token route', async () => {
      const res = await send(agent(), port, 'POST', '/api/auth/token', {}, credentials);
      assert.equal(res.status, 400);
      assertErrorShape(res.body, 400);
      assert.match(res.body.message as string, /client certificate is required in the TLS handshake/);
    });

    it('over TLS the service terminates, an X-SSL-Client-Cert header proves nothing', async () => {
      // The header carries the linked certificate, but the socket presents none: no proxy is
      // in between, so the header is not believed, even from a loopback address.
      const header = { 'x-ssl-client-cert': encodeURIComponent(client.certPem) };
      const res = await send(agent(), port, 'POST', '/api/auth/token', header, credentials);
      assert.equal(res.status, 400);
    });

    it('another client certificate than the bound one gets 401 on /balance', async () => {
      const issued = await send(agent(client), port, 'POST', '/api/auth/token', {}, credentials);
      assert.equal(issued.status, 201);
      // Linked to the same account, but not the certificate the token is bound to.
      const other = await issueCertificate({ commonName: 'tls-client-2' });
      await linkPem(t, account.accountId, other.certPem);
      const res = await send(agent(other), port, 'GET', '/balance', { authorization: `Bearer ${issued.body.access_token as string}` });
      assert.equal(res.status, 401);
      assert.match(res.body.message as string, /does not match/);
      assert.match(String(res.headers['www-authenticate']), /^Bearer /);
    });

    it('a certificate linked to no account gets 403', async () => {
      const stranger = await issueCertificate({ commonName: 'stranger' });
      const res = await send(agent(stranger), port, 'POST', '/api/auth/token', {}, credentials);
      assert.equal(res.status, 403);
    });
  });

  describe('with TLS_CLIENT_CA_FILE (the chain must lead to the CA)', () => {
    let t: TestApp;
    let port: number;
    let account: TestAccount;
    let credentials: { clientId: string; clientSecret: string };

    before(async () => {
      t = await startTestApp({ env: { TLS_CERT_FILE: files.cert, TLS_KEY_FILE: files.key, TLS_CLIENT_CA_FILE: files.ca } });
      port = await listen(t);
      account = await createAccount(t);
      credentials = { clientId: account.clientId, clientSecret: account.clientSecret };
    });
    after(() => t.close());

    it('a self-signed certificate, even linked to the account, gets 401', async () => {
      const selfSigned = await issueCertificate({ commonName: 'self-signed' });
      await linkPem(t, account.accountId, selfSigned.certPem);
      const res = await send(agent(selfSigned), port, 'POST', '/api/auth/token', {}, credentials);
      assert.equal(res.status, 401, JSON.stringify(res.body));
      assert.match(res.body.message as string, /not trusted/);
    });

    it('a certificate issued by the CA and linked to the account gets a token', async () => {
      const issuedByCa = await issueCertificate({ commonName: 'ca-client', issuer: ca });
      await linkPem(t, account.accountId, issuedByCa.certPem);
      const conn = agent(issuedByCa);
      const res = await send(conn, port, 'POST', '/api/auth/token', {}, credentials);
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const read = await send(conn, port, 'GET', '/balance', { authorization: `Bearer ${res.body.access_token as string}` });
      assert.equal(read.status, 200, JSON.stringify(read.body));
    });
  });
});
