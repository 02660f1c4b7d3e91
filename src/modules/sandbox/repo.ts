import { sql } from 'kysely';
import type { DbExecutor, Trx } from '../../db/client.ts';

export async function insertExternalKey(
  db: DbExecutor,
  key: {
    key: string;
    type: 'CPF' | 'CNPJ' | 'EMAIL' | 'PHONE' | 'EVP';
    name: string;
    document: string;
    ispb: string;
    bankName: string | null;
    branch: string | null;
    accountNumber: string | null;
    behavior: 'reject' | 'timeout' | null;
  },
): Promise<boolean> {
  const result = await db
    .insertInto('dict_keys')
    .values({
      key: key.key,
      key_type: key.type,
      account_id: null,
      owner_name: key.name,
      owner_document: key.document,
      ispb: key.ispb,
      bank_name: key.bankName,
      branch: key.branch,
      account_number: key.accountNumber,
      behavior: key.behavior,
    })
    .onConflict((oc) => oc.column('key').doNothing())
    .executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

export function findKey(db: DbExecutor, key: string) {
  return db.selectFrom('dict_keys').select(['key', 'account_id']).where('key', '=', key).executeTakeFirst();
}

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

export function insertRefundReceived(
  trx: Trx,
  row: {
    accountId: bigint;
    originalId: bigint;
    amountCentavos: bigint;
    rtrId: string;
    pixKey: string | null;
    counterpart: { name: string | null; document: string | null; ispb: string | null; bankName: string | null; branch: string | null; account: string | null };
    now: Date;
  },
) {
  return trx
    .insertInto('transactions')
    .values({
      account_id: row.accountId,
      type: 'REFUND_OUT',
      status: 'CONFIRMED',
      amount_centavos: row.amountCentavos,
      external_id: null,
      end_to_end_id: row.rtrId,
      idempotency_key: null,
      pix_key: row.pixKey,
      txid: null,
      description: null,
      priority: null,
      expires_at: null,
      ispb_deny: null,
      error_reason: null,
      original_transaction_id: row.originalId,
      counterpart_name: row.counterpart.name,
      counterpart_document: row.counterpart.document,
      counterpart_ispb: row.counterpart.ispb,
      counterpart_bank_name: row.counterpart.bankName,
      counterpart_bank_code: null,
      counterpart_branch: row.counterpart.branch,
      counterpart_account: row.counterpart.account,
      counterpart_account_id: null,
      created_at: row.now,
      updated_at: row.now,
      processed_at: row.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function chargeExists(db: DbExecutor, accountId: bigint, txid: string): Promise<boolean> {
  const result = await sql<{ id: bigint }>`select id from charges where account_id = ${accountId} and txid = ${txid}`.execute(db);
  return result.rows.length > 0;
}
