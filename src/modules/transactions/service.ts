import type { Db } from '../../db/client.ts';
import { badRequest, notFound } from '../../http/errors.ts';
import type { ListQueries } from '../../http/list-queries.ts';
import type { Clock } from '../../lib/clock.ts';
import { DAY_MS, parseDateBound } from '../../lib/dates.ts';
import { findByIdentifier, listTransactions, type ListFilter, type TransactionRow, type TransactionStatus, type TransactionType } from './repo.ts';
import { STATUS_BY_LABEL, TYPE_BY_LABEL } from './views.ts';

export interface TransactionsDeps {
  readonly db: Db;
  readonly clock: Clock;
  /** The account lists' connections and limits. */
  readonly lists: ListQueries;
  /** Sandbox mode: the faults that may hold a pending transfer, which then says why in its `error_reason`. */
  readonly controls?: SettlementHolds | undefined;
}

/** The sandbox's settlement faults (modules/controls), as far as a transaction's reason shows them. */
export interface SettlementHolds {
  /** False while no fault can hold a transfer: then nothing is read. */
  holdsTransfers(): boolean;
  /** Why a fault holds this pending transfer, or null. */
  pendingReason(transfer: { readonly pix_key: string | null; readonly created_at: Date; readonly expires_at: Date | null }): string | null;
}

/**
 * Rows with the reason a sandbox fault still holds each pending transfer, in `error_reason`:
 * without it a transfer a settlement delay holds would stay PENDING with nothing to say why.
 * Outside the sandbox, or with no such fault set, the rows as they are. The rows carry what a
 * fault holds a transfer by (key, times): no query.
 */
function withPendingReasons(deps: TransactionsDeps, rows: TransactionRow[]): TransactionRow[] {
  const holds = deps.controls;
  if (!holds?.holdsTransfers()) return rows;
  return rows.map((r) => {
    const reason = r.type === 'WITHDRAW' && r.status === 'PENDING' && r.error_reason === null ? holds.pendingReason(r) : null;
    return reason ? { ...r, error_reason: reason } : r;
  });
}

export const MAX_INTERVAL_DAYS = 31;
/** The PIX-key list answers at most this many results in all. */
export const PIX_KEY_LIST_MAX_RESULTS = 1000;

export interface ListQuery {
  page?: number | undefined;
  size?: number | undefined;
  /** A code, or the label the list prints (`Confirmado`). */
  status?: TransactionStatus | string | undefined;
  /** A code, or the label the list prints (`Pix out`). */
  type?: TransactionType | string | undefined;
  startDate?: string | undefined;
  endDate?: string | undefined;
  externalId?: string | undefined;
  endToEndId?: string | undefined;
}

function bound(text: string, field: string) {
  const parsed = parseDateBound(text);
  if (!parsed) throw badRequest('INVALID_DATE', `${field} must be a date (YYYY-MM-DD) or an RFC 3339 timestamp`);
  return parsed;
}

/**
 * The interval of a list: a date names a whole day in São Paulo (the end date inclusive), a
 * timestamp an instant. Absent bounds default to the last `defaultDays` up to now.
 */
export function interval(query: Pick<ListQuery, 'startDate' | 'endDate'>, now: Date, defaultDays: number): { from: Date; to: Date } {
  const end = query.endDate !== undefined ? bound(query.endDate, 'endDate') : { at: now, isDate: false };
  const start = query.startDate !== undefined ? bound(query.startDate, 'startDate') : { at: new Date(end.at.getTime() - defaultDays * DAY_MS), isDate: false };
  const to = end.isDate ? new Date(end.at.getTime() + DAY_MS) : new Date(end.at.getTime() + 1);
  // Against the exclusive end: an end date covers its whole day, so a start later that day is fine.
  if (to.getTime() <= start.at.getTime()) throw badRequest('INVALID_INTERVAL', 'endDate must not be before startDate');
  if (end.at.getTime() - start.at.getTime() > MAX_INTERVAL_DAYS * DAY_MS) {
    throw badRequest('INTERVAL_TOO_LONG', `The interval between startDate and endDate is at most ${MAX_INTERVAL_DAYS} days`);
  }
  return { from: start.at, to };
}

export function pageMetadata(page: number, size: number, total: number) {
  const totalPages = Math.ceil(total / size);
  return { page, size, total, totalPages, hasNext: page < totalPages, hasPrevious: page > 1 };
}

export async function listForAccount(deps: TransactionsDeps, accountId: bigint, query: ListQuery, pixKey?: string) {
  const page = query.page ?? 1;
  const size = query.size ?? 20;
  const { from, to } = interval(query, deps.clock.now(), pixKey === undefined ? 31 : 30);
  const filter: ListFilter = {
    accountId,
    from,
    to,
    status: query.status === undefined ? undefined : (STATUS_BY_LABEL[query.status] ?? (query.status as TransactionStatus)),
    type: query.type === undefined ? undefined : (TYPE_BY_LABEL[query.type] ?? (query.type as TransactionType)),
    externalId: query.externalId,
    endToEndId: query.endToEndId,
    pixKey,
  };
  const offset = (page - 1) * size;
  // The PIX-key list answers at most 1000 results in all: pages beyond them are empty.
  const window =
    pixKey === undefined
      ? { offset, limit: size }
      : { offset, limit: Math.max(0, Math.min(size, PIX_KEY_LIST_MAX_RESULTS - offset)), cap: PIX_KEY_LIST_MAX_RESULTS };
  const { rows, total } = await deps.lists.run(accountId, (db) => listTransactions(db, filter, window));
  return { rows: withPendingReasons(deps, rows), metadata: pageMetadata(page, size, total) };
}

/**
 * One transaction by identifier; tied to a key, it is part of the PIX-key list's API and runs
 * with the lists (their connections and limits).
 */
export async function findOne(deps: TransactionsDeps, accountId: bigint, identifier: string, pixKey?: string): Promise<TransactionRow> {
  const row =
    pixKey === undefined
      ? await findByIdentifier(deps.db, accountId, identifier)
      : await deps.lists.run(accountId, (db) => findByIdentifier(db, accountId, identifier, pixKey));
  if (!row) throw notFound('TRANSACTION_NOT_FOUND', 'Transaction not found');
  return withPendingReasons(deps, [row])[0]!;
}
