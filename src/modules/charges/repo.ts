import { sql } from 'kysely';
import type { DbExecutor, Trx } from '../../db/client.ts';
import { prepared } from '../../db/prepared.ts';
import type { ChargeStatus, TipoCob } from '../../db/schema.ts';

export type { ChargeStatus, TipoCob };

/** The payer: `nome` and one of `cpf` or `cnpj`. */
export interface Devedor {
  cpf?: string;
  cnpj?: string;
  nome: string;
}
export interface InfoAdicional {
  nome: string;
  valor: string;
}

/** The columns of a ChargeRow (cobv/repo.ts reads and writes cobv rows with them). */
export const COLUMNS = [
  'charges.id',
  'charges.account_id',
  'charges.txid',
  'charges.revisao',
  'charges.status',
  'charges.expiracao_seconds',
  'charges.amount_centavos',
  'charges.modalidade_alteracao',
  'charges.chave',
  'charges.devedor',
  'charges.solicitacao_pagador',
  'charges.info_adicionais',
  'charges.br_code',
  'charges.paid_transaction_id',
  'charges.tipo_cob',
  'charges.loc_id',
  'charges.pix_copia_e_cola',
  'charges.retirada',
  'charges.due_date',
  'charges.validade_apos_vencimento',
  'charges.valor_rules',
  'charges.recebedor',
  'charges.created_at',
  'charges.updated_at',
] as const;

export interface ChargeRow {
  id: bigint;
  account_id: bigint;
  txid: string;
  revisao: number;
  status: ChargeStatus;
  tipo_cob: TipoCob;
  /** cob: seconds of validity from its creation; null for a cobv. */
  expiracao_seconds: number | null;
  amount_centavos: bigint;
  modalidade_alteracao: number;
  chave: string;
  devedor: Devedor | null;
  solicitacao_pagador: string | null;
  info_adicionais: InfoAdicional[] | null;
  br_code: string;
  paid_transaction_id: bigint | null;
  /** The payload location it is linked to; null once unlinked (DELETE /v2/loc/{id}/txid). */
  loc_id: bigint | null;
  /** The dynamic BR Code of its location (BCB's pixCopiaECola); `br_code` is the static one. */
  pix_copia_e_cola: string | null;
  /** cob: BCB's valor.retirada (saque or troco), as given. */
  retirada: Record<string, unknown> | null;
  /** cobv: the due date (YYYY-MM-DD, São Paulo) and the days it stays payable after it. */
  due_date: string | null;
  validade_apos_vencimento: number | null;
  /** cobv: valor's multa, juros, abatimento and desconto, as given. */
  valor_rules: Record<string, unknown> | null;
  /** cobv: BCB's recebedor as shown. */
  recebedor: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
}

/** A charge with the payment that concluded it, when there is one. */
export interface ChargeWithPayment extends ChargeRow {
  pix_end_to_end_id: string | null;
  pix_amount_centavos: bigint | null;
  pix_at: Date | null;
  /** The linked location's pixUrlAccessToken and creation. */
  loc_token: string | null;
  loc_created_at: Date | null;
}

export interface NewCharge {
  accountId: bigint;
  txid: string;
  expiracaoSeconds: number;
  amountCentavos: bigint;
  modalidadeAlteracao: number;
  chave: string;
  devedor: Devedor | null;
  solicitacaoPagador: string | null;
  infoAdicionais: InfoAdicional[] | null;
  brCode: string;
  locId: bigint;
  pixCopiaECola: string;
  /** BCB's valor.retirada (saque or troco); null for a plain charge. */
  retirada?: Record<string, unknown> | null;
  now: Date;
}

const json = (value: unknown) => (value === null ? null : JSON.stringify(value));

/** Inserts a charge; a txid the account already holds raises the unique violation (another account's does not). */
export async function insertCharge(db: DbExecutor, charge: NewCharge): Promise<ChargeRow> {
  return prepared('charge_insert', db.insertInto('charges'))
    .values({
      account_id: charge.accountId,
      txid: charge.txid,
      status: 'ATIVA',
      expiracao_seconds: charge.expiracaoSeconds,
      amount_centavos: charge.amountCentavos,
      modalidade_alteracao: charge.modalidadeAlteracao,
      chave: charge.chave,
      devedor: json(charge.devedor),
      solicitacao_pagador: charge.solicitacaoPagador,
      info_adicionais: json(charge.infoAdicionais),
      br_code: charge.brCode,
      loc_id: charge.locId,
      pix_copia_e_cola: charge.pixCopiaECola,
      retirada: json(charge.retirada ?? null),
      created_at: charge.now,
      updated_at: charge.now,
    })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
}


/** The unique violation of a txid the account already holds (charges_txid_account_key: unique per account). */
export function isTxidTaken(error: unknown): boolean {
  const e = error as { code?: string; constraint?: string; message?: string };
  return e.code === '23505' && `${e.constraint ?? ''}${e.message ?? ''}`.includes('charges_txid_account_key');
}

function withPayment(db: DbExecutor) {
  return db
    .selectFrom('charges')
    .leftJoin('transactions', 'transactions.id', 'charges.paid_transaction_id')
    .leftJoin('locations', 'locations.id', 'charges.loc_id')
    .select(COLUMNS)
    .select([
      'transactions.end_to_end_id as pix_end_to_end_id',
      'transactions.amount_centavos as pix_amount_centavos',
      'transactions.processed_at as pix_at',
      'locations.token as loc_token',
      'locations.created_at as loc_created_at',
    ]);
}

/**
 * The account's charge with that txid, of that kind (an immediate charge's txid is not a cobv's
 * and the other way round); another account's is not found.
 */
export function findCharge(db: DbExecutor, accountId: bigint, txid: string, tipoCob: TipoCob = 'cob'): Promise<ChargeWithPayment | undefined> {
  return withPayment(db)
    .where('charges.account_id', '=', accountId)
    .where('charges.txid', '=', txid)
    .where('charges.tipo_cob', '=', tipoCob)
    .executeTakeFirst();
}

/**
 * The charge a payload location serves (its token, of that kind), with its payment: one prepared
 * statement, since every QR scan asks it.
 */
export function findChargeAtLocation(db: DbExecutor, token: string, tipoCob: TipoCob): Promise<ChargeWithPayment | undefined> {
  return prepared('charge_at_location', withPayment(db).where('locations.token', '=', token).where('charges.tipo_cob', '=', tipoCob)).executeTakeFirst();
}

/** The account's charges that some of its received Pix paid: which Pix paid which charge. */
export function chargesPaidBy(db: DbExecutor, accountId: bigint, transactionIds: readonly bigint[]) {
  if (transactionIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('charges')
    .select(['txid', 'tipo_cob', 'paid_transaction_id'])
    .where('account_id', '=', accountId)
    .where('paid_transaction_id', 'in', [...transactionIds])
    .execute();
}

/** Locks the account's charge row until the transaction ends: a payment and a revision take turns. */
export function lockCharge(trx: Trx, accountId: bigint, txid: string): Promise<ChargeRow | undefined> {
  return trx.selectFrom('charges').select(COLUMNS).where('txid', '=', txid).where('account_id', '=', accountId).forUpdate().executeTakeFirst();
}

/** Up to `limit` accounts holding a charge with this txid (the sandbox payer names one when several do). */
export async function accountsWithTxid(db: DbExecutor, txid: string, limit: number): Promise<bigint[]> {
  const rows = await db.selectFrom('charges').select('account_id').where('txid', '=', txid).orderBy('account_id').limit(limit).execute();
  return rows.map((r) => r.account_id);
}

export interface ChargeChanges {
  status?: ChargeStatus;
  revisao?: number;
  expiracaoSeconds?: number;
  amountCentavos?: bigint;
  modalidadeAlteracao?: number;
  chave?: string;
  devedor?: Devedor | null;
  solicitacaoPagador?: string | null;
  infoAdicionais?: InfoAdicional[] | null;
  brCode?: string;
  retirada?: Record<string, unknown> | null;
  paidTransactionId?: bigint;
  /** Another location of the account the charge moves to, with its dynamic BR Code. */
  location?: MovedLocation | undefined;
  now: Date;
}

/** A location a charge moves to (BCB's `loc.id` in a PUT or PATCH), with the dynamic BR Code it gives the charge. */
export interface MovedLocation {
  id: bigint;
  pixCopiaECola: string;
}

export async function updateCharge(trx: Trx, id: bigint, c: ChargeChanges): Promise<ChargeRow> {
  return trx
    .updateTable('charges')
    .set({
      updated_at: c.now,
      ...(c.status !== undefined ? { status: c.status } : {}),
      ...(c.revisao !== undefined ? { revisao: c.revisao } : {}),
      ...(c.expiracaoSeconds !== undefined ? { expiracao_seconds: c.expiracaoSeconds } : {}),
      ...(c.amountCentavos !== undefined ? { amount_centavos: c.amountCentavos } : {}),
      ...(c.modalidadeAlteracao !== undefined ? { modalidade_alteracao: c.modalidadeAlteracao } : {}),
      ...(c.chave !== undefined ? { chave: c.chave } : {}),
      ...(c.devedor !== undefined ? { devedor: json(c.devedor) } : {}),
      ...(c.solicitacaoPagador !== undefined ? { solicitacao_pagador: c.solicitacaoPagador } : {}),
      ...(c.infoAdicionais !== undefined ? { info_adicionais: json(c.infoAdicionais) } : {}),
      ...(c.brCode !== undefined ? { br_code: c.brCode } : {}),
      ...(c.retirada !== undefined ? { retirada: json(c.retirada) } : {}),
      ...(c.paidTransactionId !== undefined ? { paid_transaction_id: c.paidTransactionId } : {}),
      ...(c.location ? { loc_id: c.location.id, pix_copia_e_cola: c.location.pixCopiaECola } : {}),
    })
    .where('id', '=', id)
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
}

/** The status a charge reads with at `now`: an ATIVA one past its validity is REMOVIDA_PELO_PSP. */
const effectiveStatusSql = (now: Date) =>
  sql<ChargeStatus>`case when charges.status = 'ATIVA' and (case when charges.tipo_cob = 'cob'
      then charges.created_at + charges.expiracao_seconds * interval '1 second'
      else ((charges.last_payable_day + 1)::text || 'T00:00:00-03:00')::timestamptz end) <= ${now}
    then 'REMOVIDA_PELO_PSP' else charges.status end`;

export interface ChargeFilter {
  accountId: bigint;
  /** Both inclusive. */
  from: Date;
  to: Date;
  cpf?: string | undefined;
  cnpj?: string | undefined;
  status?: ChargeStatus | undefined;
  /** Immediate charges unless told otherwise. */
  tipoCob?: TipoCob | undefined;
  /** Only charges linked (true) or not linked (false) to a location. */
  locationPresente?: boolean | undefined;
  /** Only the cobv a batch (lotecobv) of the account created. */
  batchId?: number | undefined;
  now: Date;
}

/** The account's charges of the interval that pass the filters: a range of its index (account_id, created_at). */
function matching(db: DbExecutor, f: ChargeFilter) {
  let q = db
    .selectFrom('charges')
    .where('charges.account_id', '=', f.accountId)
    .where((eb) => eb.between('charges.created_at', f.from, f.to))
    .where('charges.tipo_cob', '=', f.tipoCob ?? 'cob');
  if (f.cpf !== undefined) q = q.where(sql<string>`charges.devedor->>'cpf'`, '=', f.cpf);
  if (f.cnpj !== undefined) q = q.where(sql<string>`charges.devedor->>'cnpj'`, '=', f.cnpj);
  if (f.status !== undefined) q = q.where(effectiveStatusSql(f.now), '=', f.status);
  if (f.locationPresente !== undefined) q = q.where('charges.loc_id', f.locationPresente ? 'is not' : 'is', null);
  const batchId = f.batchId;
  if (batchId !== undefined) {
    q = q.where('charges.txid', 'in', (eb) =>
      eb.selectFrom('cobv_batch_items').select('cobv_batch_items.txid')
        .where('cobv_batch_items.account_id', '=', f.accountId).where('cobv_batch_items.batch_id', '=', BigInt(batchId)).where('cobv_batch_items.status', '=', 'CRIADA'));
  }
  return q;
}

/**
 * A page of the account's charges, newest first with ties broken by id, and how many match, in
 * one statement. The page's ids are found first and only they are read whole: skipping to a deep
 * page walks the index alone (its entries hold created_at and id), not 1000 rows of the table per
 * page skipped.
 */
export async function listCharges(db: DbExecutor, f: ChargeFilter, page: { offset: number; limit: number }) {
  const ids = matching(db, f)
    .select(['charges.id', 'charges.created_at'])
    .orderBy('charges.created_at', 'desc')
    .orderBy('charges.id', 'desc')
    .offset(page.offset)
    .limit(page.limit);
  const counted = matching(db, f).select((eb) => eb.fn.countAll<bigint>().as('total'));
  const columns = sql.join([
    ...COLUMNS.map((c) => sql.ref(c)),
    sql`transactions.end_to_end_id as pix_end_to_end_id`,
    sql`transactions.amount_centavos as pix_amount_centavos`,
    sql`transactions.processed_at as pix_at`,
    sql`locations.token as loc_token`,
    sql`locations.created_at as loc_created_at`,
  ]);
  const result = await sql<ChargeWithPayment & { total: bigint }>`
    with page as (${ids}), counted as (${counted})
    select ${columns}, counted.total
      from counted
      left join (page join charges on charges.id = page.id
                     left join transactions on transactions.id = charges.paid_transaction_id
                     left join locations on locations.id = charges.loc_id) on true
     order by page.created_at desc, page.id desc`.execute(db);
  const total = Number(result.rows[0]?.total ?? 0);
  return {
    rows: result.rows.filter((r) => r.id !== null).map(({ total: _total, ...row }): ChargeWithPayment => row),
    total,
  };
}

/**
 * The key a charge names when the request gives none: the account's oldest. (The directory's
 * table, read here because the directory module has no such query yet.)
 */
export async function oldestKeyOfAccount(db: DbExecutor, accountId: bigint): Promise<string | undefined> {
  const row = await db
    .selectFrom('dict_keys')
    .select('key')
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('key')
    .limit(1)
    .executeTakeFirst();
  return row?.key;
}

/** A charge row as stored in charge_revisions: bigints and instants as text. */
function snapshotOf(row: ChargeRow): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(row).map(([k, v]) => [k, typeof v === 'bigint' ? v.toString() : v instanceof Date ? v.toISOString() : v]),
  );
}

const BIGINT_FIELDS = ['id', 'account_id', 'amount_centavos', 'paid_transaction_id', 'loc_id'] as const;
const DATE_FIELDS = ['created_at', 'updated_at'] as const;

function rowOfSnapshot(snapshot: Record<string, unknown>): ChargeRow {
  const row: Record<string, unknown> = { ...snapshot };
  for (const k of BIGINT_FIELDS) row[k] = row[k] === null || row[k] === undefined ? null : BigInt(row[k] as string);
  for (const k of DATE_FIELDS) row[k] = new Date(row[k] as string);
  return row as unknown as ChargeRow;
}

/** Keeps the state a revision replaces, so that GET ...?revisao=N can show it. */
export async function insertRevision(trx: Trx, row: ChargeRow, now: Date): Promise<void> {
  await trx
    .insertInto('charge_revisions')
    .values({ charge_id: row.id, revisao: row.revisao, snapshot: JSON.stringify(snapshotOf(row)), created_at: now })
    .execute();
}

/** The charge as it was at an earlier revision; undefined when it never had that one. */
export async function findRevision(db: DbExecutor, chargeId: bigint, revisao: number): Promise<ChargeRow | undefined> {
  const found = await db.selectFrom('charge_revisions').select('snapshot').where('charge_id', '=', chargeId).where('revisao', '=', revisao).executeTakeFirst();
  return found ? rowOfSnapshot(found.snapshot) : undefined;
}

/** The received Pix that paid charges (BCB's `pix` of a charge), by their transaction ids. */
export function findPayments(db: DbExecutor, transactionIds: readonly bigint[]) {
  if (transactionIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('transactions')
    .select(['id', 'end_to_end_id', 'txid', 'pix_key', 'amount_centavos', 'description', 'value_components', 'processed_at', 'created_at'])
    .where('id', 'in', transactionIds)
    .execute();
}
export type PaymentRow = Awaited<ReturnType<typeof findPayments>>[number];

/** Changes when a charge is created: the newest id (an index look-up). */
export const changeMarker = (db: DbExecutor) => db.selectFrom('charges').select((eb) => eb.fn.max('id').as('marker'));

/** An immediate charge to create with a new location (`token`), in a batch (charges/batcher.ts). */
export interface NewCob extends Omit<NewCharge, 'locId' | 'now'> {
  token: string;
}

/**
 * Creates a batch of immediate charges with their locations (pix_cob_create_batch): for each,
 * the charge as created with its location, or null when its txid is taken.
 */
export async function createCobs(db: DbExecutor, items: readonly NewCob[], now: Date): Promise<(ChargeWithPayment | null)[]> {
  const json = items.map((c, ord) => ({
    ord,
    account_id: c.accountId.toString(),
    txid: c.txid,
    token: c.token,
    expiracao: c.expiracaoSeconds,
    amount: c.amountCentavos.toString(),
    modalidade: c.modalidadeAlteracao,
    chave: c.chave,
    devedor: c.devedor,
    solicitacao: c.solicitacaoPagador,
    info: c.infoAdicionais,
    br_code: c.brCode,
    pix_copia_e_cola: c.pixCopiaECola,
    retirada: c.retirada ?? null,
  }));
  const created = await prepared('cob_create_batch', sql<{ ord: number; charge_id: bigint | null }>`
    select ord, charge_id from pix_cob_create_batch(${JSON.stringify(json)}::jsonb, ${now}::timestamptz)`).execute(db);
  const ids = created.rows.flatMap((r) => (r.charge_id === null ? [] : [r.charge_id]));
  const rows = ids.length === 0 ? [] : await withPayment(db).where('charges.id', 'in', ids).execute();
  const byId = new Map(rows.map((r) => [r.id, r as ChargeWithPayment]));
  const answers: (ChargeWithPayment | null)[] = new Array(items.length).fill(null);
  for (const r of created.rows) answers[r.ord] = r.charge_id === null ? null : (byId.get(r.charge_id) ?? null);
  return answers;
}
