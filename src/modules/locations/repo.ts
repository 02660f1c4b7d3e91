import type { DbExecutor, Trx } from '../../db/client.ts';
import { prepared } from '../../db/prepared.ts';
import type { TipoCob } from '../../db/schema.ts';

export type { TipoCob };

export interface LocationRow {
  id: bigint;
  account_id: bigint;
  tipo_cob: TipoCob;
  token: string;
  created_at: Date;
}

/** A location with the txid of the charge it is linked to, when it is. */
export interface LinkedLocation extends LocationRow {
  txid: string | null;
  charge_id: bigint | null;
}

const COLUMNS = ['locations.id', 'locations.account_id', 'locations.tipo_cob', 'locations.token', 'locations.created_at'] as const;

export function insertLocation(db: DbExecutor, row: { accountId: bigint; tipoCob: TipoCob; token: string; now: Date }): Promise<LocationRow> {
  return prepared('location_insert', db.insertInto('locations'))
    .values({ account_id: row.accountId, tipo_cob: row.tipoCob, token: row.token, created_at: row.now })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
}

function linked(db: DbExecutor) {
  return db
    .selectFrom('locations')
    .leftJoin('charges', 'charges.loc_id', 'locations.id')
    .select(COLUMNS)
    .select(['charges.txid as txid', 'charges.id as charge_id']);
}

/** The account's location with that id; another account's is not found. */
export function findLocation(db: DbExecutor, accountId: bigint, id: bigint): Promise<LinkedLocation | undefined> {
  return linked(db).where('locations.account_id', '=', accountId).where('locations.id', '=', id).executeTakeFirst();
}

/** The location a payload URL names (public: any account's). */
export function findLocationByToken(db: DbExecutor, token: string): Promise<LinkedLocation | undefined> {
  return linked(db).where('locations.token', '=', token).executeTakeFirst();
}

/** Locks the account's location until the transaction ends, with the charge linked to it. */
export async function lockLocation(trx: Trx, accountId: bigint, id: bigint): Promise<LinkedLocation | undefined> {
  const row = await trx.selectFrom('locations').select(COLUMNS).where('account_id', '=', accountId).where('id', '=', id).forUpdate().executeTakeFirst();
  if (!row) return undefined;
  const charge = await trx.selectFrom('charges').select(['id', 'txid']).where('loc_id', '=', id).executeTakeFirst();
  return { ...row, txid: charge?.txid ?? null, charge_id: charge?.id ?? null };
}

export interface LocationFilter {
  accountId: bigint;
  /** Both inclusive. */
  from: Date;
  to: Date;
  /** Only locations linked to a charge (true) or free ones (false). */
  txIdPresente?: boolean | undefined;
  tipoCob?: TipoCob | undefined;
}

/** A page of the account's locations created in [from, to], newest first, and how many match. */
export async function listLocations(db: DbExecutor, f: LocationFilter, page: { offset: number; limit: number }) {
  let q = linked(db)
    .where('locations.account_id', '=', f.accountId)
    .where((eb) => eb.between('locations.created_at', f.from, f.to));
  if (f.tipoCob !== undefined) q = q.where('locations.tipo_cob', '=', f.tipoCob);
  if (f.txIdPresente !== undefined) q = q.where('charges.id', f.txIdPresente ? 'is not' : 'is', null);
  const [rows, counted] = await Promise.all([
    q.orderBy('locations.created_at', 'desc').orderBy('locations.id', 'desc').offset(page.offset).limit(page.limit).execute(),
    q.clearSelect().select((eb) => eb.fn.countAll<bigint>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(counted.total) };
}

/**
 * Unlinks the charge a location serves (DELETE /v2/loc/{id}/txid): the charge keeps its status
 * and shows no location; the location serves nothing until a charge takes it again.
 */
export async function unlinkCharge(trx: Trx, locationId: bigint): Promise<void> {
  await trx.updateTable('charges').set({ loc_id: null }).where('loc_id', '=', locationId).execute();
}
