import type { Db, Trx } from '../../db/client.ts';
import type { FaultEffect, FaultStage } from '../../db/schema.ts';
import { AppError, badRequest } from '../../http/errors.ts';
import { OffsetClock, systemClock, type Clock } from '../../lib/clock.ts';
import { inboxUrl, isOwnInbox } from '../webhooks/destination.ts';
import * as repo from './repo.ts';
import { checkAdvance, checkFault, DEFAULT_LATE_HOLD_MS, NEXT_EVENT, newFault, type AdvanceInput, type FaultInput } from './rules.ts';

/**
 * The sandbox's controls of the simulated world, shared by every process on the database
 * through one polled row (docs/decisions/0034-test-clock-and-faults.md):
 * - the test clock: business time is the real time plus an offset that only grows until the
 *   clock is reset, which every time rule reads (charge expiry, due dates, refund windows,
 *   settlement, retries);
 * - faults: webhook deliveries under a URL prefix answered with a status, timing out or delayed,
 *   sent twice or held until the next one to their URL is delivered;
 *   the directory unavailable (settlement faults are read by the settlement itself, in SQL; a
 *   transfer a delay holds says why through `pendingReason`).
 * Production builds none of this: its business time is the real time.
 */
export class SandboxControls {
  readonly clock: OffsetClock;
  readonly #db: Db;
  readonly #base: Clock;
  readonly #pollMs: number;
  readonly #publicUrl: string;
  /** The service's own inbox, as the destination policy names it. */
  readonly #inbox: { ownInbox: string };
  #faults: repo.FaultRow[] = [];
  #version: bigint | undefined;
  #timer: NodeJS.Timeout | undefined;
  #refreshing: Promise<void> | undefined;
  /**
   * The delivery this process last decided to hold (`late`), by destination and URL, and until
   * when to remember it (real time): deliveries claimed with it are not held too while its hold
   * is not recorded yet.
   */
  readonly #holding = new Map<string, { id: bigint; until: number }>();

  constructor(db: Db, base: Clock, options: { publicUrl: string; pollMs?: number }) {
    this.#db = db;
    this.#base = base;
    this.clock = new OffsetClock(base);
    this.#pollMs = options.pollMs ?? DEFAULT_POLL_MS;
    this.#publicUrl = options.publicUrl;
    this.#inbox = { ownInbox: inboxUrl(options.publicUrl, '') };
  }

  /** The address of an inbox of this service (`{PUBLIC_URL}/sandbox/inbox/{name}`). */
  inboxUrl(name: string): string {
    return inboxUrl(this.#publicUrl, name);
  }

  /** Reads the shared row now (and the faults when they changed); concurrent calls share one read. */
  refresh(): Promise<void> {
    this.#refreshing ??= this.#read().finally(() => (this.#refreshing = undefined));
    return this.#refreshing;
  }

  async #read(): Promise<void> {
    const state = await repo.readState(this.#db);
    this.#take(state);
    if (state.faults_version !== this.#version) {
      this.#faults = await repo.listFaults(this.#db);
      this.#version = state.faults_version;
    }
  }

  /** Polls the shared row, so that what another process changes is seen here within `pollMs`. */
  async start(onError: (error: unknown) => void): Promise<void> {
    await this.refresh();
    const tick = () => {
      this.refresh()
        .catch(onError)
        .finally(() => {
          if (this.#timer) this.#timer = setTimeout(tick, this.#pollMs).unref();
        });
    };
    this.#timer = setTimeout(tick, this.#pollMs).unref();
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** The test clock as the API shows it. */
  view(): { now: string; offsetSeconds: number } {
    return { now: this.clock.now().toISOString(), offsetSeconds: Math.floor(this.clock.offsetMs / 1000) };
  }

  #take(reading: repo.ClockReading): void {
    this.clock.advanceTo(Number(reading.clock_offset_ms), Number(reading.clock_epoch));
  }

  /**
   * Puts business time back at the real time, for every process on the database. What was made
   * at a later business time keeps its times; what falls due waits for the real time to reach it.
   */
  async reset(): Promise<{ now: string; offsetSeconds: number }> {
    this.#take(await repo.resetClock(this.#db));
    return this.view();
  }

  /** Moves business time forward by `seconds`, or to `to` (never back): one of them. */
  async advance(input: AdvanceInput): Promise<{ now: string; offsetSeconds: number }> {
    checkAdvance(input);
    if (input.to === NEXT_EVENT) throw badRequest('VALIDATION_FAILED', 'to: next-event is the clock routes\' (they know the rules); here, a time');
    let offset: repo.ClockReading;
    if (input.seconds !== undefined) {
      offset = await repo.advanceClockBy(this.#db, BigInt(input.seconds) * 1000n);
    } else {
      const target = new Date(input.to!).getTime();
      await this.refresh();
      const wanted = target - this.#base.now().getTime();
      if (wanted < this.clock.offsetMs) {
        throw badRequest('CLOCK_BACKWARDS', `to (${input.to}) is before the test clock's time (${this.clock.now().toISOString()}): the clock only moves forward`);
      }
      offset = await repo.advanceClockTo(this.#db, BigInt(wanted));
    }
    this.#take(offset);
    return this.view();
  }

  async setFault(fault: Omit<repo.NewFault, 'createdAt'>): Promise<repo.FaultRow> {
    if ((await repo.countFaults(this.#db)) >= repo.MAX_FAULTS) {
      throw new AppError(409, 'TOO_MANY_FAULTS', `At most ${repo.MAX_FAULTS} faults at once: clear some (DELETE /sandbox/faults)`);
    }
    const row = await repo.insertFault(this.#db, { ...fault, createdAt: this.#base.now() });
    await this.refresh();
    return row;
  }

  /** Sets a fault from a request (the API's or a console form's), its fields checked against its kind and effect. */
  setFaultFrom(input: FaultInput): Promise<repo.FaultRow> {
    checkFault(input);
    return this.setFault(newFault(input));
  }

  listFaults(): Promise<repo.FaultRow[]> {
    return repo.listFaults(this.#db);
  }

  async clearFaults(id?: bigint): Promise<number> {
    const deleted = await repo.deleteFaults(this.#db, id);
    await this.refresh();
    return deleted;
  }

  /** What arrived at the inbox `name`, newest first. */
  listArrivals(name: string, limit: number) {
    return repo.listArrivals(this.#db, name, limit);
  }

  clearInbox(name: string): Promise<number> {
    return repo.clearInbox(this.#db, name);
  }

  /**
   * The fault a webhook delivery to `url` meets, using up one of a counted fault's deliveries.
   * Deliveries to this service's own inbox meet theirs at the inbox, which answers as the fault
   * says (and records it); every other destination meets it at the sender. The sender, asking
   * for a delivery to the own inbox, is told the fault the inbox will most likely apply (none is
   * used up) with `atInbox`, so that the delivery log can name it. The delivery modes
   * (`duplicate`, `late`) act at the sender on queued deliveries (`delivery`) only, whatever the
   * destination; `late` passes over a delivery held before, and over one to a URL whose delivery
   * is held already (the next one goes and releases it).
   */
  async webhookFault(url: string, at: 'sender' | 'inbox', delivery?: QueuedDelivery): Promise<WebhookFault | null> {
    const own = isOwnInbox(this.#inbox, url);
    if (at === 'inbox' && !own) return null;
    for (const fault of this.#faults) {
      if (fault.kind !== 'webhook' || !url.startsWith(fault.url_prefix!)) continue;
      if (fault.effect === 'duplicate' || fault.effect === 'late') {
        // Delivery modes act at the sender, wherever the destination (the inbox cannot send
        // twice or hold), on queued deliveries only (a resend is sent as asked). A delivery is
        // held once, and not while another one to its URL is held: that one waits for this one.
        if (at === 'inbox' || !delivery) continue;
        if (fault.effect === 'late' && (delivery.held || (await this.#holdsLate(delivery, url)))) continue;
      } else if (own && at === 'sender') {
        return { ...webhookFaultOf(fault), atInbox: true };
      }
      if (fault.remaining !== null && !(await repo.useFault(this.#db, fault.id))) continue;
      if (fault.remaining !== null) void this.refresh().catch(() => undefined);
      if (fault.effect === 'late') this.#holding.set(`${delivery!.destinationId} ${url}`, { id: delivery!.id, until: systemClock.now().getTime() + HOLDING_MS });
      return webhookFaultOf(fault);
    }
    return null;
  }

  /** Whether another delivery to `url` of the destination is held (or this process is holding one whose hold is not recorded yet). */
  async #holdsLate(delivery: QueuedDelivery, url: string): Promise<boolean> {
    const now = systemClock.now().getTime();
    for (const [key, { until }] of this.#holding) if (until <= now) this.#holding.delete(key);
    const pending = this.#holding.get(`${delivery.destinationId} ${url}`)?.id;
    return repo.holdsLate(this.#db, delivery.destinationId, url, delivery.id, pending === delivery.id ? undefined : pending);
  }

  /**
   * The Pix Automático fault the sandbox's payer PSP meets at a stage (its solicitations, its
   * schedulings of recurring charges, its settlement attempts), using up one of a counted fault's
   * answers in the step's own transaction: a step undone leaves the fault as it was.
   */
  async automaticoFault(stage: FaultStage, trx: Trx): Promise<{ id: bigint; effect: 'reject' | 'late'; reason: string | null } | null> {
    for (const fault of this.#faults) {
      if (fault.kind !== 'automatico' || fault.stage !== stage) continue;
      if (fault.remaining !== null && !(await repo.spendFault(trx, fault.id))) continue;
      if (fault.remaining !== null) void this.refresh().catch(() => undefined);
      return { id: fault.id, effect: fault.effect === 'late' ? 'late' : 'reject', reason: fault.reason };
    }
    return null;
  }

  /** The fault that makes the directory unavailable, while there is one (null otherwise). */
  directoryUnavailable(): { readonly id: bigint } | null {
    const fault = this.#faults.find((f) => f.kind === 'directory');
    return fault ? { id: fault.id } : null;
  }

  /** True while a settlement delay fault may hold transfers (only then is `pendingReason` worth asking). */
  holdsTransfers(): boolean {
    return this.#faults.some((f) => f.kind === 'settlement' && f.effect === 'delay');
  }

  /**
   * Why a pending transfer to `pix_key` is not settled yet, when a settlement delay fault on the
   * key holds it (pix_settle_batch holds it until `delayMs` after it was made, on the test
   * clock); null otherwise. Read from the polled faults: no query.
   */
  pendingReason(transfer: { readonly pix_key: string | null; readonly created_at: Date; readonly expires_at: Date | null }): string | null {
    const fault = this.#faults.find((f) => f.kind === 'settlement' && f.effect === 'delay' && f.pix_key === transfer.pix_key);
    if (!fault) return null;
    const now = this.clock.now().getTime();
    const until = transfer.created_at.getTime() + Number(fault.delay_ms);
    if (until <= now || (transfer.expires_at !== null && transfer.expires_at.getTime() <= now)) return null;
    return `Settlement delayed ${fault.delay_ms} ms by sandbox fault ${fault.id}: pending until ${new Date(until).toISOString()}`;
  }
}

const webhookFaultOf = (fault: repo.FaultRow): WebhookFault => ({
  id: fault.id,
  effect: fault.effect,
  status: fault.status,
  delayMs: fault.delay_ms === null ? (fault.effect === 'late' ? DEFAULT_LATE_HOLD_MS : null) : Number(fault.delay_ms),
});

/** A queued delivery a webhook fault may meet (delivery modes act on those only). */
export interface QueuedDelivery {
  readonly id: bigint;
  readonly destinationId: bigint;
  /** Held by a `late` fault before: it is not held again. */
  readonly held: boolean;
}

export interface WebhookFault {
  readonly id: bigint;
  readonly effect: FaultEffect;
  readonly status: number | null;
  readonly delayMs: number | null;
  /** The destination is the service's own inbox: the inbox applies the fault, the sender only names it. */
  readonly atInbox?: boolean;
}

/** How long this process remembers a hold it decided (the database shows it once recorded, within the lease). */
const HOLDING_MS = 60_000;

/** How often each process reads the shared row: the longest another process's change takes to be seen. */
export const DEFAULT_POLL_MS = 200;
