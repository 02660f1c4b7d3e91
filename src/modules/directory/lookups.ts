import type { DirectoryBucket, DirectoryLimits } from '../../config.ts';
import type { Db } from '../../db/client.ts';
import { AppError } from '../../http/errors.ts';
import type { TokenBuckets } from '../../http/token-bucket.ts';
import type { Clock } from '../../lib/clock.ts';
import { Lru } from '../../lib/lru.ts';
import { findAccount } from '../accounts/repo.ts';

/** What a look-up turned out to be once its outcome is known; it decides what the look-up costs. */
export type LookupResult =
  /** The key is in the directory: the look-up's cost. */
  | 'found'
  /** The key is not, or a HIGH transfer's creditorDocument is not its owner's: the miss cost in all. */
  | 'missing'
  /** The look-up became an accepted transfer: its tokens go back. */
  | 'transfer'
  /** No look-up happened after all (a replay, an idempotency refusal, an overload): its tokens go back. */
  | 'none';

/** A look-up paid for in advance, to be settled once its outcome is known. */
export interface LookupCharge {
  settle(result: LookupResult): Promise<void>;
}

export interface DirectoryLookupsDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly buckets: TokenBuckets;
  readonly limits: DirectoryLimits;
  /** The sandbox's fault that makes the directory unavailable, while there is one (modules/controls). */
  readonly unavailable?: () => { readonly id: bigint } | null;
}

type Holder = 'CPF' | 'CNPJ';

/**
 * Directory look-ups made on an account's behalf, limited as BCB's DICT limits participants
 * (decisions.md, Identifiers; docs/decisions/0004-directory-rate-limit.md): a token bucket per
 * account, sized by its holder (natural person or legal entity). A look-up is paid before the key
 * is read, so that no answer can tell whether a key exists before the bucket was charged; a key
 * that does not exist then costs the rest of the miss cost, which may run the bucket into debt.
 */
export class DirectoryLookups {
  readonly #deps: DirectoryLookupsDeps;
  /** An account's holder type never changes: read once per process. */
  readonly #holders = new Lru<bigint, Promise<Holder>>(100_000);

  constructor(deps: DirectoryLookupsDeps) {
    this.#deps = deps;
  }

  /** Takes one look-up from the account's bucket, or throws 429 DIRECTORY_RATE_LIMITED with Retry-After. */
  async charge(accountId: bigint): Promise<LookupCharge> {
    const { buckets, limits, clock } = this.#deps;
    const fault = this.#deps.unavailable?.();
    if (fault) {
      // Logged at warn with the fault, as a fault's trace beside the answer.
      throw new AppError(503, 'DIRECTORY_UNAVAILABLE', `The directory (DICT) is unavailable: retry later (sandbox fault ${fault.id}; DELETE /sandbox/faults/${fault.id} clears it)`, {
        headers: { 'retry-after': '1' },
        context: { sandboxFault: Number(fault.id), kind: 'directory', effect: 'unavailable', accountId: accountId.toString() },
        logLevel: 'warn',
      });
    }
    const size = await this.#size(accountId);
    const key = accountId.toString();
    const taken = await buckets.take(key, size, limits.lookupCost, clock.now().getTime());
    if (!taken.allowed) {
      const seconds = taken.retryAfterSeconds;
      throw new AppError(429, 'DIRECTORY_RATE_LIMITED', `The account's directory look-ups are spent for now: retry in ${seconds} s`, {
        headers: { 'retry-after': String(seconds) },
        context: { tokens: taken.tokens },
      });
    }
    return { settle: (result) => this.#settle(key, size, result) };
  }

  async #settle(key: string, size: DirectoryBucket, result: LookupResult): Promise<void> {
    const { buckets, limits, clock } = this.#deps;
    const delta = result === 'found' ? 0 : result === 'missing' ? limits.missCost - limits.lookupCost : -limits.lookupCost;
    if (delta === 0) return;
    // The debt can only come from look-ups in flight, each paid for while the bucket held a
    // token; the floor is a bound that those never reach, not a discount.
    await buckets.settle(key, size, delta, -size.capacity * limits.missCost, clock.now().getTime());
  }

  async #size(accountId: bigint): Promise<DirectoryBucket> {
    let holder = this.#holders.get(accountId);
    if (!holder) {
      holder = findAccount(this.#deps.db, accountId).then((account) => (account?.document_type === 'CNPJ' ? 'CNPJ' : 'CPF'));
      this.#holders.set(accountId, holder);
      holder.catch(() => this.#holders.delete(accountId));
    }
    return (await holder) === 'CNPJ' ? this.#deps.limits.cnpj : this.#deps.limits.cpf;
  }

  close(): Promise<void> {
    return this.#deps.buckets.close();
  }
}
