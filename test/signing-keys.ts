import { importJWK, type CryptoKey, type JWK } from 'jose';
import type { Db } from '../src/db/client.ts';
import { unseal } from '../src/modules/auth/key-encryption.ts';
import { TEST_KEY_ENCRYPTION_KEY } from './harness.ts';

export const testKek = () => Buffer.from(TEST_KEY_ENCRYPTION_KEY, 'base64');

/** The service's private signing key `kid`, opened with the tests' key-encryption key: to forge what only the service could sign. */
export async function serviceSigningKey(db: Db, kid: string): Promise<CryptoKey> {
  const row = await db.selectFrom('signing_keys').select('private_key_sealed').where('kid', '=', kid).executeTakeFirstOrThrow();
  if (!row.private_key_sealed) throw new Error(`signing key ${kid} has no sealed private key`);
  return (await importJWK(JSON.parse(unseal(testKek(), kid, row.private_key_sealed)) as JWK, 'EdDSA')) as CryptoKey;
}
