import { sql } from 'kysely';
import type { Trx } from '../../db/client.ts';

/** Queued transfers whose turn has come, locked for this worker; others skip them. */
export async function claimDueTransfers(trx: Trx, options: { now: Date; normDueBefore: Date; force: boolean; limit: number }) {
  const result = await sql<TransferToSettle>`
    select t.id, t.account_id, t.amount_centavos, t.end_to_end_id, t.pix_key, t.txid, t.idempotency_key, t.description,
           t.priority, t.expires_at, t.created_at, t.counterpart_name, t.counterpart_document, t.counterpart_ispb,
           t.counterpart_account_id, k.behavior
      from transactions t
      left join dict_keys k on k.key = t.pix_key
     where t.status = 'PENDING' and t.type = 'WITHDRAW'
       and (${options.force} or t.priority = 'HIGH' or t.created_at <= ${options.normDueBefore} or t.expires_at <= ${options.now})
       -- A receiver that never answers leaves the transfer queued until it expires.
       and (k.behavior is distinct from 'timeout' or t.expires_at <= ${options.now})
     order by t.created_at, t.id
     limit ${options.limit}
       for update of t skip locked`.execute(trx);
  return result.rows;
}

export interface TransferToSettle {
  id: bigint;
  account_id: bigint;
  amount_centavos: bigint;
  end_to_end_id: string;
  pix_key: string;
  txid: string | null;
  idempotency_key: string | null;
  description: string | null;
  priority: 'HIGH' | 'NORM';
  expires_at: Date;
  created_at: Date;
  counterpart_name: string | null;
  counterpart_document: string | null;
  counterpart_ispb: string | null;
  counterpart_account_id: bigint | null;
  behavior: 'reject' | 'timeout' | null;
}

export async function finishTransfer(trx: Trx, id: bigint, status: 'CONFIRMED' | 'ERROR', now: Date, reason: string | null) {
  await trx
    .updateTable('transactions')
    .set({ status, error_reason: reason, processed_at: now, updated_at: now })
    .where('id', '=', id)
    .execute();
}

export function findAccountParty(trx: Trx, accountId: bigint) {
  return trx
    .selectFrom('accounts')
    .select(['name', 'document', 'branch', 'account_number'])
    .where('id', '=', accountId)
    .executeTakeFirstOrThrow();
}

export async function insertReceived(
  trx: Trx,
  row: {
    accountId: bigint;
    amountCentavos: bigint;
    endToEndId: string;
    pixKey: string;
    txid: string | null;
    description: string | null;
    counterpart: { name: string; document: string; ispb: string; bankName: string | null; branch: string | null; account: string | null; accountId: bigint | null };
    now: Date;
    receivedAt: Date;
  },
) {
  return trx
    .insertInto('transactions')
    .values({
      account_id: row.accountId,
      type: 'PAYMENT',
      status: 'CONFIRMED',
      amount_centavos: row.amountCentavos,
      external_id: row.txid,
      end_to_end_id: row.endToEndId,
      idempotency_key: null,
      pix_key: row.pixKey,
      txid: row.txid,
      description: row.description,
      priority: null,
      expires_at: null,
      ispb_deny: null,
      error_reason: null,
      original_transaction_id: null,
      counterpart_name: row.counterpart.name,
      counterpart_document: row.counterpart.document,
      counterpart_ispb: row.counterpart.ispb,
      counterpart_bank_name: row.counterpart.bankName,
      counterpart_bank_code: null,
      counterpart_branch: row.counterpart.branch,
      counterpart_account: row.counterpart.account,
      counterpart_account_id: row.counterpart.accountId,
      created_at: row.receivedAt,
      updated_at: row.now,
      processed_at: row.receivedAt,
    })
    .returning(['id', 'amount_centavos', 'end_to_end_id', 'pix_key', 'txid', 'idempotency_key', 'description', 'counterpart_name', 'counterpart_document', 'counterpart_ispb'])
    .executeTakeFirstOrThrow();
}
