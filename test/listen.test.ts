import assert from 'node:assert/strict';
import { X509Certificate, randomUUID } from 'node:crypto';
import { readFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { issueCertificate } from '../src/lib/certificate-authority.ts';
import { runTrigger } from '../src/remote/trigger.ts';
import { createTestDatabase, onPostgres, type TestDatabase } from './harness.ts';
import { demoDirectory, killAll, run, sandboxBanner, started, stop, listenAddresses, type Proc } from './processes.ts';

/**
 * `pix-api listen` as a developer runs it: the sandbox is a process of its own on another port
 * (as a remote one would be), the listener another, and the receiver a local HTTPS server that
 * checks each signature and the client certificate it is shown (mutual TLS).
 */

const ADMIN_TOKEN = 'listen-test-admin-token-0123456';

interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  /** The SHA-256 fingerprint of the client certificate presented, if any. */
  clientCertificate: string | null;
}

/** An HTTPS receiver that asks for a client certificate (and takes any: the test checks whose it is). */
async function startReceiver() {
  const ca = await issueCertificate({ commonName: `Listen Test CA ${randomUUID()}`, isCa: true });
  const server = await issueCertificate({ commonName: 'localhost', issuer: ca, dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  const dir = mkdtempSync(join(tmpdir(), 'pix-listen-'));
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, ca.certPem);
  const received: Received[] = [];
  let answer: (r: Received) => number = () => 200;
  const https: Server = createServer({ cert: server.certPem, key: server.keyPem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const peer = (req.socket as TLSSocket).getPeerX509Certificate();
      const entry = {
        path: req.url ?? '/',
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')])),
        body: Buffer.concat(chunks).toString('utf8'),
        clientCertificate: peer?.fingerprint256 ?? null,
      };
      received.push(entry);
      res.writeHead(answer(entry)).end('ok');
    });
  });
  await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
  return {
    origin: `https://localhost:${(https.address() as AddressInfo).port}`,
    caFile,
    received,
    answerWith(f: (r: Received) => number) {
      answer = f;
    },
    async waitFor(count: number, timeoutMs = 20_000): Promise<Received[]> {
      const until = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > until) throw new Error(`expected ${count} deliveries, got ${received.length}: ${JSON.stringify(received.map((r) => r.path))}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return received.slice();
    },
    close: async () => {
      https.closeAllConnections();
      await new Promise<void>((resolve) => https.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe('pix-api listen: a sandbox on another port, a receiver here, mutual TLS', { timeout: 180_000 }, () => {
  let testDb: TestDatabase | undefined;
  let dataDir: string;
  let service: Proc;
  let base: string;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let account: string;
  let key: string;
  let auth: Record<string, string>;
  let secret: string;
  let demo: string;
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

  const api = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : null };
  };

  const startListen = async (...extra: string[]) => {
    const proc = run(
      ['listen', '--url', base, '--admin-token', ADMIN_TOKEN, '--account', account, '--forward-to', `${receiver.origin}/hooks`, '--forward-pix-to', `${receiver.origin}/bcb`, '--mtls', '--ca', receiver.caFile, ...extra],
      {},
    );
    await started(proc, (out) => /^ready: listener /m.test(out));
    return proc;
  };

  const pixIn = (amount: string, txid?: string) =>
    api('POST', '/sandbox/pix/incoming', admin, { pixKey: key, amount, payer: { name: 'Joao', document: '52998224725' }, ...(txid ? { txid } : {}) });

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'pix-listen-data-'));
    const env: Record<string, string> = { DATA_DIR: dataDir, ADMIN_TOKEN, HOST: '127.0.0.1', PIX_MODE: 'sandbox', SETTLEMENT_DELAY_MS: '50' };
    if (onPostgres) {
      testDb = await createTestDatabase();
      env.DATABASE_URL = testDb.url!;
    }
    service = run(['serve'], env);
    await started(service, sandboxBanner);
    base = listenAddresses(service.stdout()).main;
    demo = demoDirectory(service.stdout());
    const credentials = JSON.parse(readFileSync(join(demo, 'credentials.json'), 'utf8')) as { accountId: number; pixKeys: { key: string }[] };
    account = String(credentials.accountId);
    key = credentials.pixKeys[0]!.key;
    const cert = { 'x-ssl-client-cert': readFileSync(join(demo, 'client.crt.urlencoded'), 'utf8') };
    const token = await api('POST', '/api/auth/token', cert, JSON.parse(readFileSync(join(demo, 'token-request.json'), 'utf8')));
    auth = { ...cert, authorization: `Bearer ${token.body!.access_token as string}` };
    secret = (await api('GET', '/api/webhooks/signing-secret', auth)).body!.secret as string;
    receiver = await startReceiver();
  });
  after(async () => {
    killAll();
    await receiver?.close();
    await testDb?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('forwards each delivery signed as sent, shows the service\'s client certificate, and the log keeps the local answer', async () => {
    const listen = await startListen();
    const started = await api('GET', `/sandbox/listeners?accountId=${account}`, admin);
    const listeners = started.body!.data as { id: string; connected: boolean }[];
    assert.equal(listeners.length, 1);
    assert.equal(listeners[0]!.connected, true);
    // The account registered nothing itself: the listener's registrations are its own, not listed.
    assert.deepEqual((await api('GET', '/api/webhooks', auth)).body!.webhooks, []);

    // The first answer is a 500: the delivery fails with it, and is retried on its schedule.
    receiver.answerWith((r) => (receiver.received.indexOf(r) === 0 ? 500 : 200));
    const first = await pixIn('1.23');
    assert.equal(first.status, 201);
    const [failed, retried] = await receiver.waitFor(2);
    for (const r of [failed!, retried!]) {
      assert.equal(r.path, '/hooks');
      const verified = new Webhook(secret).verify(r.body, r.headers) as { type: string; data: { endToEndId: string } };
      assert.equal(verified.type, 'RECEIVE');
      assert.equal(verified.data.endToEndId, first.body!.endToEndId);
      // A root event goes over TLS with no client certificate, as the service sends it.
      assert.equal(r.clientCertificate, null);
    }
    assert.equal(failed!.headers['webhook-id'], retried!.headers['webhook-id']);
    // The attempt is recorded once its answer is in: the log catches up a moment after the receiver.
    let statuses: (number | null)[] = [];
    for (let i = 0; i < 100 && statuses.length < 2; i++) {
      const logs = await api('GET', '/api/webhooks/logs?eventType=cash_in', auth);
      statuses = (logs.body!.data as { statusCode: number | null }[]).map((l) => l.statusCode).sort();
      if (statuses.length < 2) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.deepEqual(statuses, [200, 500]);
    assert.match(listen.stdout(), /RECEIVE .* 500 /);
    assert.match(listen.stdout(), /RECEIVE .* 200 /);

    // BCB's callback of a paid cob goes to {forward-pix-to}/pix with the service's client certificate.
    const txid = `listen0cobranca0${Date.now()}`.slice(0, 30).padEnd(26, '0');
    assert.equal((await api('PUT', `/cob/${txid}`, auth, { calendario: { expiracao: 3600 }, valor: { original: '2.00' } })).status, 201);
    const paid = await api('POST', `/sandbox/cob/${txid}/pay`, admin, {});
    assert.equal(paid.status, 201, JSON.stringify(paid.body));
    const all = await receiver.waitFor(4);
    const callback = all.find((r) => r.path === '/bcb/pix');
    assert.ok(callback, JSON.stringify(all.map((r) => r.path)));
    assert.equal((JSON.parse(callback.body) as { pix: { txid: string }[] }).pix[0]!.txid, txid);
    const pem = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(readFileSync(join(dataDir, 'webhook-client', 'client.pem'), 'utf8'))![0];
    const presented = new X509Certificate(pem).fingerprint256;
    assert.equal(callback.clientCertificate, presented);
    new Webhook(secret).verify(callback.body, callback.headers);

    // An event made on demand (pix-api trigger) arrives through the listener, once, signed.
    const lines: string[] = [];
    await runTrigger(['transfer.rejected', '--reason', 'AC03', '--url', base, '--admin-token', ADMIN_TOKEN, '--dir', demo], (line) => lines.push(line));
    const withTransfer = await receiver.waitFor(5);
    const transfers = withTransfer.filter((r) => r.path === '/hooks' && (JSON.parse(r.body) as { type: string }).type === 'TRANSFER');
    assert.equal(transfers.length, 1, lines.join('\n'));
    const transfer = new Webhook(secret).verify(transfers[0]!.body, transfers[0]!.headers) as { data: { status: string } };
    assert.equal(transfer.data.status, 'ERROR', JSON.stringify(transfer));

    // Ctrl-C: nothing is left registered, the key's webhook is gone again.
    listen.child.kill('SIGINT');
    assert.equal(await listen.exited, 0, listen.stderr());
    assert.match(listen.stdout(), /stopped: nothing is left registered/);
    assert.deepEqual((await api('GET', `/sandbox/listeners?accountId=${account}`, admin)).body!.data, []);
    assert.equal((await api('GET', `/v2/webhook/${encodeURIComponent(key)}`, auth)).status, 404);
  });

  it('killed mid-way, it loses nothing: what failed meanwhile is retried and arrives once it is back', async () => {
    let listen = await startListen('--name', 'resumable');
    const before = receiver.received.length;
    receiver.answerWith(() => 200);
    listen.child.kill('SIGKILL');
    await listen.exited;
    const sent = await pixIn('4.56');
    assert.equal(sent.status, 201);
    // Nothing can arrive while it is away; started again under its name, it resumes.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    assert.equal(receiver.received.length, before, JSON.stringify(receiver.received.slice(before - 1).map((r) => [r.path, r.headers['webhook-id'], r.body.slice(0, 80)])));
    listen = await startListen('--name', 'resumable');
    const arrived = await receiver.waitFor(before + 1, 40_000);
    const got = arrived.slice(before).map((r) => (JSON.parse(r.body) as { data: { endToEndId: string } }).data.endToEndId);
    assert.ok(got.includes(sent.body!.endToEndId as string), JSON.stringify(got));
    await stop(listen);
    assert.deepEqual((await api('GET', `/sandbox/listeners?accountId=${account}`, admin)).body!.data, []);
  });
});
