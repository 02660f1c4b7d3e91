import { sql } from 'kysely';
import type { Trx } from '../../db/client.ts';

/** One of our transfers, locked so that concurrent refunds of it are counted one at a time. */
export async function lockSentTransfer(trx: Trx, endToEndId: string) {
  return trx
    .selectFrom('transactions')
    .selectAll()
    .where('end_to_end_id', '=', endToEndId)
    .where('type', '=', 'WITHDRAW')
    .forUpdate()
    .executeTakeFirst();
}

export async function refundedSoFar(trx: Trx, originalId: bigint): Promise<bigint> {
  const row = await trx
    .selectFrom('transactions')
    .select(sql<bigint>`coalesce(sum(amount_centavos), 0)::int8`.as('total'))
    .where('original_transaction_id', '=', originalId)
    .where('type', '=', 'REFUND_OUT')
    .executeTakeFirstOrThrow();
  return row.total;
}
