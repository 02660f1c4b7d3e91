import type { Db } from '../../db/client.ts';
import { overloaded } from '../../http/errors.ts';
import { BLOCKED_SHARDS } from '../ledger/service.ts';
import { GroupCommit } from '../../lib/group-commit.ts';
import { createTransfers, type CreateResult, type CreateTransferRow } from './repo.ts';

export interface BatcherOptions {
  /** Transfers committed together at most. */
  maxBatch: number;
  /** Requests waiting beyond this are refused at once with 503 instead of queueing into timeouts. */
  maxQueue: number;
}

export const DEFAULT_BATCHER_OPTIONS: BatcherOptions = { maxBatch: 64, maxQueue: 2048 };

/**
 * Group commit for transfers (lib/group-commit.ts): one round trip and one commit for the
 * transfers that arrive while a batch is in the database, each (account, idempotency key) once a
 * batch, each with its own result and idempotency record.
 * Why, and what was measured: docs/decisions/0010-transfer-batching.md.
 */
export class TransferBatcher {
  readonly #commits: GroupCommit<CreateTransferRow, CreateResult>;

  constructor(db: Db, options: Partial<BatcherOptions> = {}) {
    const { maxBatch, maxQueue } = { ...DEFAULT_BATCHER_OPTIONS, ...options };
    this.#commits = new GroupCommit(
      (rows) => {
        // Which shard holds the money: any clock that moves will do (its 250 ms windows), not a rule.
        const nowMs = performance.now();
        return createTransfers(db, rows, (row) => holdShard(nowMs, row.priority));
      },
      {
        maxBatch,
        maxQueue,
        overloaded: () => overloaded('Too many transfers in progress; retry shortly'),
        key: (row) => `${row.accountId}:${row.idempotencyKey}`,
      },
    );
  }

  submit(row: CreateTransferRow): Promise<CreateResult> {
    return this.#commits.submit(row);
  }
}

/** How long all new transfers of one priority hold their money in the same blocked shard. */
export const SHARD_WINDOW_MS = 250;

/**
 * The blocked shard a new transfer holds its money in: one per time window, in turn, NORM
 * transfers in the first half of the shards and HIGH transfers in the other. Settlement
 * releases the money of NORM transfers that arrived a while ago, which sit in the shards of
 * earlier windows, so holding and settling rarely touch the same row. HIGH transfers settle at
 * once, in the shard of the current window: in a half of their own, their settlement never
 * holds up the NORM transfers that arrive meanwhile. (Wall time is fine here:
 * it only spreads locks, it decides nothing.)
 * Why, and what was measured: docs/decisions/0011-sharded-blocked-money.md.
 */
export function holdShard(nowMs: number, priority: CreateTransferRow['priority']): number {
  const half = BLOCKED_SHARDS / 2;
  const window = Math.floor(nowMs / SHARD_WINDOW_MS) % half;
  return priority === 'HIGH' ? half + window : window;
}
