import type { Db, Trx } from '../../db/client.ts';
import type { Clock } from '../../lib/clock.ts';
import { INSTITUTION_NAME } from '../accounts/service.ts';
import { enqueue, enqueueMany, type OutboxEvent } from '../notifications/repo.ts';
import { receivePayload, refundPayload, transferPayload } from '../notifications/payloads.ts';
import { holderLedgerAccountIds, post, systemLedgerAccountId } from '../ledger/service.ts';
import { sql } from 'kysely';
import { applyPosting } from '../ledger/repo.ts';
import { findForPayloads, insertArrived, insertSettledTransfer, settleBatch, type ArrivedMovement, type Counterpart, type SettledRow } from './repo.ts';
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

/** A debit that settles in the act: from an account holder to a receiver here or at another institution. */
export interface ImmediateDebit {
  payerAccountId: bigint;
  amountCentavos: bigint;
  endToEndId: string;
  txid: string | null;
  description: string | null;
  /** The receiver's key and BCB's componentesValor, when the debit pays a charge. */
  pixKey?: string | null | undefined;
  valueComponents?: Record<string, string> | null | undefined;
  /** The payer as the receiver's PAYMENT row shows it. */
  payer: Counterpart;
  /** The receiver: an account of this service (accountId, credited here) or another institution's (through the network). */
  receiver: Counterpart;
  now: Date;
}

export type ImmediateDebitResult = { insufficient: true } | { withdraw: { id: bigint }; payment: { id: bigint } | null };

/**
 * Moves money out of an account now, in the caller's transaction: `available` pays the
 * receiver's `available` (an account of this service, which gets its PAYMENT row and `cash_in`)
 * or the network's ledger account, with the payer's WITHDRAW row and its `cash_out`. Without the
 * money nothing is written and the answer says so. The two ledger accounts are locked in id
 * order first, as every batch of the ledger locks them. One end-to-end id makes one debit: a
 * second one with it fails on the transactions' unique index, and its transaction rolls back.
 */
export async function debitNow(trx: Trx, debit: ImmediateDebit): Promise<ImmediateDebitResult> {
  const payer = await holderLedgerAccountIds(trx, debit.payerAccountId);
  const credit = debit.receiver.accountId !== null ? (await holderLedgerAccountIds(trx, debit.receiver.accountId)).available : await systemLedgerAccountId(trx, 'pix_network');
  await sql`select id from ledger_accounts where id in (${payer.available}, ${credit}) order by id for update`.execute(trx);
  // The ledger's kinds of a transfer that settles: the same movement, made in one step.
  const kind = debit.receiver.accountId !== null ? 'transfer_settle_internal' : 'transfer_settle';
  const posted = await applyPosting(trx, kind, debit.endToEndId, null, { debitAccountId: payer.available, creditAccountId: credit, amountCentavos: debit.amountCentavos }, debit.now);
  if (posted === null) return { insufficient: true };
  const withdraw = await insertSettledTransfer(trx, {
    accountId: debit.payerAccountId,
    amountCentavos: debit.amountCentavos,
    endToEndId: debit.endToEndId,
    txid: debit.txid,
    description: debit.description,
    counterpart: debit.receiver,
    now: debit.now,
  });
  const events: OutboxEvent[] = [
    { accountId: debit.payerAccountId, eventType: 'cash_out', transactionId: withdraw.id, payload: transferPayload(withdraw, { status: 'LIQUIDATED' }), now: debit.now },
  ];
  let payment: { id: bigint } | null = null;
  if (debit.receiver.accountId !== null) {
    const received = await insertArrived(trx, {
      type: 'PAYMENT',
      accountId: debit.receiver.accountId,
      amountCentavos: debit.amountCentavos,
      endToEndId: debit.endToEndId,
      pixKey: debit.pixKey ?? null,
      txid: debit.txid,
      valueComponents: debit.valueComponents ?? null,
      description: debit.description,
      originalTransactionId: null,
      counterpart: debit.payer,
      at: debit.now,
      now: debit.now,
    });
    payment = received;
    events.push({ accountId: debit.receiver.accountId, eventType: 'cash_in', transactionId: received.id, payload: receivePayload(received), now: debit.now });
  }
  await enqueueMany(trx, events);
  return { withdraw, payment };
}

/** An account of this service as the other side of a movement. */
export async function holderCounterpart(trx: Trx, ispb: string, accountId: bigint): Promise<Counterpart> {
  const account = await trx.selectFrom('accounts').select(['name', 'document', 'branch', 'account_number']).where('id', '=', accountId).executeTakeFirstOrThrow();
  return { name: account.name, document: account.document, ispb, bankName: INSTITUTION_NAME, branch: account.branch, account: account.account_number, accountId };
}
