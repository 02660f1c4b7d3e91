import type { Db } from '../../db/client.ts';
import { overloaded } from '../../http/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { GroupCommit } from '../../lib/group-commit.ts';
import { createCobs, type ChargeWithPayment, type NewCob } from './repo.ts';

/**
 * Group commit for new immediate charges (lib/group-commit.ts): those that arrive while a batch
 * is in the database are created together, with their locations, in one round trip and one
 * commit. Each answers its charge, or null when its txid is taken.
 * Why, and what was measured: docs/decisions/0038-charge-batching.md.
 */
export class CobBatcher {
  readonly #commits: GroupCommit<NewCob, ChargeWithPayment | null>;

  constructor(db: Db, clock: Clock, options: { maxBatch?: number; maxQueue?: number } = {}) {
    this.#commits = new GroupCommit((items) => createCobs(db, items, clock.now()), {
      maxBatch: options.maxBatch ?? 64,
      maxQueue: options.maxQueue ?? 2048,
      overloaded: () => overloaded('Too many charges in progress; retry shortly'),
    });
  }

  submit(item: NewCob): Promise<ChargeWithPayment | null> {
    return this.#commits.submit(item);
  }
}
