import { sql } from 'kysely';
import type { Db } from '../../db/client.ts';
import { LEDGER_CODES } from './repo.ts';

export interface Balances {
  available: bigint;
  blocked: bigint;
}

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
      const ids = [...new Set(batch.map((w) => w.accountId.toString()))];
      const result = await sql<{ account_id: bigint; code: string; balance: bigint }>`
        select account_id, code, sum(balance)::int8 as balance from ledger_accounts
         where account_id = any(${ids}::int8[]) group by account_id, code`.execute(this.#db);
      const found = new Map<bigint, Balances>();
      for (const row of result.rows) {
        const b = found.get(row.account_id) ?? { available: 0n, blocked: 0n };
        if (row.code === LEDGER_CODES.available) b.available = row.balance;
        else if (row.code === LEDGER_CODES.blocked) b.blocked = row.balance;
        found.set(row.account_id, b);
      }
      for (const w of batch) w.resolve(found.get(w.accountId));
    } catch (error) {
      for (const w of batch) w.reject(error);
    }
  }
}
