import { sql } from 'kysely';
import type { Db } from '../../db/client.ts';
import { prepared } from '../../db/prepared.ts';
import type { TransactionsTable } from '../../db/schema.ts';
import { assert } from '../../lib/assert.ts';

/**
 * What pix_transfer_create tells of each transfer: the labels of the database's enum
 * transfer_create_outcome, in its order (a test compares the two).
 */
export const CREATE_OUTCOMES = [
  'created',
  'replay',
  'in_flight',
  'idempotency_mismatch',
  'key_not_found',
  'own_key',
  'ispb_denied',
  'creditor_mismatch',
  'external_id_taken',
  'insufficient_funds',
  'insufficient_funds_miss',
] as const;
export type CreateOutcome = (typeof CREATE_OUTCOMES)[number];

export interface CreateTransferRow {
  accountId: bigint;
  idempotencyKey: string;
  requestHash: string;
  amountCentavos: bigint;
  pixKey: string;
  priority: 'HIGH' | 'NORM';
  expirationSeconds: number;
  creditorDocument: string | null;
  ispbDeny: string[] | null;
  description: string | null;
  externalId: string | null;
  endToEndId: string;
  now: Date;
}

/** A transfer's stored answer: what the first request was answered, and every replay of it. */
export interface AcceptedTransfer {
  id: bigint;
  endToEndId: string;
  amountCentavos: bigint;
  /** Its status when it was accepted, not the transaction's status of the moment. */
  status: TransactionsTable['status'];
  acceptedAt: Date;
}

export type CreateResult =
  | { outcome: 'created' | 'replay'; transfer: AcceptedTransfer }
  | { outcome: Exclude<CreateOutcome, 'created' | 'replay'>; transfer: null };

/** A row of pix_transfer_create_batch: the transfer's columns are set for 'created' and 'replay' only. */
interface BatchRow {
  ord: number;
  outcome: CreateOutcome;
  transfer_id: bigint | null;
  transfer_end_to_end_id: string | null;
  transfer_amount_centavos: bigint | null;
  transfer_status: TransactionsTable['status'] | null;
  transfer_accepted_at: Date | null;
}

function createResult(row: BatchRow): CreateResult {
  if (row.outcome !== 'created' && row.outcome !== 'replay') return { outcome: row.outcome, transfer: null };
  assert(
    row.transfer_id !== null &&
      row.transfer_end_to_end_id !== null &&
      row.transfer_amount_centavos !== null &&
      row.transfer_status !== null &&
      row.transfer_accepted_at !== null,
    `pix_transfer_create gave '${row.outcome}' without its transfer`,
  );
  return {
    outcome: row.outcome,
    transfer: {
      id: row.transfer_id,
      endToEndId: row.transfer_end_to_end_id,
      amountCentavos: row.transfer_amount_centavos,
      status: row.transfer_status,
      acceptedAt: row.transfer_accepted_at,
    },
  };
}

/** One item of pix_transfer_create_batch's JSON array. */
function batchItem(row: CreateTransferRow, ord: number, holdShard: number) {
  return {
    ord,
    account_id: row.accountId.toString(),
    idempotency_key: row.idempotencyKey,
    request_hash: row.requestHash,
    amount: row.amountCentavos.toString(),
    pix_key: row.pixKey,
    priority: row.priority,
    expiration: row.expirationSeconds,
    creditor_document: row.creditorDocument,
    ispb_deny: row.ispbDeny,
    description: row.description,
    external_id: row.externalId,
    end_to_end_id: row.endToEndId,
    now: row.now.toISOString(),
    hold_shard: holdShard,
  };
}

/**
 * Several POST /dict/pix in one round trip and one commit: pix_transfer_create_batch
 * (db/functions/) runs the whole of each (idempotency, directory, debit, stored answer),
 * holding each transfer's money in the blocked shard `holdShard` gives it. Results come back in
 * the order of `rows`; the answers on the wire are built from them by views.ts.
 * Why, and what was measured: docs/decisions/0010-transfer-batching.md.
 */
export async function createTransfers(
  db: Db,
  rows: readonly CreateTransferRow[],
  holdShard: (row: CreateTransferRow) => number,
): Promise<CreateResult[]> {
  const items = rows.map((row, ord) => batchItem(row, ord, holdShard(row)));
  const result = await prepared('transfer_create_batch', sql<BatchRow>`
    select ord, (result).* from pix_transfer_create_batch(${JSON.stringify(items)}::jsonb)`).execute(db);
  const answers: CreateResult[] = new Array(rows.length);
  for (const r of result.rows) answers[r.ord] = createResult(r);
  for (let i = 0; i < rows.length; i++) if (!answers[i]) throw new Error(`pix_transfer_create_batch gave no answer for item ${i}`);
  return answers;
}

/** Deletes up to `limit` stored answers that expired before `before`; returns how many. */
export async function deleteExpiredIdempotencyKeys(db: Db, before: Date, limit: number): Promise<number> {
  const result = await sql`
    delete from idempotency_keys where ctid in (
      select ctid from idempotency_keys where expires_at < ${before} limit ${limit})`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}
