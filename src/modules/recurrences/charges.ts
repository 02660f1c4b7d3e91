/**
 * Recurring charges of Pix Automático on the receiver's side (BCB's `cobr`): the payment
 * instruction a receiver sends for one cycle of an approved recurrence, from D-10 to D-2 of the
 * day it settles. Its first attempt goes to the payer's PSP at once (SOLICITADA); the network
 * (network.ts) carries it from there. The receiver reads and lists them, cancels one before the
 * day of its first attempt, and, when the recurrence allows it, asks for up to 3 retries within
 * 7 days after the due date. Decision: docs/decisions/0048-pix-automatico-cycle.md.
 */
import type { Db, DbExecutor, Trx } from '../../db/client.ts';
import { AppError, badRequest, checkEach, notFound, unprocessable } from '../../http/errors.ts';
import type { ListQueries } from '../../http/list-queries.ts';
import type { Clock } from '../../lib/clock.ts';
import { parseDateBound } from '../../lib/dates.ts';
import { pixIdentifier, randomAlphanumeric } from '../../lib/ids.ts';
import { parseDecimal2 } from '../../lib/money.ts';
import { findAccount } from '../accounts/repo.ts';
import { GENERATED_TXID_LENGTH, listInterval, listPage } from '../charges/service.ts';
import { saoPauloDay } from '../cobv/due.ts';
import { recurringChargeCallback } from './callbacks.ts';
import { cycleOf, endOf, lastAttemptDay, receiverMayCancel, retryRefusal, sendingWindow, settlementAt, settlementDate, type WindowDays } from './cycle.ts';
import { cancelRecurringCharge } from './lifecycle.ts';
import { chargeDetail, detailsOf, selectRecurrences, selectRecurringCharges, type RecurrenceRow, type RecurringChargeDetail } from './rows.ts';

export interface RecurringChargeDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly windowDays: WindowDays;
  readonly lists: ListQueries;
}

/** BCB's CobRSolicitada, as the dialects hand it over. */
export interface RecurringChargeInput {
  idRec: string;
  infoAdicional?: string | undefined;
  calendario: { dataDeVencimento: string };
  valor: { original: string };
  ajusteDiaUtil?: boolean | undefined;
  devedor?: { email?: string | undefined; logradouro?: string | undefined; cidade?: string | undefined; uf?: string | undefined; cep?: string | undefined } | undefined;
  recebedor: { agencia?: string | undefined; conta: string; tipoConta: string };
}

/** The payer's PSP answers an instruction this long after it arrives (well within the 2 hours it has). */
export const PAYER_ANSWERS_AFTER_MS = 60_000;

/** Statuses after which a recurring charge takes nothing more. */
export const ENDED_CHARGE: ReadonlySet<string> = new Set(['CONCLUIDA', 'REJEITADA', 'CANCELADA', 'EXPIRADA']);
const OPEN_ATTEMPT: ReadonlySet<string> = new Set(['SOLICITADA', 'AGENDADA']);

const invalid = (message: string, field: string) => new AppError(400, 'RECURRING_CHARGE_INVALID', message, { field });
const notFoundOf = (txid: string) => notFound('RECURRING_CHARGE_NOT_FOUND', `The account has no recurring charge ${txid}`);

function isTaken(error: unknown, constraint: string): boolean {
  const e = error as { code?: string; constraint?: string; message?: string };
  return e.code === '23505' && `${e.constraint ?? ''}${e.message ?? ''}`.includes(constraint);
}

/** The ISPB of the recurrence's payer: its PSP makes the attempts' end-to-end ids. */
export function payerIspb(rec: Pick<RecurrenceRow, 'pagador'>): string {
  return rec.pagador?.ispbParticipante ?? '00000000';
}

/** A new attempt's row: SOLICITADA, sent to the payer's PSP, which answers a minute later. */
export function newAttempt(charge: { id: bigint }, rec: Pick<RecurrenceRow, 'pagador'>, attempt: { position: number; tipo: 'AGND' | 'NTAG' | 'RIFL'; day: string }, at: Date) {
  return {
    charge_id: charge.id,
    position: attempt.position,
    tipo: attempt.tipo,
    data_liquidacao: attempt.day,
    status: 'SOLICITADA' as const,
    end_to_end_id: pixIdentifier('E', payerIspb(rec), settlementAt(attempt.day).getTime() > at.getTime() ? settlementAt(attempt.day) : at),
    history: JSON.stringify([{ status: 'SOLICITADA', data: at.toISOString() }]),
    step: 'answer' as const,
    next_step_at: new Date(at.getTime() + PAYER_ANSWERS_AFTER_MS),
    created_at: at,
    updated_at: at,
  };
}

/** A day of the request (YYYY-MM-DD), refused with its field when it is none. */
function day(text: string, field: string): string {
  const parsed = parseDateBound(text);
  if (!parsed?.isDate) throw invalid(`${field} must be a date (YYYY-MM-DD)`, field);
  return text;
}

/**
 * Whose charges these are: an account of this service (its id), or null for the receivers at
 * other institutions the sandbox plays, whose recurring charges have no account here.
 */
export type ReceiverAccount = bigint | null;

/** The rows of `ReceiverAccount`'s receiver: `column = id`, or `column is null`. */
const ofReceiver = (accountId: ReceiverAccount) => [accountId === null ? ('is' as const) : ('=' as const), accountId] as const;

/** Whether the receiver holds a charge of any kind (cob, cobv, cobr) with this txid. */
async function txidInUse(db: DbExecutor, accountId: ReceiverAccount, txid: string): Promise<boolean> {
  const [charge, recurring] = await Promise.all([
    accountId === null ? undefined : db.selectFrom('charges').select('id').where('account_id', '=', accountId).where('txid', '=', txid).executeTakeFirst(),
    db.selectFrom('recurring_charges').select('id').where('account_id', ...ofReceiver(accountId)).where('txid', '=', txid).executeTakeFirst(),
  ]);
  return charge !== undefined || recurring !== undefined;
}

/** A charge's request, checked (every rule at once): its recurrence, due date, amount and where it settles. */
interface CheckedCharge {
  rec: RecurrenceRow;
  due: string;
  settles: string;
  cycle: number;
  amount: bigint;
  ajuste: boolean;
}

async function checkCharge(deps: RecurringChargeDeps, accountId: ReceiverAccount, txid: string | undefined, input: RecurringChargeInput): Promise<CheckedCharge> {
  const today = saoPauloDay(deps.clock.now());
  const [account, rec] = await Promise.all([
    accountId === null ? undefined : findAccount(deps.db, accountId),
    selectRecurrences(deps.db).where('recurrences.account_id', ...ofReceiver(accountId)).where('recurrences.id_rec', '=', input.idRec).executeTakeFirst(),
  ]);
  const ajuste = input.ajusteDiaUtil ?? true;
  const [, due, amount] = await checkEach(
    () => {
      if (!rec) throw invalid(`idRec ${input.idRec} names no recurrence of this account`, 'idRec');
      if (rec.status !== 'APROVADA') throw invalid(`idRec ${input.idRec}: the recurrence is ${rec.status}, and only an APROVADA one is charged`, 'idRec');
    },
    () => {
      const value = day(input.calendario.dataDeVencimento, 'calendario.dataDeVencimento');
      if (value < today) throw invalid(`calendario.dataDeVencimento ${value} is before the charge's creation (${today})`, 'calendario.dataDeVencimento');
      if (!rec) return value;
      if (value < rec.data_inicial) throw invalid(`calendario.dataDeVencimento ${value} is before the recurrence's calendario.dataInicial (${rec.data_inicial})`, 'calendario.dataDeVencimento');
      if (rec.data_final !== null && value > rec.data_final) {
        throw invalid(`calendario.dataDeVencimento ${value} is after the recurrence's calendario.dataFinal (${rec.data_final})`, 'calendario.dataDeVencimento');
      }
      const settles = settlementDate(value, ajuste);
      const window = sendingWindow(settles, deps.windowDays);
      if (today < window.opens || today > window.closes) {
        throw invalid(
          `calendario.dataDeVencimento ${value}: a charge that settles on ${settles} is sent from ${window.opens} to ${window.closes} (D-10 to D-2), and today is ${today}`,
          'calendario.dataDeVencimento',
        );
      }
      return value;
    },
    () => {
      const centavos = parseDecimal2(input.valor.original);
      if (centavos === null || centavos <= 0n) throw invalid('valor.original must be a decimal with 2 places greater than 0', 'valor.original');
      if (rec?.valor_rec_centavos != null && centavos !== rec.valor_rec_centavos) throw invalid("valor.original must be the recurrence's fixed amount (valor.valorRec)", 'valor.original');
      return centavos;
    },
    () => {
      if (!account) return;
      if (input.recebedor.conta !== account.account_number) throw invalid('recebedor.conta is not the account of this receiver', 'recebedor.conta');
      if (input.recebedor.agencia !== undefined && input.recebedor.agencia !== account.branch) throw invalid('recebedor.agencia is not the branch of this receiver', 'recebedor.agencia');
    },
    async () => {
      if (txid !== undefined && (await txidInUse(deps.db, accountId, txid))) throw invalid(`txid ${txid} is already used by a charge of this account`, 'txid');
    },
  );
  const recurrence = rec!;
  return { rec: recurrence, due, settles: settlementDate(due, ajuste), cycle: cycleOf(recurrence.data_inicial, recurrence.periodicidade, due)!, amount, ajuste };
}

/** The charge and its first attempt, in one transaction: refused when its recurrence's cycle has a charge already. */
async function insertCharge(deps: RecurringChargeDeps, accountId: ReceiverAccount, txid: string, c: CheckedCharge, input: RecurringChargeInput): Promise<bigint> {
  const now = deps.clock.now();
  const compact = (o: object) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
  return deps.db.transaction().execute(async (trx) => {
    const open = await trx
      .selectFrom('recurring_charges')
      .select('txid')
      .where('recurrence_id', '=', c.rec.id)
      .where('cycle', '=', c.cycle)
      .where('status', 'not in', ['REJEITADA', 'CANCELADA'])
      .executeTakeFirst();
    if (open) throw cycleTaken(c.due, open.txid);
    const charge = await trx
      .insertInto('recurring_charges')
      .values({
        account_id: accountId,
        recurrence_id: c.rec.id,
        txid,
        status: 'CRIADA',
        due_date: c.due,
        settlement_date: c.settles,
        cycle: c.cycle,
        ajuste_dia_util: c.ajuste,
        amount_centavos: c.amount,
        info_adicional: input.infoAdicional ?? null,
        recebedor: JSON.stringify(compact(input.recebedor)),
        devedor: input.devedor === undefined ? null : JSON.stringify(compact(input.devedor)),
        history: JSON.stringify([{ status: 'CRIADA', data: now.toISOString() }]),
        next_step_at: endOf(lastAttemptDay({ due_date: c.due, settlement_date: c.settles }, c.rec.politica_retentativa === 'PERMITE_3R_7D')),
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await trx.insertInto('recurring_charge_attempts').values(newAttempt(charge, c.rec, { position: 1, tipo: 'AGND', day: c.settles }, now)).execute();
    return charge.id;
  });
}

/**
 * PUT /v2/cobr/{txid} (a txid of the receiver's) and POST /v2/cobr (one of the PSP's): a charge
 * of an APROVADA recurrence of the account, for the cycle its due date falls in, sent within
 * the window and for the recurrence's amount when it fixes one.
 */
export async function createRecurringCharge(deps: RecurringChargeDeps, accountId: ReceiverAccount, txid: string | undefined, input: RecurringChargeInput): Promise<RecurringChargeDetail> {
  const checked = await checkCharge(deps, accountId, txid, input);
  for (let draw = 0; ; draw++) {
    const id = txid ?? randomAlphanumeric(GENERATED_TXID_LENGTH);
    try {
      return await chargeDetail(deps.db, await insertCharge(deps, accountId, id, checked, input));
    } catch (error) {
      if (isTaken(error, 'recurring_charges_cycle_idx')) throw cycleTaken(checked.due);
      if (isTaken(error, 'recurring_charges_account_id_txid_key') || isTaken(error, 'recurring_charges_external_txid_idx')) {
        if (txid !== undefined) throw invalid(`txid ${txid} is already used by a charge of this account`, 'txid');
        if (draw < 3) continue;
      }
      throw error;
    }
  }
}

/**
 * The sandbox's receiver PSP sending an instruction as given, without a receiver's own checks
 * (only a date and an amount): a faulty receiver PSP, so that the payer PSP's refusals of what a
 * receiver here never sends can be seen (MSUC, a recurrence not approved; AM09, another amount
 * than the fixed one; DTED, a due date after dataFinal).
 */
export async function createUncheckedRecurringCharge(deps: RecurringChargeDeps, rec: RecurrenceRow, txid: string | undefined, input: RecurringChargeInput): Promise<RecurringChargeDetail> {
  const [due, amount] = await checkEach(
    () => day(input.calendario.dataDeVencimento, 'calendario.dataDeVencimento'),
    () => {
      const centavos = parseDecimal2(input.valor.original);
      if (centavos === null || centavos <= 0n) throw invalid('valor.original must be a decimal with 2 places greater than 0', 'valor.original');
      return centavos;
    },
  );
  const ajuste = input.ajusteDiaUtil ?? true;
  const checked = { rec, due, settles: settlementDate(due, ajuste), cycle: cycleOf(rec.data_inicial, rec.periodicidade, due) ?? 0, amount, ajuste };
  const id = txid ?? randomAlphanumeric(GENERATED_TXID_LENGTH);
  try {
    return await chargeDetail(deps.db, await insertCharge(deps, rec.account_id, id, checked, input));
  } catch (error) {
    if (isTaken(error, 'recurring_charges_cycle_idx')) throw cycleTaken(due);
    if (isTaken(error, 'recurring_charges_external_txid_idx')) throw invalid(`txid ${id} is already used by a charge of this receiver`, 'txid');
    throw error;
  }
}

const cycleTaken = (due: string, txid?: string) =>
  invalid(
    `calendario.dataDeVencimento ${due}: the recurrence already has a charge in this cycle${txid === undefined ? '' : ` (${txid})`} that is neither REJEITADA nor CANCELADA`,
    'calendario.dataDeVencimento',
  );

/** GET /v2/cobr/{txid}: the account's recurring charge with its attempts; another account's is not found. */
export async function getRecurringCharge(db: DbExecutor, accountId: bigint, txid: string): Promise<RecurringChargeDetail> {
  const row = await selectRecurringCharges(db).where('recurring_charges.account_id', '=', accountId).where('recurring_charges.txid', '=', txid).executeTakeFirst();
  if (!row) throw notFoundOf(txid);
  return (await detailsOf(db, [row]))[0]!;
}

async function lockCharge(trx: Trx, accountId: ReceiverAccount, txid: string) {
  const row = await trx.selectFrom('recurring_charges').selectAll().where('account_id', ...ofReceiver(accountId)).where('txid', '=', txid).forUpdate().executeTakeFirst();
  if (!row) throw notFoundOf(txid);
  return row;
}

function notEnded(row: { status: string; txid: string }): void {
  if (ENDED_CHARGE.has(row.status)) throw new AppError(400, 'RECURRING_CHARGE_ENDED', `The recurring charge ${row.txid} is ${row.status}: it takes no more changes`);
}

/**
 * PATCH /v2/cobr/{txid} with status CANCELADA: the receiver cancels it before the day of its
 * first attempt (BCB: not on or after the day the first attempt settles); its attempts go with it.
 */
export async function cancelRecurringChargeByReceiver(deps: Pick<RecurringChargeDeps, 'db' | 'clock'>, accountId: ReceiverAccount, txid: string): Promise<RecurringChargeDetail> {
  const now = deps.clock.now();
  const id = await deps.db.transaction().execute(async (trx) => {
    const row = await lockCharge(trx, accountId, txid);
    notEnded(row);
    const first = await trx.selectFrom('recurring_charge_attempts').select('data_liquidacao').where('charge_id', '=', row.id).orderBy('position').limit(1).executeTakeFirst();
    const firstDay = first?.data_liquidacao ?? row.settlement_date;
    if (!receiverMayCancel(saoPauloDay(now), firstDay)) {
      throw unprocessable('CANCELLATION_TOO_LATE', `The recurring charge ${txid} can no longer be cancelled: its first attempt settles on ${firstDay}, and a receiver cancels before that day`);
    }
    await cancelRecurringCharge(trx, row.id, { solicitante: 'USUARIO_RECEBEDOR', codigo: 'SLCR' }, now);
    return row.id;
  });
  return chargeDetail(deps.db, id);
}

/**
 * POST /v2/cobr/{txid}/retentativa/{data}: one more attempt on `data`, when the recurrence's
 * policy is PERMITE_3R_7D, no attempt is under way, and the date is a future one within the 7
 * days after the due date that no attempt took (3 retries at most). BCB's catalog names such an
 * attempt NTAG (a new scheduling after the due date).
 */
export async function retryRecurringCharge(deps: Pick<RecurringChargeDeps, 'db' | 'clock'>, accountId: ReceiverAccount, txid: string, data: string): Promise<RecurringChargeDetail> {
  const now = deps.clock.now();
  const id = await deps.db.transaction().execute(async (trx) => {
    const row = await lockCharge(trx, accountId, txid);
    const rec = await selectRecurrences(trx).where('recurrences.id', '=', row.recurrence_id).executeTakeFirstOrThrow();
    if (rec.politica_retentativa !== 'PERMITE_3R_7D') throw badRequest('RETRY_NOT_ALLOWED', `The recurrence ${rec.id_rec} takes no retries (politicaRetentativa NAO_PERMITE)`);
    notEnded(row);
    const attempts = await trx.selectFrom('recurring_charge_attempts').selectAll().where('charge_id', '=', row.id).orderBy('position').execute();
    const open = attempts.find((a) => OPEN_ATTEMPT.has(a.status));
    if (open) throw badRequest('RETRY_NOT_ALLOWED', `An attempt of the recurring charge ${txid} is ${open.status} (for ${open.data_liquidacao}): a retry waits for it to end`);
    if (!parseDateBound(data)?.isDate) throw badRequest('RETRY_NOT_ALLOWED', `data ${data} must be a date (YYYY-MM-DD)`);
    const refusal = retryRefusal({
      today: saoPauloDay(now),
      date: data,
      dueDate: row.due_date,
      takenDates: attempts.filter((a) => a.status !== 'CANCELADA').map((a) => a.data_liquidacao),
      retriesUsed: attempts.filter((a) => a.tipo === 'NTAG').length,
    });
    if (refusal) throw badRequest('RETRY_NOT_ALLOWED', refusal);
    await trx.insertInto('recurring_charge_attempts').values(newAttempt(row, rec, { position: attempts.length + 1, tipo: 'NTAG', day: data }, now)).execute();
    await trx.updateTable('recurring_charges').set({ updated_at: now }).where('id', '=', row.id).execute();
    await recurringChargeCallback(trx, row.id, now);
    return row.id;
  });
  return chargeDetail(deps.db, id);
}

export interface RecurringChargeListQuery {
  inicio: string;
  fim: string;
  idRec?: string | undefined;
  cpf?: string | undefined;
  cnpj?: string | undefined;
  status?: string | undefined;
  convenio?: string | undefined;
  'paginacao.paginaAtual'?: number | undefined;
  'paginacao.itensPorPagina'?: number | undefined;
}

/** GET /v2/cobr: the account's recurring charges created in [inicio, fim] (at most 31 days apart), newest first. */
export async function listRecurringChargesOf(deps: { lists: ListQueries }, accountId: bigint, query: RecurringChargeListQuery) {
  const { from, to } = listInterval(query.inicio, query.fim);
  if (query.cpf !== undefined && query.cnpj !== undefined) throw badRequest('INVALID_FILTER', 'cpf and cnpj cannot be used together');
  const page = listPage(query);
  const { details, total } = await deps.lists.run(accountId, async (db) => {
    let q = selectRecurringCharges(db)
      .where('recurring_charges.account_id', '=', accountId)
      .where((eb) => eb.between('recurring_charges.created_at', from, to));
    if (query.idRec !== undefined) q = q.where('recurrences.id_rec', '=', query.idRec);
    if (query.cpf !== undefined) q = q.where('recurrences.devedor_document_type', '=', 'CPF').where('recurrences.devedor_document', '=', query.cpf);
    if (query.cnpj !== undefined) q = q.where('recurrences.devedor_document_type', '=', 'CNPJ').where('recurrences.devedor_document', '=', query.cnpj);
    if (query.status !== undefined) q = q.where('recurring_charges.status', '=', query.status as never);
    if (query.convenio !== undefined) q = q.where('recurrences.convenio', '=', query.convenio);
    const [found, counted] = await Promise.all([
      q.orderBy('recurring_charges.created_at', 'desc').orderBy('recurring_charges.id', 'desc').offset(page.offset).limit(page.limit).execute(),
      q.clearSelect().select((eb) => eb.fn.countAll<bigint>().as('total')).executeTakeFirstOrThrow(),
    ]);
    return { details: await detailsOf(db, found), total: Number(counted.total) };
  });
  const parametros = {
    inicio: from.toISOString(),
    fim: to.toISOString(),
    ...(query.idRec !== undefined ? { idRec: query.idRec } : {}),
    ...(query.cpf !== undefined ? { cpf: query.cpf } : {}),
    ...(query.cnpj !== undefined ? { cnpj: query.cnpj } : {}),
    ...(query.status !== undefined ? { status: query.status } : {}),
    ...(query.convenio !== undefined ? { recebedor: { convenio: query.convenio } } : {}),
    paginacao: page.paginacao(total),
  };
  return { parametros, details };
}

