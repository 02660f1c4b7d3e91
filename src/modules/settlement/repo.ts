import { sql } from 'kysely';
import type { DbExecutor, Trx } from '../../db/client.ts';
import { prepared } from '../../db/prepared.ts';

/**
 * What pix_settle_batch tells of each movement: the labels of the database's enum
 * settlement_outcome, in its order (a test compares the two).
 */
export const SETTLEMENT_OUTCOMES = ['settled', 'failed'] as const;

export interface SettledRow {
  transaction_id: bigint;
  outcome: (typeof SETTLEMENT_OUTCOMES)[number];
  received_id: bigint | null;
}

/** One batch through pix_settle_batch (db/functions/pix_settle_batch.sql): claim, post, mark; one round trip. */
export async function settleBatch(
  trx: Trx,
  o: {
    now: Date;
    normDueBefore: Date;
    force: boolean;
    limit: number;
    ispb: string;
    bankName: string;
    reasonExpired: string;
    reasonRejected: string;
    reasonRefundRejected: string;
  },
): Promise<SettledRow[]> {
  const result = await prepared('settle_batch', sql<SettledRow>`
    select transaction_id, outcome, received_id from pix_settle_batch(
      ${o.now}::timestamptz, ${o.normDueBefore}::timestamptz, ${o.force}, ${o.limit}::int4,
      ${o.ispb}, ${o.bankName}, ${o.reasonExpired}, ${o.reasonRejected}, ${o.reasonRefundRejected})`).execute(trx);
  return result.rows;
}

/** The fields the notifications of settled movements are built from. */
export function findForPayloads(trx: Trx, ids: readonly bigint[]) {
  return trx
    .selectFrom('transactions')
    .select([
      'id',
      'account_id',
      'type',
      'status',
      'original_transaction_id',
      'created_at',
      'processed_at',
      'error_reason',
      'amount_centavos',
      'end_to_end_id',
      'pix_key',
      'txid',
      'idempotency_key',
      'description',
      'counterpart_name',
      'counterpart_document',
      'counterpart_ispb',
    ])
    .where('id', 'in', [...ids])
    .execute();
}

export interface Counterpart {
  name: string | null;
  document: string | null;
  ispb: string | null;
  bankName: string | null;
  branch: string | null;
  account: string | null;
  accountId: bigint | null;
}

/** A movement that arrived already settled: a PIX received (PAYMENT) or a refund of ours (REFUND_OUT). */
export interface ArrivedMovement {
  type: 'PAYMENT' | 'REFUND_OUT';
  accountId: bigint;
  amountCentavos: bigint;
  endToEndId: string;
  pixKey: string | null;
  /** A paid charge's txid, which is also the movement's externalId. */
  txid: string | null;
  description: string | null;
  originalTransactionId: bigint | null;
  counterpart: Counterpart;
  /** Sandbox: the payer's institution refuses refunds of this PIX. */
  counterpartBehavior?: 'reject' | null;
  /** BCB's componentesValor when the Pix paid more than an amount (a cobv's fine, a withdrawal); absent for a plain one. */
  valueComponents?: Record<string, string> | null;
  /** When it arrived (back-dated in the sandbox) and when it was recorded. */
  at: Date;
  now: Date;
}

/** The counterpart's columns of a movement's row. */
function counterpartColumns(c: Counterpart) {
  return {
    counterpart_name: c.name,
    counterpart_document: c.document,
    counterpart_ispb: c.ispb,
    counterpart_bank_name: c.bankName,
    counterpart_bank_code: null,
    counterpart_branch: c.branch,
    counterpart_account: c.account,
    counterpart_account_id: c.accountId,
  };
}

/** The columns a settled movement leaves empty: those of a transfer still to settle. */
const SETTLED = { idempotency_key: null, priority: null, expires_at: null, ispb_deny: null, error_reason: null, status: 'CONFIRMED' } as const;

export function insertArrived(trx: Trx, row: ArrivedMovement) {
  return trx
    .insertInto('transactions')
    .values({
      ...SETTLED,
      account_id: row.accountId,
      type: row.type,
      amount_centavos: row.amountCentavos,
      external_id: row.txid,
      end_to_end_id: row.endToEndId,
      pix_key: row.pixKey,
      txid: row.txid,
      value_components: row.valueComponents ? JSON.stringify(row.valueComponents) : null,
      description: row.description,
      original_transaction_id: row.originalTransactionId,
      ...counterpartColumns(row.counterpart),
      counterpart_behavior: row.counterpartBehavior ?? null,
      created_at: row.at,
      updated_at: row.now,
      processed_at: row.at,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * A Pix out that settled in the act (an automatic debit of Pix Automático): its WITHDRAW row,
 * CONFIRMED, with the receiver as its counterpart.
 */
export function insertSettledTransfer(
  trx: Trx,
  row: { accountId: bigint; amountCentavos: bigint; endToEndId: string; txid: string | null; description: string | null; counterpart: Counterpart; now: Date },
) {
  return trx
    .insertInto('transactions')
    .values({
      ...SETTLED,
      account_id: row.accountId,
      type: 'WITHDRAW',
      amount_centavos: row.amountCentavos,
      external_id: null,
      end_to_end_id: row.endToEndId,
      pix_key: null,
      txid: row.txid,
      value_components: null,
      description: row.description,
      original_transaction_id: null,
      ...counterpartColumns(row.counterpart),
      counterpart_behavior: null,
      created_at: row.now,
      updated_at: row.now,
      processed_at: row.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * What the operator's metrics read of the queue: how many movements wait, and how long the
 * oldest one whose turn has come (HIGH at once, NORM after the delay) has waited, in seconds.
 */
export async function queueState(db: DbExecutor, now: Date, normDelayMs: number): Promise<{ queued: number; lagSeconds: number }> {
  const row = await sql<{ queued: string; oldest_due: Date | null }>`
    select count(*) as queued,
           min(case when priority = 'HIGH' then created_at else created_at + ${normDelayMs} * interval '1 millisecond' end)
             filter (where priority = 'HIGH' or created_at + ${normDelayMs} * interval '1 millisecond' <= ${now}::timestamptz) as oldest_due
      from settlement_queue`.execute(db);
  const first = row.rows[0]!;
  return { queued: Number(first.queued), lagSeconds: first.oldest_due === null ? 0 : Math.max(0, (now.getTime() - first.oldest_due.getTime()) / 1000) };
}
