import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../../config.ts';
import { systemClock } from '../../lib/clock.ts';
import { issueCertificate } from '../../lib/certificate-authority.ts';
import type { ClientCertificate } from './sender.ts';

/** Where the sandbox keeps the client certificate it generates: DATA_DIR/webhook-client/. */
export const SANDBOX_CLIENT_DIRECTORY = 'webhook-client';
const DAY_MS = 86_400_000;

function readPair(certFile: string, keyFile: string): ClientCertificate {
  return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
}

const block = (pem: string, label: string) => new RegExp(`-----BEGIN ${label}-----[\\s\\S]+?-----END ${label}-----\\n?`).exec(pem)?.[0];

/**
 * The sandbox's own client certificate, generated on first use and kept under DATA_DIR (mode
 * 0600, key and certificate in one file), so that every process on that DATA_DIR, and every
 * restart, presents the same one. The file appears whole (a hard link of a finished one): of
 * two processes generating at once, the first link wins and both read it.
 */
async function sandboxPair(dataDir: string): Promise<ClientCertificate> {
  const dir = join(dataDir, SANDBOX_CLIENT_DIRECTORY);
  const file = join(dir, 'client.pem');
  if (!existsSync(file)) {
    const issued = await issueCertificate({ commonName: 'pix-api sandbox webhook client', notAfter: new Date(systemClock.now().getTime() + 10 * 365 * DAY_MS) });
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(temporary, issued.keyPem + issued.certPem, { mode: 0o600 });
    try {
      linkSync(temporary, file);
    } catch (error) {
      if ((error as { code?: string }).code !== 'EEXIST') throw error;
    } finally {
      unlinkSync(temporary);
    }
  }
  const pem = readFileSync(file, 'utf8');
  const cert = block(pem, 'CERTIFICATE');
  const key = block(pem, 'PRIVATE KEY');
  if (!cert || !key) throw new Error(`${file} does not hold a certificate and its private key`);
  return { cert, key };
}

/**
 * The client certificate BCB's callbacks present (mutual TLS, as BCB requires of a receiving
 * PSP): the configured files, else in the sandbox one of its own; production without files
 * presents none.
 */
export function webhookClientCertificate(config: Pick<Config, 'webhookClient' | 'mode' | 'dataDir'>): () => Promise<ClientCertificate | null> {
  const files = config.webhookClient;
  if (files) return () => Promise.resolve(readPair(files.certFile, files.keyFile));
  if (config.mode === 'sandbox') return () => sandboxPair(config.dataDir);
  return () => Promise.resolve(null);
}
