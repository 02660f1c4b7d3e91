import type { DbExecutor, Trx } from '../../db/client.ts';
import type { MedReason } from '../../db/schema.ts';

/** The account that received the PIX `endToEndId`, if one of ours did. */
export function findReceiver(db: DbExecutor, endToEndId: string) {
  return db
    .selectFrom('transactions')
    .select(['account_id'])
    .where('end_to_end_id', '=', endToEndId)
    .where('type', '=', 'PAYMENT')
    .orderBy('id')
    .executeTakeFirst();
}

export function findMed(db: DbExecutor, medId: bigint) {
  return db.selectFrom('meds').selectAll().where('id', '=', medId).executeTakeFirst();
}

export function lockMed(trx: Trx, medId: bigint) {
  return trx.selectFrom('meds').selectAll().where('id', '=', medId).forUpdate().executeTakeFirstOrThrow();
}

export type MedRow = Awaited<ReturnType<typeof lockMed>>;

export async function hasOpenMed(trx: Trx, transactionId: bigint): Promise<boolean> {
  const row = await trx.selectFrom('meds').select('id').where('transaction_id', '=', transactionId).where('status', '=', 'OPEN').executeTakeFirst();
  return row !== undefined;
}

/**
 * Locks ledger accounts in id order, the order every other writer (transfers, refunds,
 * settlement) takes them in, so that a posting in the other direction (blocked -> available)
 * cannot deadlock with them; returns their balances.
 */
export async function lockLedgerAccounts(trx: Trx, ids: readonly bigint[]): Promise<Map<bigint, bigint>> {
  const rows = await trx.selectFrom('ledger_accounts').select(['id', 'balance']).where('id', 'in', [...ids]).orderBy('id').forUpdate().execute();
  return new Map(rows.map((r) => [r.id, r.balance]));
}

export function insertMed(
  trx: Trx,
  m: { accountId: bigint; transactionId: bigint; amountCentavos: bigint; reason: MedReason; details: string | null; hold: bigint; now: Date },
) {
  return trx
    .insertInto('meds')
    .values({
      account_id: m.accountId,
      transaction_id: m.transactionId,
      amount_centavos: m.amountCentavos,
      reason: m.reason,
      details: m.details,
      status: 'OPEN',
      refund_id: null,
      hold_ledger_account_id: m.hold,
      created_at: m.now,
      closed_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function closeMed(trx: Trx, medId: bigint, status: 'ACCEPTED' | 'REJECTED', refundId: bigint | null, now: Date) {
  return trx
    .updateTable('meds')
    .set({ status, refund_id: refundId, closed_at: now })
    .where('id', '=', medId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface MedFilter {
  accountId: bigint;
  /** Inclusive. */
  from: Date;
  /** Exclusive. */
  to: Date;
  status?: 'OPEN' | 'ACCEPTED' | 'REJECTED' | undefined;
}

/** A MED with the disputed PIX's end-to-end id and the refund an accepted one made. */
function withParts(db: DbExecutor) {
  return db
    .selectFrom('meds as m')
    .innerJoin('transactions as t', 't.id', 'm.transaction_id')
    .leftJoin('refunds as r', 'r.id', 'm.refund_id')
    .select([
      'm.id',
      'm.account_id',
      'm.transaction_id',
      'm.amount_centavos',
      'm.reason',
      'm.details',
      'm.status',
      'm.created_at',
      'm.closed_at',
      't.end_to_end_id',
      'r.refund_id as refund_client_id',
      'r.rtr_id as refund_rtr_id',
      'r.natureza as refund_natureza',
      'r.status as refund_status',
    ]);
}

export type AccountMedRow = Awaited<ReturnType<ReturnType<typeof withParts>['executeTakeFirstOrThrow']>>;

/** The account's MED with that id; another account's is not found. */
export function findAccountMed(db: DbExecutor, accountId: bigint, medId: bigint) {
  return withParts(db).where('m.account_id', '=', accountId).where('m.id', '=', medId).executeTakeFirst();
}

/** A page of the account's MEDs opened in the interval, newest first (ties by id), and how many match. */
export async function listAccountMeds(db: DbExecutor, f: MedFilter, page: { offset: number; limit: number }) {
  const filtered = <Q extends ReturnType<typeof withParts>>(q: Q) => {
    let out = q.where('m.account_id', '=', f.accountId).where('m.created_at', '>=', f.from).where('m.created_at', '<', f.to);
    if (f.status !== undefined) out = out.where('m.status', '=', f.status);
    return out;
  };
  const [rows, counted] = await Promise.all([
    filtered(withParts(db)).orderBy('m.created_at', 'desc').orderBy('m.id', 'desc').offset(page.offset).limit(page.limit).execute(),
    filtered(withParts(db)).clearSelect().select((eb) => eb.fn.countAll<bigint>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(counted.total) };
}

/** Changes when a MED is opened: the newest id (an index look-up); closing one posts, which the ledger's marker sees. */
export const changeMarker = (db: DbExecutor) => db.selectFrom('meds').select((eb) => eb.fn.max('id').as('marker'));
