import type { Db } from '../../db/client.ts';
import { AppError } from '../../http/errors.ts';
import { createTransfers, type CreateResult, type CreateTransferRow } from './repo.ts';

export interface BatcherOptions {
  /** Transfers committed together at most. */
  maxBatch: number;
  /** Batches running at once (each holds a database connection). */
  maxInFlight: number;
  /** Requests waiting beyond this are refused at once with 503 instead of queueing into timeouts. */
  maxQueue: number;
}

export const DEFAULT_BATCHER_OPTIONS: BatcherOptions = { maxBatch: 64, maxInFlight: 4, maxQueue: 2048 };

interface Waiting {
  row: CreateTransferRow;
  resolve: (result: CreateResult) => void;
  reject: (error: unknown) => void;
}

export const overloaded = () =>
  new AppError(503, 'OVERLOADED', 'Too many transfers in progress; retry shortly', { headers: { 'retry-after': '1' } });

/**
 * Group commit for transfers, the way TigerBeetle batches: a request goes to the database at
 * once when a slot is free; while every slot is busy, requests that arrive wait and leave
 * together in the next batch, one round trip and one commit for all of them. Each keeps its own
 * result and idempotency record. A batch that fails as a whole (an unexpected database error)
 * is retried one transfer at a time, so only the transfer at fault fails.
 */
export class TransferBatcher {
  readonly #db: Db;
  readonly #options: BatcherOptions;
  readonly #queue: Waiting[] = [];
  #inFlight = 0;

  constructor(db: Db, options: Partial<BatcherOptions> = {}) {
    this.#db = db;
    this.#options = { ...DEFAULT_BATCHER_OPTIONS, ...options };
  }

  submit(row: CreateTransferRow): Promise<CreateResult> {
    if (this.#queue.length >= this.#options.maxQueue) return Promise.reject(overloaded());
    return new Promise((resolve, reject) => {
      this.#queue.push({ row, resolve, reject });
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#inFlight < this.#options.maxInFlight && this.#queue.length > 0) {
      const batch = this.#queue.splice(0, this.#options.maxBatch);
      this.#inFlight++;
      void this.#run(batch).finally(() => {
        this.#inFlight--;
        this.#pump();
      });
    }
  }

  async #run(batch: Waiting[]): Promise<void> {
    try {
      const results = await createTransfers(this.#db, batch.map((w) => w.row));
      batch.forEach((w, i) => w.resolve(results[i]!));
    } catch (error) {
      if (batch.length === 1) {
        batch[0]!.reject(error);
        return;
      }
      for (const w of batch) {
        try {
          w.resolve((await createTransfers(this.#db, [w.row]))[0]!);
        } catch (single) {
          w.reject(single);
        }
      }
    }
  }
}
