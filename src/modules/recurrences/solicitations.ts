/**
 * Solicitations of a payer's approval (BCB's `solicrec`, journey 1): the receiver asks the
 * payer, at the payer's PSP (`destinatario`), to approve a recurrence CRIADA. The network moves it
 * (network.ts): sent (ENVIADA), received by the payer's PSP (RECEBIDA), then answered by the payer
 * (ACEITA, the recurrence APROVADA by JORNADA_1; or REJEITADA), or EXPIRADA at
 * `calendario.dataExpiracaoSolicitacao`. The receiver may cancel it while it is under way.
 */
import type { Db, DbExecutor } from '../../db/client.ts';
import { AppError, checkEach, notFound } from '../../http/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { DAY_MS, parseDateBound } from '../../lib/dates.ts';
import { isValidCnpj, isValidCpf } from '../../lib/document.ts';
import { randomAlphanumeric } from '../../lib/ids.ts';
import { saoPauloDay } from '../cobv/due.ts';
import { appended } from './lifecycle.ts';
import { selectRecurrences, type RecurrenceRow, type SolicitationRow } from './rows.ts';

export interface SolicitationDeps {
  readonly db: Db;
  readonly clock: Clock;
  /** The receiver PSP's ISPB: the agent of every idSolicRec. */
  readonly ispb: string;
}

/** BCB's SolicRecSolicitada, as the dialects hand it over. */
export interface SolicitationInput {
  idRec: string;
  calendario: { dataExpiracaoSolicitacao: string };
  destinatario: { agencia?: string | undefined; conta: string; ispbParticipante: string; cpf?: string | undefined; cnpj?: string | undefined };
}

/** A solicitation expires at most this long after it is made (IN BCB 436/2023, art. 3: 30 days). */
export const MAX_SOLICITATION_DAYS = 30;
/** The receiver's PSP sends a new solicitation this long after it is made (CRIADA, then ENVIADA). */
export const SEND_AFTER_MS = 1_000;

/** Statuses of a solicitation under way: the ones it may be cancelled in. */
export const OPEN_SOLICITATION: ReadonlySet<string> = new Set(['CRIADA', 'ENVIADA', 'RECEBIDA']);

const invalid = (message: string, field: string) => new AppError(400, 'SOLICITATION_INVALID', message, { field });
const notFoundOf = (id: string) => notFound('SOLICITATION_NOT_FOUND', `The account has no solicitation ${id}`);

/** BCB's idSolicRec: SC, the ISPB of the agent that sends it, the day it is made and 11 random characters. */
export function newIdSolicRec(ispb: string, at: Date): string {
  return `SC${ispb}${saoPauloDay(at).replaceAll('-', '')}${randomAlphanumeric(11)}`;
}

function isOpenTaken(error: unknown): boolean {
  const e = error as { code?: string; constraint?: string; message?: string };
  return e.code === '23505' && `${e.constraint ?? ''}${e.message ?? ''}`.includes('rec_solicitations_open_idx');
}

/** A solicitation with the recurrence it asks to approve. */
export interface SolicitationWithRec {
  solicitation: SolicitationRow;
  rec: RecurrenceRow;
}

/** POST /v2/solicrec: a solicitation of a CRIADA recurrence of the account, CRIADA, sent a moment later. */
export async function createSolicitation(deps: SolicitationDeps, accountId: bigint, input: SolicitationInput): Promise<SolicitationWithRec> {
  const now = deps.clock.now();
  const rec = await selectRecurrences(deps.db).where('recurrences.account_id', '=', accountId).where('recurrences.id_rec', '=', input.idRec).executeTakeFirst();
  const [expiresAt, , payer] = await checkEach(
    () => {
      const parsed = parseDateBound(input.calendario.dataExpiracaoSolicitacao);
      if (!parsed || parsed.isDate) throw invalid('calendario.dataExpiracaoSolicitacao must be an RFC 3339 timestamp', 'calendario.dataExpiracaoSolicitacao');
      if (parsed.at.getTime() <= now.getTime()) {
        throw invalid(`calendario.dataExpiracaoSolicitacao ${input.calendario.dataExpiracaoSolicitacao} is not after the solicitation's creation (${now.toISOString()})`, 'calendario.dataExpiracaoSolicitacao');
      }
      if (parsed.at.getTime() > now.getTime() + MAX_SOLICITATION_DAYS * DAY_MS) {
        throw invalid(`calendario.dataExpiracaoSolicitacao is more than ${MAX_SOLICITATION_DAYS} days after the solicitation's creation`, 'calendario.dataExpiracaoSolicitacao');
      }
      return parsed.at;
    },
    () => {
      if (!rec) throw invalid(`idRec ${input.idRec} names no recurrence of this account`, 'idRec');
      if (rec.status !== 'CRIADA') throw invalid(`idRec ${input.idRec}: the recurrence is ${rec.status}, and only a CRIADA one is sent for approval`, 'idRec');
    },
    () => {
      const { cpf, cnpj } = input.destinatario;
      if ((cpf === undefined) === (cnpj === undefined)) throw invalid('destinatario must carry either cpf or cnpj', 'destinatario');
      if (cpf !== undefined && !isValidCpf(cpf)) throw invalid('destinatario.cpf must be a valid CPF: 11 digits with valid check digits', 'destinatario.cpf');
      if (cnpj !== undefined && !isValidCnpj(cnpj)) throw invalid('destinatario.cnpj must be a valid CNPJ: 14 characters with valid check digits', 'destinatario.cnpj');
      return input.destinatario.ispbParticipante === deps.ispb ? holderOf(deps.db, input.destinatario) : null;
    },
  );
  const destinatario = Object.fromEntries(Object.entries(input.destinatario).filter(([, v]) => v !== undefined));
  try {
    const solicitation = await deps.db
      .insertInto('rec_solicitations')
      .values({
        id_solic_rec: newIdSolicRec(deps.ispb, now),
        account_id: accountId,
        recurrence_id: rec!.id,
        status: 'CRIADA',
        expires_at: expiresAt,
        destinatario: JSON.stringify(destinatario),
        payer_account_id: payer,
        history: JSON.stringify([{ status: 'CRIADA', data: now.toISOString() }]),
        next_step_at: new Date(now.getTime() + SEND_AFTER_MS),
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { solicitation, rec: rec! };
  } catch (error) {
    if (isOpenTaken(error)) throw invalid(`idRec ${input.idRec}: a solicitation of this recurrence is already under way`, 'idRec');
    throw error;
  }
}

/**
 * The account holder of this institution a solicitation goes to: the account its `conta` (and
 * `agencia`, when given) names, whose document is the one given. None is a 400: this PSP knows
 * its own holders.
 */
export async function holderOf(db: DbExecutor, to: SolicitationInput['destinatario']): Promise<bigint> {
  const account = await db.selectFrom('accounts').select(['id', 'document', 'branch', 'status']).where('account_number', '=', to.conta).executeTakeFirst();
  const document = to.cpf ?? to.cnpj;
  if (!account || account.document !== document || (to.agencia !== undefined && to.agencia !== account.branch)) {
    throw invalid(`destinatario: no account of this institution (ISPB ${to.ispbParticipante}) has conta ${to.conta} with that ${to.cpf !== undefined ? 'cpf' : 'cnpj'}`, 'destinatario.conta');
  }
  if (account.status !== 'ACTIVE') throw invalid(`destinatario: the account ${to.conta} is ${account.status.toLowerCase()}`, 'destinatario.conta');
  return account.id;
}

async function withRec(db: DbExecutor, solicitation: SolicitationRow): Promise<SolicitationWithRec> {
  const rec = await selectRecurrences(db).where('recurrences.id', '=', solicitation.recurrence_id).executeTakeFirstOrThrow();
  return { solicitation, rec };
}

/** GET /v2/solicrec/{idSolicRec}: the account's solicitation; another account's is not found. */
export async function getSolicitation(db: DbExecutor, accountId: bigint, id: string): Promise<SolicitationWithRec> {
  const row = await db.selectFrom('rec_solicitations').selectAll().where('account_id', '=', accountId).where('id_solic_rec', '=', id).executeTakeFirst();
  if (!row) throw notFoundOf(id);
  return withRec(db, row);
}

/** PATCH /v2/solicrec/{idSolicRec}: the receiver cancels it while it is CRIADA, ENVIADA or RECEBIDA. */
export async function cancelSolicitation(deps: SolicitationDeps, accountId: bigint, id: string): Promise<SolicitationWithRec> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('rec_solicitations').selectAll().where('account_id', '=', accountId).where('id_solic_rec', '=', id).forUpdate().executeTakeFirst();
    if (!row) throw notFoundOf(id);
    if (!OPEN_SOLICITATION.has(row.status)) {
      throw new AppError(400, 'SOLICITATION_ENDED', `The solicitation ${id} is ${row.status}: only one CRIADA, ENVIADA or RECEBIDA can be cancelled`);
    }
    const cancelled = await trx
      .updateTable('rec_solicitations')
      .set({ status: 'CANCELADA', next_step_at: null, history: appended('CANCELADA', now), updated_at: now })
      .where('id', '=', row.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return withRec(trx, cancelled);
  });
}
