import type { Db } from '../../db/client.ts';
import { badRequest, notFound } from '../../http/errors.ts';
import type { ListQueries } from '../../http/list-queries.ts';
import type { Clock } from '../../lib/clock.ts';
import { interval, MAX_INTERVAL_DAYS } from '../transactions/service.ts';
import * as repo from './repo.ts';

/** The PIX an account received (PAYMENT transactions), each with its refunds. */
export interface ReceivedDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly lists: ListQueries;
}

export type ReceivedRow = Awaited<ReturnType<typeof repo.listReceived>>['rows'][number];

export interface Received {
  readonly row: ReceivedRow;
  readonly refunds: repo.RefundRow[];
}

export interface ReceivedQuery {
  /** RFC 3339; both required, at most 31 days apart, `to` inclusive. */
  from: string;
  to: string;
  txid?: string | undefined;
  txidPresent?: boolean | undefined;
  refundPresent?: boolean | undefined;
  /** The payer's CPF or CNPJ. */
  payerDocument?: string | undefined;
  /** 0-based. */
  page: number;
  size: number;
}

/** Pages of at most this many. */
export const MAX_RECEIVED_PAGE_SIZE = 1000;

function withRefunds(rows: readonly ReceivedRow[], refunds: readonly repo.RefundRow[]): Received[] {
  const byOriginal = new Map<bigint, repo.RefundRow[]>();
  for (const r of refunds) byOriginal.set(r.original_transaction_id, [...(byOriginal.get(r.original_transaction_id) ?? []), r]);
  return rows.map((row) => ({ row, refunds: byOriginal.get(row.id) ?? [] }));
}

export async function getReceived(deps: ReceivedDeps, accountId: bigint, endToEndId: string): Promise<Received> {
  const row = await repo.findReceived(deps.db, accountId, endToEndId);
  if (!row) throw notFound('TRANSACTION_NOT_FOUND', 'No PIX received by this account has that endToEndId');
  return { row, refunds: await repo.refundsOf(deps.db, [row.id]) };
}

/** A page of the account's received PIX of an interval of at most 31 days, through the account's list limits. */
export async function listReceived(deps: ReceivedDeps, accountId: bigint, query: ReceivedQuery) {
  if (query.size < 1 || query.size > MAX_RECEIVED_PAGE_SIZE) throw badRequest('VALIDATION_FAILED', `the page size is 1 to ${MAX_RECEIVED_PAGE_SIZE}`);
  const { from, to } = interval({ startDate: query.from, endDate: query.to }, deps.clock.now(), MAX_INTERVAL_DAYS);
  const filter: repo.ReceivedFilter = {
    from,
    to,
    txid: query.txid,
    txidPresent: query.txidPresent,
    refundPresent: query.refundPresent,
    payerDocument: query.payerDocument,
  };
  return deps.lists.run(accountId, async (db) => {
    const { rows, total } = await repo.listReceived(db, accountId, filter, query.page * query.size, query.size);
    const refunds = await repo.refundsOf(db, rows.map((r) => r.id));
    return { items: withRefunds(rows, refunds), total };
  });
}
