import type { Trx } from '../../db/client.ts';
import { assert } from '../../lib/assert.ts';
import { AppError } from '../../http/errors.ts';
import { applyPosting, insertLedgerTransaction, type Posting } from './repo.ts';

export type { Posting } from './repo.ts';
export { createHolderLedgerAccounts, holderBalances, holderLedgerAccountIds, lockLedgerAccounts, systemLedgerAccountId } from './repo.ts';

export const insufficientFunds = () => new AppError(422, 'INSUFFICIENT_FUNDS', 'Insufficient balance');

/** The PostgreSQL error of a CHECK constraint, as both drivers report it. */
function isNoOverdraftViolation(error: unknown): boolean {
  const e = error as { code?: string; constraint?: string; message?: string };
  return e.code === '23514' && (e.constraint === 'ledger_accounts_no_overdraft' || Boolean(e.message?.includes('ledger_accounts_no_overdraft')));
}

/**
 * Moves money: the only way a balance changes. Runs in the caller's transaction, together with
 * the business rows and the outbox event of the same movement. A posting that would overdraw an
 * account fails with 422 and the caller's transaction rolls back whole.
 */
export async function post(trx: Trx, kind: string, reference: string | null, postings: readonly Posting[]): Promise<bigint> {
  assert(postings.length > 0, 'a ledger transaction needs postings');
  for (const p of postings) assert(p.amountCentavos > 0n, 'posting amounts are positive');
  const ledgerTxId = await insertLedgerTransaction(trx, kind, reference);
  try {
    for (const posting of postings) await applyPosting(trx, ledgerTxId, posting);
  } catch (error) {
    if (isNoOverdraftViolation(error)) throw insufficientFunds();
    throw error;
  }
  return ledgerTxId;
}
