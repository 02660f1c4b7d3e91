import { X509Certificate } from 'node:crypto';
import { ConfigError } from '../../../config.ts';
import type { Db, Trx } from '../../../db/client.ts';
import { KeyDecryptionFailed, seal, unseal, type KeyEncryptionKey } from '../../auth/key-encryption.ts';
import { generateRoot, issueSigningCertificate, type CertificateAndKey } from './pki.ts';
import * as repo from './repo.ts';
import { createPayloadSigner, JWK_SET_PATH, PAYLOAD_SIGNING_ALGORITHM, payloadJwk, type PayloadSigner } from './signer.ts';

/**
 * The sandbox's payload signing, generated once and kept with the database: a root CA, and per
 * host a certificate it issued, renewed under the same root before it expires
 * (docs/decisions/0032-payload-signing.md).
 */
const DAY_MS = 86_400_000;
/** A certificate this close to its end is replaced at start-up, so payers never see one expire. */
export const RENEW_BEFORE_DAYS = 30;
/** The JWK Set lists at most this many keys of a host (the signing one and older, still valid ones). */
export const MAX_LISTED_KEYS = 5;
/** The additional data the root's sealed key is bound to (a signing key's is its kid). */
const ROOT_SEAL_ID = 'payload-signing-root';

/** The host a PUBLIC_URL names (no port), and the JWK Set's address under it. */
export function signingAddress(publicUrl: string): { host: string; jku: string } {
  const url = new URL(publicUrl);
  return { host: url.hostname, jku: new URL(JWK_SET_PATH, url).toString() };
}

function open(kek: KeyEncryptionKey, id: string, sealed: string): string {
  try {
    return unseal(kek.key, id, sealed);
  } catch (error) {
    if (!(error instanceof KeyDecryptionFailed)) throw error;
    const given = kek.source === 'KEY_ENCRYPTION_KEY' ? 'KEY_ENCRYPTION_KEY' : `KEY_ENCRYPTION_KEY is unset and the key in ${kek.source}`;
    throw new ConfigError(`${given} does not open payload-signing key ${id}: this database's keys were sealed under another key-encryption key`);
  }
}

async function rootOf(trx: Trx, kek: KeyEncryptionKey, now: Date): Promise<CertificateAndKey> {
  if (!(await repo.findAuthority(trx))) {
    const root = await generateRoot(now);
    await repo.insertAuthority(trx, root.certificateDer.toString('base64'), seal(kek.key, ROOT_SEAL_ID, root.privateKeyPem));
  }
  const row = await repo.findAuthority(trx);
  if (!row) throw new Error('the payload-signing root vanished after it was written');
  return { certificateDer: Buffer.from(row.certificate, 'base64'), privateKeyPem: open(kek, ROOT_SEAL_ID, row.private_key_sealed) };
}

async function issueKey(trx: Trx, kek: KeyEncryptionKey, host: string, now: Date): Promise<void> {
  const root = await rootOf(trx, kek, now);
  const leaf = await issueSigningCertificate(root, host, now);
  const jwk = await payloadJwk([leaf.certificateDer, root.certificateDer]);
  await repo.insertPayloadSigningKey(trx, {
    kid: jwk.kid,
    host,
    algorithm: PAYLOAD_SIGNING_ALGORITHM,
    certificate: leaf.certificateDer.toString('base64'),
    privateKeySealed: seal(kek.key, jwk.kid, leaf.privateKeyPem),
    notAfter: new X509Certificate(leaf.certificateDer).validToDate,
  });
}

/**
 * Start-up: makes sure the root and a certificate for PUBLIC_URL's host exist (under a lock, so
 * that processes starting together create one set, not one each) and returns the signer.
 */
export async function preparePayloadSigner(db: Db, kek: KeyEncryptionKey, options: { publicUrl: string; now: Date }): Promise<PayloadSigner> {
  const { host, jku } = signingAddress(options.publicUrl);
  const renewAt = new Date(options.now.getTime() + RENEW_BEFORE_DAYS * DAY_MS);
  return db.transaction().execute(async (trx) => {
    await repo.lockPayloadSigning(trx);
    const current = (await repo.validPayloadSigningKeys(trx, host, options.now, 1))[0];
    if (!current || current.not_after <= renewAt) await issueKey(trx, kek, host, options.now);
    const root = await repo.findAuthority(trx);
    const keys = await repo.validPayloadSigningKeys(trx, host, options.now, MAX_LISTED_KEYS);
    const [signing, ...older] = keys;
    if (!root || !signing) throw new Error('the payload-signing key vanished after it was written');
    const rootDer = Buffer.from(root.certificate, 'base64');
    const chainOf = (certificate: string) => [Buffer.from(certificate, 'base64'), rootDer];
    return createPayloadSigner({
      privateKeyPem: open(kek, signing.kid, signing.private_key_sealed),
      chain: chainOf(signing.certificate),
      jku,
      others: older.map((key) => chainOf(key.certificate)),
    });
  });
}
