import { sql } from 'kysely';
import type { DbExecutor, Trx } from '../../../db/client.ts';

/** Arbitrary constant: the advisory lock under which the root and the signing keys are created. */
const PAYLOAD_SIGNING_LOCK = 72_620_032;

/** Serializes the creation of the PKI across processes starting together. */
export async function lockPayloadSigning(trx: Trx): Promise<void> {
  await sql`select pg_advisory_xact_lock(${PAYLOAD_SIGNING_LOCK})`.execute(trx);
}

export function findAuthority(db: DbExecutor) {
  return db.selectFrom('payload_signing_authority').select(['certificate', 'private_key_sealed']).executeTakeFirst();
}

/** Inserts the root unless one exists; the caller reads back the one that stands. */
export async function insertAuthority(db: DbExecutor, certificate: string, privateKeySealed: string): Promise<void> {
  await db
    .insertInto('payload_signing_authority')
    .values({ certificate, private_key_sealed: privateKeySealed })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

export interface NewPayloadSigningKey {
  kid: string;
  host: string;
  algorithm: string;
  certificate: string;
  privateKeySealed: string;
  notAfter: Date;
}

export async function insertPayloadSigningKey(db: DbExecutor, key: NewPayloadSigningKey): Promise<void> {
  await db
    .insertInto('payload_signing_keys')
    .values({
      kid: key.kid,
      host: key.host,
      algorithm: key.algorithm,
      certificate: key.certificate,
      private_key_sealed: key.privateKeySealed,
      not_after: key.notAfter,
    })
    .execute();
}

/** The host's keys still valid after `validAfter`, the longest-lived first (the first one signs). */
export function validPayloadSigningKeys(db: DbExecutor, host: string, validAfter: Date, limit: number) {
  return db
    .selectFrom('payload_signing_keys')
    .select(['kid', 'algorithm', 'certificate', 'private_key_sealed', 'not_after'])
    .where('host', '=', host)
    .where('not_after', '>', validAfter)
    .orderBy('not_after', 'desc')
    .orderBy('kid', 'desc')
    .limit(limit)
    .execute();
}
