import type { Trx } from '../../db/client.ts';
import { assert } from '../../lib/assert.ts';
import { AppError } from '../../http/errors.ts';
import { applyPosting, type Posting } from './repo.ts';

export type { Posting } from './repo.ts';
export { BLOCKED_SHARDS, createHolderLedgerAccounts, holderBalances, holderLedgerAccountIds, systemLedgerAccountId } from './repo.ts';

export const insufficientFunds = () => new AppError(422, 'INSUFFICIENT_BALANCE', 'Insufficient balance');

/**
 * Moves money: the only way a balance changes. Runs in the caller's transaction, together with
 * the business rows and the outbox event of the same movement. A posting that would overdraw an
 * account fails with 422 and the caller's transaction rolls back whole.
 */
export async function post(
  trx: Trx,
  kind: string,
  reference: string | null,
  postings: readonly Posting[],
  now: Date,
): Promise<bigint> {
  assert(postings.length > 0, 'a ledger transaction needs postings');
  let ledgerTxId: bigint | null = null;
  for (const posting of postings) {
    assert(posting.amountCentavos > 0n, 'posting amounts are positive');
    ledgerTxId = await applyPosting(trx, kind, reference, ledgerTxId, posting, now);
    if (ledgerTxId === null) throw insufficientFunds();
  }
  return ledgerTxId!;
}
