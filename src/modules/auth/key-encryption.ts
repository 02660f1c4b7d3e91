import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, type Config } from '../../config.ts';

/**
 * Private signing keys at rest: AES-256-GCM under the operator's KEY_ENCRYPTION_KEY, with the
 * key's kid as additional data, so a sealed key copied onto another row does not open.
 * Format: `v1.<iv>.<ciphertext>.<tag>`, each part base64url.
 */
const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

/** The file that holds the generated key in sandbox mode, when KEY_ENCRYPTION_KEY is unset. */
export const KEY_FILE_NAME = 'key-encryption-key';

export class KeyDecryptionFailed extends Error {
  override name = 'KeyDecryptionFailed';
}

export function seal(kek: Buffer, kid: string, plaintext: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', kek, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(kid, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [VERSION, iv, body, cipher.getAuthTag()].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
}

/** The plaintext, or KeyDecryptionFailed when `kek` is not the key it was sealed under (or it was altered). */
export function unseal(kek: Buffer, kid: string, sealed: string): string {
  const [version, iv, body, tag, ...rest] = sealed.split('.');
  if (version !== VERSION || iv === undefined || body === undefined || tag === undefined || rest.length > 0) {
    throw new KeyDecryptionFailed(`signing key ${kid} is not sealed in a format this version knows`);
  }
  try {
    const decipher = createDecipheriv('aes-256-gcm', kek, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(kid, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new KeyDecryptionFailed(`signing key ${kid} does not open under this key-encryption key`);
  }
}

/** Where the key came from, for start-up messages that say what to fix. */
export interface KeyEncryptionKey {
  readonly key: Buffer;
  readonly source: string;
}

/**
 * KEY_ENCRYPTION_KEY when set (always in production: config.ts requires it). In sandbox mode
 * without it, a key generated once and kept in DATA_DIR/key-encryption-key (mode 0600), so that
 * restarts and every process on that DATA_DIR share it.
 */
export function resolveKeyEncryptionKey(config: Pick<Config, 'keyEncryptionKey' | 'dataDir' | 'mode'>): KeyEncryptionKey {
  if (config.keyEncryptionKey) return { key: config.keyEncryptionKey, source: 'KEY_ENCRYPTION_KEY' };
  if (config.mode === 'production') throw new ConfigError('KEY_ENCRYPTION_KEY is required when PIX_MODE=production');
  const file = join(config.dataDir, KEY_FILE_NAME);
  try {
    return { key: readKeyFile(file) ?? createKeyFile(config.dataDir, file), source: file };
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(`KEY_ENCRYPTION_KEY is unset and ${file} cannot be read or written: ${(error as Error).message}`);
  }
}

function readKeyFile(file: string): Buffer | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== KEY_BYTES) throw new ConfigError(`KEY_ENCRYPTION_KEY is unset and ${file} does not hold 32 bytes in base64`);
  return key;
}

/**
 * Written under a name of its own, then linked into place: a link fails when the name exists, so
 * of several processes starting at once exactly one key wins and nobody reads a half-written file.
 */
function createKeyFile(dataDir: string, file: string): Buffer {
  mkdirSync(dataDir, { recursive: true });
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(draft, `${randomBytes(KEY_BYTES).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(draft, 0o600);
  try {
    linkSync(draft, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(draft);
  }
  const key = readKeyFile(file);
  if (!key) throw new ConfigError(`KEY_ENCRYPTION_KEY is unset and ${file} vanished while it was being created`);
  return key;
}
