import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import type { Database } from '../db/client.ts';
import { connectClient } from '../db/multi-host.ts';
import { settleDue, type SettlementDeps } from '../modules/settlement/service.ts';
import { deleteExpiredIdempotencyKeys } from '../modules/transfers/repo.ts';
import { deleteTraceContexts } from '../telemetry/repo.ts';
import { Deliverer, type DeliveryOptions } from '../modules/webhooks/delivery.ts';
import { maintenanceRound, needsMaintenance } from './maintenance.ts';
import type { WebhookSender } from '../modules/webhooks/sender.ts';
import { runDue, type NetworkDeps } from '../modules/recurrences/network.ts';

/** Housekeeping runs this often: stored idempotent answers past their 24 hours are deleted. */
const HOUSEKEEPING_INTERVAL_MS = 60_000;
const HOUSEKEEPING_BATCH = 5_000;
/** How long a transfer's trace context is kept for its settlement and webhooks. */
const TRACE_CONTEXT_DAYS = 1;
/** Transfers settled in one transaction at most: a backlog drains in few rounds (HIGH ones are
 * claimed first in every round, so they never wait behind it). */
const SETTLEMENT_BATCH = 500;
/**
 * Settlement rounds start at least this far apart, however often HIGH transfers wake the worker:
 * a round costs PostgreSQL about the same whatever it settles, so HIGH transfers accepted together
 * share one, and a HIGH transfer waits up to this much more for its round.
 * Why, and what was measured: docs/decisions/0013-settlement-round-interval.md.
 */
const MIN_ROUND_INTERVAL_MS = 50;
/**
 * How often the tables are looked at for autovacuum's work, where the worker does it. The queue
 * tables churn a row per transfer, so a round's vacuum of them grows with the time since the
 * last, and a long one stalls the answers it overlaps: the sooner it comes, the shorter it is.
 * Why, and what was measured: docs/decisions/0014-table-maintenance-without-autovacuum.md.
 */
const MAINTENANCE_INTERVAL_MS = 3_000;
/**
 * How often Pix Automático's network steps are looked for (solicitations sent and answered,
 * recurring charges answered and settled, expiries): their moments are seconds apart at the
 * closest, and an advance of the test clock runs what it made due itself.
 */
const AUTOMATICO_POLL_MS = 500;

export interface WorkerOptions extends SettlementDeps {
  readonly log: Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;
  /** PostgreSQL URL: the worker LISTENs there, so HIGH transfers accepted by any process wake it. */
  readonly listenUrl?: string | undefined;
  readonly batchSize?: number;
  /** Delivers webhooks from the outbox when given (the worker closes it when it stops). */
  readonly webhookSender?: WebhookSender;
  /** How often the delivery loop looks for notifications and due retries. */
  readonly deliveryPollMs?: number;
  /** Delivery's concurrency, fairness bounds and breaker (tests make them small). */
  readonly delivery?: DeliveryOptions;
  /** Given: vacuums and analyses the tables where no autovacuum does (worker/maintenance.ts). */
  readonly maintenance?: { readonly kind: Database['kind']; readonly intervalMs?: number };
  /** Given: takes Pix Automático's network steps as they fall due (modules/recurrences/network.ts). */
  readonly automatico?: NetworkDeps;
}

/**
 * Waits `ms`, or less: `expose` is handed the function that ends the wait at once, and
 * `undefined` when the wait is over.
 */
function nap(ms: number, expose: (wake: (() => void) | undefined) => void): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      expose(undefined);
      resolve();
    }
    expose(done);
  });
}

/**
 * The settlement loop: settles what is due, then sleeps until woken (a HIGH transfer accepted
 * in this process or NOTIFYed by another) or until the next poll, which also brings NORM
 * transfers to their turn. Stopping lets the current batch commit and releases every claim.
 */
export class Worker {
  readonly #options: WorkerOptions;
  readonly #pollMs: number;
  #running = false;
  #loop: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  #pending = false;
  #listener: pg.Client | undefined;
  #listening: Promise<void> | undefined;
  #delivery: Promise<void> | undefined;
  #wakeDelivery: (() => void) | undefined;
  #maintenance: Promise<void> | undefined;
  #wakeMaintenance: (() => void) | undefined;
  #automatico: Promise<void> | undefined;
  #wakeAutomatico: (() => void) | undefined;

  constructor(options: WorkerOptions) {
    this.#options = options;
    this.#pollMs = Math.max(10, Math.min(250, Math.floor(options.settlementDelayMs / 4) || 10));
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    if (this.#options.listenUrl) this.#listening = this.#listen(this.#options.listenUrl);
    this.#loop = this.#run();
    if (this.#options.webhookSender) this.#delivery = this.#deliver(this.#options.webhookSender);
    if (this.#options.maintenance) this.#maintenance = this.#maintain(this.#options.maintenance);
    if (this.#options.automatico) this.#automatico = this.#automaticoLoop(this.#options.automatico);
  }

  /** Something is due now: run a round without waiting for the poll. */
  wake = (): void => {
    this.#pending = true;
    this.#wake?.();
    this.#wakeAutomatico?.();
  };

  async stop(): Promise<void> {
    this.#running = false;
    this.#wake?.();
    this.#wakeDelivery?.();
    this.#wakeMaintenance?.();
    this.#wakeAutomatico?.();
    await this.#loop;
    await this.#delivery;
    await this.#maintenance;
    await this.#automatico;
    await this.#options.webhookSender?.close();
    await this.#listener?.end().catch(() => undefined);
    await this.#listening;
  }

  async #housekeeping(): Promise<void> {
    // Bounded: a few batches a round, the rest next time.
    for (let i = 0; i < 10; i++) {
      const deleted = await deleteExpiredIdempotencyKeys(this.#options.db, this.#options.clock.now(), HOUSEKEEPING_BATCH);
      if (deleted < HOUSEKEEPING_BATCH) break;
    }
    // A transfer's trace is continued for a day at most (its settlement and first deliveries).
    const traceBefore = new Date(this.#options.clock.now().getTime() - TRACE_CONTEXT_DAYS * 86_400_000);
    for (let i = 0; i < 10; i++) if ((await deleteTraceContexts(this.#options.db, traceBefore, HOUSEKEEPING_BATCH)) < HOUSEKEEPING_BATCH) break;
  }

  async #run(): Promise<void> {
    const batch = this.#options.batchSize ?? SETTLEMENT_BATCH;
    let housekeptAt = -HOUSEKEEPING_INTERVAL_MS;
    let startedAt = -MIN_ROUND_INTERVAL_MS;
    while (this.#running) {
      // Wakes that come sooner are coalesced: they wait for the interval's end, not for the poll.
      // Pacing is measured on the monotonic clock; what is due is decided on `clock` (business time).
      const early = startedAt + MIN_ROUND_INTERVAL_MS - performance.now();
      if (early > 0) await new Promise((resolve) => setTimeout(resolve, early));
      if (!this.#running) break;
      this.#pending = false;
      startedAt = performance.now();
      if (startedAt - housekeptAt >= HOUSEKEEPING_INTERVAL_MS) {
        housekeptAt = startedAt;
        await this.#housekeeping().catch((error: unknown) => this.#options.log.error({ err: error }, 'housekeeping failed'));
      }
      try {
        const result = await settleDue(this.#options, { limit: batch });
        if (result.settled + result.failed > 0) {
          this.#options.log.info(result, 'settlement round');
          this.#wakeDelivery?.();
        }
      } catch (error) {
        this.#options.log.error({ err: error }, 'settlement round failed; retrying');
        await this.#sleep(1000);
        continue;
      }
      if (!this.#pending) await this.#sleep(this.#pollMs);
    }
  }

  /**
   * The delivery loop, beside settlement so that slow receivers never hold settlement up. It
   * never waits for a round's attempts to finish before claiming more: slots freed by fast
   * receivers are refilled while slow ones are still waiting, so a slow receiver delays only
   * the deliveries its own bounds keep back (fairness.ts). Claims go in chunks (a quarter of the
   * slots), except when the poll comes round: then whatever is free is filled.
   */
  async #deliver(sender: WebhookSender): Promise<void> {
    const pollMs = this.#options.deliveryPollMs ?? 200;
    const deps = { db: this.#options.db, clock: this.#options.clock, sender };
    const deliverer = new Deliverer(deps, this.#options.delivery ?? {}, (error) =>
      this.#options.log.error({ err: error }, 'webhook delivery record failed; the attempt is made again when its lease runs out'),
    );
    const chunk = Math.max(1, Math.floor(deliverer.concurrency / 4));
    let polled = true;
    let full = false;
    while (this.#running) {
      const room = deliverer.room();
      if (room > 0 && (room >= chunk || !full || polled || deliverer.inFlight === 0)) {
        const records = deliverer.records;
        try {
          full = (await deliverer.fill(room)).claimed === room;
        } catch (error) {
          full = false;
          this.#options.log.error({ err: error }, 'webhook delivery claim failed; retrying');
        }
        // A record made meanwhile may have freed what the claim saw taken: look again.
        if ((full || deliverer.records !== records) && this.#running) continue;
      }
      // Until the poll or a wake; or until attempts are recorded: that frees slots of their
      // destinations and accounts, so deliveries held back there may go. Records come in
      // batches (delivery.ts), so claims do not follow every attempt.
      let woken = false;
      const napped = nap(pollMs, (wake) => (this.#wakeDelivery = wake)).then(() => (woken = true));
      await Promise.race([napped, ...(deliverer.unrecorded > 0 ? [deliverer.recorded()] : [])]);
      this.#wakeDelivery?.();
      polled = woken;
    }
    await deliverer.drain();
  }

  /**
   * Autovacuum's work where no autovacuum runs, in a loop of its own: a long VACUUM never holds
   * settlement or delivery up.
   */
  async #maintain({ kind, intervalMs = MAINTENANCE_INTERVAL_MS }: NonNullable<WorkerOptions['maintenance']>): Promise<void> {
    const { db, log } = this.#options;
    try {
      if (!(await needsMaintenance(db, kind))) return;
    } catch (error) {
      log.error({ err: error }, 'could not tell whether autovacuum runs; the worker will not maintain tables');
      return;
    }
    log.info({ intervalMs }, 'autovacuum does not run on this database: the worker vacuums and analyses its tables');
    while (this.#running) {
      await nap(intervalMs, (wake) => (this.#wakeMaintenance = wake));
      if (!this.#running) break;
      try {
        for (const work of await maintenanceRound(db, kind)) log.info(work, 'table maintenance');
      } catch (error) {
        log.error({ err: error }, 'table maintenance failed; retrying next round');
      }
    }
  }

  /** Pix Automático's steps as they fall due, on business time; what they notify is delivered at once. */
  async #automaticoLoop(deps: NetworkDeps): Promise<void> {
    while (this.#running) {
      try {
        if ((await runDue(deps, deps.clock.now())) > 0) this.#wakeDelivery?.();
      } catch (error) {
        this.#options.log.error({ err: error }, 'Pix Automático steps failed; retrying');
      }
      if (!this.#running) break;
      await nap(AUTOMATICO_POLL_MS, (wake) => (this.#wakeAutomatico = wake));
    }
  }

  #sleep(ms: number): Promise<void> {
    return nap(ms, (wake) => (this.#wake = wake));
  }

  /**
   * LISTENs on the primary: on a multi-host URL the connection goes to the read-write server
   * (db/multi-host.ts), so after a failover, once the old one's connection ends, the next is made
   * to the new primary, and wakes from every process reach this one again.
   */
  async #listen(url: string): Promise<void> {
    while (this.#running) {
      let client: pg.Client | undefined;
      try {
        client = await connectClient(url, { application_name: 'pix-api-worker-listen' });
        const open = client;
        // Made before any I/O can end the connection: its error or end resolves it.
        const closed = new Promise<void>((resolve) => {
          open.on('error', () => resolve());
          open.on('end', () => resolve());
        });
        open.on('notification', this.wake);
        await open.query('LISTEN pix_settlement');
        this.#listener = open;
        // stop() may have come while connecting; it ends the client it saw, so check again.
        if (this.#running) await closed;
      } catch (error) {
        this.#options.log.warn({ err: error }, 'settlement LISTEN connection failed; polling meanwhile');
      }
      await client?.end().catch(() => undefined);
      if (this.#running) await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}
