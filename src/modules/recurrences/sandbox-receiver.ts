/**
 * The sandbox as another institution's receiver of Pix Automático, so that the payer's side can
 * be exercised alone: it makes a recurrence of its receiver and sends the solicitation to an
 * account holder of this service (journey 1), sends recurring charges in their window, asks for
 * retries, and cancels, all under the same rules as a receiver of this service (the same
 * functions, with no account here: `ReceiverAccount` null). Its PSP's ISPB is the sandbox's
 * other institution's.
 */
import type { Db, DbExecutor } from '../../db/client.ts';
import type { ExternalReceiver, RecPeriodicidade, RecPolitica } from '../../db/schema.ts';
import { AppError, checkEach, notFound } from '../../http/errors.ts';
import type { ListQueries } from '../../http/list-queries.ts';
import type { Clock } from '../../lib/clock.ts';
import { DAY_MS, parseDateBound } from '../../lib/dates.ts';
import { formatCentavos } from '../../lib/money.ts';
import { findAccount } from '../accounts/repo.ts';
import { SANDBOX_PAYER_ISPB } from '../sandbox/service.ts';
import { cancelRecurringChargeByReceiver, createRecurringCharge, createUncheckedRecurringCharge, retryRecurringCharge } from './charges.ts';
import type { WindowDays } from './cycle.ts';
import { cancelRecurrence } from './lifecycle.ts';
import { SEND_AFTER_MS, MAX_SOLICITATION_DAYS, newIdSolicRec } from './solicitations.ts';
import { checkRecurrence, newIdRec, recurrenceValues, type RecurrenceInput } from './service.ts';
import { selectRecurrences, selectRecurringCharges, type RecurrenceRow } from './rows.ts';

export interface SandboxReceiverDeps {
  readonly db: Db;
  readonly clock: Clock;
  /** This institution's ISPB: the payers' PSP. */
  readonly ispb: string;
  readonly windowDays: WindowDays;
  readonly lists: ListQueries;
}

/** The receiver the sandbox plays when the request names none. */
export const SANDBOX_RECEIVER: ExternalReceiver = { cnpj: '11222333000181', nome: 'Assinaturas Sandbox Ltda', ispbParticipante: SANDBOX_PAYER_ISPB };
/** The receiver's account at its institution, as its charges name it. */
const SANDBOX_RECEIVER_ACCOUNT = { conta: '9876543', tipoConta: 'CORRENTE' };
/** A solicitation the request gives no expiry expires this long after it is made. */
const DEFAULT_SOLICITATION_DAYS = 7;

export interface SandboxRecurrenceInput {
  payerAccountId: number;
  receiver?: { name?: string | undefined; document?: string | undefined; ispb?: string | undefined } | undefined;
  contract: string;
  object?: string | undefined;
  frequency: RecPeriodicidade;
  startDate: string;
  endDate?: string | undefined;
  fixedAmount?: string | undefined;
  minimumAmount?: string | undefined;
  retryPolicy?: RecPolitica | undefined;
  /** When the solicitation expires (at most 30 days on; default 7 days). */
  expiresAt?: string | undefined;
}

const invalid = (message: string, field: string) => new AppError(400, 'RECURRENCE_INVALID', message, { field });

/** The recurrence of another institution's receiver, by idRec. */
async function externalRecurrence(db: DbExecutor, idRec: string): Promise<RecurrenceRow> {
  const rec = await selectRecurrences(db).where('recurrences.account_id', 'is', null).where('recurrences.id_rec', '=', idRec).executeTakeFirst();
  if (!rec) throw notFound('RECURRENCE_NOT_FOUND', `The sandbox's receivers have no recurrence ${idRec}`);
  return rec;
}

function receiverOf(input: SandboxRecurrenceInput): ExternalReceiver {
  return {
    cnpj: input.receiver?.document ?? SANDBOX_RECEIVER.cnpj,
    nome: input.receiver?.name ?? SANDBOX_RECEIVER.nome,
    ispbParticipante: input.receiver?.ispb ?? SANDBOX_RECEIVER.ispbParticipante,
  };
}

/** A solicitation of the sandbox's receiver to an account holder here: sent a moment after it is made. */
function solicitationTo(
  payer: NonNullable<Awaited<ReturnType<typeof findAccount>>>,
  ispb: string,
  s: { recurrenceId: bigint; ispb: string; expiresAt: Date },
  now: Date,
) {
  return {
    id_solic_rec: newIdSolicRec(s.ispb, now),
    account_id: null,
    recurrence_id: s.recurrenceId,
    status: 'CRIADA' as const,
    expires_at: s.expiresAt,
    destinatario: JSON.stringify({ agencia: payer.branch, conta: payer.account_number, ispbParticipante: ispb, [payer.document_type === 'CPF' ? 'cpf' : 'cnpj']: payer.document }),
    payer_account_id: payer.id,
    history: JSON.stringify([{ status: 'CRIADA', data: now.toISOString() }]),
    next_step_at: new Date(now.getTime() + SEND_AFTER_MS),
    created_at: now,
    updated_at: now,
  };
}

/**
 * POST /sandbox/automatico/recurrences: the sandbox's receiver makes a recurrence (CRIADA) for
 * an account holder of this service and sends it the solicitation (journey 1): it arrives a
 * moment later, PENDING among the holder's authorizations.
 */
export async function createSandboxRecurrence(deps: SandboxReceiverDeps, input: SandboxRecurrenceInput) {
  const now = deps.clock.now();
  const payer = await findAccount(deps.db, BigInt(input.payerAccountId));
  if (!payer) throw notFound('ACCOUNT_NOT_FOUND', `No account ${input.payerAccountId}`);
  const receiver = receiverOf(input);
  const politica = input.retryPolicy ?? 'NAO_PERMITE';
  const bcb: RecurrenceInput = {
    vinculo: { contrato: input.contract, objeto: input.object, devedor: { [payer.document_type === 'CPF' ? 'cpf' : 'cnpj']: payer.document, nome: payer.name } },
    calendario: { dataInicial: input.startDate, dataFinal: input.endDate, periodicidade: input.frequency },
    valor: { valorRec: input.fixedAmount, valorMinimoRecebedor: input.minimumAmount },
    politicaRetentativa: politica,
  };
  let expiresAt = new Date(now.getTime() + DEFAULT_SOLICITATION_DAYS * DAY_MS);
  const checked = await checkRecurrence(
    bcb,
    now,
    () => {
      if (receiver.ispbParticipante === deps.ispb) throw invalid(`receiver.ispb ${deps.ispb} is this institution's: its receivers use /v2/rec`, 'receiver.ispb');
    },
    () => {
      if (input.expiresAt === undefined) return;
      const parsed = parseDateBound(input.expiresAt);
      if (!parsed || parsed.isDate || parsed.at.getTime() <= now.getTime() || parsed.at.getTime() > now.getTime() + MAX_SOLICITATION_DAYS * DAY_MS) {
        throw invalid(`expiresAt must be a timestamp after now and at most ${MAX_SOLICITATION_DAYS} days on`, 'expiresAt');
      }
      expiresAt = parsed.at;
    },
  );
  await checkEach(() => {
    if (payer.status !== 'ACTIVE') throw invalid(`the account ${input.payerAccountId} is ${payer.status.toLowerCase()}`, 'payerAccountId');
  });
  return deps.db.transaction().execute(async (trx) => {
    const rec = await trx
      .insertInto('recurrences')
      .values(recurrenceValues(bcb, checked, { external: receiver }, newIdRec(politica, receiver.ispbParticipante, now), now))
      .returning(['id', 'id_rec', 'status'])
      .executeTakeFirstOrThrow();
    const solicitation = await trx
      .insertInto('rec_solicitations')
      .values(solicitationTo(payer, deps.ispb, { recurrenceId: rec.id, ispb: receiver.ispbParticipante, expiresAt }, now))
      .returning(['id_solic_rec', 'status', 'expires_at'])
      .executeTakeFirstOrThrow();
    return {
      idRec: rec.id_rec,
      status: rec.status,
      receiver: { name: receiver.nome, document: receiver.cnpj, ispb: receiver.ispbParticipante },
      solicitation: { id: solicitation.id_solic_rec, status: solicitation.status, expiresAt: solicitation.expires_at.toISOString() },
    };
  });
}

export interface SandboxChargeInput {
  dueDate: string;
  amount: string;
  txid?: string | undefined;
  adjustToBusinessDay?: boolean | undefined;
  description?: string | undefined;
  /** Sent as given, without the receiver PSP's own checks (a faulty receiver PSP): the payer PSP's refusals show. */
  unchecked?: boolean | undefined;
}

/** The answer of the sandbox's receiver routes about a charge: as its PSP knows it. */
async function chargeAnswer(db: Db, txid: string) {
  const row = await selectRecurringCharges(db).where('recurring_charges.account_id', 'is', null).where('recurring_charges.txid', '=', txid).executeTakeFirstOrThrow();
  return { id: Number(row.id), txid: row.txid, idRec: row.id_rec, status: row.status, dueDate: row.due_date, settlementDate: row.settlement_date, amount: formatCentavos(row.amount_centavos) };
}

/**
 * POST /sandbox/automatico/recurrences/{idRec}/charges: the sandbox's receiver sends a recurring
 * charge of an APROVADA recurrence, in its window (D-10 to D-2), as a receiver here would.
 */
export async function sendSandboxCharge(deps: SandboxReceiverDeps, idRec: string, input: SandboxChargeInput) {
  const rec = await externalRecurrence(deps.db, idRec);
  const bcb = {
    idRec,
    calendario: { dataDeVencimento: input.dueDate },
    valor: { original: input.amount },
    ajusteDiaUtil: input.adjustToBusinessDay,
    infoAdicional: input.description,
    recebedor: SANDBOX_RECEIVER_ACCOUNT,
  };
  const detail = input.unchecked ? await createUncheckedRecurringCharge(deps, rec, input.txid, bcb) : await createRecurringCharge(deps, null, input.txid, bcb);
  return chargeAnswer(deps.db, detail.row.txid);
}

/** POST /sandbox/automatico/charges/{txid}/retry: the sandbox's receiver asks for a retry on `date` (PERMITE_3R_7D). */
export async function retrySandboxCharge(deps: SandboxReceiverDeps, txid: string, date: string) {
  await retryRecurringCharge(deps, null, txid, date);
  return chargeAnswer(deps.db, txid);
}

/** POST /sandbox/automatico/charges/{txid}/cancel: the sandbox's receiver cancels a charge before the day of its first attempt. */
export async function cancelSandboxCharge(deps: SandboxReceiverDeps, txid: string) {
  await cancelRecurringChargeByReceiver(deps, null, txid);
  return chargeAnswer(deps.db, txid);
}

/** POST /sandbox/automatico/recurrences/{idRec}/cancel: the sandbox's receiver cancels its recurrence (SLCR). */
export async function cancelSandboxRecurrence(deps: SandboxReceiverDeps, idRec: string) {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const rec = await externalRecurrence(trx, idRec);
    if (rec.status === 'CANCELADA' || rec.status === 'REJEITADA' || rec.status === 'EXPIRADA') {
      throw new AppError(400, 'RECURRENCE_ENDED', `The recurrence ${idRec} is ${rec.status}: it takes no more changes`);
    }
    const cancelled = await cancelRecurrence(trx, rec, { solicitante: 'USUARIO_RECEBEDOR', codigo: 'SLCR' }, now);
    return { idRec: cancelled.id_rec, status: cancelled.status };
  });
}
