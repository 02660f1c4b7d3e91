import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { Db } from '../src/db/client.ts';

/**
 * The ledger as a whole: each balance is credits minus debits over its postings, all balances
 * sum to zero (double entry), and no account holder's balance is negative.
 */
export async function assertLedgerInvariants(db: Db): Promise<void> {
  const mismatched = await sql<{ id: bigint; balance: bigint }>`
    select a.id, a.balance from ledger_accounts a
     where a.balance <> coalesce((select sum(amount_centavos) from postings where credit_account_id = a.id), 0)
                      - coalesce((select sum(amount_centavos) from postings where debit_account_id = a.id), 0)`.execute(db);
  assert.deepEqual(mismatched.rows, [], 'every balance equals credits minus debits');
  const total = await sql<{ total: bigint }>`select coalesce(sum(balance), 0)::int8 as total from ledger_accounts`.execute(db);
  assert.equal(total.rows[0]!.total, 0n, 'all balances sum to zero');
  const negative = await sql<{ id: bigint }>`select id from ledger_accounts where account_id is not null and balance < 0`.execute(db);
  assert.deepEqual(negative.rows, [], 'no holder balance is negative');
}
