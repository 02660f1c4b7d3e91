import type { Db, Trx } from '../../db/client.ts';
import type { Clock } from '../../lib/clock.ts';
import { INSTITUTION_NAME } from '../accounts/service.ts';
import { holderLedgerAccountIds, lockLedgerAccounts, post, systemLedgerAccountId } from '../ledger/service.ts';
import { enqueue } from '../notifications/repo.ts';
import { receivePayload, transferPayload } from '../notifications/payloads.ts';
import { claimDueTransfers, findAccountParty, finishTransfer, insertReceived, type TransferToSettle } from './repo.ts';

export interface SettlementDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly ispb: string;
  readonly settlementDelayMs: number;
}

export interface SettlementResult {
  settled: number;
  failed: number;
}

export const REASON_EXPIRED = 'Expired before settlement: the receiving institution did not confirm in time';
export const REASON_REJECTED = 'Rejected by the receiving institution';

type Decision = 'expire' | 'reject' | 'internal' | 'external';

function decide(t: TransferToSettle, now: Date): Decision {
  if (t.expires_at.getTime() <= now.getTime()) return 'expire';
  if (t.behavior === 'reject') return 'reject';
  return t.counterpart_account_id !== null ? 'internal' : 'external';
}

/** The transfer failed: the blocked money goes back to available, and the payer is told why. */
async function fail(trx: Trx, t: TransferToSettle, now: Date, reason: string): Promise<void> {
  const sender = await holderLedgerAccountIds(trx, t.account_id);
  await post(trx, 'transfer_void', t.end_to_end_id, [{ debitAccountId: sender.blocked, creditAccountId: sender.available, amountCentavos: t.amount_centavos }]);
  await finishTransfer(trx, t.id, 'ERROR', now, reason);
  await enqueue(trx, { accountId: t.account_id, eventType: 'cash_out', transactionId: t.id, payload: transferPayload(t, { status: 'ERROR', reason }), now });
}

async function settleExternal(trx: Trx, t: TransferToSettle, now: Date): Promise<void> {
  const sender = await holderLedgerAccountIds(trx, t.account_id);
  const network = await systemLedgerAccountId(trx, 'pix_network');
  await post(trx, 'transfer_settle', t.end_to_end_id, [{ debitAccountId: sender.blocked, creditAccountId: network, amountCentavos: t.amount_centavos }]);
  await finishTransfer(trx, t.id, 'CONFIRMED', now, null);
  await enqueue(trx, { accountId: t.account_id, eventType: 'cash_out', transactionId: t.id, payload: transferPayload(t, { status: 'LIQUIDATED' }), now });
}

/** Both accounts are ours: the receiver is credited in the same transaction and told so. */
async function settleInternal(trx: Trx, deps: SettlementDeps, t: TransferToSettle, now: Date): Promise<void> {
  const receiverId = t.counterpart_account_id!;
  const sender = await holderLedgerAccountIds(trx, t.account_id);
  const receiver = await holderLedgerAccountIds(trx, receiverId);
  await post(trx, 'transfer_settle_internal', t.end_to_end_id, [
    { debitAccountId: sender.blocked, creditAccountId: receiver.available, amountCentavos: t.amount_centavos },
  ]);
  await finishTransfer(trx, t.id, 'CONFIRMED', now, null);
  await enqueue(trx, { accountId: t.account_id, eventType: 'cash_out', transactionId: t.id, payload: transferPayload(t, { status: 'LIQUIDATED' }), now });
  const payer = await findAccountParty(trx, t.account_id);
  const received = await insertReceived(trx, {
    accountId: receiverId,
    amountCentavos: t.amount_centavos,
    endToEndId: t.end_to_end_id,
    pixKey: t.pix_key,
    txid: null,
    description: t.description,
    counterpart: {
      name: payer.name,
      document: payer.document,
      ispb: deps.ispb,
      bankName: INSTITUTION_NAME,
      branch: payer.branch,
      account: payer.account_number,
      accountId: t.account_id,
    },
    now,
    receivedAt: now,
  });
  await enqueue(trx, { accountId: receiverId, eventType: 'cash_in', transactionId: received.id, payload: receivePayload(received), now });
}

/**
 * Every ledger account a batch posts to, locked up front in one order: batches running in
 * parallel would otherwise lock senders and the network in opposite orders and deadlock.
 */
async function lockBatchLedgerAccounts(trx: Trx, decisions: readonly { t: TransferToSettle; decision: Decision }[]): Promise<void> {
  const holders = new Set<bigint>();
  for (const { t, decision } of decisions) {
    holders.add(t.account_id);
    if (decision === 'internal') holders.add(t.counterpart_account_id!);
  }
  const toNetwork = decisions.some((d) => d.decision === 'external');
  await lockLedgerAccounts(trx, [...holders], toNetwork ? ['pix_network'] : []);
}

async function settleBatch(deps: SettlementDeps, force: boolean, limit: number): Promise<SettlementResult & { claimed: number }> {
  return deps.db.transaction().execute(async (trx) => {
    const now = deps.clock.now();
    const due = await claimDueTransfers(trx, { now, normDueBefore: new Date(now.getTime() - deps.settlementDelayMs), force, limit });
    const result = { settled: 0, failed: 0, claimed: due.length };
    const decisions = due.map((t) => ({ t, decision: decide(t, now) }));
    await lockBatchLedgerAccounts(trx, decisions);
    for (const { t, decision } of decisions) {
      if (decision === 'expire' || decision === 'reject') {
        await fail(trx, t, now, decision === 'expire' ? REASON_EXPIRED : REASON_REJECTED);
        result.failed++;
      } else {
        await (decision === 'internal' ? settleInternal(trx, deps, t, now) : settleExternal(trx, t, now));
        result.settled++;
      }
    }
    return result;
  });
}

/**
 * Settles queued transfers whose turn has come (HIGH at once, NORM after the settlement delay,
 * in order of arrival; `force` settles every queued one now). Each batch is one transaction
 * over rows locked with SKIP LOCKED, so several workers never settle a transfer twice and a
 * worker that dies mid-batch leaves nothing half done.
 */
export async function settleDue(deps: SettlementDeps, options: { force?: boolean; limit?: number } = {}): Promise<SettlementResult> {
  const limit = options.limit ?? 100;
  const total: SettlementResult = { settled: 0, failed: 0 };
  // Full batches mean more may be due; a bounded number of rounds keeps one call finite.
  for (let round = 0; round < 1000; round++) {
    const batch = await settleBatch(deps, options.force ?? false, limit);
    total.settled += batch.settled;
    total.failed += batch.failed;
    if (batch.claimed < limit) break;
  }
  return total;
}
