/**
 * The rules that keep one account's receiver from delaying another's deliveries
 * (docs/decisions/0001-fair-webhook-delivery.md): bounds on attempts in flight per destination
 * (one account's receiving origin) and per account, counted over every process from the
 * database, and a circuit breaker per destination. Pure functions: delivery.ts reads the state
 * and applies what these decide.
 */
import type { Attempt } from './sender.ts';

export interface FairnessLimits {
  /** Attempts in flight at once to one destination, over every worker process. */
  readonly perDestination: number;
  /** Attempts in flight at once for one account, over all its destinations and processes. */
  readonly perAccount: number;
}

/**
 * 16 per destination carries a busy account's deliveries to a receiver that answers quickly; 32
 * per account leaves a worker's 128 slots to at least three other accounts whatever one does.
 * Why, and what was measured: docs/decisions/0001-fair-webhook-delivery.md.
 */
export const DEFAULT_LIMITS: FairnessLimits = Object.freeze({ perDestination: 16, perAccount: 32 });

export interface BreakerSettings {
  /** Consecutive failures (timeouts, connection failures, 5xx) that open the breaker. */
  readonly threshold: number;
  /** How long the first opening lasts; each consecutive one lasts twice as long as the one before. */
  readonly openMs: number;
  readonly maxOpenMs: number;
}

export const DEFAULT_BREAKER: BreakerSettings = Object.freeze({ threshold: 5, openMs: 30_000, maxOpenMs: 3_600_000 });

export type BreakerState = 'closed' | 'open' | 'half-open';

export function breakerState(d: { failures: number; openUntil: Date | null }, now: Date, breaker: BreakerSettings): BreakerState {
  if (d.failures < breaker.threshold) return 'closed';
  return d.openUntil !== null && d.openUntil > now ? 'open' : 'half-open';
}

/** How long the breaker stays open after its `opens`-th consecutive opening (0 for the first). */
export function openIntervalMs(opens: number, breaker: BreakerSettings): number {
  return Math.min(breaker.maxOpenMs, breaker.openMs * 2 ** Math.min(opens, 30));
}

/** A destination with due deliveries, as a claim sees it. */
export interface DestinationState {
  id: bigint;
  accountId: bigint;
  /** When its oldest due work became due (ms): the longest waiting goes first. */
  dueSince: number;
  failures: number;
  openUntil: Date | null;
  inFlight: number;
  accountInFlight: number;
  /** Due deliveries, counted up to perDestination + 1. */
  due: number;
}

export interface Allocation {
  id: bigint;
  take: number;
  /** Due deliveries are left that its own bound or breaker keeps back (not this worker's free slots). */
  blocked: boolean;
  state: BreakerState;
  openUntil: Date | null;
}

function destinationRoom(d: DestinationState, state: BreakerState, limits: FairnessLimits): number {
  if (state === 'open') return 0;
  // Half-open: one probe at a time.
  const bound = state === 'half-open' ? 1 : limits.perDestination;
  return Math.max(0, Math.min(bound - d.inFlight, d.due));
}

/**
 * Shares `room` free slots between the destinations: one at a time, round robin over the
 * accounts (the one waiting longest first) and over each account's destinations, within each
 * destination's and each account's bound.
 */
export function allocate(destinations: readonly DestinationState[], room: number, now: Date, limits: FairnessLimits, breaker: BreakerSettings): Allocation[] {
  const byAccount = new Map<bigint, { room: number; dests: { d: DestinationState; want: number; take: number; state: BreakerState }[]; next: number }>();
  for (const d of [...destinations].sort((a, b) => a.dueSince - b.dueSince || Number(a.id - b.id))) {
    const state = breakerState(d, now, breaker);
    let account = byAccount.get(d.accountId);
    if (!account) {
      account = { room: Math.max(0, limits.perAccount - d.accountInFlight), dests: [], next: 0 };
      byAccount.set(d.accountId, account);
    }
    account.dests.push({ d, want: destinationRoom(d, state, limits), take: 0, state });
  }
  let left = room;
  for (let progress = true; progress && left > 0; ) {
    progress = false;
    for (const account of byAccount.values()) {
      if (left === 0) break;
      if (account.room === 0) continue;
      for (let k = 0; k < account.dests.length; k++) {
        const i = (account.next + k) % account.dests.length;
        const dest = account.dests[i]!;
        if (dest.take >= dest.want) continue;
        dest.take++;
        account.room--;
        left--;
        account.next = i + 1;
        progress = true;
        break;
      }
    }
  }
  const out: Allocation[] = [];
  for (const account of byAccount.values()) {
    for (const { d, want, take, state } of account.dests) {
      const limited = take >= want || account.room === 0;
      out.push({ id: d.id, take, blocked: d.due > take && limited, state, openUntil: d.openUntil });
    }
  }
  return out;
}

/** Whether an attempt's outcome counts against its destination's breaker. */
export function breakerFailure(attempt: Attempt): boolean {
  if (attempt.success) return false;
  if (attempt.statusCode !== null) return attempt.statusCode >= 500;
  // No answer: a timeout, a refused or failed connection, TLS or DNS. A destination refused by
  // the service's own rules was never tried and costs nothing to try again.
  return attempt.failure !== undefined && attempt.failure !== 'non-public address' && attempt.failure !== 'port not allowed' && attempt.failure !== 'invalid destination';
}

export interface BreakerChange {
  destinationId: bigint;
  /** A success among the attempts: the count starts again from the failures after it. */
  reset: boolean;
  /** Breaker failures after the last success (or all of them, without one). */
  failures: number;
}

/** Folds finished attempts, in the order they finished, into one change per destination. */
export function breakerChanges(finished: readonly { destinationId: bigint; attempt: Attempt; counts: boolean }[]): BreakerChange[] {
  const changes = new Map<bigint, BreakerChange>();
  for (const { destinationId, attempt, counts } of finished) {
    if (!counts) continue;
    const change = changes.get(destinationId) ?? { destinationId, reset: false, failures: 0 };
    if (attempt.success) {
      change.reset = true;
      change.failures = 0;
    } else if (breakerFailure(attempt)) {
      change.failures++;
    }
    changes.set(destinationId, change);
  }
  return [...changes.values()];
}
