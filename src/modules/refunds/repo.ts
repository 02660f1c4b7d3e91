import { sql } from 'kysely';
import type { DbExecutor, Trx } from '../../db/client.ts';
import type { RefundNature } from '../../db/schema.ts';

/** A received PIX (PAYMENT) of the account, locked: refunds and MEDs of it queue up here. */
export function lockReceived(trx: Trx, accountId: bigint, endToEndId: string) {
  return trx
    .selectFrom('transactions')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('end_to_end_id', '=', endToEndId)
    .where('type', '=', 'PAYMENT')
    .forUpdate()
    .executeTakeFirst();
}

export function lockReceivedById(trx: Trx, id: bigint) {
  return trx.selectFrom('transactions').selectAll().where('id', '=', id).where('type', '=', 'PAYMENT').forUpdate().executeTakeFirstOrThrow();
}

export type ReceivedRow = NonNullable<Awaited<ReturnType<typeof lockReceived>>>;

export function findRefund(db: DbExecutor, originalId: bigint, refundId: string) {
  return db.selectFrom('refunds').selectAll().where('original_transaction_id', '=', originalId).where('refund_id', '=', refundId).executeTakeFirst();
}

export type RefundRow = NonNullable<Awaited<ReturnType<typeof findRefund>>>;

/** A refund of the account's received PIX `endToEndId`, by its client id. */
export function findAccountRefund(db: DbExecutor, accountId: bigint, endToEndId: string, refundId: string) {
  return db
    .selectFrom('refunds as r')
    .innerJoin('transactions as o', 'o.id', 'r.original_transaction_id')
    .selectAll('r')
    .where('r.account_id', '=', accountId)
    .where('r.refund_id', '=', refundId)
    .where('o.account_id', '=', accountId)
    .where('o.end_to_end_id', '=', endToEndId)
    .where('o.type', '=', 'PAYMENT')
    .executeTakeFirst();
}

/**
 * What is still refundable of a received PIX: its amount less the refunds that are under way or
 * done and the money open MEDs hold for a refund. Read under the original's row lock.
 */
export async function committedAmount(trx: Trx, originalId: bigint): Promise<bigint> {
  const result = await sql<{ total: bigint }>`
    select (select coalesce(sum(amount_centavos), 0) from refunds
             where original_transaction_id = ${originalId} and status in ('EM_PROCESSAMENTO', 'DEVOLVIDO'))
         + (select coalesce(sum(amount_centavos), 0) from meds
             where transaction_id = ${originalId} and status = 'OPEN') as total`.execute(trx);
  return BigInt(result.rows[0]!.total);
}

/** What the refunds of one nature of a received PIX hold (under way or done). Read under the original's row lock. */
export async function committedByNature(trx: Trx, originalId: bigint, natureza: RefundNature): Promise<bigint> {
  const result = await sql<{ total: bigint }>`
    select coalesce(sum(amount_centavos), 0) as total from refunds
     where original_transaction_id = ${originalId} and natureza = ${natureza} and status in ('EM_PROCESSAMENTO', 'DEVOLVIDO')`.execute(trx);
  return BigInt(result.rows[0]!.total);
}

/** The refunds of received PIX, oldest first, by original (the views of BCB's Pix). */
export function refundsOf(db: DbExecutor, originalIds: readonly bigint[]): Promise<RefundRow[]> {
  if (originalIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('refunds')
    .selectAll()
    .where('original_transaction_id', 'in', [...originalIds])
    .orderBy('original_transaction_id')
    .orderBy('requested_at')
    .orderBy('id')
    .execute();
}

export interface NewRefund {
  accountId: bigint;
  original: ReceivedRow;
  refundId: string;
  rtrId: string;
  amountCentavos: bigint;
  natureza: RefundNature;
  descricao: string | null;
  holdLedgerAccountId: bigint;
  expiresAt: Date;
  now: Date;
}

/** The REFUND_IN transaction, its place in the settlement queue and the refund row. */
export async function insertRefund(trx: Trx, r: NewRefund): Promise<RefundRow> {
  const o = r.original;
  const tx = await trx
    .insertInto('transactions')
    .values({
      account_id: r.accountId,
      type: 'REFUND_IN',
      status: 'PENDING',
      amount_centavos: r.amountCentavos,
      external_id: r.refundId,
      end_to_end_id: r.rtrId,
      idempotency_key: null,
      pix_key: o.pix_key,
      txid: null,
      description: r.descricao,
      priority: 'HIGH',
      expires_at: r.expiresAt,
      ispb_deny: null,
      error_reason: null,
      original_transaction_id: o.id,
      counterpart_name: o.counterpart_name,
      counterpart_document: o.counterpart_document,
      counterpart_ispb: o.counterpart_ispb,
      counterpart_bank_name: o.counterpart_bank_name,
      counterpart_bank_code: o.counterpart_bank_code,
      counterpart_branch: o.counterpart_branch,
      counterpart_account: o.counterpart_account,
      counterpart_account_id: o.counterpart_account_id,
      counterpart_behavior: o.counterpart_behavior,
      hold_ledger_account_id: r.holdLedgerAccountId,
      created_at: r.now,
      updated_at: r.now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await trx
    .insertInto('settlement_queue')
    .values({ transaction_id: tx.id, priority: 'HIGH', pix_key: null, created_at: r.now, expires_at: r.expiresAt })
    .execute();
  // Wakes the settlement workers of every process when this transaction commits.
  await sql`select pg_notify('pix_settlement', ${tx.id.toString()})`.execute(trx);
  return trx
    .insertInto('refunds')
    .values({
      account_id: r.accountId,
      original_transaction_id: o.id,
      transaction_id: tx.id,
      refund_id: r.refundId,
      rtr_id: r.rtrId,
      amount_centavos: r.amountCentavos,
      natureza: r.natureza,
      descricao: r.descricao,
      status: 'EM_PROCESSAMENTO',
      motivo: null,
      requested_at: r.now,
      updated_at: r.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A received PIX (PAYMENT) of the account, by its endToEndId. */
export function findReceived(db: DbExecutor, accountId: bigint, endToEndId: string) {
  return db
    .selectFrom('transactions')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('end_to_end_id', '=', endToEndId)
    .where('type', '=', 'PAYMENT')
    .executeTakeFirst();
}

export interface ReceivedFilter {
  from: Date;
  /** Exclusive. */
  to: Date;
  txid?: string | undefined;
  txidPresent?: boolean | undefined;
  refundPresent?: boolean | undefined;
  payerDocument?: string | undefined;
}

/** A page of the account's received PIX of an interval, oldest first, and how many match. */
export async function listReceived(db: DbExecutor, accountId: bigint, filter: ReceivedFilter, offset: number, limit: number) {
  let query = db
    .selectFrom('transactions as t')
    .where('t.account_id', '=', accountId)
    .where('t.type', '=', 'PAYMENT')
    .where('t.created_at', '>=', filter.from)
    .where('t.created_at', '<', filter.to);
  if (filter.txid !== undefined) query = query.where('t.txid', '=', filter.txid);
  if (filter.txidPresent !== undefined) query = query.where('t.txid', filter.txidPresent ? 'is not' : 'is', null);
  if (filter.payerDocument !== undefined) query = query.where('t.counterpart_document', '=', filter.payerDocument);
  if (filter.refundPresent !== undefined) {
    const refunded = sql<boolean>`exists (select 1 from refunds r where r.original_transaction_id = t.id)`;
    query = query.where(filter.refundPresent ? refunded : sql<boolean>`not ${refunded}`);
  }
  const rows = await query.selectAll('t').orderBy('t.created_at').orderBy('t.id').offset(offset).limit(limit).execute();
  const counted = await query.select(sql<number>`count(*)::int4`.as('n')).executeTakeFirstOrThrow();
  return { rows, total: counted.n };
}
