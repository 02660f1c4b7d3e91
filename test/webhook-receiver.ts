import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueCertificate } from '../src/lib/certificate-authority.ts';
import type { Message } from '../src/modules/webhooks/sender.ts';

export interface ReceivedWebhook {
  path: string;
  headers: Record<string, string>;
  body: string;
  at: Date;
}

/** A receiver's answer: a status, or a status with headers (a redirect's Location) and a body. */
export type ReceiverAnswer = number | { status: number; headers?: Record<string, string>; body?: string };

export interface WebhookReceiver {
  /** https://localhost:{port} */
  readonly origin: string;
  /** The receiver's CA, for WEBHOOK_CA_FILE. */
  readonly caFile: string;
  readonly received: ReceivedWebhook[];
  /** Decides the answer to each request (default 200); may wait to simulate a slow receiver. */
  respond: (request: ReceivedWebhook, index: number) => ReceiverAnswer | Promise<ReceiverAnswer>;
  /** Resolves when `count` requests have arrived (or rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

/**
 * A local HTTPS receiver with its own CA (a server certificate for localhost and 127.0.0.1),
 * recording every delivery. The service reaches it with WEBHOOK_CA_FILE = caFile and
 * WEBHOOK_ALLOW_PRIVATE=true.
 */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  // A name of its own: two receivers' CAs trusted together (one CA file) must not be taken for each other.
  const ca = await issueCertificate({ commonName: `Test Webhook CA ${randomUUID()}`, isCa: true });
  const server = await issueCertificate({ commonName: 'localhost', issuer: ca, dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  const dir = mkdtempSync(join(tmpdir(), 'pix-webhook-'));
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, ca.certPem);
  const waiters: { count: number; resolve: () => void }[] = [];
  const receiver: WebhookReceiver = {
    origin: '',
    caFile,
    received: [],
    respond: () => 200,
    waitFor(count, timeoutMs = 10_000) {
      if (receiver.received.length >= count) return Promise.resolve(receiver.received.slice());
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`expected ${count} webhooks, got ${receiver.received.length}`)), timeoutMs);
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve(receiver.received.slice());
          },
        });
      });
    },
    close: async () => {
      // Connections still waiting on a slow answer would hold close() up: end them too.
      const closed = new Promise<void>((resolve) => https.close(() => resolve()));
      https.closeAllConnections();
      await closed;
      rmSync(dir, { recursive: true, force: true });
    },
  };
  const https: Server = createServer({ cert: server.certPem, key: server.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry: ReceivedWebhook = {
        path: req.url ?? '/',
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')])),
        body: Buffer.concat(chunks).toString('utf8'),
        at: new Date(),
      };
      const index = receiver.received.push(entry) - 1;
      for (const w of waiters.filter((w) => receiver.received.length >= w.count)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
      void Promise.resolve(receiver.respond(entry, index)).then((answer) => {
        const { status, headers = {}, body } = typeof answer === 'number' ? { status: answer } : answer;
        if (res.destroyed) return;
        res.writeHead(status, { 'content-type': 'text/plain', ...headers }).end(body ?? (status < 300 ? 'ok' : 'nope'));
      });
    });
  });
  await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
  (receiver as { origin: string }).origin = `https://localhost:${(https.address() as AddressInfo).port}`;
  return receiver;
}

/** A message for the sender to post to `url`: an empty RECEIVE with a fresh id and a fixed secret. */
export const webhookMessage = (url: string): Message => ({
  url,
  messageId: `msg_${randomUUID().replaceAll('-', '')}`,
  body: JSON.stringify({ type: 'RECEIVE', data: {} }),
  headers: {},
  secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
});
