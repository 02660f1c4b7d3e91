import type { DbExecutor, Trx } from '../../db/client.ts';
import { COLUMNS, type ChargeRow, type InfoAdicional } from '../charges/repo.ts';
import { lastPayableDay } from './amount.ts';
import type { ValorRules } from './rules.ts';

/** The payer of a cobv: cpf or cnpj, nome, and the optional address and e-mail BCB's cobv carries. */
export interface CobvDevedor {
  cpf?: string;
  cnpj?: string;
  nome: string;
  email?: string;
  logradouro?: string;
  cidade?: string;
  uf?: string;
  cep?: string;
}

/** BCB's DadosRecebedor as shown on the cobv. */
export interface Recebedor {
  cpf?: string;
  cnpj?: string;
  nome: string;
  logradouro: string;
  cidade: string;
  uf: string;
  cep: string;
}

/** Every field of a cobv a PUT sets (or a PATCH replaces, once merged with the current ones). */
export interface CobvFields {
  dueDate: string;
  validadeAposVencimento: number;
  amountCentavos: bigint;
  valorRules: ValorRules;
  chave: string;
  devedor: CobvDevedor;
  solicitacaoPagador: string | null;
  infoAdicionais: InfoAdicional[] | null;
}

export interface NewCobv extends CobvFields {
  accountId: bigint;
  txid: string;
  recebedor: Recebedor;
  locId: bigint;
  pixCopiaECola: string;
  now: Date;
}

const json = (value: unknown) => (value === null ? null : JSON.stringify(value));

function fieldValues(c: CobvFields) {
  return {
    due_date: c.dueDate,
    validade_apos_vencimento: c.validadeAposVencimento,
    last_payable_day: lastPayableDay(c.dueDate, c.validadeAposVencimento),
    amount_centavos: c.amountCentavos,
    valor_rules: JSON.stringify(c.valorRules),
    chave: c.chave,
    devedor: JSON.stringify(c.devedor),
    solicitacao_pagador: c.solicitacaoPagador,
    info_adicionais: json(c.infoAdicionais),
  };
}

/**
 * Inserts a cobv; a txid the account already holds (cob or cobv) raises the unique violation.
 * Its `br_code` is its dynamic BR Code too: the root dialect shows no cobv.
 */
export function insertCobv(db: DbExecutor, c: NewCobv): Promise<ChargeRow> {
  return db
    .insertInto('charges')
    .values({
      account_id: c.accountId,
      txid: c.txid,
      tipo_cob: 'cobv',
      status: 'ATIVA',
      expiracao_seconds: null,
      modalidade_alteracao: 0,
      ...fieldValues(c),
      recebedor: JSON.stringify(c.recebedor),
      br_code: c.pixCopiaECola,
      loc_id: c.locId,
      pix_copia_e_cola: c.pixCopiaECola,
      created_at: c.now,
      updated_at: c.now,
    })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
}

export interface CobvChanges {
  fields?: CobvFields | undefined;
  revisao?: number | undefined;
  status?: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' | undefined;
  location?: { id: bigint; pixCopiaECola: string } | undefined;
  now: Date;
}

export function updateCobv(trx: Trx, id: bigint, c: CobvChanges): Promise<ChargeRow> {
  return trx
    .updateTable('charges')
    .set({
      updated_at: c.now,
      ...(c.fields ? fieldValues(c.fields) : {}),
      ...(c.revisao !== undefined ? { revisao: c.revisao } : {}),
      ...(c.status !== undefined ? { status: c.status } : {}),
      ...(c.location ? { loc_id: c.location.id, pix_copia_e_cola: c.location.pixCopiaECola, br_code: c.location.pixCopiaECola } : {}),
    })
    .where('id', '=', id)
    .where('tipo_cob', '=', 'cobv')
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
}

/** Whether a batch of the account holds this txid without having created it (EM_PROCESSAMENTO or NEGADA). */
export async function txidPendingInBatch(db: DbExecutor, accountId: bigint, txid: string): Promise<boolean> {
  const row = await db
    .selectFrom('cobv_batch_items')
    .select('batch_id')
    .where('account_id', '=', accountId)
    .where('txid', '=', txid)
    .where('status', '<>', 'CRIADA')
    .executeTakeFirst();
  return row !== undefined;
}
