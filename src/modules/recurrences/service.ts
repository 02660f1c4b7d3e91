/**
 * Pix Automático's recurrences on the receiver's side (BCB's `rec`): made by the account that
 * will charge, read, listed and revised, with their rules kept here for every dialect. A
 * recurrence binds a payer (the devedor) to the receiver's charges; its status starts CRIADA and
 * changes as the payer approves or rejects it and either side cancels it, each change kept in
 * its history. Decision: docs/decisions/0047-pix-automatico-recurrences.md.
 */
import type { Db, DbExecutor, Trx } from '../../db/client.ts';
import type { ExternalReceiver, RecPeriodicidade, RecPolitica, RecStatus } from '../../db/schema.ts';
import { AppError, badRequest, checkEach, notFound, unprocessable } from '../../http/errors.ts';
import type { ListQueries } from '../../http/list-queries.ts';
import type { Clock } from '../../lib/clock.ts';
import { parseDateBound } from '../../lib/dates.ts';
import { isValidCnpj, isValidCpf } from '../../lib/document.ts';
import { randomAlphanumeric } from '../../lib/ids.ts';
import { parseDecimal2 } from '../../lib/money.ts';
import { findAccount } from '../accounts/repo.ts';
import { buildRecurrenceBrCode } from '../../lib/brcode.ts';
import { listInterval, listPage, merchantName, MERCHANT_CITY } from '../charges/service.ts';
import { locationUrl } from '../locations/service.ts';
import { recLocationUrl } from './locations.ts';
import { saoPauloDay } from '../cobv/due.ts';
import { cancelRecurrence } from './lifecycle.ts';
import { selectRecurrences, type RecurrenceRow } from './rows.ts';

export type { RecurrenceRow };

export interface RecurrenceDeps {
  readonly db: Db;
  readonly clock: Clock;
  /** The receiver PSP's ISPB: the third part of every idRec. */
  readonly ispb: string;
  readonly lists: ListQueries;
}

/** What a recurrence is asked to be (BCB's RecSolicitada), as the dialects hand it over. */
export interface RecurrenceInput {
  vinculo: { objeto?: string | undefined; contrato: string; devedor: { cpf?: string | undefined; cnpj?: string | undefined; nome: string } };
  calendario: { dataInicial: string; dataFinal?: string | undefined; periodicidade: RecPeriodicidade };
  valor?: { valorRec?: string | undefined; valorMinimoRecebedor?: string | undefined } | undefined;
  politicaRetentativa: RecPolitica;
  loc?: number | undefined;
  recebedor?: { convenio?: string | undefined } | undefined;
  ativacao?: { dadosJornada?: { txid: string } | undefined } | undefined;
}

/** What a receiver may change (BCB's RecRevisada). */
export interface RecurrenceRevision {
  status?: 'CANCELADA' | undefined;
  vinculo?: { devedor?: { nome: string } | undefined } | undefined;
  loc?: number | undefined;
  calendario?: { dataInicial?: string | undefined } | undefined;
  ativacao?: { dadosJornada?: { txid: string } | undefined } | undefined;
}

/** Statuses after which a recurrence takes no more changes nor charges. */
const ENDED: ReadonlySet<RecStatus> = new Set(['CANCELADA', 'REJEITADA', 'EXPIRADA']);

const invalid = (message: string, field: string) => new AppError(400, 'RECURRENCE_INVALID', message, { field });
const recurrenceNotFound = (idRec: string) => notFound('RECURRENCE_NOT_FOUND', `The account has no recurrence ${idRec}`);

/** BCB's idRec: R, R (retries allowed) or N, the ISPB, the creation day and 11 random characters. */
export function newIdRec(politica: RecPolitica, ispb: string, at: Date): string {
  return `R${politica === 'PERMITE_3R_7D' ? 'R' : 'N'}${ispb}${saoPauloDay(at).replaceAll('-', '')}${randomAlphanumeric(11)}`;
}

/** A calendar date of the request, refused with its field when it is not a real day. */
function day(text: string, field: string): string {
  const parsed = parseDateBound(text);
  if (!parsed?.isDate) throw invalid(`${field} must be a date (YYYY-MM-DD)`, field);
  return text;
}

function amount(text: string | undefined, field: string): bigint | null {
  if (text === undefined) return null;
  const centavos = parseDecimal2(text);
  if (centavos === null || centavos <= 0n) throw invalid(`${field} must be a decimal with 2 places greater than 0`, field);
  return centavos;
}

/** The devedor's document, checked: a CPF or a CNPJ with valid check digits, not both. */
function devedor(input: RecurrenceInput['vinculo']['devedor']): { type: 'CPF' | 'CNPJ'; document: string } {
  if ((input.cpf === undefined) === (input.cnpj === undefined)) throw invalid('vinculo.devedor must carry either cpf or cnpj', 'vinculo.devedor');
  if (input.cpf !== undefined) {
    if (!isValidCpf(input.cpf)) throw invalid('vinculo.devedor.cpf must be a valid CPF: 11 digits with valid check digits', 'vinculo.devedor.cpf');
    return { type: 'CPF', document: input.cpf };
  }
  if (!isValidCnpj(input.cnpj!)) throw invalid('vinculo.devedor.cnpj must be a valid CNPJ: 14 characters with valid check digits', 'vinculo.devedor.cnpj');
  return { type: 'CNPJ', document: input.cnpj! };
}

/** Pix Automático's receiver is a company: an account without a CNPJ charges no recurrence. */
function receiverIsCompany(documentType: string | undefined): void {
  if (documentType !== 'CNPJ') throw invalid('recebedor: a recurrence is charged by a company; this account is not one (no CNPJ)', 'recebedor');
}

/** The account's free location of recurrences that `loc` names, locked; else the 400 BCB lists. */
async function takeRecLocation(trx: Trx, accountId: bigint, loc: number, exceptRecurrence?: bigint): Promise<bigint> {
  const row = await trx.selectFrom('rec_locations').select('id').where('account_id', '=', accountId).where('id', '=', BigInt(loc)).forUpdate().executeTakeFirst();
  if (!row) throw invalid(`loc ${loc} is not a location of recurrences of this account`, 'loc');
  let holder = trx.selectFrom('recurrences').select('id_rec').where('loc_id', '=', row.id);
  if (exceptRecurrence !== undefined) holder = holder.where('id', '!=', exceptRecurrence);
  const held = await holder.executeTakeFirst();
  if (held) throw invalid(`loc ${loc} is already the location of the recurrence ${held.id_rec}`, 'loc');
  return row.id;
}

/** A recurrence's request, checked (every rule at once). */
interface CheckedRecurrence {
  debtor: { type: 'CPF' | 'CNPJ'; document: string };
  dataInicial: string;
  dataFinal: string | null;
  valorRec: bigint | null;
  valorMinimo: bigint | null;
}

/** The rules of a recurrence's terms, whoever its receiver is; `more` are the caller's own, checked with them. */
export async function checkRecurrence(input: RecurrenceInput, now: Date, ...more: (() => unknown)[]): Promise<CheckedRecurrence> {
  const today = saoPauloDay(now);
  const [debtor, dataInicial, dataFinal, valorRec, valorMinimo] = await checkEach(
    () => devedor(input.vinculo.devedor),
    () => {
      const value = day(input.calendario.dataInicial, 'calendario.dataInicial');
      if (value < today) throw invalid(`calendario.dataInicial ${value} is before the recurrence's creation (${today})`, 'calendario.dataInicial');
      return value;
    },
    () => {
      if (input.calendario.dataFinal === undefined) return null;
      const value = day(input.calendario.dataFinal, 'calendario.dataFinal');
      if (value < input.calendario.dataInicial) throw invalid(`calendario.dataFinal ${value} is before calendario.dataInicial`, 'calendario.dataFinal');
      return value;
    },
    () => amount(input.valor?.valorRec, 'valor.valorRec'),
    () => {
      if (input.valor?.valorRec !== undefined && input.valor.valorMinimoRecebedor !== undefined) {
        throw invalid('valor.valorMinimoRecebedor cannot be given with valor.valorRec (a fixed amount has no minimum)', 'valor.valorMinimoRecebedor');
      }
      return amount(input.valor?.valorMinimoRecebedor, 'valor.valorMinimoRecebedor');
    },
    ...more,
  );
  return { debtor, dataInicial, dataFinal, valorRec, valorMinimo };
}

/** A recurrence's row, CRIADA: of an account here, or (accountId null) of another institution's receiver. */
export function recurrenceValues(
  input: RecurrenceInput,
  checked: CheckedRecurrence,
  receiver: { accountId: bigint; locId: bigint | null } | { external: ExternalReceiver },
  idRec: string,
  now: Date,
) {
  return {
    id_rec: idRec,
    account_id: 'accountId' in receiver ? receiver.accountId : null,
    recebedor_externo: 'external' in receiver ? JSON.stringify(receiver.external) : null,
    loc_id: 'accountId' in receiver ? receiver.locId : null,
    status: 'CRIADA' as const,
    contrato: input.vinculo.contrato,
    objeto: input.vinculo.objeto ?? null,
    devedor_document_type: checked.debtor.type,
    devedor_document: checked.debtor.document,
    devedor_nome: input.vinculo.devedor.nome,
    data_inicial: checked.dataInicial,
    data_final: checked.dataFinal,
    periodicidade: input.calendario.periodicidade,
    valor_rec_centavos: checked.valorRec,
    valor_minimo_centavos: checked.valorMinimo,
    politica_retentativa: input.politicaRetentativa,
    convenio: input.recebedor?.convenio ?? null,
    jornada: 'AGUARDANDO_DEFINICAO' as const,
    jornada_txid: input.ativacao?.dadosJornada?.txid ?? null,
    history: JSON.stringify([{ status: 'CRIADA', data: now.toISOString() }]),
    created_at: now,
    updated_at: now,
  };
}

/** POST /v2/rec: a new recurrence, CRIADA, charged by the account (a company) to the devedor. */
export async function createRecurrence(deps: RecurrenceDeps, accountId: bigint, input: RecurrenceInput): Promise<RecurrenceRow> {
  const now = deps.clock.now();
  const account = await findAccount(deps.db, accountId);
  const checked = await checkRecurrence(input, now, () => receiverIsCompany(account?.document_type));
  return deps.db.transaction().execute(async (trx) => {
    const locId = input.loc === undefined ? null : await takeRecLocation(trx, accountId, input.loc);
    const inserted = await trx
      .insertInto('recurrences')
      .values(recurrenceValues(input, checked, { accountId, locId }, newIdRec(input.politicaRetentativa, deps.ispb, now), now))
      .returning('id_rec')
      .executeTakeFirstOrThrow();
    return selectRecurrences(trx).where('recurrences.id_rec', '=', inserted.id_rec).executeTakeFirstOrThrow();
  });
}

/** GET /v2/rec/{idRec}: the account's recurrence; another account's is not found. */
export async function getRecurrence(db: DbExecutor, accountId: bigint, idRec: string): Promise<RecurrenceRow> {
  const row = await selectRecurrences(db).where('recurrences.account_id', '=', accountId).where('recurrences.id_rec', '=', idRec).executeTakeFirst();
  if (!row) throw recurrenceNotFound(idRec);
  return row;
}

/**
 * PATCH /v2/rec/{idRec}: the receiver cancels it (status CANCELADA, by USUARIO_RECEBEDOR, code
 * SLCR), renames its devedor, moves it to another free location or another first day (while
 * CRIADA), or names the cob of journey 3. An ended recurrence takes nothing.
 */
export async function reviseRecurrence(deps: RecurrenceDeps, accountId: bigint, idRec: string, patch: RecurrenceRevision): Promise<RecurrenceRow> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('recurrences').selectAll().where('account_id', '=', accountId).where('id_rec', '=', idRec).forUpdate().executeTakeFirst();
    if (!row) throw recurrenceNotFound(idRec);
    if (ENDED.has(row.status)) throw new AppError(400, 'RECURRENCE_ENDED', `The recurrence ${idRec} is ${row.status}: it takes no more changes`);
    const changes: Record<string, unknown> = {};
    const created = saoPauloDay(row.created_at);
    await checkEach(
      () => {
        if (patch.loc === undefined) return;
        if (row.status !== 'CRIADA') throw invalid(`loc changes only while the recurrence is CRIADA (it is ${row.status})`, 'loc');
      },
      () => {
        const value = patch.calendario?.dataInicial;
        if (value === undefined) return;
        if (row.status !== 'CRIADA') throw invalid(`calendario.dataInicial changes only while the recurrence is CRIADA (it is ${row.status})`, 'calendario.dataInicial');
        day(value, 'calendario.dataInicial');
        if (value < created) throw invalid(`calendario.dataInicial ${value} is before the recurrence's creation (${created})`, 'calendario.dataInicial');
        if (row.data_final !== null && value > row.data_final) throw invalid(`calendario.dataInicial ${value} is after calendario.dataFinal`, 'calendario.dataInicial');
        changes.data_inicial = value;
      },
    );
    if (patch.loc !== undefined) changes.loc_id = await takeRecLocation(trx, accountId, patch.loc, row.id);
    if (patch.vinculo?.devedor?.nome !== undefined) changes.devedor_nome = patch.vinculo.devedor.nome;
    if (patch.ativacao?.dadosJornada?.txid !== undefined) changes.jornada_txid = patch.ativacao.dadosJornada.txid;
    if (Object.keys(changes).length > 0) await trx.updateTable('recurrences').set({ ...changes, updated_at: now }).where('id', '=', row.id).execute();
    if (patch.status === 'CANCELADA') {
      const current = await selectRecurrences(trx).where('recurrences.id', '=', row.id).executeTakeFirstOrThrow();
      return cancelRecurrence(trx, current, { solicitante: 'USUARIO_RECEBEDOR', codigo: 'SLCR' }, now);
    }
    return selectRecurrences(trx).where('recurrences.id', '=', row.id).executeTakeFirstOrThrow();
  });
}

export interface RecurrenceListQuery {
  inicio: string;
  fim: string;
  cpf?: string | undefined;
  cnpj?: string | undefined;
  locationPresente?: boolean | undefined;
  status?: string | undefined;
  convenio?: string | undefined;
  'paginacao.paginaAtual'?: number | undefined;
  'paginacao.itensPorPagina'?: number | undefined;
}

/** GET /v2/rec: the account's recurrences created in [inicio, fim] (at most 31 days apart), newest first. */
export async function listRecurrencesOf(deps: { lists: ListQueries }, accountId: bigint, query: RecurrenceListQuery) {
  const { from, to } = listInterval(query.inicio, query.fim);
  if (query.cpf !== undefined && query.cnpj !== undefined) throw badRequest('INVALID_FILTER', 'cpf and cnpj cannot be used together');
  const page = listPage(query);
  const { rows, total } = await deps.lists.run(accountId, async (db) => {
    let q = selectRecurrences(db)
      .where('recurrences.account_id', '=', accountId)
      .where((eb) => eb.between('recurrences.created_at', from, to));
    if (query.cpf !== undefined) q = q.where('recurrences.devedor_document_type', '=', 'CPF').where('recurrences.devedor_document', '=', query.cpf);
    if (query.cnpj !== undefined) q = q.where('recurrences.devedor_document_type', '=', 'CNPJ').where('recurrences.devedor_document', '=', query.cnpj);
    if (query.locationPresente !== undefined) q = q.where('recurrences.loc_id', query.locationPresente ? 'is not' : 'is', null);
    if (query.status !== undefined) q = q.where('recurrences.status', '=', query.status as RecStatus);
    if (query.convenio !== undefined) q = q.where('recurrences.convenio', '=', query.convenio);
    const [found, counted] = await Promise.all([
      q.orderBy('recurrences.created_at', 'desc').orderBy('recurrences.id', 'desc').offset(page.offset).limit(page.limit).execute(),
      q.clearSelect().select((eb) => eb.fn.countAll<bigint>().as('total')).executeTakeFirstOrThrow(),
    ]);
    return { rows: found, total: Number(counted.total) };
  });
  const parametros = {
    inicio: from.toISOString(),
    fim: to.toISOString(),
    ...(query.cpf !== undefined ? { cpf: query.cpf } : {}),
    ...(query.cnpj !== undefined ? { cnpj: query.cnpj } : {}),
    ...(query.locationPresente !== undefined ? { locationPresente: query.locationPresente } : {}),
    ...(query.status !== undefined ? { status: query.status } : {}),
    ...(query.convenio !== undefined ? { recebedor: { convenio: query.convenio } } : {}),
    paginacao: page.paginacao(total),
  };
  return { parametros, rows };
}

/** The recurrence a public location serves (`/qr/v2/rec/{token}`): none is not found. */
export async function recurrenceAtLocation(db: DbExecutor, token: string, options: { forUpdate?: boolean } = {}): Promise<RecurrenceRow | undefined> {
  if (!/^[a-z0-9]{32}$/.test(token)) return undefined;
  const query = selectRecurrences(db).where('rec_locations.token', '=', token);
  return (options.forUpdate ? query.forUpdate('recurrences') : query).executeTakeFirst();
}

/** BCB's `dadosQR`: the code a payer scans to approve the recurrence, by the journey it starts. */
export interface RecurrenceCode {
  jornada: 'JORNADA_2' | 'JORNADA_3' | 'JORNADA_4';
  pixCopiaECola: string;
}

const txidMismatch = (message: string) => new AppError(400, 'RECURRENCE_TXID_MISMATCH', message, { field: 'txid' });

/**
 * GET /v2/rec/{idRec}[?txid=]: the recurrence's own code (journey 2), or with a charge's txid the
 * composite code of that charge and the recurrence (a cob: journey 3; a cobv: journey 4). Either
 * needs the locations it points at: without them there is no code (undefined). A txid that names
 * no charge of the account, a cobv for a recurrence started by journey 3, or another cob than the
 * one the recurrence names for it is refused.
 */
export async function recurrenceCode(deps: { db: DbExecutor; publicUrl: string }, row: RecurrenceRow, txid?: string): Promise<RecurrenceCode | undefined> {
  // Another institution's recurrence has no code here: its receiver's PSP makes it.
  const accountId = row.account_id;
  if (accountId === null) return undefined;
  const recLocation = row.loc_token === null ? undefined : recLocationUrl(deps.publicUrl, row.loc_token);
  const merchant = async () => ({ merchantName: await merchantName(deps.db, accountId), merchantCity: MERCHANT_CITY });
  if (txid === undefined) return recLocation === undefined ? undefined : { jornada: 'JORNADA_2', pixCopiaECola: buildRecurrenceBrCode({ recLocation, ...(await merchant()) }) };
  const charge = await deps.db
    .selectFrom('charges')
    .leftJoin('locations', 'locations.id', 'charges.loc_id')
    .select(['charges.tipo_cob', 'locations.token'])
    .where('charges.account_id', '=', accountId)
    .where('charges.txid', '=', txid)
    .executeTakeFirst();
  if (!charge) throw txidMismatch(`txid ${txid} names no charge of this account`);
  if (charge.tipo_cob === 'cobv' && (row.jornada === 'JORNADA_3' || row.jornada_txid !== null)) {
    throw txidMismatch(`txid ${txid} is a due-date charge, and the recurrence is started by an immediate one (journey 3)`);
  }
  if (charge.tipo_cob === 'cob' && row.jornada_txid !== null && row.jornada_txid !== txid) {
    throw txidMismatch(`txid ${txid} is not the immediate charge the recurrence names (ativacao.dadosJornada.txid ${row.jornada_txid})`);
  }
  if (recLocation === undefined || charge.token === null) return undefined;
  const chargeLocation = locationUrl(deps.publicUrl, { tipo_cob: charge.tipo_cob, token: charge.token });
  return { jornada: charge.tipo_cob === 'cob' ? 'JORNADA_3' : 'JORNADA_4', pixCopiaECola: buildRecurrenceBrCode({ recLocation, chargeLocation, ...(await merchant()) }) };
}

export { ENDED as ENDED_RECURRENCE_STATUSES };

/** A code's recurrence that its payer cannot approve, and why. */
export const notApprovable = (reason: string) => unprocessable('RECURRENCE_NOT_APPROVABLE', `The code's recurrence cannot be approved: ${reason}`);
