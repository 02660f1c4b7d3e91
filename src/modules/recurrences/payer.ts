/**
 * Pix Automático, the payer's side: this service as the payer's PSP of its own account holders,
 * which the regulation makes every PSP offer. An account holder sees the authorizations asked of
 * it (a solicitation that reached it, journey 1) and those it holds; approves one (with its
 * maximum per charge, where the recurrence fixes no amount), rejects it, or cancels it later;
 * approves one from a code (journeys 2 to 4, paying the code's charge from its account in the
 * same act); and sees the recurring charges it pays, cancelling one until 23:59 of the day before
 * it settles. The cycle itself (answers, debits, retries) is the network's (network.ts), on the
 * same rows as the receiver's side. Decision: docs/decisions/0049-pix-automatico-payer.md.
 */
import type { Db, DbExecutor, Trx } from '../../db/client.ts';
import { AppError, notFound, unprocessable } from '../../http/errors.ts';
import type { ListQueries } from '../../http/list-queries.ts';
import { BrCodeError, parseAnyBrCode } from '../../lib/brcode.ts';
import type { Clock } from '../../lib/clock.ts';
import { formatCentavos, numberToCentavos } from '../../lib/money.ts';
import { findAccount } from '../accounts/repo.ts';
import { payChargeInTransaction } from '../charges/service.ts';
import { findLocationByToken } from '../locations/repo.ts';
import { holderCounterpart } from '../settlement/service.ts';
import { pageMetadata } from '../transactions/service.ts';
import { payerMayCancel } from './cycle.ts';
import { approveRecurrence, cancelRecurrence, cancelRecurringCharge } from './lifecycle.ts';
import { answerSolicitation } from './network.ts';
import { payerSolicitation, receiverIspbOf } from './payer-events.ts';
import { authorizationView, openAttempt, payerChargeView } from './payer-views.ts';
import { authorizationStatusOf, detailsOf, payerChargeStatusOf, selectAuthorizations, selectPayerCharges, type AuthorizationRow, type AuthorizationStatus, type PayerChargeStatus, type SolicitationRow } from './rows.ts';
import { notApprovable, recurrenceAtLocation } from './service.ts';

export interface PayerSideDeps {
  readonly db: Db;
  readonly clock: Clock;
  /** This institution's ISPB: its account holders' PSP. */
  readonly ispb: string;
  /** PUBLIC_URL: a code whose locations are on its host is this service's own. */
  readonly publicUrl: string;
  readonly lists: ListQueries;
}

export interface PageQuery {
  page?: number | undefined;
  size?: number | undefined;
}

const authorizationNotFound = (idRec: string) => notFound('AUTHORIZATION_NOT_FOUND', `The account has no authorization ${idRec}`);
const chargeNotFound = (id: bigint) => notFound('RECURRING_CHARGE_NOT_FOUND', `The account pays no recurring charge ${id}`);

/** The authorization with the solicitation that asked for it, as the payer's views show them. */
async function shown(db: DbExecutor, row: AuthorizationRow, solicitation?: SolicitationRow | null) {
  const asked = solicitation === undefined ? await payerSolicitation(db as Trx, row) : solicitation;
  return authorizationView(row, asked, receiverIspbOf(row.id_rec));
}

function authorizationsOf(db: DbExecutor, accountId: bigint) {
  return selectAuthorizations(db).where('recurrences.payer_account_id', '=', accountId);
}

/** GET /api/automatico/authorizations: the account's authorizations, newest first, optionally of one status. */
export async function listAuthorizations(deps: PayerSideDeps, accountId: bigint, query: PageQuery & { status?: AuthorizationStatus | undefined }) {
  const page = query.page ?? 1;
  const size = query.size ?? 20;
  return deps.lists.run(accountId, async (db) => {
    let q = authorizationsOf(db, accountId);
    if (query.status !== undefined) q = q.where(authorizationStatusOf, '=', query.status);
    const [rows, counted] = await Promise.all([
      q.orderBy('recurrences.created_at', 'desc').orderBy('recurrences.id', 'desc').offset((page - 1) * size).limit(size).execute(),
      q.clearSelect().select((eb) => eb.fn.countAll<bigint>().as('total')).executeTakeFirstOrThrow(),
    ]);
    const solicitations = await latestSolicitations(db, accountId, rows.map((r) => r.id));
    const data = rows.map((row) => authorizationView(row, solicitations.get(row.id) ?? null, receiverIspbOf(row.id_rec)));
    return { data, metadata: pageMetadata(page, size, Number(counted.total)) };
  });
}

/** The latest solicitation that reached the payer, for each of some recurrences. */
async function latestSolicitations(db: DbExecutor, accountId: bigint, ids: readonly bigint[]): Promise<Map<bigint, SolicitationRow>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('rec_solicitations').selectAll().where('payer_account_id', '=', accountId).where('recurrence_id', 'in', ids).orderBy('id').execute();
  return new Map(rows.map((r) => [r.recurrence_id, r]));
}

/** GET /api/automatico/authorizations/{idRec}: one of the account's; another's is not found. */
export async function getAuthorization(deps: PayerSideDeps, accountId: bigint, idRec: string) {
  const row = await authorizationsOf(deps.db, accountId).where('recurrences.id_rec', '=', idRec).executeTakeFirst();
  if (!row) throw authorizationNotFound(idRec);
  return shown(deps.db, row);
}

/** The account's authorization, locked for a change. */
async function lockAuthorization(trx: Trx, accountId: bigint, idRec: string): Promise<AuthorizationRow> {
  const row = await authorizationsOf(trx, accountId).where('recurrences.id_rec', '=', idRec).forUpdate('recurrences').executeTakeFirst();
  if (!row) throw authorizationNotFound(idRec);
  return row;
}

const notPending = (row: AuthorizationRow) =>
  unprocessable('AUTHORIZATION_NOT_PENDING', `The authorization ${row.id_rec} is ${row.payer_status}: only a PENDING one is approved or rejected`);

/**
 * The payer's maximum per charge, in centavos: only where the recurrence fixes no amount, and
 * not under the receiver's minimum (BCB: valorMinimoRecebedor is the floor of the payer's maximum).
 */
export function payerMaximum(rec: Pick<AuthorizationRow, 'valor_rec_centavos' | 'valor_minimo_centavos'>, maximumAmount: number | undefined): bigint | null {
  if (maximumAmount === undefined) return null;
  const centavos = numberToCentavos(maximumAmount);
  if (centavos === null || centavos <= 0n) throw new AppError(400, 'INVALID_AMOUNT', 'maximumAmount must be greater than 0 with at most 2 decimals', { field: 'maximumAmount' });
  if (rec.valor_rec_centavos !== null) {
    throw new AppError(400, 'MAXIMUM_NOT_ALLOWED', `The recurrence charges a fixed amount (${formatCentavos(rec.valor_rec_centavos)}): the payer sets no maximum`, { field: 'maximumAmount' });
  }
  if (rec.valor_minimo_centavos !== null && centavos < rec.valor_minimo_centavos) {
    throw new AppError(400, 'MAXIMUM_UNDER_MINIMUM', `maximumAmount is under the receiver's minimum per charge (${formatCentavos(rec.valor_minimo_centavos)})`, { field: 'maximumAmount' });
  }
  return centavos;
}

/** The solicitation waiting for this payer's answer (the authorization PENDING), locked. */
async function pendingSolicitation(trx: Trx, row: AuthorizationRow): Promise<SolicitationRow> {
  const s = await trx
    .selectFrom('rec_solicitations')
    .selectAll()
    .where('recurrence_id', '=', row.id)
    .where('payer_account_id', '=', row.payer_account_id)
    .where('status', '=', 'RECEBIDA')
    .forUpdate()
    .executeTakeFirst();
  if (!s || row.payer_status !== 'PENDING') throw notPending(row);
  return s;
}

async function reread(trx: Trx, accountId: bigint, idRec: string) {
  const row = await authorizationsOf(trx, accountId).where('recurrences.id_rec', '=', idRec).executeTakeFirstOrThrow();
  return shown(trx, row);
}

/** POST /api/automatico/authorizations/{idRec}/approve: the payer accepts the solicitation; the recurrence is APROVADA by JORNADA_1. */
export async function approveAuthorization(deps: PayerSideDeps, accountId: bigint, idRec: string, input: { maximumAmount?: number | undefined }) {
  const at = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const row = await lockAuthorization(trx, accountId, idRec);
    const solicitation = await pendingSolicitation(trx, row);
    await answerSolicitation(trx, solicitation, row, { accept: true, maximoCentavos: payerMaximum(row, input.maximumAmount) }, at);
    return reread(trx, accountId, idRec);
  });
}

/** POST /api/automatico/authorizations/{idRec}/reject: the payer rejects it (AP14); the recurrence is REJEITADA. */
export async function rejectAuthorization(deps: PayerSideDeps, accountId: bigint, idRec: string) {
  const at = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const row = await lockAuthorization(trx, accountId, idRec);
    const solicitation = await pendingSolicitation(trx, row);
    await answerSolicitation(trx, solicitation, row, { reject: 'AP14' }, at);
    return reread(trx, accountId, idRec);
  });
}

/**
 * POST /api/automatico/authorizations/{idRec}/cancel: the payer ends an approved recurrence
 * (CANCELADA by USUARIO_PAGADOR, code SLDB); its charges not yet settled are cancelled with it.
 */
export async function cancelAuthorization(deps: PayerSideDeps, accountId: bigint, idRec: string) {
  const at = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const row = await lockAuthorization(trx, accountId, idRec);
    if (row.payer_status !== 'APPROVED') {
      throw unprocessable('AUTHORIZATION_NOT_ACTIVE', `The authorization ${idRec} is ${row.payer_status}: only an APPROVED one is cancelled`);
    }
    await cancelRecurrence(trx, row, { solicitante: 'USUARIO_PAGADOR', codigo: 'SLDB' }, at);
    return reread(trx, accountId, idRec);
  });
}


/** The token of a location of this service named by a code (`host/qr/v2/...`), else a refusal. */
function ownToken(publicUrl: string, location: string): string {
  const own = new URL(publicUrl);
  const probe = URL.canParse(`https://${location}`) ? new URL(`https://${location}`) : null;
  if (!probe || probe.host !== own.host) {
    throw notApprovable(`its location ${location} is not this institution's: a code of another institution's receiver is approved through that receiver's solicitation`);
  }
  return probe.pathname.split('/').at(-1) ?? '';
}

/**
 * POST /api/automatico/authorizations: the payer presents a code of Pix Automático (what its app
 * scanned) and approves its recurrence: the recurrence's code alone (JORNADA_2), or a composite
 * code whose charge the account pays from its `available` in the same act (a cob: JORNADA_3,
 * with dadosJornada.txid; a cobv: JORNADA_4). Codes of this institution's receivers.
 */
export async function approveFromCode(deps: PayerSideDeps, accountId: bigint, input: { pixCopiaECola: string; maximumAmount?: number | undefined }) {
  let code;
  try {
    code = parseAnyBrCode(input.pixCopiaECola);
  } catch (error) {
    if (error instanceof BrCodeError) throw unprocessable('BRCODE_INVALID', error.message);
    throw error;
  }
  if (code.recurrence === undefined) throw unprocessable('BRCODE_NOT_RECURRENT', 'The code carries no recurrence of Pix Automático (no field 80)');
  const recToken = ownToken(deps.publicUrl, code.recurrence);
  const chargeToken = code.kind === 'dynamic' ? ownToken(deps.publicUrl, code.location) : null;
  const at = deps.clock.now();
  const payer = await findAccount(deps.db, accountId);
  if (!payer) throw authorizationNotFound('');
  return deps.db.transaction().execute(async (trx) => {
    const rec = await recurrenceAtLocation(trx, recToken, { forUpdate: true });
    if (!rec) throw notApprovable('its location serves no recurrence');
    if (rec.status !== 'CRIADA') throw notApprovable(`it is ${rec.status}: only a CRIADA recurrence is approved`);
    const maximoCentavos = payerMaximum(rec, input.maximumAmount);
    let jornada: 'JORNADA_2' | 'JORNADA_3' | 'JORNADA_4' = 'JORNADA_2';
    let txid: string | undefined;
    if (code.kind === 'static') throw notApprovable('a static code tied to a contract is paid to its key first; present the composite code of its charge');
    if (chargeToken !== null) {
      const location = await findLocationByToken(trx, chargeToken);
      if (!location?.txid || location.account_id !== rec.account_id) throw notApprovable("its charge's location serves no charge of the recurrence's receiver");
      const paid = await payChargeInTransaction(trx, {
        txid: location.txid,
        accountId: location.account_id,
        payer: { name: payer.name, document: payer.document, ispb: deps.ispb, bankName: null },
        fromAccount: { ...(await holderCounterpart(trx, deps.ispb, accountId)), accountId },
        at,
        now: at,
      });
      if (!paid.ok) throw paid.error;
      jornada = location.tipo_cob === 'cob' ? 'JORNADA_3' : 'JORNADA_4';
      txid = location.txid;
    }
    await approveRecurrence(
      trx,
      rec,
      {
        jornada,
        pagador: { [payer.document_type === 'CPF' ? 'cpf' : 'cnpj']: payer.document, nome: payer.name, ispbParticipante: deps.ispb },
        payerAccountId: accountId,
        maximoCentavos,
        ...(txid === undefined ? {} : { txid }),
      },
      at,
    );
    return reread(trx, accountId, rec.id_rec);
  });
}

function payerChargesOf(db: DbExecutor, accountId: bigint) {
  return selectPayerCharges(db).where('recurrences.payer_account_id', '=', accountId);
}

async function chargeViews(db: DbExecutor, rows: Awaited<ReturnType<ReturnType<typeof payerChargesOf>['execute']>>, now: Date) {
  return (await detailsOf(db, rows)).map((detail) => payerChargeView(detail, receiverIspbOf(detail.row.id_rec), now));
}

/** GET /api/automatico/charges: the recurring charges the account pays, latest due date first, by status or recurrence. */
export async function listPayerCharges(deps: PayerSideDeps, accountId: bigint, query: PageQuery & { status?: PayerChargeStatus | undefined; idRec?: string | undefined }) {
  const page = query.page ?? 1;
  const size = query.size ?? 20;
  const now = deps.clock.now();
  return deps.lists.run(accountId, async (db) => {
    let q = payerChargesOf(db, accountId);
    if (query.status !== undefined) q = q.where(payerChargeStatusOf, '=', query.status);
    if (query.idRec !== undefined) q = q.where('recurrences.id_rec', '=', query.idRec);
    const [rows, counted] = await Promise.all([
      q.orderBy('recurring_charges.due_date', 'desc').orderBy('recurring_charges.id', 'desc').offset((page - 1) * size).limit(size).execute(),
      q.clearSelect().select((eb) => eb.fn.countAll<bigint>().as('total')).executeTakeFirstOrThrow(),
    ]);
    return { data: await chargeViews(db, rows, now), metadata: pageMetadata(page, size, Number(counted.total)) };
  });
}

/** GET /api/automatico/charges/{id}: one the account pays; another's is not found. */
export async function getPayerCharge(deps: PayerSideDeps, accountId: bigint, id: bigint) {
  const row = await payerChargesOf(deps.db, accountId).where('recurring_charges.id', '=', id).executeTakeFirst();
  if (!row) throw chargeNotFound(id);
  return (await chargeViews(deps.db, [row], deps.clock.now()))[0]!;
}

/**
 * POST /api/automatico/charges/{id}/cancel: the payer cancels the charge's attempt under way
 * until 23:59 of the day before it settles (SLBD, by USUARIO_PAGADOR); the charge is CANCELADA.
 */
export async function cancelPayerCharge(deps: PayerSideDeps, accountId: bigint, id: bigint) {
  const at = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const row = await payerChargesOf(trx, accountId).where('recurring_charges.id', '=', id).forUpdate('recurring_charges').executeTakeFirst();
    if (!row) throw chargeNotFound(id);
    const [detail] = await detailsOf(trx, [row]);
    const open = openAttempt(detail!.attempts);
    if (row.status !== 'CRIADA' && row.status !== 'ATIVA') {
      throw new AppError(400, 'RECURRING_CHARGE_ENDED', `The recurring charge ${id} is ${row.payer_status}: there is nothing left to cancel`);
    }
    if (!open) throw unprocessable('RECURRING_CHARGE_NOT_SCHEDULED', `The recurring charge ${id} has no attempt under way to cancel (its last one failed)`);
    if (!payerMayCancel(at, open.data_liquidacao)) {
      throw unprocessable('CANCELLATION_TOO_LATE', `The attempt of ${open.data_liquidacao} could be cancelled until 23:59 of the day before it (São Paulo)`);
    }
    await cancelRecurringCharge(trx, row.id, { solicitante: 'USUARIO_PAGADOR', codigo: 'SLBD' }, at);
    return getPayerChargeIn(trx, accountId, row.id, at);
  });
}

async function getPayerChargeIn(db: DbExecutor, accountId: bigint, id: bigint, now: Date) {
  const row = await payerChargesOf(db, accountId).where('recurring_charges.id', '=', id).executeTakeFirstOrThrow();
  return (await chargeViews(db, [row], now))[0]!;
}

