import { sql } from 'kysely';
import type { Db } from '../../db/client.ts';
import { prepared } from '../../db/prepared.ts';

export type CreateOutcome =
  | 'created'
  | 'replay'
  | 'in_flight'
  | 'idempotency_mismatch'
  | 'key_not_found'
  | 'own_key'
  | 'ispb_denied'
  | 'creditor_mismatch'
  | 'external_id_taken'
  | 'insufficient_funds';

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

export interface CreateResult {
  outcome: CreateOutcome;
  response_status: number | null;
  response_body: unknown;
}

/** One item of pix_transfer_create_batch's JSON array. */
export function batchItem(row: CreateTransferRow, ord: number, holdShard: number) {
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
 * holding each transfer's money in the blocked shard `holdShard` gives it.
 * Answers come back in the order of `rows`.
 * Why, and what was measured: docs/decisions/0010-transfer-batching.md.
 */
export async function createTransfers(
  db: Db,
  rows: readonly CreateTransferRow[],
  holdShard: (row: CreateTransferRow) => number,
): Promise<CreateResult[]> {
  const items = rows.map((row, ord) => batchItem(row, ord, holdShard(row)));
  const result = await prepared('transfer_create_batch', sql<CreateResult & { ord: number }>`
    select ord, outcome, response_status, response_body from pix_transfer_create_batch(${JSON.stringify(items)}::jsonb)`).execute(db);
  const answers: CreateResult[] = new Array(rows.length);
  for (const r of result.rows) answers[r.ord] = r;
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
