import QRCode from 'qrcode';
import type { Db, DbExecutor, Trx } from '../../db/client.ts';
import { AppError, badRequest, checkEach, conflict, notFound, unprocessable } from '../../http/errors.ts';
import type { ListQueries } from '../../http/list-queries.ts';
import { assert } from '../../lib/assert.ts';
import {
  BRCODE_MAX_AMOUNT_CENTAVOS,
  BRCODE_NAME_MAX_LENGTH,
  BrCodeError,
  brCodeDescriptionRoom,
  buildBrCode,
  buildDynamicBrCode,
  normalizeBrCodeText,
} from '../../lib/brcode.ts';
import type { Clock } from '../../lib/clock.ts';
import { documentType, isValidCnpj, isValidCpf, normalizeDocument } from '../../lib/document.ts';
import { pixIdentifier, randomAlphanumeric } from '../../lib/ids.ts';
import { formatDay, parseDay } from '../../lib/banking-days.ts';
import { DAY_MS, parseDateBound, SAO_PAULO_OFFSET } from '../../lib/dates.ts';
import { formatCentavos, parseDecimal2 } from '../../lib/money.ts';
import { findAccount } from '../accounts/repo.ts';
import { findKey } from '../directory/repo.ts';
import type { LocationRow } from '../locations/repo.ts';
import { locationUrl, newLocationToken, takeLocation } from '../locations/service.ts';
import { requirePixKey } from '../directory/service.ts';
import { debitNow, holderCounterpart, receivePix } from '../settlement/service.ts';
import type { Counterpart } from '../settlement/repo.ts';
import { insufficientFunds } from '../ledger/service.ts';
import { lastPayableDay } from '../cobv/amount.ts';
import { cobvDueOn, cobvValueComponents, saoPauloDay } from '../cobv/due.ts';
import { MAX_INTERVAL_DAYS } from '../transactions/service.ts';
import { refundsOf, type RefundRow } from '../refunds/repo.ts';
import * as repo from './repo.ts';
import { Lru } from '../../lib/lru.ts';
import { stableStringify } from '../../lib/stable-json.ts';
import type { CobBatcher } from './batcher.ts';
import type { ChargeRow, ChargeStatus, ChargeWithPayment, Devedor, InfoAdicional, MovedLocation, PaymentRow } from './repo.ts';

export interface ChargesDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly ispb: string;
  /** PUBLIC_URL: where payers fetch a charge's payload (its location). */
  readonly publicUrl: string;
  /** Draws the txid of POST /cob (tests make it collide). */
  readonly newTxid?: () => string;
  /** Creates charges with new locations together (group commit); each alone without it. */
  readonly cobs?: CobBatcher;
}

/** GET /cob runs with the account lists' connections and limits. */
export interface ChargeListDeps extends ChargesDeps {
  readonly lists: ListQueries;
}

/** The merchant city of every BR Code this service issues (field 60). */
export const MERCHANT_CITY = 'SAO PAULO';
/** Field 59 when the account name has nothing left once reduced to ASCII. */
export const FALLBACK_MERCHANT_NAME = 'RECEBEDOR PIX';
export const DEFAULT_EXPIRACAO_SECONDS = 86_400;
export const GENERATED_TXID_LENGTH = 32;

/** One branch of BCB's valor.retirada: a Pix Saque or a Pix Troco. */
export interface RetiradaItem {
  valor: string;
  modalidadeAlteracao?: number | undefined;
  modalidadeAgente: string;
  prestadorDoServicoDeSaque: string;
}
export interface Retirada {
  saque?: RetiradaItem | undefined;
  troco?: RetiradaItem | undefined;
}

/**
 * Whose rules a charge follows: the root dialect's (an amount always greater than 0; every PATCH
 * raises revisao) or BCB's (0.00 for a Pix Saque or an amount the payer chooses, valor.retirada
 * as CobValor describes it, and revisao raised only by a change of the charge's fields: `revise`).
 */
export type AmountRules = 'root' | 'bcb';

export interface ChargeInput {
  calendario?: { expiracao?: number | undefined } | undefined;
  devedor?: { cpf?: string | undefined; cnpj?: string | undefined; nome: string } | undefined;
  valor?: { original?: string | undefined; modalidadeAlteracao?: number | undefined; retirada?: Retirada | undefined } | undefined;
  chave?: string | undefined;
  solicitacaoPagador?: string | undefined;
  infoAdicionais?: InfoAdicional[] | undefined;
  /** An unused location of the account to take (BCB's `loc.id`); a new one when absent. */
  loc?: { id: number } | undefined;
}

export interface ChargeRevision extends ChargeInput {
  status?: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' | undefined;
}

type ChargeValidity = Pick<ChargeRow, 'created_at' | 'expiracao_seconds' | 'due_date' | 'validade_apos_vencimento'>;

/**
 * When the charge stops being payable: a cob `expiracao` seconds after its creation; a cobv at
 * the end (in São Paulo) of its last payable day (cobv/amount.ts: lastPayableDay).
 */
export function expiresAt(row: ChargeValidity): Date {
  if (row.due_date !== null) {
    const lastDay = parseDay(lastPayableDay(row.due_date, row.validade_apos_vencimento ?? 0))!;
    return new Date(`${formatDay(lastDay + 1)}T00:00:00.000${SAO_PAULO_OFFSET}`);
  }
  return new Date(row.created_at.getTime() + (row.expiracao_seconds ?? 0) * 1000);
}

/**
 * The status a charge has at `at`: it is stored ATIVA and reads REMOVIDA_PELO_PSP from its
 * expiry on. (repo.ts applies the same rule in SQL for the list's status filter.)
 */
export function effectiveStatus(row: Pick<ChargeRow, 'status'> & ChargeValidity, at: Date): ChargeStatus {
  return row.status === 'ATIVA' && at.getTime() >= expiresAt(row).getTime() ? 'REMOVIDA_PELO_PSP' : row.status;
}

const chargeNotFound = () => notFound('CHARGE_NOT_FOUND', 'Charge not found');

export function devedorOf(raw: NonNullable<ChargeInput['devedor']>): Devedor {
  if (raw.nome.trim() === '') throw badRequest('INVALID_DEVEDOR', 'devedor.nome must not be blank');
  if (raw.cpf !== undefined && raw.cnpj !== undefined) throw badRequest('INVALID_DEVEDOR', 'devedor must have either cpf or cnpj, not both');
  if (raw.cpf !== undefined) {
    if (!isValidCpf(raw.cpf)) throw badRequest('INVALID_CPF', 'devedor.cpf must be a valid CPF: 11 digits with valid check digits');
    return { cpf: raw.cpf, nome: raw.nome };
  }
  if (raw.cnpj !== undefined) {
    if (!isValidCnpj(raw.cnpj)) throw badRequest('INVALID_CNPJ', 'devedor.cnpj must be a valid CNPJ: 14 characters with valid check digits');
    return { cnpj: raw.cnpj, nome: raw.nome };
  }
  throw badRequest('INVALID_DEVEDOR', 'devedor.cpf or devedor.cnpj is required');
}

export function amountOf(original: string, field = 'valor.original', zeroAllowed = false): bigint {
  const centavos = parseDecimal2(original);
  if (centavos === null) throw badRequest('INVALID_AMOUNT', `${field} must be a decimal string with 2 places ("10.00")`);
  if (centavos < 0n || (centavos === 0n && !zeroAllowed)) throw badRequest('INVALID_AMOUNT', `${field} must be greater than 0`);
  if (centavos > BRCODE_MAX_AMOUNT_CENTAVOS) throw badRequest('INVALID_AMOUNT', `${field} must be at most 9999999999.99`);
  return centavos;
}

export interface CheckedValor {
  amountCentavos: bigint;
  modalidadeAlteracao: number;
  retirada: Retirada | null;
}

/**
 * A charge's amount under BCB's rules (CobValor): without retirada, 0.00 only when the payer may
 * change it (modalidadeAlteracao 1); with retirada, exactly one of saque (valor.original 0.00) or
 * troco (greater than 0), the original not alterable, and the withdrawal greater than 0 unless
 * its own modalidadeAlteracao is 1.
 */
export function checkValor(valor: { original: string; modalidadeAlteracao?: number | undefined; retirada?: Retirada | null | undefined }, rules: AmountRules): CheckedValor {
  const modalidadeAlteracao = valor.modalidadeAlteracao ?? 0;
  const retirada = valor.retirada ?? null;
  if (rules === 'root' || retirada === null) {
    return { amountCentavos: amountOf(valor.original, 'valor.original', rules === 'bcb' && modalidadeAlteracao === 1), modalidadeAlteracao, retirada: null };
  }
  const kind = retirada.saque && !retirada.troco ? 'saque' : retirada.troco && !retirada.saque ? 'troco' : null;
  if (kind === null) throw badRequest('INVALID_RETIRADA', 'valor.retirada must have exactly one of saque or troco');
  if (modalidadeAlteracao !== 0) throw badRequest('INVALID_RETIRADA', 'valor.modalidadeAlteracao must be 0 when valor.retirada is present');
  const amountCentavos = amountOf(valor.original, 'valor.original', kind === 'saque');
  if (kind === 'saque' && amountCentavos !== 0n) throw badRequest('INVALID_RETIRADA', 'valor.original must be 0.00 with valor.retirada.saque');
  const item = retirada[kind]!;
  amountOf(item.valor, `valor.retirada.${kind}.valor`, (item.modalidadeAlteracao ?? 0) === 1);
  return { amountCentavos, modalidadeAlteracao, retirada: { [kind]: item } };
}

/** The key a charge names: one of the account's own, the oldest when none is given. */
/**
 * What never changes once written, read once per process and database: an account's name (the
 * BR Code's merchant), the account holding a key, and an account's oldest key (keys are never
 * removed or moved). Every charge needs them, and they cost a query each.
 */
interface Immutable {
  readonly names: Lru<bigint, string>;
  readonly holders: Lru<string, bigint>;
  readonly oldest: Lru<bigint, string>;
}
const immutables = new WeakMap<DbExecutor, Immutable>();
function immutableOf(db: DbExecutor): Immutable {
  let found = immutables.get(db);
  if (!found) {
    found = { names: new Lru(10_000), holders: new Lru(10_000), oldest: new Lru(10_000) };
    immutables.set(db, found);
  }
  return found;
}

export async function chargeKey(db: DbExecutor, accountId: bigint, given: string | undefined): Promise<string> {
  const known = immutableOf(db);
  if (given === undefined) {
    const oldest = known.oldest.get(accountId) ?? (await repo.oldestKeyOfAccount(db, accountId));
    if (!oldest) throw unprocessable('PIX_KEY_NOT_FOUND', 'The account has no PIX key: register one, or send chave');
    known.oldest.set(accountId, oldest);
    return oldest;
  }
  const { key } = requirePixKey(given, 'chave');
  const holder = known.holders.get(key) ?? (await findKey(db, key))?.account_id;
  if (holder !== accountId) throw unprocessable('PIX_KEY_NOT_FOUND', 'chave is not a key of this account');
  known.holders.set(key, holder);
  return key;
}

export async function merchantName(db: DbExecutor, accountId: bigint): Promise<string> {
  const known = immutableOf(db);
  const cached = known.names.get(accountId);
  if (cached !== undefined) return cached;
  const account = await findAccount(db, accountId);
  assert(account !== undefined, `account ${accountId} of an authenticated request exists`);
  const name = normalizeBrCodeText(account.name, BRCODE_NAME_MAX_LENGTH) || FALLBACK_MERCHANT_NAME;
  known.names.set(accountId, name);
  return name;
}

interface BrCodeFields {
  chave: string;
  amountCentavos: bigint;
  txid: string;
  solicitacaoPagador: string | null;
}

/** The copy-and-paste payload; solicitacaoPagador is cut to the room left beside the key. */
function brCodeOf(fields: BrCodeFields, merchant: string): string {
  const description = fields.solicitacaoPagador ? normalizeBrCodeText(fields.solicitacaoPagador, brCodeDescriptionRoom(fields.chave)) : '';
  try {
    return buildBrCode({
      key: fields.chave,
      // An amount of 0 (BCB's Pix Saque, or an amount the payer chooses) is no amount field.
      ...(fields.amountCentavos > 0n ? { amountCentavos: fields.amountCentavos } : {}),
      merchantName: merchant,
      merchantCity: MERCHANT_CITY,
      txid: fields.txid,
      ...(description ? { description } : {}),
    });
  } catch (error) {
    // Validation should make this unreachable; a 400 is still better than a 500.
    if (error instanceof BrCodeError) throw badRequest('INVALID_CHARGE', error.message);
    throw error;
  }
}

/** Every field of an immediate charge but its txid and location: what a revision replaces. */
interface CobState {
  expiracaoSeconds: number;
  amountCentavos: bigint;
  modalidadeAlteracao: number;
  retirada: Retirada | null;
  chave: string;
  devedor: Devedor | null;
  solicitacaoPagador: string | null;
  infoAdicionais: InfoAdicional[] | null;
}

/** A creation body (a PUT's) checked whole: the charge's fields, and the merchant its BR Code names. */
interface CheckedCob {
  state: CobState;
  merchant: string;
}

async function checkedCob(db: DbExecutor, accountId: bigint, input: ChargeInput, rules: AmountRules): Promise<CheckedCob> {
  // Every field at fault is told at once (the root dialect shows the first).
  const [{ amountCentavos, modalidadeAlteracao, retirada }, devedor, chave, merchant] = await checkEach(
    () => {
      if (!input.valor?.original) throw badRequest('INVALID_AMOUNT', 'valor.original is required');
      return checkValor({ ...input.valor, original: input.valor.original }, rules);
    },
    () => (input.devedor ? devedorOf(input.devedor) : null),
    () => chargeKey(db, accountId, input.chave),
    () => merchantName(db, accountId),
  );
  const state: CobState = {
    expiracaoSeconds: input.calendario?.expiracao ?? DEFAULT_EXPIRACAO_SECONDS,
    amountCentavos,
    modalidadeAlteracao,
    retirada,
    chave,
    devedor,
    solicitacaoPagador: input.solicitacaoPagador ?? null,
    infoAdicionais: input.infoAdicionais ?? null,
  };
  return { state, merchant };
}

/** The stored state of an immediate charge. */
function stateOf(row: ChargeRow): CobState {
  return {
    expiracaoSeconds: row.expiracao_seconds ?? DEFAULT_EXPIRACAO_SECONDS,
    amountCentavos: row.amount_centavos,
    modalidadeAlteracao: row.modalidade_alteracao,
    retirada: row.retirada as Retirada | null,
    chave: row.chave,
    devedor: row.devedor,
    solicitacaoPagador: row.solicitacao_pagador,
    infoAdicionais: row.info_adicionais,
  };
}

/** The columns of a charge's state, with the static BR Code it gives. */
function stateColumns(txid: string, state: CobState, merchant: string) {
  const { chave, amountCentavos, solicitacaoPagador } = state;
  return { ...state, retirada: state.retirada as Record<string, unknown> | null, brCode: brCodeOf({ chave, amountCentavos, txid, solicitacaoPagador }, merchant) };
}

/** PUT /cob/{txid} (txid given) and POST /cob (txid generated). */
export async function createCharge(
  deps: ChargesDeps,
  accountId: bigint,
  input: ChargeInput,
  txid?: string,
  rules: AmountRules = 'root',
): Promise<ChargeWithPayment> {
  return insertCob(deps, accountId, await checkedCob(deps.db, accountId, input, rules), txid, input.loc?.id);
}

async function insertCob(deps: ChargesDeps, accountId: bigint, { state, merchant }: CheckedCob, txid: string | undefined, locId: number | undefined): Promise<ChargeWithPayment> {
  const fields = (id: string): CobFields => ({ accountId, txid: id, ...stateColumns(id, state, merchant) });
  // A generated txid that one of the account's charges already has (32 random alphanumerics: in
  // theory only) is drawn again; another account's charges do not count.
  const draw = deps.newTxid ?? (() => randomAlphanumeric(GENERATED_TXID_LENGTH));
  for (let attempt = 0; ; attempt++) {
    const id = txid ?? draw();
    let created: ChargeWithPayment | null;
    try {
      // A new location: with the charges arriving beside it, in one commit; a given one, alone.
      created = deps.cobs && locId === undefined ? await batched(deps, deps.cobs, fields(id), merchant) : await alone(deps, fields(id), locId, merchant);
    } catch (error) {
      if (!repo.isTxidTaken(error)) throw error;
      created = null;
    }
    if (created) return created;
    if (txid !== undefined || attempt >= 2) throw conflict('TXID_TAKEN', 'A charge of this account with this txid already exists');
  }
}

/**
 * BCB's PUT /cob/{txid}: creates the charge, or replaces every field of the account's ATIVA cob
 * with that txid, as PUT /cobv does (BCB refuses a PUT only of a charge that exists and is not
 * ATIVA). A creation is tried first, so that it costs what the root dialect's does; a txid taken,
 * or a loc.id taken (by this very charge, on a retry), then replaces the charge.
 */
export async function putCharge(deps: ChargesDeps, accountId: bigint, txid: string, input: ChargeInput): Promise<ChargeWithPayment> {
  const checked = await checkedCob(deps.db, accountId, input, 'bcb');
  try {
    return await insertCob(deps, accountId, checked, txid, input.loc?.id);
  } catch (error) {
    if (!(error instanceof AppError) || (error.code !== 'TXID_TAKEN' && error.code !== 'LOCATION_IN_USE')) throw error;
    const replaced = await changeActiveCob(deps, accountId, txid, (trx, row, now) =>
      reviseCob(deps, trx, row, checked.state, { locId: input.loc?.id, now, rules: 'bcb' }),
    );
    // No cob of the account has the txid (a cobv has it, or only the location was taken).
    if (!replaced) throw error;
    return getCharge(deps, accountId, txid);
  }
}

type CobFields = Omit<repo.NewCharge, 'locId' | 'pixCopiaECola' | 'now'>;

function batched(deps: ChargesDeps, cobs: CobBatcher, fields: CobFields, merchant: string): Promise<ChargeWithPayment | null> {
  const token = newLocationToken();
  return cobs.submit({ ...fields, token, pixCopiaECola: dynamicBrCodeOf(deps.publicUrl, { tipo_cob: 'cob', token }, merchant) });
}

/** A charge on its own: a location taken (`locId`) or made, and the charge, in one transaction. */
function alone(deps: ChargesDeps, fields: CobFields, locId: number | bigint | undefined, merchant: string): Promise<ChargeWithPayment> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const location = await takeLocation(trx, fields.accountId, 'cob', locId, now);
    const inserted = await repo.insertCharge(trx, { ...fields, locId: location.id, pixCopiaECola: dynamicBrCodeOf(deps.publicUrl, location, merchant), now });
    // New: no payment yet, and its location is the one just taken.
    return { ...inserted, pix_end_to_end_id: null, pix_amount_centavos: null, pix_at: null, loc_token: location.token, loc_created_at: location.created_at };
  });
}

/** The dynamic BR Code of a location: what a payer scans to fetch the charge's signed payload. */
export function dynamicBrCodeOf(publicUrl: string, location: Pick<LocationRow, 'tipo_cob' | 'token'>, merchant: string): string {
  return buildDynamicBrCode({ location: locationUrl(publicUrl, location), merchantName: merchant, merchantCity: MERCHANT_CITY });
}

export async function getCharge(deps: ChargesDeps, accountId: bigint, txid: string): Promise<ChargeWithPayment> {
  const row = await repo.findCharge(deps.db, accountId, txid);
  if (!row) throw chargeNotFound();
  return row;
}

const QR_OPTIONS = { errorCorrectionLevel: 'M', margin: 2, width: 300 } as const;

/** A BR Code's QR image, drawn the same way everywhere (the charge's, the location's, the console's): a PNG data URI. */
export function brCodeDataUri(payload: string): Promise<string> {
  return QRCode.toDataURL(payload, { ...QR_OPTIONS, type: 'image/png' });
}

/** The QR code image of the charge's BR Code. */
export async function chargeQrCode(deps: ChargesDeps, accountId: bigint, txid: string, format: 'png' | 'svg') {
  const { br_code: payload } = await getCharge(deps, accountId, txid);
  if (format === 'svg') return { contentType: 'image/svg+xml', body: await QRCode.toString(payload, { ...QR_OPTIONS, type: 'svg' }) };
  return { contentType: 'image/png', body: await QRCode.toBuffer(payload, { ...QR_OPTIONS, type: 'png' }) };
}

export interface ChargeListQuery {
  inicio: string;
  fim: string;
  cpf?: string | undefined;
  cnpj?: string | undefined;
  status?: ChargeStatus | undefined;
  locationPresente?: boolean | undefined;
  'paginacao.paginaAtual'?: number | undefined;
  'paginacao.itensPorPagina'?: number | undefined;
}

/** Which charges a list reads: immediate ones unless told otherwise, and the filters only cobv lists have. */
export type ChargeListKind = Pick<repo.ChargeFilter, 'tipoCob' | 'locationPresente' | 'batchId'>;

/** An RFC 3339 bound of a list (inicio, fim), in the years both databases take alike. */
export function instant(text: string, field: string): Date {
  const parsed = parseDateBound(text);
  if (!parsed || parsed.isDate) throw badRequest('INVALID_DATE', `${field} must be an RFC 3339 timestamp`);
  // An offset can carry 0001-01-01 or 9999-12-31 out of the years both databases take alike.
  const year = parsed.at.getUTCFullYear();
  if (year < 1 || year > 9999) throw badRequest('INVALID_DATE', `${field} must be between the years 0001 and 9999 in UTC`);
  return parsed.at;
}

/** The [inicio, fim] of a list (both inclusive), at most 31 days apart (decisions.md). */
/** The page a list asks for (`paginacao.paginaAtual`, `paginacao.itensPorPagina`): page 0 of 100 unless it says. */
export function listPage(query: { 'paginacao.paginaAtual'?: number | undefined; 'paginacao.itensPorPagina'?: number | undefined }) {
  const paginaAtual = query['paginacao.paginaAtual'] ?? 0;
  const itensPorPagina = query['paginacao.itensPorPagina'] ?? 100;
  return {
    offset: paginaAtual * itensPorPagina,
    limit: itensPorPagina,
    /** The list's `paginacao` once the matching rows are counted. */
    paginacao: (total: number) => ({ paginaAtual, itensPorPagina, quantidadeDePaginas: Math.ceil(total / itensPorPagina), quantidadeTotalDeItens: total }),
  };
}

export function listInterval(inicio: string, fim: string): { from: Date; to: Date } {
  const from = instant(inicio, 'inicio');
  const to = instant(fim, 'fim');
  if (to.getTime() < from.getTime()) throw badRequest('INVALID_INTERVAL', 'fim must not be before inicio');
  if (to.getTime() - from.getTime() > MAX_INTERVAL_DAYS * DAY_MS) {
    throw badRequest('INTERVAL_TOO_LONG', `inicio and fim are at most ${MAX_INTERVAL_DAYS} days apart`);
  }
  return { from, to };
}

/**
 * GET /cob: the account's charges created in [inicio, fim], at most 31 days apart (decisions.md),
 * as BCB's API Pix lists them.
 */
export async function listChargesOf(deps: ChargeListDeps, accountId: bigint, query: ChargeListQuery, kind: ChargeListKind = {}) {
  const { from, to } = listInterval(query.inicio, query.fim);
  if (query.cpf !== undefined && query.cnpj !== undefined) throw badRequest('INVALID_FILTER', 'cpf and cnpj cannot be used together');
  const page = listPage(query);
  const now = deps.clock.now();
  const locationPresente = kind.locationPresente ?? query.locationPresente;
  const filter = { accountId, from, to, cpf: query.cpf, cnpj: query.cnpj, status: query.status, now, ...kind, locationPresente };
  const { rows, total } = await deps.lists.run(accountId, (db) => repo.listCharges(db, filter, page));
  const parametros = {
    inicio: from.toISOString(),
    fim: to.toISOString(),
    ...(query.cpf !== undefined ? { cpf: query.cpf } : {}),
    ...(query.cnpj !== undefined ? { cnpj: query.cnpj } : {}),
    ...(query.status !== undefined ? { status: query.status } : {}),
    ...(locationPresente !== undefined ? { locationPresente } : {}),
    paginacao: page.paginacao(total),
  };
  return { parametros, rows, now };
}

type Refusable<T> = { ok: true; value: T } | { ok: false; error: AppError };

/**
 * A charge that is not ATIVA at `at` is refused; one found expired is first stored as
 * REMOVIDA_PELO_PSP, which is why refusals are returned (so the caller commits) rather than thrown.
 */
async function requireActive(trx: Trx, row: ChargeRow, at: Date, now: Date, refusal: (status: ChargeStatus) => AppError): Promise<AppError | null> {
  const status = effectiveStatus(row, at);
  if (status === 'ATIVA') return null;
  if (row.status === 'ATIVA') await repo.updateCharge(trx, row.id, { status: 'REMOVIDA_PELO_PSP', now });
  return refusal(status);
}

function revisionChanges(input: ChargeRevision, rules: AmountRules) {
  if (Object.keys(input).length === 0) throw badRequest('EMPTY_REVISION', 'body must change at least one field');
  if (input.chave !== undefined) requirePixKey(input.chave, 'chave');
  // The amount alone is checked before the charge is read; with BCB's rules, its 0.00 is then checked against the rest of valor.
  if (input.valor?.original !== undefined) amountOf(input.valor.original, 'valor.original', rules === 'bcb');
  return { devedor: input.devedor ? devedorOf(input.devedor) : undefined };
}

/** The charge's valor once the revision's fields replace its own, checked as a whole. */
function revisedValor(row: ChargeRow, given: ChargeInput['valor'], rules: AmountRules): CheckedValor {
  return checkValor(
    {
      original: given?.original ?? formatCentavos(row.amount_centavos),
      modalidadeAlteracao: given?.modalidadeAlteracao ?? row.modalidade_alteracao,
      retirada: given?.retirada ?? (row.retirada as Retirada | null),
    },
    given === undefined ? 'bcb' : rules,
  );
}

/**
 * Changes the account's immediate charge with that txid, locked, in one transaction; undefined
 * when the account has no cob with it. One that is not ATIVA is refused, one found expired
 * first stored REMOVIDA_PELO_PSP.
 */
async function changeActiveCob(
  deps: ChargesDeps,
  accountId: bigint,
  txid: string,
  change: (trx: Trx, row: ChargeRow, now: Date) => Promise<ChargeRow>,
): Promise<ChargeRow | undefined> {
  const now = deps.clock.now();
  const outcome = await deps.db.transaction().execute(async (trx): Promise<Refusable<ChargeRow> | undefined> => {
    const row = await repo.lockCharge(trx, accountId, txid);
    if (row?.tipo_cob !== 'cob') return undefined;
    const refused = await requireActive(trx, row, now, now, (status) => badRequest('CHARGE_NOT_ACTIVE', `charge is not ATIVA (it is ${status})`));
    if (refused) return { ok: false, error: refused };
    return { ok: true, value: await change(trx, row, now) };
  });
  if (outcome && !outcome.ok) throw outcome.error;
  return outcome?.value;
}

/** Whether two states of a charge's fields are the same, whatever the order of their objects' keys (jsonb keeps its own). */
export function sameFields(a: object, b: object): boolean {
  const plain = (value: object): unknown => JSON.parse(JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
  return stableStringify(plain(a)) === stableStringify(plain(b));
}

/** The location a charge moves to (`loc.id` naming another location of the account, of its tipoCob), with its dynamic BR Code. */
async function movedLocation(deps: ChargesDeps, trx: Trx, row: ChargeRow, locId: number | undefined, now: Date): Promise<MovedLocation | undefined> {
  if (locId === undefined || BigInt(locId) === row.loc_id) return undefined;
  const location = await takeLocation(trx, row.account_id, row.tipo_cob, locId, now);
  return { id: location.id, pixCopiaECola: dynamicBrCodeOf(deps.publicUrl, location, await merchantName(trx, row.account_id)) };
}

/** What `revise` asks its caller to store: the revisao the charge takes when it changed, and the location it moved to. */
export interface Revised {
  revisao?: number | undefined;
  location?: MovedLocation | undefined;
}

/**
 * BCB's rule of revisao (its schema Revisao), for cob and cobv alike: a change of the charge's
 * fields keeps the state it replaces (GET ?revisao=N) and raises revisao by 1; a change of `loc`
 * alone, or of nothing, keeps it. `locId` naming another location of the account moves the
 * charge there. `write` stores the charge as `Revised` says.
 */
export async function revise(
  deps: ChargesDeps,
  trx: Trx,
  row: ChargeRow,
  c: { changed: boolean; locId: number | undefined; now: Date },
  write: (revised: Revised) => Promise<ChargeRow>,
): Promise<ChargeRow> {
  const location = await movedLocation(deps, trx, row, c.locId, c.now);
  if (!c.changed) return write({ location });
  await repo.insertRevision(trx, row, c.now);
  return write({ revisao: row.revisao + 1, location });
}

/**
 * Stores an ATIVA cob's new state (with a new static BR Code), or removes it (`status`), through
 * `revise`. The root dialect's PATCH raises revisao on every request, as it always has.
 */
async function reviseCob(
  deps: ChargesDeps,
  trx: Trx,
  row: ChargeRow,
  state: CobState,
  c: { status?: ChargeRevision['status']; locId: number | undefined; now: Date; rules: AmountRules },
): Promise<ChargeRow> {
  const changed = c.rules === 'root' || c.status !== undefined || !sameFields(state, stateOf(row));
  const merchant = await merchantName(trx, row.account_id);
  return revise(deps, trx, row, { changed, locId: c.locId, now: c.now }, ({ revisao, location }) =>
    repo.updateCharge(trx, row.id, {
      ...(revisao !== undefined ? { ...stateColumns(row.txid, state, merchant), revisao, ...(c.status ? { status: c.status } : {}) } : {}),
      ...(location ? { location } : {}),
      now: c.now,
    }),
  );
}

/** PATCH /cob/{txid}: revises (the fields given replace the charge's, new BR Code) or cancels an ATIVA charge. */
export async function reviseCharge(deps: ChargesDeps, accountId: bigint, txid: string, input: ChargeRevision, rules: AmountRules = 'root'): Promise<ChargeRow> {
  const checked = revisionChanges(input, rules);
  const revised = await changeActiveCob(deps, accountId, txid, async (trx, row, now) => {
    const chave = input.chave !== undefined ? await chargeKey(trx, accountId, input.chave) : row.chave;
    const valor = input.valor === undefined ? null : revisedValor(row, input.valor, rules);
    const current = stateOf(row);
    const state: CobState = {
      expiracaoSeconds: input.calendario?.expiracao ?? current.expiracaoSeconds,
      amountCentavos: valor?.amountCentavos ?? current.amountCentavos,
      modalidadeAlteracao: valor?.modalidadeAlteracao ?? current.modalidadeAlteracao,
      retirada: valor ? valor.retirada : current.retirada,
      chave,
      devedor: checked.devedor ?? current.devedor,
      solicitacaoPagador: input.solicitacaoPagador ?? current.solicitacaoPagador,
      infoAdicionais: input.infoAdicionais ?? current.infoAdicionais,
    };
    return reviseCob(deps, trx, row, state, { status: input.status, locId: input.loc?.id, now, rules });
  });
  if (!revised) throw chargeNotFound();
  return revised;
}

/**
 * The charge as it was at revision `revisao`, cob or cobv: `current` when absent or its own,
 * earlier ones their snapshots. A revision the charge never had is, as BCB says for both kinds
 * (CobConsultaInvalida, CobVConsultaInvalida), an invalid query: 400.
 */
export async function chargeAtRevision(db: DbExecutor, current: ChargeWithPayment, revisao: number | undefined): Promise<ChargeRow | ChargeWithPayment> {
  if (revisao === undefined || revisao === current.revisao) return current;
  const earlier = revisao < current.revisao ? await repo.findRevision(db, current.id, revisao) : undefined;
  if (!earlier) throw badRequest('REVISION_NOT_FOUND', `The charge has no revisao ${revisao} (its current one is ${current.revisao})`);
  return earlier;
}

export interface ChargePayment {
  txid: string;
  /**
   * The account whose charge is paid: the owner of the key the PIX was sent to, or the one the
   * sandbox payer names. Absent, the one account holding the txid (txids are unique per account).
   */
  accountId?: bigint | undefined;
  /** Absent: exactly the charge's amount. */
  amountCentavos?: bigint | undefined;
  payer: { name: string; document: string; ispb: string; bankName: string | null; behavior?: 'reject' | undefined };
  description?: string | null | undefined;
  /** An account holder of this service pays it from its `available`, now (else the money arrives from the network). */
  fromAccount?: (Counterpart & { accountId: bigint }) | undefined;
  /** When the PIX arrived (back-dated in the sandbox): the charge must be ATIVA then. */
  at: Date;
  now: Date;
}

export interface PaidCharge {
  endToEndId: string;
  transactionId: bigint;
}

/**
 * What a charge asks when paid at `at`, and BCB's componentesValor of the payment (centavos in
 * decimal strings; null for a plain charge): a cobv its amount on that day in São Paulo (fine,
 * interest, abatement, discount); a cob with withdrawal or change its original plus that value,
 * or, where the withdrawal's or change's own modalidadeAlteracao is 1, plus the value the payer
 * chose: `requested` less the original (a saque greater than 0, a troco not below 0).
 */
function amountDue(charge: ChargeRow, at: Date, requested?: bigint): { amountCentavos: bigint; components: Record<string, string> | null } {
  if (charge.tipo_cob === 'cobv') {
    const due = cobvDueOn(charge, saoPauloDay(at));
    return { amountCentavos: due.finalCentavos, components: cobvValueComponents(due) };
  }
  const retirada = retiradaOf(charge.retirada);
  if (!retirada) return { amountCentavos: charge.amount_centavos, components: null };
  const chosen = retirada.alterable && requested !== undefined ? requested - charge.amount_centavos : null;
  const centavos = chosen !== null && (chosen > 0n || (chosen === 0n && retirada.kind === 'troco')) ? chosen : retirada.centavos;
  // The agent and the withdrawal service go with the parts: BCB's componentesValor shows them.
  const components: Record<string, string> = { [retirada.kind]: centavos.toString(), ...retirada.agent };
  if (charge.amount_centavos !== 0n) components.original = charge.amount_centavos.toString();
  return { amountCentavos: charge.amount_centavos + centavos, components };
}

/** What the amount of a payment of `charge` must be, in words (the WRONG_AMOUNT refusal). */
function amountAsked(charge: ChargeRow): string {
  if (charge.tipo_cob === 'cobv') return 'the amount the charge asks on the payment date';
  const retirada = retiradaOf(charge.retirada);
  if (!retirada) return "the charge's valor.original";
  if (!retirada.alterable) return `the charge's valor.original plus its valor.retirada.${retirada.kind}.valor`;
  return retirada.kind === 'saque' ? 'the withdrawal the payer chooses, greater than 0' : "the charge's valor.original plus the change the payer chooses";
}

/** The withdrawal (saque) or change (troco) of a cob's valor.retirada, as BCB gives it, with its agent; `alterable` when the payer chooses its value. */
function retiradaOf(retirada: Record<string, unknown> | null) {
  for (const kind of ['saque', 'troco'] as const) {
    const item = retirada?.[kind] as Partial<RetiradaItem> | undefined;
    const centavos = typeof item?.valor === 'string' ? parseDecimal2(item.valor) : null;
    if (centavos === null || !item) continue;
    const agent: Record<string, string> = {};
    if (item.modalidadeAgente) agent.modalidadeAgente = item.modalidadeAgente;
    if (item.prestadorDoServicoDeSaque) agent.prestadorDoServicoDeSaque = item.prestadorDoServicoDeSaque;
    return { kind, centavos, agent, alterable: item.modalidadeAlteracao === 1 };
  }
  return null;
}

/** The one account holding a charge with this txid; null when none does, a 409 when several do. */
async function holderOf(trx: Trx, txid: string): Promise<bigint | null | AppError> {
  const holders = await repo.accountsWithTxid(trx, txid, 2);
  if (holders.length > 1) return conflict('TXID_AMBIGUOUS', 'Several accounts have a charge with this txid: name one with accountId');
  return holders[0] ?? null;
}

/**
 * Pays a charge in the caller's transaction: locks it, checks it is ATIVA at the payment time
 * and the amount, credits the account (PAYMENT row), concludes the charge and writes the
 * RECEIVE notification. A refusal is returned, not thrown: the caller commits (an expired
 * charge is stored REMOVIDA_PELO_PSP) and then throws it.
 */
export async function payChargeInTransaction(trx: Trx, p: ChargePayment): Promise<Refusable<PaidCharge>> {
  const owner = p.accountId ?? (await holderOf(trx, p.txid));
  if (owner instanceof AppError) return { ok: false, error: owner };
  const charge = owner === null ? undefined : await repo.lockCharge(trx, owner, p.txid);
  if (!charge) return { ok: false, error: notFound('CHARGE_NOT_FOUND', 'Charge not found for this key') };
  if (p.at.getTime() < charge.created_at.getTime()) {
    return { ok: false, error: unprocessable('CHARGE_NOT_ACTIVE', 'The charge did not exist yet at the payment time') };
  }
  const refused = await requireActive(trx, charge, p.at, p.now, (status) => unprocessable('CHARGE_NOT_ACTIVE', `The charge is not ATIVA (it is ${status})`));
  if (refused) return { ok: false, error: refused };
  const due = amountDue(charge, p.at, p.amountCentavos);
  const amountCentavos = p.amountCentavos ?? due.amountCentavos;
  if (charge.modalidade_alteracao === 0 && amountCentavos !== due.amountCentavos) {
    return { ok: false, error: unprocessable('WRONG_AMOUNT', `The amount must equal ${amountAsked(charge)}`) };
  }
  if (amountCentavos <= 0n) return { ok: false, error: unprocessable('WRONG_AMOUNT', 'The charge leaves the amount to the payer: it must be greater than 0') };
  const endToEndId = pixIdentifier('E', p.payer.ispb, p.at);
  if (p.fromAccount) {
    const debited = await debitNow(trx, {
      payerAccountId: p.fromAccount.accountId,
      amountCentavos,
      endToEndId,
      txid: charge.txid,
      pixKey: charge.chave,
      valueComponents: due.components,
      description: p.description ?? null,
      payer: p.fromAccount,
      receiver: await holderCounterpart(trx, p.payer.ispb, charge.account_id),
      now: p.now,
    });
    if ('insufficient' in debited) return { ok: false, error: insufficientFunds() };
    await repo.updateCharge(trx, charge.id, { status: 'CONCLUIDA', paidTransactionId: debited.payment!.id, now: p.now });
    return { ok: true, value: { endToEndId, transactionId: debited.payment!.id } };
  }
  const received = await receivePix(trx, {
    accountId: charge.account_id,
    amountCentavos,
    endToEndId,
    pixKey: charge.chave,
    txid: charge.txid,
    valueComponents: due.components,
    description: p.description ?? null,
    originalTransactionId: null,
    counterpart: { name: p.payer.name, document: p.payer.document, ispb: p.payer.ispb, bankName: p.payer.bankName, branch: null, account: null, accountId: null },
    counterpartBehavior: p.payer.behavior ?? null,
    at: p.at,
    now: p.now,
  });
  await repo.updateCharge(trx, charge.id, { status: 'CONCLUIDA', paidTransactionId: received.id, now: p.now });
  return { ok: true, value: { endToEndId, transactionId: received.id } };
}

/** Pays a charge in one transaction of its own; throws the refusal after committing. */
export async function payCharge(deps: Pick<ChargesDeps, 'db'>, p: ChargePayment): Promise<{ endToEndId: string; transactionId: number }> {
  const document = normalizeDocument(p.payer.document);
  if (!documentType(document)) throw badRequest('INVALID_DOCUMENT', 'payer.document must be a valid CPF or CNPJ');
  if (p.amountCentavos !== undefined && p.amountCentavos <= 0n) throw badRequest('INVALID_AMOUNT', 'amount must be greater than 0');
  const outcome = await deps.db.transaction().execute((trx) => payChargeInTransaction(trx, { ...p, payer: { ...p.payer, document } }));
  if (!outcome.ok) throw outcome.error;
  return { endToEndId: outcome.value.endToEndId, transactionId: Number(outcome.value.transactionId) };
}

/** The received Pix that concluded a charge, with the refunds of it. */
export interface ChargePaymentDetail {
  payment: PaymentRow;
  refunds: RefundRow[];
}

/** The payments of the paid charges among `rows`, by charge id, in two statements. */
export async function paymentsOf(db: DbExecutor, rows: readonly ChargeRow[]): Promise<Map<bigint, ChargePaymentDetail>> {
  const paid = rows.filter((row) => row.paid_transaction_id !== null);
  if (paid.length === 0) return new Map();
  const ids = [...new Set(paid.map((row) => row.paid_transaction_id!))];
  const [payments, refunds] = await Promise.all([repo.findPayments(db, ids), refundsOf(db, ids)]);
  const byId = new Map(payments.map((p) => [p.id, { payment: p, refunds: refunds.filter((r) => r.original_transaction_id === p.id) }]));
  const out = new Map<bigint, ChargePaymentDetail>();
  for (const row of paid) {
    const detail = byId.get(row.paid_transaction_id!);
    if (detail) out.set(row.id, detail);
  }
  return out;
}
