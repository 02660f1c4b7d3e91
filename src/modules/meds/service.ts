import type { Db } from '../../db/client.ts';
import type { MedReason, RefundNature } from '../../db/schema.ts';
import { AppError, conflict, notFound } from '../../http/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { holderLedgerAccountIds, post } from '../ledger/service.ts';
import { medPayload, type MedRefund } from '../notifications/payloads.ts';
import { enqueue } from '../notifications/repo.ts';
import { committedAmount, lockReceived, lockReceivedById, type ReceivedRow } from '../refunds/repo.ts';
import type { ListQueries } from '../../http/list-queries.ts';
import { interval, pageMetadata, type ListQuery } from '../transactions/service.ts';
import { createRefund } from '../refunds/service.ts';
import * as repo from './repo.ts';

export interface MedDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly ispb: string;
  /** Wakes this process's settlement worker when an accepted MED's refund is queued. */
  readonly onHighPriority?: () => void;
}

/** The refund nature an accepted MED's refund carries. */
export const MED_NATURE: Record<MedReason, RefundNature> = { FRAUD: 'MED_FRAUDE', OPERATIONAL_FLAW: 'MED_OPERACIONAL' };

const medNotFound = () => notFound('MED_NOT_FOUND', 'MED not found');

function view(med: repo.MedRow, original: ReceivedRow, refund: MedRefund | null) {
  return medPayload(med, original, refund).data;
}

/**
 * Opens a MED against a received PIX: blocks what is still refundable of it (as much of it as
 * the account has available), `available` -> `blocked`, and notifies `med_created`.
 */
export async function openMed(deps: MedDeps, input: { endToEndId: string; reason: MedReason; details?: string | undefined }) {
  const receiver = await repo.findReceiver(deps.db, input.endToEndId);
  if (!receiver) throw notFound('TRANSACTION_NOT_FOUND', 'No PIX received by an account of this institution has that endToEndId');
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const original = (await lockReceived(trx, receiver.account_id, input.endToEndId))!;
    if (await repo.hasOpenMed(trx, original.id)) throw conflict('MED_ALREADY_OPEN', 'A MED is already open against this PIX');
    const disputable = original.amount_centavos - (await committedAmount(trx, original.id));
    if (disputable <= 0n) throw new AppError(422, 'NOTHING_TO_DISPUTE', 'This PIX has already been refunded in full');
    const holder = await holderLedgerAccountIds(trx, original.account_id);
    const available = (await repo.lockLedgerAccounts(trx, [holder.available, holder.blocked])).get(holder.available)!;
    const amount = available < disputable ? available : disputable;
    if (amount <= 0n) throw new AppError(422, 'NO_BALANCE_TO_BLOCK', 'The receiving account has no available balance to block');
    await post(trx, 'med_block', original.end_to_end_id, [{ debitAccountId: holder.available, creditAccountId: holder.blocked, amountCentavos: amount }], now);
    const med = await repo.insertMed(trx, {
      accountId: original.account_id,
      transactionId: original.id,
      amountCentavos: amount,
      reason: input.reason,
      details: input.details ?? null,
      hold: holder.blocked,
      now,
    });
    await enqueue(trx, { accountId: med.account_id, eventType: 'med_created', transactionId: original.id, payload: medPayload(med, original, null), now });
    return { medId: Number(med.id) };
  });
}

/** Closes an open MED: `accept` refunds the blocked money to the payer, `reject` releases it. */
export async function closeMed(deps: MedDeps, medId: bigint, decision: 'accept' | 'reject') {
  const found = await repo.findMed(deps.db, medId);
  if (!found) throw medNotFound();
  const now = deps.clock.now();
  const result = await deps.db.transaction().execute(async (trx) => {
    // The PIX first, then the MED: the order in which opening a MED and refunds take locks.
    const original = await lockReceivedById(trx, found.transaction_id);
    const med = await repo.lockMed(trx, medId);
    if (med.status !== 'OPEN') throw conflict('MED_CLOSED', `This MED is already ${med.status}`);
    if (decision === 'reject') {
      const holder = await holderLedgerAccountIds(trx, med.account_id);
      // The release posts blocked -> available, against the id order other writers lock in.
      await repo.lockLedgerAccounts(trx, [holder.available, med.hold_ledger_account_id]);
      await post(trx, 'med_release', original.end_to_end_id, [{ debitAccountId: med.hold_ledger_account_id, creditAccountId: holder.available, amountCentavos: med.amount_centavos }], now);
      const closed = await repo.closeMed(trx, med.id, 'REJECTED', null, now);
      await enqueue(trx, { accountId: med.account_id, eventType: 'med_rejected', transactionId: original.id, payload: medPayload(closed, original, null), now });
      return view(closed, original, null);
    }
    // Closed first, so that the money it held is not counted twice by the refund's check.
    await repo.closeMed(trx, med.id, 'ACCEPTED', null, now);
    const refund = await createRefund(trx, deps.ispb, {
      original,
      // Not an id a client can choose (those are alphanumeric), so never taken.
      refundId: `MED-${med.id}`,
      amountCentavos: med.amount_centavos,
      natureza: MED_NATURE[med.reason],
      descricao: `MED ${med.id}`,
      now,
      heldIn: med.hold_ledger_account_id,
    });
    const closed = await repo.closeMed(trx, med.id, 'ACCEPTED', refund.id, now);
    const refundInfo: MedRefund = { id: refund.refund_id, rtrId: refund.rtr_id, natureza: refund.natureza, status: refund.status };
    await enqueue(trx, { accountId: med.account_id, eventType: 'med_accepted', transactionId: original.id, payload: medPayload(closed, original, refundInfo), now });
    return view(closed, original, refundInfo);
  });
  if (decision === 'accept') deps.onHighPriority?.();
  return result;
}

/** The MED as the account holder reads it: the payload its webhooks carry. */
function accountView(row: repo.AccountMedRow) {
  const refund: MedRefund | null =
    row.refund_client_id === null
      ? null
      : { id: row.refund_client_id, rtrId: row.refund_rtr_id!, natureza: row.refund_natureza!, status: row.refund_status! };
  return medPayload(row, { id: row.transaction_id, end_to_end_id: row.end_to_end_id }, refund).data;
}

export async function getAccountMed(deps: Pick<MedDeps, 'db'>, accountId: bigint, medId: bigint) {
  const row = await repo.findAccountMed(deps.db, accountId, medId);
  if (!row) throw medNotFound();
  return accountView(row);
}

export interface MedListQuery extends Pick<ListQuery, 'page' | 'size' | 'startDate' | 'endDate'> {
  status?: 'OPEN' | 'ACCEPTED' | 'REJECTED' | undefined;
}

/**
 * The account's MEDs opened in an interval of at most 31 days (the last 31 by default), newest
 * first: on the list connections, within the account's limit of lists at once.
 */
export async function listAccountMeds(deps: Pick<MedDeps, 'clock'> & { lists: ListQueries }, accountId: bigint, query: MedListQuery) {
  const page = query.page ?? 1;
  const size = query.size ?? 20;
  const { from, to } = interval(query, deps.clock.now(), 31);
  const filter = { accountId, from, to, status: query.status };
  const { rows, total } = await deps.lists.run(accountId, (db) => repo.listAccountMeds(db, filter, { offset: (page - 1) * size, limit: size }));
  return { data: rows.map(accountView), metadata: pageMetadata(page, size, total) };
}
