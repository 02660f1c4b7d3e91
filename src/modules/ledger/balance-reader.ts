import type { Db } from '../../db/client.ts';
import { holdersBalances, type Balances } from './repo.ts';

interface Waiting {
  accountId: bigint;
  resolve: (balances: Balances | undefined) => void;
  reject: (error: unknown) => void;
}

/** Accounts read in one statement at most. */
const MAX_ACCOUNTS = 256;

/**
 * Balance reads, coalesced: a read goes to the database at once when none is in flight; reads
 * that arrive meanwhile wait and go together in the next statement (one round trip for all).
 * Never stale: a request is only answered by a statement that started after it arrived, so it
 * sees every movement committed before it was made. Nothing is cached.
 * Why, and what was measured: docs/decisions/0018-balance-reads-coalesced.md.
 */
export class BalanceReader {
  readonly #db: Db;
  #queue: Waiting[] = [];
  #busy = false;

  constructor(db: Db) {
    this.#db = db;
  }

  read(accountId: bigint): Promise<Balances | undefined> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ accountId, resolve, reject });
      this.#pump();
    });
  }

  #pump(): void {
    if (this.#busy || this.#queue.length === 0) return;
    const batch = this.#queue.splice(0, MAX_ACCOUNTS);
    this.#busy = true;
    void this.#run(batch).finally(() => {
      this.#busy = false;
      this.#pump();
    });
  }

  async #run(batch: Waiting[]): Promise<void> {
    try {
      const found = await holdersBalances(this.#db, [...new Set(batch.map((w) => w.accountId))]);
      for (const w of batch) w.resolve(found.get(w.accountId));
    } catch (error) {
      for (const w of batch) w.reject(error);
    }
  }
}
