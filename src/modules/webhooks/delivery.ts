import { sql } from 'kysely';
import { PREPARED, type Db } from '../../db/client.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Attempt, WebhookSender } from './sender.ts';
import { DELIVERY_TIMEOUT_MS } from './sender.ts';
import { signingSecrets } from './secrets.ts';

/**
 * Delays before the 2nd, 3rd, ... attempt (decisions.md): about 5 s, 5 min, 30 min, 2 h, 5 h,
 * 10 h, 10 h; after the 8th failed attempt the delivery is FAILED.
 */
export const RETRY_DELAYS_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
/** Each delay is stretched or shrunk by up to this fraction, so retries of many do not align. */
export const RETRY_JITTER = 0.1;
/** A claimed delivery is the claimer's for this long; past it, a worker that died is presumed. */
export const LEASE_MS = DELIVERY_TIMEOUT_MS + 5_000;
/** Attempts in flight at once per worker (each waits for its receiver, up to the timeout). */
export const DELIVERY_CONCURRENCY = 128;
/** Finished attempts recorded in one statement at most, and how long one waits for others. */
const RECORD_BATCH = 32;
const RECORD_DELAY_MS = 100;

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

export interface DeliveryDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly sender: WebhookSender;
}

/**
 * Turns undispatched notifications into deliveries, one per active URL of the account and event
 * type, in one transaction (claimed with SKIP LOCKED, so several workers split the work). A
 * notification nobody listens to is dispatched with no delivery; it can still be resent.
 * Notifications are written with their deliveries already (notifications/repo.ts enqueueMany);
 * this picks up any written without them (rows from before migration 0005, or written by hand).
 */
export async function fanOut(deps: Pick<DeliveryDeps, 'db' | 'clock'>, limit = 500): Promise<number> {
  return deps.db.transaction().execute(async (trx) => {
    const now = deps.clock.now();
    const claimed = await sql<{ id: bigint }>`
      select id from outbox where dispatched_at is null order by id limit ${limit} for update skip locked`.execute(trx);
    if (claimed.rows.length === 0) return 0;
    const ids = claimed.rows.map((r) => r.id.toString());
    await sql`
      insert into webhook_deliveries
        (outbox_id, account_id, webhook_id, url, message_id, status, attempts, next_attempt_at, created_at, event_type, transaction_id)
      select o.id, o.account_id, w.id, w.url, o.message_id, 'PENDING', 0, ${now}::timestamptz, ${now}::timestamptz, o.event_type, o.transaction_id
        from outbox o
        join webhooks w on w.account_id = o.account_id and w.event_type = o.event_type and w.is_active
       where o.id = any(${ids}::int8[])
       order by o.id, w.id`.execute(trx);
    await sql`update outbox set dispatched_at = ${now}::timestamptz where id = any(${ids}::int8[])`.execute(trx);
    return ids.length;
  });
}

interface ClaimedDelivery {
  id: bigint;
  account_id: bigint;
  webhook_id: bigint | null;
  url: string;
  message_id: string;
  attempts: number;
  event_type: string;
  transaction_id: bigint | null;
  payload: unknown;
  headers: Record<string, string> | null;
  is_active: boolean | null;
  webhook_secret: string;
  webhook_secret_previous: string | null;
  webhook_secret_rotated_at: Date | null;
}

/** Claims due deliveries: each attempt is taken by one worker (SKIP LOCKED, then a lease). */
async function claimDue(deps: Pick<DeliveryDeps, 'db' | 'clock'>, limit: number): Promise<ClaimedDelivery[]> {
  const now = deps.clock.now();
  const leaseUntil = new Date(now.getTime() + LEASE_MS);
  const result = await sql<ClaimedDelivery>`${sql.raw(PREPARED)}
    with claimed as (
      update webhook_deliveries d
         set attempts = d.attempts + 1, next_attempt_at = ${leaseUntil}::timestamptz, last_attempt_at = ${now}::timestamptz
       where d.id in (select id from webhook_deliveries
                       where status = 'PENDING' and next_attempt_at <= ${now}::timestamptz
                       order by next_attempt_at, id limit ${limit} for update skip locked)
      returning d.*)
    select c.id, c.account_id, c.webhook_id, c.url, c.message_id, c.attempts, c.event_type, c.transaction_id,
           o.payload, w.headers, w.is_active, a.webhook_secret, a.webhook_secret_previous, a.webhook_secret_rotated_at
      from claimed c
      join outbox o on o.id = c.outbox_id
      join accounts a on a.id = c.account_id
      left join webhooks w on w.id = c.webhook_id
     order by c.id`.execute(deps.db);
  return result.rows;
}

interface Finished {
  d: ClaimedDelivery;
  attempt: Attempt;
  retry: { random: () => number } | null;
}

/**
 * Records finished attempts, many in one statement: their log entries, and each delivery's
 * next state if this worker still holds it (the claim's attempt number is still the current one):
 * gone once delivered, due again later, or FAILED.
 */
async function record(deps: Pick<DeliveryDeps, 'db' | 'clock'>, finished: readonly Finished[]): Promise<void> {
  if (finished.length === 0) return;
  const now = deps.clock.now();
  const states = finished.map(({ d, attempt, retry }) => {
    const delay = attempt.success || retry === null ? null : retryDelayMs(d.attempts, retry.random);
    return {
      id: d.id.toString(),
      attempts: d.attempts,
      status: attempt.success ? 'SUCCEEDED' : delay === null ? 'FAILED' : 'PENDING',
      next: (delay === null ? now : new Date(now.getTime() + delay)).toISOString(),
    };
  });
  const logs = finished.map(({ d, attempt }) => ({
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
  }));
  // One statement (one round trip, atomic by itself): the deliveries' next states and the log.
  // A delivered one is deleted rather than marked: its log keeps the history, the table keeps
  // only what is still to do or has failed (and does not grow by a row per notification
  // forever), and a delete writes no new row version and no index entry where the update wrote
  // both (its status takes the row out of the partial due index, so it is never a HOT update).
  await sql`${sql.raw(PREPARED)}
    with v as (
      select * from unnest(${states.map((x) => x.id)}::int8[], ${states.map((x) => x.attempts)}::int4[],
                           ${states.map((x) => x.status)}::text[], ${states.map((x) => x.next)}::timestamptz[]) as v(id, attempts, status, next)),
    delivered as (
      delete from webhook_deliveries d using v
       where v.status = 'SUCCEEDED' and d.id = v.id and d.attempts = v.attempts and d.status = 'PENDING'),
    moved as (
      update webhook_deliveries d set status = v.status, next_attempt_at = v.next from v
       where v.status <> 'SUCCEEDED' and d.id = v.id and d.attempts = v.attempts and d.status = 'PENDING')
    insert into webhook_logs (account_id, delivery_id, transaction_id, event_type, url, message_id, attempt, status_code,
                              success, duration_ms, error, is_resend, created_at)
    select l.account_id, l.delivery_id, l.transaction_id, l.event_type, l.url, l.message_id, l.attempt, l.status_code,
           l.success, l.duration_ms, l.error, false, l.created_at
      from jsonb_to_recordset(${JSON.stringify(logs)}::jsonb) as l(
             account_id int8, delivery_id int8, transaction_id int8, event_type text, url text, message_id text, attempt int4,
             status_code int4, success bool, duration_ms int4, error text, created_at timestamptz)`.execute(deps.db);
}

/** Makes one claimed attempt. */
async function attemptOne(deps: DeliveryDeps, d: ClaimedDelivery, random: () => number): Promise<Finished> {
  // A registration switched off or removed stops its deliveries at once.
  const live = d.webhook_id !== null && d.is_active === true;
  const attempt: Attempt = !live
    ? { success: false, statusCode: null, durationMs: 0, error: 'registration switched off or removed', sentAt: deps.clock.now() }
    : await deps.sender.send(
        {
          url: d.url,
          messageId: d.message_id,
          body: envelopeBody(d.payload),
          headers: d.headers ?? {},
          secrets: signingSecrets(d, deps.clock.now()),
        },
        () => deps.clock.now(),
      );
  return { d, attempt, retry: live ? { random } : null };
}

/**
 * One round of delivery: claims what is due and sends it, `concurrency` at a time, up to `limit`
 * attempts. A delivery is claimed only when a slot is free to send it at once: its lease covers
 * one attempt, so one claimed early and left waiting behind slow receivers would be claimed
 * again by another worker and sent twice. Returns how many attempts were made.
 */
export async function deliverDue(deps: DeliveryDeps, options: { limit?: number; concurrency?: number; random?: () => number } = {}): Promise<number> {
  const limit = options.limit ?? 512;
  const concurrency = Math.max(1, options.concurrency ?? DELIVERY_CONCURRENCY);
  // Claims go in chunks: a slot freed is not refilled alone (a claim query per delivery), but
  // once a quarter of the slots are free, or when nothing is left in flight.
  const chunk = Math.max(1, Math.floor(concurrency / 4));
  const random = options.random ?? Math.random;
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  let claimed = 0;
  // Finished attempts are recorded together: one transaction for many, not one each.
  let finished: Finished[] = [];
  let recording: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    const batch = finished;
    finished = [];
    recording = recording.then(() => record(deps, batch));
    return recording;
  };
  // An attempt is recorded within RECORD_DELAY_MS, well inside its lease, even while slower
  // attempts of the round are still waiting for their receivers.
  const flushSoon = () => {
    timer ??= setTimeout(() => {
      flush().catch((error: unknown) => {
        failure ??= { error };
      });
    }, RECORD_DELAY_MS);
  };
  while (claimed < limit && failure === undefined) {
    const room = Math.min(concurrency - inFlight.size, limit - claimed);
    if (room === 0 || (room < chunk && room < limit - claimed && inFlight.size > 0)) {
      await Promise.race(inFlight);
      continue;
    }
    const batch = await claimDue(deps, room);
    claimed += batch.length;
    for (const d of batch) {
      // Errors are kept, not thrown here, so that none goes unhandled while the loop claims.
      const running: Promise<void> = attemptOne(deps, d, random)
        .then((done) => {
          finished.push(done);
          if (finished.length >= RECORD_BATCH || inFlight.size <= 1) return flush();
          flushSoon();
          return undefined;
        })
        .catch((error: unknown) => {
          failure ??= { error };
        })
        .finally(() => inFlight.delete(running));
      inFlight.add(running);
    }
    if (batch.length < room) break;
  }
  await Promise.all(inFlight);
  await flush().catch((error: unknown) => {
    failure ??= { error };
  });
  if (failure !== undefined) throw failure.error;
  return claimed;
}
