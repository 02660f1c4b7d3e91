import type { Db, Trx } from '../../db/client.ts';
import type { Clock } from '../../lib/clock.ts';
import { INSTITUTION_NAME } from '../accounts/service.ts';
import { enqueue, enqueueMany, type OutboxEvent } from '../notifications/repo.ts';
import { receivePayload, refundPayload, transferPayload } from '../notifications/payloads.ts';
import { holderLedgerAccountIds, post, systemLedgerAccountId } from '../ledger/service.ts';
import { findForPayloads, insertArrived, settleBatch, type ArrivedMovement, type SettledRow } from './repo.ts';
import { tracing } from '../../telemetry/hooks.ts';
import { traceContexts } from '../../telemetry/repo.ts';

export interface SettlementDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly ispb: string;
  readonly settlementDelayMs: number;
  /** Counts what settled and what failed (the operator's metrics). */
  readonly metrics?: { settled(result: SettlementResult): void };
}

export interface SettlementResult {
  settled: number;
  failed: number;
}

export const REASON_EXPIRED = 'Expired before settlement: the receiving institution did not confirm in time';
export const REASON_REJECTED = 'Rejected by the receiving institution';
export const REASON_REFUND_REJECTED = "Refused by the payer's institution";

type PayloadRow = Awaited<ReturnType<typeof findForPayloads>>[number];

/**
 * The notifications of one settled batch: TRANSFER to each payer and RECEIVE to internal
 * receivers; REFUND (`refund_in`) to each refunding account and (`refund_out`) to an internal
 * payer that got its money back.
 */
function notifications(settled: readonly SettledRow[], rows: readonly PayloadRow[], now: Date): OutboxEvent[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const events: OutboxEvent[] = [];
  for (const s of settled) {
    const t = byId.get(s.transaction_id)!;
    const received = s.received_id === null ? null : byId.get(s.received_id)!;
    if (t.type === 'REFUND_IN') {
      const outcome = s.outcome === 'failed' ? { status: 'ERROR' as const, reason: t.error_reason ?? '' } : { status: 'REFUNDED' as const };
      const payload = refundPayload(byId.get(t.original_transaction_id!)!, t, 'DEBIT', outcome);
      events.push({ accountId: t.account_id, eventType: 'refund_in', transactionId: t.id, payload, now });
      if (received) {
        const payload = refundPayload(byId.get(received.original_transaction_id!)!, received, 'CREDIT');
        events.push({ accountId: received.account_id, eventType: 'refund_out', transactionId: received.id, payload, now });
      }
      continue;
    }
    const outcome = s.outcome === 'failed' ? { status: 'ERROR' as const, reason: t.error_reason ?? '' } : { status: 'LIQUIDATED' as const };
    events.push({ accountId: t.account_id, eventType: 'cash_out', transactionId: t.id, payload: transferPayload(t, outcome), now });
    if (received) {
      events.push({ accountId: received.account_id, eventType: 'cash_in', transactionId: received.id, payload: receivePayload(received), now });
    }
  }
  return events;
}

/** The rows a batch's notifications are built from: the settled ones, the other side of
 * internal movements, and the transactions refunds refer to. */
async function payloadRows(trx: Trx, settled: readonly SettledRow[]): Promise<PayloadRow[]> {
  const ids = settled.flatMap((s) => (s.received_id === null ? [s.transaction_id] : [s.transaction_id, s.received_id]));
  const rows = await findForPayloads(trx, ids);
  const known = new Set(rows.map((r) => r.id));
  const originals = [...new Set(rows.flatMap((r) => (r.original_transaction_id !== null && !known.has(r.original_transaction_id) ? [r.original_transaction_id] : [])))];
  return originals.length === 0 ? rows : [...rows, ...(await findForPayloads(trx, originals))];
}

async function runBatch(deps: SettlementDeps, force: boolean, limit: number): Promise<SettlementResult & { claimed: number }> {
  const startedMs = performance.timeOrigin + performance.now();
  const result = await deps.db.transaction().execute(async (trx) => {
    const now = deps.clock.now();
    const settled = await settleBatch(trx, {
      now,
      normDueBefore: new Date(now.getTime() - deps.settlementDelayMs),
      force,
      limit,
      ispb: deps.ispb,
      bankName: INSTITUTION_NAME,
      reasonExpired: REASON_EXPIRED,
      reasonRejected: REASON_REJECTED,
      reasonRefundRejected: REASON_REFUND_REJECTED,
    });
    if (settled.length > 0) await enqueueMany(trx, notifications(settled, await payloadRows(trx, settled), now));
    const failed = settled.filter((s) => s.outcome === 'failed').length;
    return { settled: settled.length - failed, failed, claimed: settled.length, rows: settled };
  });
  if (tracing().enabled && result.rows.length > 0) await traceSettlement(deps, result.rows, startedMs);
  return { settled: result.settled, failed: result.failed, claimed: result.claimed };
}

/** Tracing on: each settled or failed transfer's settlement, as a span of the trace of the request that made it. */
async function traceSettlement(deps: SettlementDeps, rows: readonly SettledRow[], startedMs: number): Promise<void> {
  const contexts = await traceContexts(deps.db, rows.map((r) => r.transaction_id));
  for (const row of rows) {
    const traceparent = contexts.get(row.transaction_id);
    if (traceparent) tracing().recordSpan(traceparent, 'pix.settle', startedMs, { 'pix.transaction_id': Number(row.transaction_id), 'pix.outcome': row.outcome, 'pix.batch_size': rows.length });
  }
}

/**
 * Settles queued transfers whose turn has come (HIGH at once, NORM after the settlement delay,
 * in order of arrival; `force` settles every queued one now). Each batch is one transaction:
 * pix_settle_batch claims with SKIP LOCKED and posts, then the notifications are written, so
 * several workers never settle a transfer twice and a worker that dies mid-batch leaves
 * nothing half done.
 * Why, and what was measured: docs/decisions/0012-set-based-settlement.md.
 */
export async function settleDue(deps: SettlementDeps, options: { force?: boolean; limit?: number } = {}): Promise<SettlementResult> {
  const limit = options.limit ?? 200;
  const total: SettlementResult = { settled: 0, failed: 0 };
  // Full batches mean more may be due; a bounded number of rounds keeps one call finite.
  for (let round = 0; round < 1000; round++) {
    const batch = await runBatch(deps, options.force ?? false, limit);
    total.settled += batch.settled;
    total.failed += batch.failed;
    if (batch.claimed < limit) break;
  }
  deps.metrics?.settled(total);
  return total;
}

/**
 * Money that arrives from the Pix network, already settled: the network's ledger account pays
 * the account's available one and the movement is recorded, in the caller's transaction (with
 * its notification).
 */
export async function receiveFromNetwork(trx: Trx, movement: ArrivedMovement) {
  const holder = await holderLedgerAccountIds(trx, movement.accountId);
  const network = await systemLedgerAccountId(trx, 'pix_network');
  const kind = movement.type === 'PAYMENT' ? 'pix_received' : 'refund_received';
  await post(trx, kind, movement.endToEndId, [{ debitAccountId: network, creditAccountId: holder.available, amountCentavos: movement.amountCentavos }], movement.now);
  return insertArrived(trx, movement);
}

/** A PIX received from the network: the credit, its PAYMENT row and its RECEIVE (`cash_in`) notification. */
export async function receivePix(trx: Trx, movement: Omit<ArrivedMovement, 'type'>) {
  const row = await receiveFromNetwork(trx, { ...movement, type: 'PAYMENT' });
  await enqueue(trx, { accountId: movement.accountId, eventType: 'cash_in', transactionId: row.id, payload: receivePayload(row), now: movement.now });
  return row;
}
