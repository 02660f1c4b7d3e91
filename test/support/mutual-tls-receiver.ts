/**
 * An HTTPS receiver that asks for a client certificate and records the one presented: what a
 * BCB callback's receiver is (the PSP presents its certificate, mutual TLS).
 */
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { issueCertificate } from '../../src/lib/certificate-authority.ts';

export interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** SHA-256 fingerprint of the client certificate presented, if any. */
  client: string | undefined;
}

/** Starts one; `dir` receives its CA file (for WEBHOOK_CA_FILE). */
export async function mutualTlsReceiver(dir: string) {
  const ca = await issueCertificate({ commonName: 'Callback receiver CA', isCa: true });
  const server = await issueCertificate({ commonName: 'localhost', issuer: ca, dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  const caFile = join(dir, 'receiver-ca.pem');
  writeFileSync(caFile, ca.certPem);
  const received: Received[] = [];
  let answers: number[] = [];
  const https: Server = createServer({ cert: server.certPem, key: server.keyPem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      const client = peer && 'fingerprint256' in peer && peer.fingerprint256 ? peer.fingerprint256 : undefined;
      received.push({ path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), client });
      const status = client ? (answers.shift() ?? 200) : 401;
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
  return {
    origin: `https://localhost:${(https.address() as AddressInfo).port}`,
    caFile,
    received,
    answer: (statuses: number[]) => (answers = statuses),
    close: () => new Promise<void>((resolve) => { https.closeAllConnections(); https.close(() => resolve()); }),
  };
}
