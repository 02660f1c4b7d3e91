import type { Db } from '../db/client.ts';
import { KeyGate, KeyGateFull } from '../lib/key-gate.ts';
import { AppError } from './errors.ts';

export interface ListLimits {
  /** List queries of one account running at once in this process. */
  readonly perAccount: number;
  /** How long a list beyond them waits for one to finish before it is refused (429). */
  readonly queueTimeoutMs: number;
}

/** Beyond the running ones, this many lists of an account may wait; more are refused at once. */
export const LIST_WAITING_PER_ACCOUNT = 256;
/** Retry-After of a refused or cancelled list, seconds. */
const RETRY_AFTER_SECONDS = '1';

/** SQLSTATE 57014: the statement was cancelled (statement_timeout on the list connections). */
const isCancelled = (error: unknown) => (error as { code?: unknown } | null)?.code === '57014';

/**
 * The one way account lists reach the database, so that no account's reads take it from the
 * others (docs/decisions/0002-list-isolation.md). A list runs on the list connections (their own
 * pool on PostgreSQL, each statement cut off at DATABASE_LIST_STATEMENT_TIMEOUT_MS), and at most
 * `perAccount` lists of one account run at once in this process; the next ones wait a little,
 * then get 429 with Retry-After. A list route calls its service, and the service runs its
 * queries through `run`: a new list gets the same limits by doing the same.
 */
export class ListQueries {
  readonly #db: Db;
  readonly #gate: KeyGate;

  constructor(db: Db, limits: ListLimits) {
    this.#db = db;
    this.#gate = new KeyGate({ concurrency: limits.perAccount, maxWaiting: LIST_WAITING_PER_ACCOUNT, waitMs: limits.queueTimeoutMs });
  }

  /** Runs one list's queries for `accountId` on the list connections, within the account's limit. */
  async run<T>(accountId: bigint, queries: (db: Db) => Promise<T>): Promise<T> {
    try {
      return await this.#gate.run(String(accountId), () => queries(this.#db));
    } catch (error) {
      if (error instanceof KeyGateFull) {
        throw new AppError(429, 'TOO_MANY_LIST_REQUESTS', 'Too many lists of this account at once: retry after Retry-After', {
          headers: { 'retry-after': RETRY_AFTER_SECONDS },
        });
      }
      if (isCancelled(error)) {
        throw new AppError(503, 'LIST_TIMEOUT', 'The list took longer than its time limit and was cancelled: narrow the interval or the filters, or retry after Retry-After', {
          headers: { 'retry-after': RETRY_AFTER_SECONDS },
        });
      }
      throw error;
    }
  }
}

/** What the OpenAPI document says of every list route. */
export const LIST_LIMITS =
  'An account has a few lists running at once; more wait briefly, then get 429 TOO_MANY_LIST_REQUESTS with Retry-After. ' +
  'A list that runs longer than its time limit is cancelled: 503 LIST_TIMEOUT with Retry-After.';
