import type { Db } from '../../db/client.ts';
import type { Clock } from '../../lib/clock.ts';
import { allocate, breakerChanges, DEFAULT_BREAKER, DEFAULT_LIMITS, type BreakerSettings, type FairnessLimits } from './fairness.ts';
import * as queue from './queue/repo.ts';
import type { ClaimedDelivery } from './queue/repo.ts';
import { isBcbCallback } from './repo.ts';
import type { Attempt, Message, WebhookSender } from './sender.ts';
import { DELIVERY_TIMEOUT_MS } from './sender.ts';
import { tracing } from '../../telemetry/hooks.ts';
import { traceContexts } from '../../telemetry/repo.ts';
import { signingSecrets } from './secrets.ts';

/**
 * Delays before the 2nd, 3rd, ... attempt (decisions.md): about 5 s, 5 min, 30 min, 2 h, 5 h,
 * 10 h, 10 h; after the 8th failed attempt the delivery is FAILED.
 */
export const RETRY_DELAYS_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
/** Each delay is stretched or shrunk by up to this fraction, so retries of many do not align. */
export const RETRY_JITTER = 0.1;
/** A claimed delivery is the claimer's for its sender's timeout and this margin; past it, a worker that died is presumed. */
const LEASE_MARGIN_MS = 5_000;
export const LEASE_MS = DELIVERY_TIMEOUT_MS + LEASE_MARGIN_MS;
/** Attempts in flight at once per worker (each waits for its receiver, up to the timeout). */
export const DELIVERY_CONCURRENCY = 128;
/** Due deliveries a claim looks at, at most, and the accounts it claims for. */
const CLAIM_SCAN = 256;
const CLAIM_ACCOUNTS = 64;
/** Deliveries moved to their destination's queue per destination and claim, at most. */
const HOLD_BATCH = 2_000;
/** How long a round goes on trying accounts that other workers hold, with nothing else to do. */
const CONTENDED_WAIT_MS = 1_000;
/**
 * Finished attempts recorded in one statement at most, and how long one waits for others: not
 * long, since a record frees its destination's slots and the deliveries held behind them wait
 * for it.
 */
const RECORD_BATCH = 32;
const RECORD_DELAY_MS = 20;

export function retryDelayMs(attempt: number, random: () => number = Math.random): number | null {
  const base = RETRY_DELAYS_MS[attempt - 1];
  if (base === undefined) return null;
  return Math.round(base * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random()));
}

/** The body as sent: jsonb keeps keys in its own order ("data" before "type"), so the V2 envelope's `type` goes first again. */
export function envelopeBody(payload: unknown): string {
  const { type, data, ...rest } = payload as { type: unknown; data: unknown };
  return JSON.stringify({ type, data, ...rest });
}

/** The body a notification is sent with: one of BCB's callbacks (`{"pix": [...]}`, `{"recs": [...]}`, `{"cobsr": [...]}`) as it is, a root notification in the V2 envelope. */
export function notificationBody(eventType: string | null, payload: unknown): string {
  return isBcbCallback(eventType) ? JSON.stringify(payload) : envelopeBody(payload);
}

/**
 * What one delivery sends: a root notification in the V2 envelope with its registration's
 * headers; one of BCB's callbacks (`{"pix": [...]}`) as it is, over mutual TLS.
 */
export function deliveryMessage(d: ClaimedDelivery, now: Date): Message {
  const secrets = signingSecrets(d, now);
  const body = notificationBody(d.event_type, d.payload);
  const delivery = { id: d.id, destinationId: d.destination_id, held: d.late_fault !== null };
  if (isBcbCallback(d.event_type)) return { url: d.url, messageId: d.message_id, body, headers: {}, secrets, mutualTls: true, delivery };
  return { url: d.url, messageId: d.message_id, body, headers: d.headers ?? {}, secrets, delivery };
}

export interface DeliveryDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly sender: WebhookSender;
}

export interface DeliveryOptions {
  /** Attempts in flight at once in this worker (DELIVERY_CONCURRENCY). */
  readonly concurrency?: number;
  readonly limits?: FairnessLimits;
  readonly breaker?: BreakerSettings;
  readonly random?: () => number;
}

interface Finished {
  d: ClaimedDelivery;
  attempt: Attempt;
  /** Null for a registration switched off or removed: nothing to retry, nothing about its destination. */
  retry: { random: () => number } | null;
}

/** What one claim brought, and whether more may be claimable now (another worker claimed for an account meanwhile, deliveries just held). */
interface Claim {
  batch: ClaimedDelivery[];
  more: boolean;
}

/**
 * Drives the queue for one worker: claims due deliveries into its free slots, fairly between
 * accounts and destinations (fairness.ts), makes the attempts and records them in batches.
 */
export class Deliverer {
  readonly #deps: DeliveryDeps;
  readonly #concurrency: number;
  readonly #limits: FairnessLimits;
  readonly #breaker: BreakerSettings;
  readonly #random: () => number;
  readonly #leaseMs: number;
  readonly #onError: (error: unknown) => void;
  readonly #inFlight = new Set<Promise<void>>();
  #finished: Finished[] = [];
  #recording: Promise<void> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;
  /** Attempts started and not yet recorded, records made so far, and who waits for the next one. */
  #unrecorded = 0;
  #records = 0;
  #waiters: (() => void)[] = [];

  constructor(deps: DeliveryDeps, options: DeliveryOptions, onError: (error: unknown) => void) {
    this.#deps = deps;
    this.#concurrency = Math.max(1, options.concurrency ?? DELIVERY_CONCURRENCY);
    this.#limits = options.limits ?? DEFAULT_LIMITS;
    this.#breaker = options.breaker ?? DEFAULT_BREAKER;
    this.#random = options.random ?? Math.random;
    this.#leaseMs = ((deps.sender as { timeoutMs?: number }).timeoutMs ?? DELIVERY_TIMEOUT_MS) + LEASE_MARGIN_MS;
    this.#onError = onError;
  }

  get concurrency(): number {
    return this.#concurrency;
  }

  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** Free slots. */
  room(): number {
    return this.#concurrency - this.#inFlight.size;
  }

  /** Resolves when an attempt in flight finishes (at once when none is). */
  anyFinished(): Promise<void> {
    return this.#inFlight.size === 0 ? Promise.resolve() : Promise.race(this.#inFlight);
  }

  /**
   * Resolves when the next finished attempts are recorded (at once when none is outstanding):
   * a record frees slots of its destinations and accounts, so deliveries held back there may go.
   */
  recorded(): Promise<void> {
    if (this.#unrecorded === 0) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Attempts started whose outcome is not recorded yet. */
  get unrecorded(): number {
    return this.#unrecorded;
  }

  /** Records made so far: one made while a claim ran may have freed what that claim saw taken. */
  get records(): number {
    return this.#records;
  }

  /**
   * Claims up to `room` due deliveries and starts their attempts. A delivery is claimed only
   * when a slot is free to send it at once: its lease covers one attempt, so one claimed early
   * and left waiting would be claimed again by another worker and sent twice.
   */
  async fill(room = this.room()): Promise<{ claimed: number; more: boolean }> {
    if (room <= 0) return { claimed: 0, more: true };
    const { batch, more } = await this.#claim(room);
    for (const d of batch) this.#start(d);
    return { claimed: batch.length, more };
  }

  /** Waits for every attempt in flight and records the last of them. */
  async drain(): Promise<void> {
    await Promise.all(this.#inFlight);
    await this.#flush().catch(this.#onError);
  }

  async #claim(room: number): Promise<Claim> {
    const now = this.#deps.clock.now();
    const rows = await queue.claimState(this.#deps.db, now, Math.max(CLAIM_SCAN, room * 2), CLAIM_ACCOUNTS, this.#limits.perDestination + 1);
    if (rows.length === 0) return { batch: [], more: false };
    const accountInFlight = new Map<bigint, number>();
    for (const r of rows) accountInFlight.set(r.account_id, (accountInFlight.get(r.account_id) ?? 0) + r.in_flight);
    const due = rows.filter((r) => r.due > 0);
    const plan = allocate(
      due.map((r) => ({
        id: r.id,
        accountId: r.account_id,
        dueSince: (r.due_since ?? now).getTime(),
        failures: r.failures,
        openUntil: r.open_until,
        inFlight: r.in_flight,
        accountInFlight: accountInFlight.get(r.account_id)!,
        due: r.due,
      })),
      room,
      now,
      this.#limits,
      this.#breaker,
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    // Kept back by their own bound or breaker: out of the global due index until then. All
    // due work claimed: nothing held is left to look at.
    const marks = plan.flatMap((p) => {
      const { due: count, ready_at, wakes, anchor_id: anchorId } = byId.get(p.id)!;
      if (p.blocked) return [{ id: p.id, anchorId, hold: true, wakes, readyAt: p.state === 'open' ? p.openUntil : new Date(now.getTime() + this.#leaseMs) }];
      if (p.take >= count && ready_at !== null) return [{ id: p.id, anchorId, hold: false, wakes, readyAt: null }];
      return [];
    });
    // Looked at for held work that is gone (claimed elsewhere, or its registration removed).
    for (const r of rows) {
      if (r.due === 0 && r.ready_at !== null && r.ready_at <= now) marks.push({ id: r.id, anchorId: r.anchor_id, hold: false, wakes: r.wakes, readyAt: null });
    }
    const picks = plan.filter((p) => p.take > 0).map((p) => ({ id: p.id, anchorId: byId.get(p.id)!.anchor_id, take: p.take }));
    if (picks.length === 0 && marks.length === 0) return { batch: [], more: false };
    const anchors = [...new Map(rows.map((r) => [r.anchor_id, { id: r.anchor_id, claims: r.anchor_claims }])).values()];
    const batch = await queue.claim(this.#deps.db, { anchors, picks, marks }, now, new Date(now.getTime() + this.#leaseMs), HOLD_BATCH);
    const planned = picks.reduce((sum, p) => sum + p.take, 0);
    // Fewer than planned: another worker claimed for one of the accounts since the read (or
    // held a delivery this instant). Deliveries just held: what was behind them may be due.
    return { batch, more: batch.length < planned || marks.some((m) => m.hold) };
  }

  #start(d: ClaimedDelivery): void {
    // Errors are kept, not thrown here, so that none goes unhandled while the loop claims.
    const running: Promise<void> = this.#attempt(d)
      .then((done) => {
        this.#finished.push(done);
        if (this.#finished.length >= RECORD_BATCH || this.#inFlight.size <= 1) return this.#flush();
        this.#flushSoon();
        return undefined;
      })
      .catch(this.#onError)
      .finally(() => this.#inFlight.delete(running));
    this.#inFlight.add(running);
    this.#unrecorded++;
  }

  /** Makes one claimed attempt. A registration switched off or removed stops its deliveries at once. */
  async #attempt(d: ClaimedDelivery): Promise<Finished> {
    const live = d.webhook_id !== null && d.is_active === true;
    const attempt: Attempt = !live
      ? { success: false, statusCode: null, durationMs: 0, error: 'registration switched off or removed', sentAt: this.#deps.clock.now() }
      : await this.#traced(d, () => this.#deps.sender.send(deliveryMessage(d, this.#deps.clock.now()), () => this.#deps.clock.now()));
    return { d, attempt: live ? lateNote(d, attempt) : attempt, retry: live ? { random: this.#random } : null };
  }

  /**
   * Tracing on: the attempt runs as a span of the trace of the request that made the transfer,
   * so the delivery carries that trace's W3C `traceparent` to the receiver.
   */
  async #traced(d: ClaimedDelivery, send: () => Promise<Attempt>): Promise<Attempt> {
    if (!tracing().enabled || d.transaction_id === null) return send();
    const traceparent = (await traceContexts(this.#deps.db, [d.transaction_id])).get(d.transaction_id);
    if (!traceparent) return send();
    return tracing().inSpan(traceparent, 'pix.webhook.deliver', { 'pix.event_type': d.event_type, 'pix.attempt': d.attempts }, send);
  }

  /** Finished attempts are recorded together: one transaction for many, not one each. */
  #flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch = this.#finished;
    this.#finished = [];
    // Each batch is recorded after the one before, whether or not that one failed.
    const recording = this.#recording
      .catch(() => undefined)
      .then(() => this.#record(batch))
      .finally(() => {
        this.#unrecorded -= batch.length;
        this.#records++;
        for (const wake of this.#waiters.splice(0)) wake();
      });
    this.#recording = recording;
    return recording;
  }

  /** An attempt is recorded within RECORD_DELAY_MS, well inside its lease, even while slower ones are still waiting for their receivers. */
  #flushSoon(): void {
    this.#timer ??= setTimeout(() => {
      this.#flush().catch(this.#onError);
    }, RECORD_DELAY_MS);
  }

  /** Each delivery's next state (gone once delivered, due again later, or FAILED), its log entry and its destination's breaker. */
  async #record(finished: readonly Finished[]): Promise<void> {
    if (finished.length === 0) return;
    const now = this.#deps.clock.now();
    const states = finished.map(({ d, attempt, retry }): queue.DeliveryState => {
      // Held by a sandbox `late` fault: not an attempt; due again when its hold runs out, unless the next delivery to its URL releases it first.
      if (attempt.held) return { id: d.id.toString(), attempts: d.attempts, status: 'HELD', next: new Date(now.getTime() + attempt.held.holdMs).toISOString(), fault: attempt.held.faultId.toString() };
      const delay = attempt.success || retry === null ? null : retryDelayMs(d.attempts, retry.random);
      return {
        id: d.id.toString(),
        attempts: d.attempts,
        status: attempt.success ? ('SUCCEEDED' as const) : delay === null ? ('FAILED' as const) : ('PENDING' as const),
        next: (delay === null ? now : new Date(now.getTime() + delay)).toISOString(),
        fault: null,
      };
    });
    // A `duplicate` fault's second sending is logged as well, after the first.
    const sent = finished.flatMap(({ d, attempt }) => (attempt.held ? [] : attempt.duplicate ? [{ d, attempt }, { d, attempt: attempt.duplicate }] : [{ d, attempt }]));
    const logs = sent.map(({ d, attempt }) => ({
      account_id: d.account_id.toString(),
      delivery_id: d.id.toString(),
      transaction_id: d.transaction_id?.toString() ?? null,
      event_type: d.event_type,
      url: d.url,
      message_id: d.message_id,
      attempt: d.attempts,
      status_code: attempt.statusCode,
      success: attempt.success,
      duration_ms: attempt.durationMs,
      error: attempt.error,
      created_at: attempt.sentAt.toISOString(),
      signed_at: attempt.signedAt?.toISOString() ?? null,
    }));
    const breaker = breakerChanges(finished.map(({ d, attempt, retry }) => ({ destinationId: d.destination_id, attempt, counts: retry !== null && !attempt.held })));
    const accounts = [...new Set(finished.map(({ d }) => d.account_id))];
    await queue.record(this.#deps.db, now, states, logs, breaker, this.#breaker, accounts);
  }
}

/**
 * The first attempt of a delivery a sandbox `late` fault held names the fault, and what let it
 * go: the next delivery to its URL (released), or its hold running out (still `late_until`).
 */
function lateNote(d: ClaimedDelivery, attempt: Attempt): Attempt {
  if (d.late_fault === null || d.attempts !== 1 || attempt.held) return attempt;
  const how = d.late_until === null ? 'until the next delivery to its URL was delivered' : 'until its hold ran out (no later delivery to its URL was delivered)';
  const what = `held ${how} by sandbox fault ${d.late_fault}`;
  return { ...attempt, error: attempt.error === null ? what : `${attempt.error} (${what})` };
}

/**
 * One round of delivery: claims what is due and sends it, `concurrency` at a time, up to `limit`
 * attempts, then waits for them. Returns how many attempts were made.
 */
export async function deliverDue(deps: DeliveryDeps, options: DeliveryOptions & { limit?: number } = {}): Promise<number> {
  const limit = options.limit ?? 512;
  let failure: { error: unknown } | undefined;
  const deliverer = new Deliverer(deps, options, (error) => {
    failure ??= { error };
  });
  // Claims go in chunks: a slot freed is not refilled alone (a claim query per delivery), but
  // once a quarter of the slots are free, or when nothing is left in flight.
  const chunk = Math.max(1, Math.floor(deliverer.concurrency / 4));
  let claimed = 0;
  let progressAt = performance.now();
  while (claimed < limit && failure === undefined) {
    const room = Math.min(deliverer.room(), limit - claimed);
    if (room === 0 || (room < chunk && room < limit - claimed && deliverer.inFlight > 0)) {
      await deliverer.anyFinished();
      continue;
    }
    const records = deliverer.records;
    const got = await deliverer.fill(room);
    claimed += got.claimed;
    if (got.claimed > 0) progressAt = performance.now();
    if (got.claimed === room || deliverer.records !== records) continue;
    if (got.more && performance.now() - progressAt < CONTENDED_WAIT_MS) {
      // Another worker claimed for an account meanwhile, or deliveries were just held: again shortly.
      await Promise.race([deliverer.anyFinished(), new Promise((resolve) => setTimeout(resolve, 5))]);
    } else if (deliverer.unrecorded > 0) {
      // A recorded attempt frees a slot of its destination and account: held deliveries may go.
      await deliverer.recorded();
    } else {
      break;
    }
  }
  await deliverer.drain();
  if (failure !== undefined) throw failure.error;
  return claimed;
}
