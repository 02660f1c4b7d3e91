import { randomBytes } from 'node:crypto';
import type { Db, DbExecutor, Trx } from '../../db/client.ts';
import { badRequest, notFound } from '../../http/errors.ts';
import type { ListQueries } from '../../http/list-queries.ts';
import { findCharge, findChargeAtLocation, type ChargeWithPayment } from '../charges/repo.ts';
import { brCodeDataUri, dynamicBrCodeOf, listInterval, listPage, merchantName } from '../charges/service.ts';
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
  return payloadLocation(publicUrl, row.tipo_cob === 'cobv' ? 'cobv/' : '', row.token);
}

/** A payload's location under PAYLOAD_PATH: the host, the kind's prefix (`cobv/`, `rec/`, none for a cob) and the token. */
export function payloadLocation(publicUrl: string, prefix: '' | 'cobv/' | 'rec/', token: string): string {
  return `${new URL(publicUrl).host}${PAYLOAD_PATH}/${prefix}${token}`;
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

const locationNotFound = (id: string) => notFound('PAYLOAD_LOCATION_NOT_FOUND', `The account has no payload location ${id}`);

/** A location id as a path gives it (loc and locrec): digits naming a bigint, else no location. */
export function locationId(id: string): bigint | null {
  return /^[0-9]{1,18}$/.test(id) ? BigInt(id) : null;
}

/** The account's location with that id, with the txid of the charge it serves; another account's is not found. */
export async function getLocation(db: DbExecutor, accountId: bigint, id: string): Promise<LinkedLocation> {
  const key = locationId(id);
  const row = key === null ? undefined : await repo.findLocation(db, accountId, key);
  if (!row) throw locationNotFound(id);
  return row;
}

/** DELETE /v2/loc/{id}/txid: the location stops serving its charge (if it served one); the charge's status is unchanged. */
export async function unlinkLocation(db: Db, accountId: bigint, id: string): Promise<LinkedLocation> {
  const key = locationId(id);
  if (key === null) throw locationNotFound(id);
  return db.transaction().execute(async (trx) => {
    const row = await repo.lockLocation(trx, accountId, key);
    if (!row) throw locationNotFound(id);
    if (row.charge_id !== null) await repo.unlinkCharge(trx, row.id);
    return { ...row, txid: null, charge_id: null };
  });
}

export interface LocationListQuery {
  inicio: string;
  fim: string;
  txIdPresente?: boolean | undefined;
  tipoCob?: TipoCob | undefined;
  'paginacao.paginaAtual'?: number | undefined;
  'paginacao.itensPorPagina'?: number | undefined;
}

/** GET /v2/loc: the account's locations created in [inicio, fim] (at most 31 days apart). */
export async function listLocationsOf(deps: { lists: ListQueries }, accountId: bigint, query: LocationListQuery) {
  const { from, to } = listInterval(query.inicio, query.fim);
  const page = listPage(query);
  const filter = { accountId, from, to, txIdPresente: query.txIdPresente, tipoCob: query.tipoCob };
  const { rows, total } = await deps.lists.run(accountId, (db) => repo.listLocations(db, filter, page));
  const parametros = {
    inicio: from.toISOString(),
    fim: to.toISOString(),
    ...(query.txIdPresente !== undefined ? { txIdPresente: query.txIdPresente } : {}),
    ...(query.tipoCob !== undefined ? { tipoCob: query.tipoCob } : {}),
    paginacao: page.paginacao(total),
  };
  return { parametros, rows };
}

/**
 * GET /v2/loc/{id}/qrcode: the dynamic BR Code of the location (the one its charge carries, or
 * the location's own while it serves none) and a PNG data URI of its QR code.
 */
export async function locationQrCode(deps: { db: DbExecutor; publicUrl: string }, accountId: bigint, id: string) {
  const row = await getLocation(deps.db, accountId, id);
  const charge = row.txid === null ? undefined : await findCharge(deps.db, accountId, row.txid, row.tipo_cob);
  const qrcode = charge?.pix_copia_e_cola ?? dynamicBrCodeOf(deps.publicUrl, row, await merchantName(deps.db, accountId));
  const imagemQrcode = await brCodeDataUri(qrcode);
  return { qrcode, imagemQrcode };
}

/**
 * The charge a public location serves (`/qr/v2/{token}`): a token that names no location of
 * that kind, or a location serving no charge, is not found.
 */
export async function chargeAtLocation(db: DbExecutor, token: string, tipoCob: TipoCob): Promise<ChargeWithPayment> {
  const charge = /^[a-z0-9]{32}$/.test(token) ? await findChargeAtLocation(db, token, tipoCob) : undefined;
  if (!charge) throw notFound('PAYLOAD_NOT_FOUND', 'No charge is served at this location');
  return charge;
}
