/**
 * Due-date charges (BCB's `cobv`): created and revised here, stored in `charges` beside the
 * immediate ones (tipo_cob 'cobv'), with a payload location of kind cobv and the dynamic BR Code
 * the charges module builds. Amounts on a day: due.ts.
 */
import type { Trx } from '../../db/client.ts';
import { badRequest, checkEach, conflict, notFound } from '../../http/errors.ts';
import { parseDay } from '../../lib/banking-days.ts';
import { findAccount } from '../accounts/repo.ts';
import * as charges from '../charges/repo.ts';
import type { ChargeRow, ChargeWithPayment, InfoAdicional } from '../charges/repo.ts';
import {
  amountOf,
  chargeAtRevision,
  chargeKey,
  devedorOf,
  dynamicBrCodeOf,
  effectiveStatus,
  listChargesOf,
  merchantName,
  revise,
  sameFields,

  type ChargeListDeps,
  type ChargeListQuery,
  type ChargesDeps,
} from '../charges/service.ts';
import { takeLocation } from '../locations/service.ts';
import { saoPauloDay } from './due.ts';
import * as repo from './repo.ts';
import type { CobvDevedor, CobvFields, Recebedor } from './repo.ts';
import { cobvValorOf, storedRules, type DescontoInput, type RuleInput, type ValorRules } from './rules.ts';

/** BCB's default of calendario.validadeAposVencimento. */
export const DEFAULT_VALIDADE_APOS_VENCIMENTO = 30;

/**
 * The address of a recebedor whose account has none (an operator gives it: PATCH
 * /admin/accounts/{id}), since BCB's DadosRecebedor requires one: the city every BR Code of this
 * service names (field 60), its state, the CEP of its centre (Praça da Sé, 01001-000), and a
 * street that says it was not given.
 */
export const RECEBEDOR_ADDRESS = { logradouro: 'Não informado', cidade: 'São Paulo', uf: 'SP', cep: '01001000' } as const;

export interface CobvInput {
  calendario?: { dataDeVencimento?: string | undefined; validadeAposVencimento?: number | undefined } | undefined;
  devedor?: Partial<CobvDevedor> | undefined;
  loc?: { id: number } | undefined;
  valor?: ({ original?: string | undefined } & ValorRules) | undefined;
  chave?: string | undefined;
  solicitacaoPagador?: string | undefined;
  infoAdicionais?: InfoAdicional[] | undefined;
}

export interface CobvRevision extends CobvInput {
  status?: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' | undefined;
}

const cobvNotFound = () => notFound('CHARGE_NOT_FOUND', 'Cobrança com vencimento não encontrada');

function cobvDevedorOf(raw: Partial<CobvDevedor>): CobvDevedor {
  if (raw.nome === undefined) throw badRequest('INVALID_DEVEDOR', 'devedor.nome is required');
  const identity: CobvDevedor = devedorOf({ cpf: raw.cpf, cnpj: raw.cnpj, nome: raw.nome });
  for (const key of ['email', 'logradouro', 'cidade', 'uf', 'cep'] as const) if (raw[key] !== undefined) identity[key] = raw[key];
  return identity;
}

const RULE_KEYS = ['multa', 'juros', 'abatimento', 'desconto'] as const;

/** The due date a request gives (or keeps): a real day, not before the charge's first. */
function dueDateOf(dueDate: string | undefined, firstDay: string): string {
  if (dueDate === undefined) throw badRequest('INVALID_DATE', 'calendario.dataDeVencimento is required');
  if (parseDay(dueDate) === null) throw badRequest('INVALID_DATE', 'calendario.dataDeVencimento must be a real date (YYYY-MM-DD)');
  if (dueDate < firstDay) throw badRequest('INVALID_DATE', `calendario.dataDeVencimento must not be before the charge's creation (${firstDay})`);
  return dueDate;
}

/** The fields a request sets, over `base` (the current ones in a PATCH; none in a PUT), checked whole. */
async function fieldsOf(trx: Trx, accountId: bigint, input: CobvInput, base: CobvFields | null, firstDay: string): Promise<CobvFields> {
  const rules: ValorRules = { ...base?.valorRules };
  for (const key of RULE_KEYS) {
    const given = input.valor?.[key];
    if (given !== undefined) (rules as Record<string, RuleInput | DescontoInput>)[key] = given;
  }
  // Every field at fault is told at once (the root dialect shows the first); the amount's rules
  // are read once the due date and the amount they depend on are sound.
  const [dueDate, amountCentavos, devedor, chave] = await checkEach(
    () => dueDateOf(input.calendario?.dataDeVencimento ?? base?.dueDate, firstDay),
    () => {
      const original = input.valor?.original ?? null;
      const amountCentavos = original !== null ? amountOf(original) : base?.amountCentavos;
      if (amountCentavos === undefined) throw badRequest('INVALID_AMOUNT', 'valor.original is required');
      return amountCentavos;
    },
    () => {
      const devedor = input.devedor !== undefined ? cobvDevedorOf(input.devedor) : base?.devedor;
      if (devedor === undefined) throw badRequest('INVALID_DEVEDOR', 'devedor is required: nome and cpf or cnpj');
      return devedor;
    },
    () => (input.chave === undefined && base ? base.chave : chargeKey(trx, accountId, input.chave)),
  );
  cobvValorOf(amountCentavos, rules, dueDate);
  return {
    dueDate,
    validadeAposVencimento: input.calendario?.validadeAposVencimento ?? base?.validadeAposVencimento ?? DEFAULT_VALIDADE_APOS_VENCIMENTO,
    amountCentavos,
    valorRules: storedRules(rules),
    chave,
    devedor,
    solicitacaoPagador: input.solicitacaoPagador ?? base?.solicitacaoPagador ?? null,
    infoAdicionais: input.infoAdicionais ?? base?.infoAdicionais ?? null,
  };
}

/** The fields of a stored cobv. */
export function storedFields(row: ChargeRow): CobvFields {
  return {
    dueDate: row.due_date!,
    validadeAposVencimento: row.validade_apos_vencimento!,
    amountCentavos: row.amount_centavos,
    valorRules: (row.valor_rules ?? {}) as ValorRules,
    chave: row.chave,
    devedor: row.devedor as CobvDevedor,
    solicitacaoPagador: row.solicitacao_pagador,
    infoAdicionais: row.info_adicionais,
  };
}

/** BCB's recebedor: the account's name, document and address (RECEBEDOR_ADDRESS when it has none). */
async function recebedorOf(trx: Trx, accountId: bigint): Promise<Recebedor> {
  const account = await findAccount(trx, accountId);
  if (!account) throw cobvNotFound();
  const nome = account.name.slice(0, 200);
  const document = account.document;
  const address = account.address ?? RECEBEDOR_ADDRESS;
  return account.document_type === 'CNPJ' ? { cnpj: document, nome, ...address } : { cpf: document, nome, ...address };
}

/**
 * Runs in the transaction that changes a batch's charge, so that its item records the outcome
 * atomically (lotecobv); a charge of a batch is changed only through it while it is pending.
 */
export interface BatchStep {
  readonly done: (trx: Trx, row: ChargeRow) => Promise<void>;
}

/** An ATIVA cobv of the account, locked; a cob with the txid is refused, none is undefined. */
async function lockCobv(trx: Trx, accountId: bigint, txid: string, now: Date, batch?: BatchStep): Promise<ChargeRow | undefined> {
  if (!batch && (await repo.txidPendingInBatch(trx, accountId, txid))) {
    throw badRequest('TXID_TAKEN', 'This txid belongs to a batch (lotecobv) in which its charge is EM_PROCESSAMENTO or NEGADA');
  }
  const row = await charges.lockCharge(trx, accountId, txid);
  if (!row) return undefined;
  if (row.tipo_cob !== 'cobv') throw conflict('TXID_TAKEN', 'An immediate charge (cob) of this account has this txid');
  const status = effectiveStatus(row, now);
  if (status !== 'ATIVA') throw badRequest('CHARGE_NOT_ACTIVE', `The charge is not ATIVA (it is ${status}): only an ATIVA one can be changed`);
  return row;
}

/** Replaces an ATIVA cobv's fields through `revise` (revisao + 1 when one changed; a change of loc alone keeps it). */
function reviseRow(deps: ChargesDeps, trx: Trx, row: ChargeRow, fields: CobvFields, locId: number | undefined, now: Date) {
  const changed = !sameFields(fields, storedFields(row));
  return revise(deps, trx, row, { changed, locId, now }, ({ revisao, location }) =>
    repo.updateCobv(trx, row.id, { ...(revisao !== undefined ? { fields, revisao } : {}), location, now }),
  );
}

async function insertRow(deps: ChargesDeps, trx: Trx, c: { accountId: bigint; txid: string; fields: CobvFields; locId: number | undefined; now: Date }) {
  const location = await takeLocation(trx, c.accountId, 'cobv', c.locId, c.now);
  const merchant = await merchantName(trx, c.accountId);
  const recebedor = await recebedorOf(trx, c.accountId);
  const pixCopiaECola = dynamicBrCodeOf(deps.publicUrl, location, merchant);
  return repo.insertCobv(trx, { ...c.fields, accountId: c.accountId, txid: c.txid, recebedor, locId: location.id, pixCopiaECola, now: c.now });
}

/**
 * PUT /cobv/{txid}: creates the cobv, or replaces every field of the account's ATIVA cobv with
 * that txid (BCB: a PUT of an existing charge that is not ATIVA is refused).
 */
export async function putCobv(deps: ChargesDeps, accountId: bigint, txid: string, input: CobvInput, batch?: BatchStep): Promise<ChargeRow> {
  const now = deps.clock.now();
  // A creation that loses a race for the txid (another request created it meanwhile) is a PUT
  // of an existing charge: run again, it replaces the charge the other request made.
  for (let attempt = 0; ; attempt++) {
    try {
      return await deps.db.transaction().execute(async (trx) => {
        const current = await lockCobv(trx, accountId, txid, now, batch);
        const fields = await fieldsOf(trx, accountId, input, null, saoPauloDay(current?.created_at ?? now));
        const row = current ? await reviseRow(deps, trx, current, fields, input.loc?.id, now) : await insertRow(deps, trx, { accountId, txid, fields, locId: input.loc?.id, now });
        await batch?.done(trx, row);
        return row;
      });
    } catch (error) {
      if (!charges.isTxidTaken(error)) throw error;
      if (attempt >= 1) throw conflict('TXID_TAKEN', 'A charge of this account with this txid already exists');
    }
  }
}

/** PATCH /cobv/{txid}: revises the given fields of an ATIVA cobv, or removes it (status alone). */
export async function reviseCobv(deps: ChargesDeps, accountId: bigint, txid: string, input: CobvRevision, batch?: BatchStep): Promise<ChargeRow> {
  const { status, ...changes } = input;
  if (Object.keys(input).length === 0) throw badRequest('EMPTY_REVISION', 'body must change at least one field');
  if (status !== undefined && Object.keys(changes).length > 0) {
    throw badRequest('INVALID_CHARGE', 'status REMOVIDA_PELO_USUARIO_RECEBEDOR removes the charge: send it alone, without other changes');
  }
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const row = await lockCobv(trx, accountId, txid, now, batch);
    if (!row) throw cobvNotFound();
    let revised: ChargeRow;
    if (status !== undefined) {
      revised = await revise(deps, trx, row, { changed: true, locId: undefined, now }, ({ revisao }) => repo.updateCobv(trx, row.id, { status, revisao, now }));
    } else {
      const fields = await fieldsOf(trx, accountId, changes, storedFields(row), saoPauloDay(row.created_at));
      revised = await reviseRow(deps, trx, row, fields, changes.loc?.id, now);
    }
    await batch?.done(trx, revised);
    return revised;
  });
}

/** GET /cobv/{txid}: the account's cobv, as it is or (`revisao`) as it was at an earlier revision. */
export async function getCobv(deps: ChargesDeps, accountId: bigint, txid: string, revisao?: number): Promise<ChargeWithPayment> {
  const row = await charges.findCharge(deps.db, accountId, txid, 'cobv');
  if (!row) throw cobvNotFound();
  const earlier = await chargeAtRevision(deps.db, row, revisao);
  if (earlier === row) return row;
  // An earlier revision is shown with the location the charge has now, and no payment yet.
  return { ...earlier, pix_end_to_end_id: null, pix_amount_centavos: null, pix_at: null, loc_token: row.loc_token, loc_created_at: row.loc_created_at };
}

export interface CobvListQuery extends ChargeListQuery {
  locationPresente?: boolean | undefined;
  loteCobVId?: number | undefined;
}

/** GET /cobv: as GET /cob lists immediate charges, with BCB's two filters of cobv. */
export function listCobv(deps: ChargeListDeps, accountId: bigint, query: CobvListQuery) {
  return listChargesOf(deps, accountId, query, { tipoCob: 'cobv', locationPresente: query.locationPresente, batchId: query.loteCobVId });
}

