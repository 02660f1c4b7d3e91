import type { Db } from '../../db/client.ts';
import { overloaded } from '../../http/errors.ts';
import { BLOCKED_SHARDS } from '../ledger/service.ts';
import { createTransfers, type CreateResult, type CreateTransferRow } from './repo.ts';

export interface BatcherOptions {
  /** Transfers committed together at most. */
  maxBatch: number;
  /** Requests waiting beyond this are refused at once with 503 instead of queueing into timeouts. */
  maxQueue: number;
}

export const DEFAULT_BATCHER_OPTIONS: BatcherOptions = { maxBatch: 64, maxQueue: 2048 };

interface Waiting {
  row: CreateTransferRow;
  resolve: (result: CreateResult) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for transfers, the way TigerBeetle batches: a request goes to the database at
 * once when no batch is in flight; while one is, requests that arrive wait and leave together in
 * the next batch, one round trip and one commit for all of them. One batch in flight per
 * process, not several over lanes of accounts: larger batches share the cost of a commit among
 * more transfers. Each keeps its own result and idempotency record. A batch that fails as a whole (an unexpected database error)
 * is retried one transfer at a time, so only the transfer at fault fails.
 * Why, and what was measured: docs/decisions/0010-transfer-batching.md.
 */
export class TransferBatcher {
  readonly #db: Db;
  readonly #options: BatcherOptions;
  readonly #queue: Waiting[] = [];
  #busy = false;

  constructor(db: Db, options: Partial<BatcherOptions> = {}) {
    this.#db = db;
    this.#options = { ...DEFAULT_BATCHER_OPTIONS, ...options };
  }

  submit(row: CreateTransferRow): Promise<CreateResult> {
    if (this.#queue.length >= this.#options.maxQueue) return Promise.reject(overloaded('Too many transfers in progress; retry shortly'));
    return new Promise((resolve, reject) => {
      this.#queue.push({ row, resolve, reject });
      this.#pump();
    });
  }

  #pump(): void {
    if (this.#busy || this.#queue.length === 0) return;
    const batch = takeBatch(this.#queue, this.#options.maxBatch);
    this.#busy = true;
    void this.#run(batch).finally(() => {
      this.#busy = false;
      this.#pump();
    });
  }

  async #run(batch: Waiting[]): Promise<void> {
    // Which shard holds the money: any clock that moves will do (its 250 ms windows), not a rule.
    const nowMs = performance.now();
    const shard = (row: CreateTransferRow) => holdShard(nowMs, row.priority);
    try {
      const results = await createTransfers(this.#db, batch.map((w) => w.row), shard);
      batch.forEach((w, i) => w.resolve(results[i]!));
    } catch (error) {
      if (batch.length === 1) {
        batch[0]!.reject(error);
        return;
      }
      for (const w of batch) {
        try {
          w.resolve((await createTransfers(this.#db, [w.row], shard))[0]!);
        } catch (single) {
          w.reject(single);
        }
      }
    }
  }
}

/**
 * The next batch from the queue, in arrival order, with each (account, idempotency key)
 * at most once: a repeat waits for the next batch, where it finds the first one's answer.
 */
function takeBatch(queue: Waiting[], max: number): Waiting[] {
  const batch: Waiting[] = [];
  const keys = new Set<string>();
  let i = 0;
  while (i < queue.length && batch.length < max) {
    const w = queue[i]!;
    const key = `${w.row.accountId}:${w.row.idempotencyKey}`;
    if (keys.has(key)) {
      i++;
      continue;
    }
    keys.add(key);
    batch.push(w);
    queue.splice(i, 1);
  }
  return batch;
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
