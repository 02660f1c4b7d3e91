import { sql } from 'kysely';
import type { DbExecutor, Trx } from '../../db/client.ts';
import type { RuleField } from '../../http/rule-fields.ts';

export type BatchItemStatus = 'EM_PROCESSAMENTO' | 'CRIADA' | 'NEGADA';

/** Why a batch's charge was refused: the core's error, which each dialect shows in its own words. */
export interface BatchProblem {
  status: number;
  code: string;
  detail: string;
  /** The fields of the charge's request at fault (problems recorded before fields were kept have none). */
  fields?: RuleField[];
}

export interface BatchRow {
  account_id: bigint;
  id: bigint;
  descricao: string;
  created_at: Date;
}

export interface BatchItemRow {
  batch_id: bigint;
  txid: string;
  position: number;
  status: BatchItemStatus;
  problema: BatchProblem | null;
  /** When its charge was created (CRIADA only). */
  charge_created_at: Date | null;
}

const BATCH_COLUMNS = ['account_id', 'id', 'descricao', 'created_at'] as const;

/**
 * Serializes the creation of the account's batches (a transaction-level advisory lock): two
 * requests that create one batch id, or two batches naming one txid, run one after the other,
 * so that the second sees what the first made.
 */
export async function lockBatchCreation(trx: Trx, accountId: bigint): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`cobv_batches:${accountId}`}, 0))`.execute(trx);
}

export function lockBatch(trx: Trx, accountId: bigint, id: bigint): Promise<BatchRow | undefined> {
  return trx.selectFrom('cobv_batches').select(BATCH_COLUMNS).where('account_id', '=', accountId).where('id', '=', id).forUpdate().executeTakeFirst();
}

export function findBatch(db: DbExecutor, accountId: bigint, id: bigint): Promise<BatchRow | undefined> {
  return db.selectFrom('cobv_batches').select(BATCH_COLUMNS).where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
}

export async function insertBatch(trx: Trx, b: { accountId: bigint; id: bigint; descricao: string; txids: readonly string[]; now: Date }): Promise<void> {
  await trx.insertInto('cobv_batches').values({ account_id: b.accountId, id: b.id, descricao: b.descricao, created_at: b.now }).execute();
  await trx
    .insertInto('cobv_batch_items')
    .values(b.txids.map((txid, position) => ({ account_id: b.accountId, batch_id: b.id, txid, position, status: 'EM_PROCESSAMENTO' as const, created_at: b.now })))
    .execute();
}

export async function updateDescricao(trx: Trx, accountId: bigint, id: bigint, descricao: string): Promise<void> {
  await trx.updateTable('cobv_batches').set({ descricao }).where('account_id', '=', accountId).where('id', '=', id).execute();
}

/** The txids of a batch, in their order. */
export async function batchTxids(db: DbExecutor, accountId: bigint, id: bigint): Promise<string[]> {
  const rows = await db.selectFrom('cobv_batch_items').select('txid').where('account_id', '=', accountId).where('batch_id', '=', id).orderBy('position').execute();
  return rows.map((r) => r.txid);
}

/** Those of `txids` the account already used: a charge's, or an item's of any batch. */
export async function usedTxids(db: DbExecutor, accountId: bigint, txids: readonly string[]): Promise<string[]> {
  if (txids.length === 0) return [];
  const charges = db.selectFrom('charges').select('txid').where('account_id', '=', accountId).where('txid', 'in', txids);
  const items = db.selectFrom('cobv_batch_items').select('txid').where('account_id', '=', accountId).where('txid', 'in', txids);
  const rows = await charges.union(items).execute();
  return rows.map((r) => r.txid);
}

export async function setItems(trx: DbExecutor, accountId: bigint, id: bigint, txids: readonly string[], status: BatchItemStatus, problema: BatchProblem | null): Promise<void> {
  if (txids.length === 0) return;
  await trx
    .updateTable('cobv_batch_items')
    .set({ status, problema: problema === null ? null : JSON.stringify(problema) })
    .where('account_id', '=', accountId)
    .where('batch_id', '=', id)
    .where('txid', 'in', txids)
    .execute();
}

/** The items of some batches of the account, with their charges' creation, in batch order. */
export function batchItems(db: DbExecutor, accountId: bigint, ids: readonly bigint[]): Promise<BatchItemRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('cobv_batch_items as i')
    .leftJoin('charges as c', (join) => join.onRef('c.account_id', '=', 'i.account_id').onRef('c.txid', '=', 'i.txid').on('i.status', '=', 'CRIADA'))
    .select(['i.batch_id', 'i.txid', 'i.position', 'i.status', sql<BatchProblem | null>`i.problema`.as('problema'), 'c.created_at as charge_created_at'])
    .where('i.account_id', '=', accountId)
    .where('i.batch_id', 'in', ids)
    .orderBy('i.batch_id')
    .orderBy('i.position')
    .execute();
}

/** A page of the account's batches created in [from, to], newest first, and how many there are. */
export async function listBatches(db: DbExecutor, accountId: bigint, from: Date, to: Date, page: { offset: number; limit: number }) {
  const matching = db.selectFrom('cobv_batches').where('account_id', '=', accountId).where((eb) => eb.between('created_at', from, to));
  const rows = await matching.select(BATCH_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc').offset(page.offset).limit(page.limit).execute();
  const counted = await matching.select((eb) => eb.fn.countAll<bigint>().as('total')).executeTakeFirstOrThrow();
  return { rows, total: Number(counted.total) };
}
