import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import { ConfigError } from '../../config.ts';
import type { Db, DbExecutor } from '../../db/client.ts';
import { conflict, notFound } from '../../http/errors.ts';
import { KeyDecryptionFailed, seal, unseal, type KeyEncryptionKey } from './key-encryption.ts';
import { systemClock } from '../../lib/clock.ts';
import * as repo from './repo.ts';

/**
 * The lifecycle of the keys that sign access tokens (decisions.md, Authentication): the newest
 * active key signs, every active key verifies, a rotation adds a key that signs from then on,
 * and a retired key neither signs nor verifies. Private keys are stored sealed under the
 * key-encryption key. Processes learn of changes through KeyRing (key-ring.ts).
 */
export const SIGNING_ALGORITHM = 'EdDSA';
/** The operator's list shows at most this many keys, newest first. */
export const MAX_LISTED_KEYS = 200;

export type SigningKeyStatus = 'signing' | 'verifying' | 'retired';

export interface SigningKeyView {
  kid: string;
  algorithm: string;
  status: SigningKeyStatus;
  createdAt: string;
  retiredAt: string | null;
}

function view(row: repo.SigningKeyRow, signing: boolean): SigningKeyView {
  return {
    kid: row.kid,
    algorithm: row.algorithm,
    status: row.retired_at ? 'retired' : signing ? 'signing' : 'verifying',
    createdAt: row.created_at.toISOString(),
    retiredAt: row.retired_at?.toISOString() ?? null,
  };
}

async function newSigningKey(kek: KeyEncryptionKey): Promise<repo.NewSigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALGORITHM, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const privateKeySealed = seal(kek.key, kid, JSON.stringify(await exportJWK(privateKey)));
  return { kid, algorithm: SIGNING_ALGORITHM, publicJwk: JSON.stringify(publicJwk), privateKeySealed };
}

/**
 * Rows written before private keys were sealed get sealed now; a retired one loses its private
 * part instead, since it never signs again.
 */
async function sealPlainKeys(db: DbExecutor, kek: KeyEncryptionKey): Promise<void> {
  for (const row of await repo.plainSigningKeys(db)) {
    const sealed = row.retired_at ? null : seal(kek.key, row.kid, JSON.stringify(repo.jsonColumn(row.private_jwk)));
    await repo.sealPlainKey(db, row.kid, sealed);
  }
}

/**
 * Fails with one line when `kek` does not open every active key: a wrong key is a start-up
 * error, not a 500 on every token request, and no process adds a key the others cannot open.
 */
export async function checkKeyEncryptionKey(db: DbExecutor, kek: KeyEncryptionKey): Promise<void> {
  for (const row of await repo.activeSigningKeys(db)) {
    if (row.private_key_sealed === null) continue;
    try {
      unseal(kek.key, row.kid, row.private_key_sealed);
    } catch (error) {
      if (!(error instanceof KeyDecryptionFailed)) throw error;
      const given = kek.source === 'KEY_ENCRYPTION_KEY' ? 'KEY_ENCRYPTION_KEY' : `KEY_ENCRYPTION_KEY is unset and the key in ${kek.source}`;
      throw new ConfigError(`${given} does not open signing key ${row.kid}: this database's signing keys were sealed under another key-encryption key`);
    }
  }
}

/** Start-up: seals rows from before, checks the key-encryption key, and makes sure a key signs. */
export async function prepareSigningKeys(db: Db, kek: KeyEncryptionKey): Promise<void> {
  await sealPlainKeys(db, kek);
  await checkKeyEncryptionKey(db, kek);
  // Under a lock, so that processes starting together on an empty table create one key, not one each.
  await db.transaction().execute(async (trx) => {
    await repo.lockSigningKeys(trx);
    if ((await repo.countActiveSigningKeys(trx)) === 0) await repo.insertSigningKey(trx, await newSigningKey(kek));
  });
}

export async function listSigningKeys(db: DbExecutor): Promise<SigningKeyView[]> {
  const rows = await repo.listSigningKeys(db, MAX_LISTED_KEYS);
  // The same order as the processes' (repo.activeSigningKeys): the first active row signs.
  const signing = rows.find((row) => row.retired_at === null)?.kid;
  return rows.map((row) => view(row, row.kid === signing));
}

/** A new key that signs from now on (in other processes within KeyRing's refresh); the others still verify. */
export async function rotateSigningKey(db: DbExecutor, kek: KeyEncryptionKey): Promise<SigningKeyView> {
  await sealPlainKeys(db, kek);
  await checkKeyEncryptionKey(db, kek);
  const created = await repo.insertSigningKey(db, await newSigningKey(kek));
  return view({ ...created, algorithm: SIGNING_ALGORITHM, retired_at: null }, true);
}

/** Stops a key signing and verifying. The last active key cannot go: a rotation comes first. */
export async function retireSigningKey(db: Db, kid: string): Promise<SigningKeyView> {
  return db.transaction().execute(async (trx) => {
    await repo.lockSigningKeys(trx);
    const key = await repo.findSigningKey(trx, kid);
    if (!key) throw notFound('SIGNING_KEY_NOT_FOUND', `No signing key has kid ${kid}`);
    if (key.retired_at) return view(key, false);
    if ((await repo.countActiveSigningKeys(trx)) <= 1) {
      throw conflict('SIGNING_KEY_LAST_ACTIVE', 'This is the only active signing key: rotate first (POST /admin/signing-keys), then retire it');
    }
    // Keys live in real time, as the tokens they sign.
    const retired = await repo.retireSigningKey(trx, kid, systemClock.now());
    if (!retired) throw new Error(`signing key ${kid} changed under the lock`);
    return view(retired, false);
  });
}
