import { sql } from 'kysely';
import type { Db } from '../../db/client.ts';

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

/** One round trip: the whole of POST /dict/pix runs in pix_transfer_create (migration 0002). */
export async function createTransfer(db: Db, row: CreateTransferRow) {
  const result = await sql<{ outcome: CreateOutcome; response_status: number | null; response_body: unknown }>`
    select outcome, response_status, response_body from pix_transfer_create(
      ${row.accountId}::int8, ${row.idempotencyKey}, ${row.requestHash}, ${row.amountCentavos}::int8, ${row.pixKey},
      ${row.priority}, ${row.expirationSeconds}::int4, ${row.creditorDocument}, ${row.ispbDeny}::text[], ${row.description},
      ${row.externalId}, ${row.endToEndId}, ${row.now}::timestamptz)`.execute(db);
  const first = result.rows[0];
  if (!first) throw new Error('pix_transfer_create returned no row');
  return first;
}
