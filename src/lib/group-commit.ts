/**
 * Group commit, the way TigerBeetle batches: an item goes to the database at once when no batch
 * is in flight; while one is, items that arrive wait and leave together in the next batch, one
 * round trip and one commit for all of them. One batch in flight, not several: larger batches
 * share the cost of a commit among more items. Each item keeps its own result. A batch that
 * fails as a whole (an unexpected database error) is retried one item at a time, so only the
 * item at fault fails. Why, and what was measured: docs/decisions/0010-transfer-batching.md.
 */
export interface GroupCommitOptions<I> {
  /** Items committed together at most. */
  readonly maxBatch: number;
  /** Items waiting beyond this are refused at once (`overloaded`) instead of queueing into timeouts. */
  readonly maxQueue: number;
  readonly overloaded: () => Error;
  /** Items with the same key never share a batch: a repeat waits for the next one, and finds the first's effect. */
  readonly key?: (item: I) => string;
}

interface Waiting<I, R> {
  item: I;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

export class GroupCommit<I, R> {
  readonly #run: (items: readonly I[]) => Promise<R[]>;
  readonly #options: GroupCommitOptions<I>;
  readonly #queue: Waiting<I, R>[] = [];
  #busy = false;

  /** `run` commits a batch and answers each item, in order. */
  constructor(run: (items: readonly I[]) => Promise<R[]>, options: GroupCommitOptions<I>) {
    this.#run = run;
    this.#options = options;
  }

  submit(item: I): Promise<R> {
    if (this.#queue.length >= this.#options.maxQueue) return Promise.reject(this.#options.overloaded());
    return new Promise((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      this.#pump();
    });
  }

  #pump(): void {
    if (this.#busy || this.#queue.length === 0) return;
    const batch = this.#take();
    this.#busy = true;
    void this.#commit(batch).finally(() => {
      this.#busy = false;
      this.#pump();
    });
  }

  async #commit(batch: Waiting<I, R>[]): Promise<void> {
    try {
      const results = await this.#run(batch.map((w) => w.item));
      batch.forEach((w, i) => w.resolve(results[i]!));
    } catch (error) {
      if (batch.length === 1) {
        batch[0]!.reject(error);
        return;
      }
      for (const w of batch) {
        try {
          w.resolve((await this.#run([w.item]))[0]!);
        } catch (single) {
          w.reject(single);
        }
      }
    }
  }

  /** The next batch from the queue, in arrival order, each key at most once. */
  #take(): Waiting<I, R>[] {
    const { maxBatch, key } = this.#options;
    const batch: Waiting<I, R>[] = [];
    const keys = new Set<string>();
    let i = 0;
    while (i < this.#queue.length && batch.length < maxBatch) {
      const w = this.#queue[i]!;
      const k = key?.(w.item);
      if (k !== undefined && keys.has(k)) {
        i++;
        continue;
      }
      if (k !== undefined) keys.add(k);
      batch.push(w);
      this.#queue.splice(i, 1);
    }
    return batch;
  }
}
