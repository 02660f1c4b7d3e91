/**
 * The payload locations of recurrences (BCB's `locrec`): made free, taken by a recurrence that
 * names it, served publicly at `/qr/v2/rec/{token}` as a signed payload while a recurrence holds
 * it. Which recurrence a location serves is the recurrence's to say (its loc_id).
 */
import type { DbExecutor } from '../../db/client.ts';
import { notFound } from '../../http/errors.ts';
import type { ListQueries } from '../../http/list-queries.ts';
import { listInterval, listPage } from '../charges/service.ts';
import { locationId, newLocationToken, payloadLocation } from '../locations/service.ts';

export interface RecLocationRow {
  id: bigint;
  account_id: bigint;
  token: string;
  created_at: Date;
  /** The recurrence the location serves, when one does. */
  id_rec: string | null;
}

const COLUMNS = ['rec_locations.id', 'rec_locations.account_id', 'rec_locations.token', 'rec_locations.created_at'] as const;

/** The location of a recurrence's payload as BCB writes it: PUBLIC_URL's host and `/qr/v2/rec/{token}`. */
export function recLocationUrl(publicUrl: string, token: string): string {
  return payloadLocation(publicUrl, 'rec/', token);
}

function linked(db: DbExecutor) {
  return db.selectFrom('rec_locations').leftJoin('recurrences', 'recurrences.loc_id', 'rec_locations.id').select(COLUMNS).select('recurrences.id_rec as id_rec');
}

/** POST /v2/locrec: a new location of the account, serving no recurrence. */
export async function createRecLocation(db: DbExecutor, accountId: bigint, now: Date): Promise<RecLocationRow> {
  const row = await db
    .insertInto('rec_locations')
    .values({ account_id: accountId, token: newLocationToken(), created_at: now })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
  return { ...row, id_rec: null };
}

const recLocationNotFound = (id: string) => notFound('PAYLOAD_LOCATION_NOT_FOUND', `The account has no payload location of recurrences ${id}`);

/** GET /v2/locrec/{id}: the account's location; another account's is not found. */
export async function getRecLocation(db: DbExecutor, accountId: bigint, id: string): Promise<RecLocationRow> {
  const key = locationId(id);
  const row = key === null ? undefined : await linked(db).where('rec_locations.account_id', '=', accountId).where('rec_locations.id', '=', key).executeTakeFirst();
  if (!row) throw recLocationNotFound(id);
  return row;
}

/**
 * DELETE /v2/locrec/{id}/idRec: the location stops serving its recurrence, if it served one;
 * the recurrence keeps its status and shows no location.
 */
export async function unlinkRecLocation(db: DbExecutor, accountId: bigint, id: string): Promise<RecLocationRow> {
  const row = await getRecLocation(db, accountId, id);
  if (row.id_rec !== null) await db.updateTable('recurrences').set({ loc_id: null }).where('loc_id', '=', row.id).where('account_id', '=', accountId).execute();
  return { ...row, id_rec: null };
}

export interface RecLocationListQuery {
  inicio: string;
  fim: string;
  idRecPresente?: boolean | undefined;
  convenio?: string | undefined;
  'paginacao.paginaAtual'?: number | undefined;
  'paginacao.itensPorPagina'?: number | undefined;
}

/**
 * GET /v2/locrec: the account's locations created in [inicio, fim] (at most 31 days apart),
 * newest first. `idRecPresente=true` and `convenio` select by the recurrence a location serves.
 */
export async function listRecLocationsOf(deps: { lists: ListQueries }, accountId: bigint, query: RecLocationListQuery) {
  const { from, to } = listInterval(query.inicio, query.fim);
  const page = listPage(query);
  const { rows, total } = await deps.lists.run(accountId, async (db) => {
    let q = linked(db)
      .where('rec_locations.account_id', '=', accountId)
      .where((eb) => eb.between('rec_locations.created_at', from, to));
    if (query.idRecPresente !== undefined) q = q.where('recurrences.id', query.idRecPresente ? 'is not' : 'is', null);
    // A convênio is the recurrence's: only locations serving one of that convênio.
    if (query.convenio !== undefined) q = q.where('recurrences.convenio', '=', query.convenio);
    const [found, counted] = await Promise.all([
      q.orderBy('rec_locations.created_at', 'desc').orderBy('rec_locations.id', 'desc').offset(page.offset).limit(page.limit).execute(),
      q.clearSelect().select((eb) => eb.fn.countAll<bigint>().as('total')).executeTakeFirstOrThrow(),
    ]);
    return { rows: found, total: Number(counted.total) };
  });
  const parametros = {
    inicio: from.toISOString(),
    fim: to.toISOString(),
    ...(query.idRecPresente !== undefined ? { idRecPresente: query.idRecPresente } : {}),
    ...(query.convenio !== undefined ? { recebedor: { convenio: query.convenio } } : {}),
    paginacao: page.paginacao(total),
  };
  return { parametros, rows };
}
