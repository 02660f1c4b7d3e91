import { sql } from 'kysely';
import type { DbExecutor, Trx } from '../../db/client.ts';

/** The JWK columns are jsonb: node-postgres parses them, a driver that does not leaves text. */
export function jsonColumn(value: unknown): Record<string, unknown> {
  return (typeof value === 'string' ? JSON.parse(value) : value) as Record<string, unknown>;
}

export interface NewSigningKey {
  kid: string;
  algorithm: string;
  publicJwk: string;
  privateKeySealed: string;
}

/** The keys that sign and verify, newest first (the first one signs). */
export function activeSigningKeys(db: DbExecutor) {
  return db
    .selectFrom('signing_keys')
    .select(['kid', 'algorithm', 'public_jwk', 'private_key_sealed', 'created_at'])
    .where('retired_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('kid', 'desc')
    .execute();
}

/** Every key, newest first, as the operator lists them. */
export function listSigningKeys(db: DbExecutor, limit: number) {
  return db
    .selectFrom('signing_keys')
    .select(['kid', 'algorithm', 'created_at', 'retired_at'])
    .orderBy('created_at', 'desc')
    .orderBy('kid', 'desc')
    .limit(limit)
    .execute();
}

/** Rows written before private keys were sealed. */
export function plainSigningKeys(db: DbExecutor) {
  return db.selectFrom('signing_keys').select(['kid', 'private_jwk', 'retired_at']).where('private_jwk', 'is not', null).execute();
}

/** Replaces a plain private key by its sealed form; a key already sealed by another process is left alone. */
export async function sealPlainKey(db: DbExecutor, kid: string, sealed: string | null): Promise<void> {
  await db
    .updateTable('signing_keys')
    .set({ private_jwk: null, private_key_sealed: sealed })
    .where('kid', '=', kid)
    .where('private_jwk', 'is not', null)
    .execute();
}

export async function insertSigningKey(db: DbExecutor, key: NewSigningKey): Promise<{ kid: string; created_at: Date }> {
  return db
    .insertInto('signing_keys')
    .values({ kid: key.kid, algorithm: key.algorithm, public_jwk: key.publicJwk, private_key_sealed: key.privateKeySealed })
    .returning(['kid', 'created_at'])
    .executeTakeFirstOrThrow();
}

/** Arbitrary constant: the advisory lock under which the set of active keys changes. */
const SIGNING_KEYS_LOCK = 72_620_014;

/** Serializes changes to the active keys (a first key, a retirement) across processes. */
export async function lockSigningKeys(trx: Trx): Promise<void> {
  await sql`select pg_advisory_xact_lock(${SIGNING_KEYS_LOCK})`.execute(trx);
}

export function findSigningKey(db: DbExecutor, kid: string) {
  return db.selectFrom('signing_keys').select(['kid', 'algorithm', 'created_at', 'retired_at']).where('kid', '=', kid).executeTakeFirst();
}

export async function countActiveSigningKeys(db: DbExecutor): Promise<number> {
  const row = await db
    .selectFrom('signing_keys')
    .select((eb) => eb.fn.countAll<bigint>().as('count'))
    .where('retired_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Retires a key and forgets its private part: it never signs again. */
export async function retireSigningKey(db: DbExecutor, kid: string, at: Date) {
  return db
    .updateTable('signing_keys')
    .set({ retired_at: at, private_jwk: null, private_key_sealed: null })
    .where('kid', '=', kid)
    .where('retired_at', 'is', null)
    .returning(['kid', 'algorithm', 'created_at', 'retired_at'])
    .executeTakeFirst();
}

export type SigningKeyRow = Awaited<ReturnType<typeof listSigningKeys>>[number];
