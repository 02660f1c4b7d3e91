import { randomBytes } from 'node:crypto';
import type { DbExecutor, Trx } from '../../db/client.ts';
import { badRequest } from '../../http/errors.ts';
import * as repo from './repo.ts';
import type { LinkedLocation, LocationRow, TipoCob } from './repo.ts';

/** The public path of a location's payload: `/qr/v2/{token}` (cob) or `/qr/v2/cobv/{token}`. */
export const PAYLOAD_PATH = '/qr/v2';

/** A pixUrlAccessToken: 32 hexadecimal characters (128 random bits), unguessable. */
export function newLocationToken(): string {
  return randomBytes(16).toString('hex');
}

/**
 * The location of a payload as BCB writes it: PUBLIC_URL without its scheme, and the path
 * (`127.0.0.1:8080/qr/v2/cobv/...`), at most 77 characters (config.ts bounds the host).
 */
export function locationUrl(publicUrl: string, row: Pick<LocationRow, 'tipo_cob' | 'token'>): string {
  const { host } = new URL(publicUrl);
  return `${host}${PAYLOAD_PATH}/${row.tipo_cob === 'cobv' ? 'cobv/' : ''}${row.token}`;
}

/** A new location of the account for a kind of charge. */
export function createLocation(db: DbExecutor, accountId: bigint, tipoCob: TipoCob, now: Date): Promise<LocationRow> {
  return repo.insertLocation(db, { accountId, tipoCob, token: newLocationToken(), now });
}

/**
 * The location a new charge takes: the one the request names (`loc.id`), which must be the
 * account's, of the same kind and linked to no charge (else a 400); a new one when none is named.
 */
export async function takeLocation(trx: Trx, accountId: bigint, tipoCob: TipoCob, locId: number | bigint | undefined, now: Date): Promise<LocationRow> {
  if (locId === undefined) return createLocation(trx, accountId, tipoCob, now);
  const row: LinkedLocation | undefined = await repo.lockLocation(trx, accountId, BigInt(locId));
  if (!row) throw badRequest('LOCATION_NOT_FOUND', `loc.id ${locId} is not a location of this account`);
  if (row.tipo_cob !== tipoCob) throw badRequest('LOCATION_WRONG_KIND', `loc.id ${locId} is a location of tipoCob ${row.tipo_cob}, not ${tipoCob}`);
  if (row.txid !== null) throw badRequest('LOCATION_IN_USE', `loc.id ${locId} is already linked to the charge ${row.txid}`);
  return row;
}
