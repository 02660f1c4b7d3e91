/**
 * The delivery queue's SQL (delivery.ts drives it; fairness.ts decides). A claim is two
 * statements: one reads the accounts with due work, their destinations and what is in flight;
 * the other claims within the bounds, for each account only if no other claim for it came in
 * between (its anchor's `claims`), so the bounds hold over every worker. Recording attempts is
 * one statement; a claim that marks a destination held after a record freed one of its slots
 * sees that record's `wakes` and does not overwrite its wake.
 */
import { sql, type Selectable } from 'kysely';
import type { Db } from '../../../db/client.ts';
import type { DB } from '../../../db/schema.ts';
import { prepared } from '../../../db/prepared.ts';
import { COBR_CALLBACK_EVENT, PIX_CALLBACK_EVENT, REC_CALLBACK_EVENT } from '../repo.ts';

export interface DestinationRow {
  id: bigint;
  account_id: bigint;
  failures: number;
  open_until: Date | null;
  ready_at: Date | null;
  wakes: number;
  /** When its oldest due work became due (null: none of it was among what the claim looked at). */
  due_since: Date | null;
  /** The account's first destination, whose `claims` every claim for the account bumps, and that count. */
  anchor_id: bigint;
  anchor_claims: number;
  in_flight: number;
  due: number;
}

/**
 * What a claim needs to know, in one read: the accounts with due work (from the oldest `scan`
 * due deliveries that no destination holds, and the `scan` destinations whose held deliveries
 * are ready to be looked at), up to `accounts` of them, the longest waiting first; and every
 * destination of those accounts with its breaker, its attempts in flight (leases not yet run
 * out) and its due deliveries, counted up to `cap`.
 */
export async function claimState(db: Db, now: Date, scan: number, accounts: number, cap: number): Promise<DestinationRow[]> {
  const result = await prepared('webhook_claim_state', sql<DestinationRow>`
    with due as (
      select account_id, destination_id, next_attempt_at as at from webhook_deliveries
       where status = 'PENDING' and not held and next_attempt_at <= ${now}::timestamptz
       order by next_attempt_at, id limit ${scan}),
    ready as (
      select account_id, id as destination_id, ready_at as at from webhook_destinations
       where ready_at <= ${now}::timestamptz order by ready_at limit ${scan}),
    cand as (
      select account_id, destination_id, min(at) as due_since from (select * from due union all select * from ready) u
       group by account_id, destination_id),
    first as (
      select account_id from cand group by account_id order by min(due_since), account_id limit ${accounts})
    select d.id, d.account_id, d.failures, d.open_until, d.ready_at, d.wakes, c.due_since,
           first_value(d.id) over w as anchor_id, first_value(d.claims) over w as anchor_claims,
           (select count(*) from webhook_deliveries x
             where x.account_id = d.account_id and x.destination_id = d.id and x.leased_until > ${now}::timestamptz)::int4 as in_flight,
           (select count(*) from (select 1 from webhook_deliveries x
             where x.destination_id = d.id and x.status = 'PENDING' and x.next_attempt_at <= ${now}::timestamptz
             order by x.next_attempt_at limit ${cap}) y)::int4 as due
      from first f
      join webhook_destinations d on d.account_id = f.account_id
      left join cand c on c.destination_id = d.id
    window w as (partition by d.account_id order by d.id)`).execute(db);
  return result.rows;
}

export interface ClaimedDelivery {
  id: bigint;
  account_id: bigint;
  destination_id: bigint;
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
  /** The sandbox `late` fault that held it before (it is not held again), and, while its hold has not been released, until when. */
  late_fault: bigint | null;
  late_until: Date | null;
}

export interface ClaimPlan {
  /** Each account's anchor destination and its `claims` as read: the claim goes ahead only for the accounts where it is unchanged. */
  anchors: readonly { id: bigint; claims: number }[];
  picks: readonly { id: bigint; anchorId: bigint; take: number }[];
  /** Destinations whose due work their own bound or breaker keeps back (hold), or whose held work is all claimed. */
  marks: readonly { id: bigint; anchorId: bigint; hold: boolean; readyAt: Date | null; wakes: number }[];
}

/**
 * Claims, in one statement, up to `take` due deliveries of each destination, oldest first, for
 * one attempt each: the attempt count goes up and a lease runs to `leaseUntil` (next_attempt_at
 * too, so that a worker that dies leaves the delivery due again when its lease runs out).
 *
 * Every claim for an account bumps `claims` on its anchor destination, under that row's lock:
 * a claim whose read came before another claim for the same account (by any worker) finds the
 * count changed and takes nothing of that account, so the counts it decided on were the
 * current ones and the bounds hold over every worker.
 *
 * Marked destinations: up to `batch` of the due deliveries kept back leave the global due index
 * for the destination's own queue (`held`), and `ready_at` says when to look at them again,
 * unless a record freed a slot since the read (`wakes` changed): then at once.
 */
export async function claim(db: Db, plan: ClaimPlan, now: Date, leaseUntil: Date, batch: number): Promise<ClaimedDelivery[]> {
  const { anchors, picks, marks } = plan;
  const result = await prepared('webhook_claim', sql<ClaimedDelivery>`
    with seen as (
      select * from unnest(${anchors.map((a) => a.id.toString())}::int8[], ${anchors.map((a) => a.claims)}::int4[]) as s(id, claims)),
    locked as (
      select t.id, t.claims from webhook_destinations t where t.id in (select id from seen) order by t.id for update),
    ok as (
      select l.id from locked l join seen s on s.id = l.id and s.claims = l.claims),
    p as (
      select * from unnest(${picks.map((x) => x.id.toString())}::int8[], ${picks.map((x) => x.anchorId.toString())}::int8[],
                           ${picks.map((x) => x.take)}::int4[]) as p(destination_id, anchor_id, take)
       where p.anchor_id in (select id from ok)),
    m as (
      select * from unnest(${marks.map((x) => x.id.toString())}::int8[], ${marks.map((x) => x.anchorId.toString())}::int8[],
                           ${marks.map((x) => x.hold)}::bool[], ${marks.map((x) => x.readyAt?.toISOString() ?? null)}::timestamptz[],
                           ${marks.map((x) => x.wakes)}::int4[]) as m(id, anchor_id, hold, ready_at, wakes)
       where m.anchor_id in (select id from ok)),
    claimed as (
      update webhook_deliveries d
         set attempts = d.attempts + 1, next_attempt_at = ${leaseUntil}::timestamptz, leased_until = ${leaseUntil}::timestamptz,
             last_attempt_at = ${now}::timestamptz, held = false
       where d.id in (
         select x.id from p cross join lateral (
           select w.id from webhook_deliveries w
            where w.destination_id = p.destination_id and w.status = 'PENDING' and w.next_attempt_at <= ${now}::timestamptz
            order by w.next_attempt_at, w.id limit p.take for update skip locked) x)
      returning d.*),
    held as (
      update webhook_deliveries d set held = true
       where d.id in (
         select x.id from m cross join lateral (
           select w.id from webhook_deliveries w
            where w.destination_id = m.id and w.status = 'PENDING' and not w.held and w.next_attempt_at <= ${now}::timestamptz
            order by w.next_attempt_at, w.id limit ${batch} for update skip locked) x
          where m.hold)),
    touched as (
      update webhook_destinations t
         set claims = t.claims + (case when t.id in (select id from ok) then 1 else 0 end),
             ready_at = case when m.id is null then t.ready_at
                             when t.wakes = m.wakes then m.ready_at
                             when m.hold then ${now}::timestamptz
                             else t.ready_at end
        from (select id from ok union select id from m) u left join m on m.id = u.id
       where t.id = u.id)
    select c.id, c.account_id, c.destination_id, c.webhook_id, c.url, c.message_id, c.attempts, c.event_type, c.transaction_id, c.late_fault, c.late_until,
           o.payload, w.headers, coalesce(w.is_active, k.id is not null or r.id is not null) as is_active,
           a.webhook_secret, a.webhook_secret_previous, a.webhook_secret_rotated_at
      from claimed c
      join outbox o on o.id = c.outbox_id
      join accounts a on a.id = c.account_id
      left join webhooks w on w.id = c.webhook_id and coalesce(c.event_type, '') not in (${PIX_CALLBACK_EVENT}, ${REC_CALLBACK_EVENT}, ${COBR_CALLBACK_EVENT})
      left join pix_key_webhooks k on k.id = c.webhook_id and c.event_type = ${PIX_CALLBACK_EVENT}
      left join automatico_webhooks r on r.id = c.webhook_id and c.event_type in (${REC_CALLBACK_EVENT}, ${COBR_CALLBACK_EVENT})
     order by c.id`).execute(db);
  return result.rows;
}

export interface DeliveryState {
  id: string;
  attempts: number;
  /** HELD: a sandbox `late` fault (`fault`) holds it, not sent, until `next` at most (its claim is not counted as an attempt). */
  status: 'SUCCEEDED' | 'PENDING' | 'FAILED' | 'HELD';
  next: string;
  fault: string | null;
}

/** A webhook_logs row as `record` reads it from JSON: ids and time as text, no id of its own, never a resend. */
export type LogEntry = Omit<Selectable<DB['webhook_logs']>, 'id' | 'account_id' | 'delivery_id' | 'transaction_id' | 'is_resend' | 'created_at' | 'signed_at'> & {
  account_id: string;
  delivery_id: string;
  transaction_id: string | null;
  created_at: string;
  signed_at: string | null;
};

export interface BreakerUpdate {
  destinationId: bigint;
  reset: boolean;
  failures: number;
}

export interface BreakerParams {
  threshold: number;
  openMs: number;
  maxOpenMs: number;
}

/**
 * record's CTEs over `v` (the states) that move what was not delivered (due again, FAILED, or
 * HELD by a sandbox `late` fault) and release the older held ones of the URLs a delivery went
 * to (`went`). A held one whose URL a newer delivery went to in this same record goes at once.
 */
function deliveryMoves(now: Date) {
  const newerWent = sql`exists (select 1 from went s where s.destination_id = d.destination_id and s.url = d.url and s.id > d.id)`;
  return sql`went as (
  select x.destination_id, x.url, max(x.id) as id from webhook_deliveries x join v on v.id = x.id
   where v.status = 'SUCCEEDED' and x.attempts = v.attempts and x.status = 'PENDING' group by x.destination_id, x.url),
moved as (
  update webhook_deliveries d
     set status = case when v.status = 'HELD' then 'PENDING' else v.status end, leased_until = null,
         next_attempt_at = case when v.status = 'HELD' and ${newerWent} then ${now}::timestamptz else v.next end,
         attempts = case when v.status = 'HELD' then d.attempts - 1 else d.attempts end,
         late_fault = case when v.status = 'HELD' then v.fault else d.late_fault end,
         late_until = case when v.status = 'HELD' and not ${newerWent} then v.next end
    from v
   where v.status <> 'SUCCEEDED' and d.id = v.id and d.attempts = v.attempts and d.status = 'PENDING'),
released as (
  update webhook_deliveries d set next_attempt_at = ${now}::timestamptz, late_until = null
    from went s
   where d.late_until is not null and d.destination_id = s.destination_id and d.url = s.url and d.id < s.id and d.status = 'PENDING'
     and (d.leased_until is null or d.leased_until <= ${now}::timestamptz) and d.id not in (select id from v))`;
}

/**
 * Records finished attempts, many in one statement (one round trip, atomic by itself): each
 * delivery's next state if its claimer still holds it (the claim's attempt number is still the
 * current one), its log entry, its destination's breaker, and a wake for the held deliveries of
 * the accounts whose attempts ended (a slot is free again). A destination row is written only
 * when something about it changes: in the common case (successes, nothing held) none is.
 *
 * A delivered one is deleted rather than marked: its log keeps the history, the table keeps
 * only what is still to do or has failed, and a delete writes no new row version and no index
 * entry where the update wrote both. Why, and what was measured:
 * docs/decisions/0021-webhook-delivery-lease.md and docs/decisions/0001-fair-webhook-delivery.md.
 *
 * Sandbox delivery modes: a delivery a `late` fault held goes back to PENDING, its claim not
 * counted, due at the hold's end (`late_until`); a delivery delivered releases the older ones
 * held for its URL (due now: they go right after it), those held in this same record too.
 */
export async function record(
  db: Db,
  now: Date,
  states: readonly DeliveryState[],
  logs: readonly LogEntry[],
  breaker: readonly BreakerUpdate[],
  params: BreakerParams,
  accounts: readonly bigint[],
): Promise<void> {
  await prepared('webhook_record', sql`
    with v as (
      select * from unnest(${states.map((x) => x.id)}::int8[], ${states.map((x) => x.attempts)}::int4[],
                           ${states.map((x) => x.status)}::text[], ${states.map((x) => x.next)}::timestamptz[],
                           ${states.map((x) => x.fault)}::int8[]) as v(id, attempts, status, next, fault)),
    delivered as (
      delete from webhook_deliveries d using v
       where v.status = 'SUCCEEDED' and d.id = v.id and d.attempts = v.attempts and d.status = 'PENDING'),
    ${deliveryMoves(now)},
    c as (
      select c.id, c.reset, c.fails, (case when c.reset then 0 else t.opens end) as opens_base,
             (c.fails > 0 and (case when c.reset then c.fails else t.failures + c.fails end) >= ${params.threshold}::int4
                          and (t.open_until is null or t.open_until <= ${now}::timestamptz)) as opening
        from unnest(${breaker.map((b) => b.destinationId.toString())}::int8[], ${breaker.map((b) => b.reset)}::bool[],
                    ${breaker.map((b) => b.failures)}::int4[]) as c(id, reset, fails)
        join webhook_destinations t on t.id = c.id),
    n as (
      select c.*, ${now}::timestamptz + make_interval(secs => least(${params.maxOpenMs}::float8,
                    ${params.openMs}::float8 * power(2, least(c.opens_base, 30))) / 1000) as opened_until
        from c),
    breaker as (
      update webhook_destinations t
         set wakes = t.wakes + 1,
             failures = case when n.reset then n.fails else t.failures + n.fails end,
             opens = case when n.opening then n.opens_base + 1 else n.opens_base end,
             open_until = case when n.opening then n.opened_until when n.reset then null else t.open_until end,
             ready_at = case when t.ready_at is null then null
                             when n.opening then n.opened_until
                             when n.reset or t.open_until is null or t.open_until <= ${now}::timestamptz then least(t.ready_at, ${now}::timestamptz)
                             else t.ready_at end
        from n where t.id = n.id and (n.fails > 0 or t.failures <> 0 or t.open_until is not null or t.ready_at is not null)),
    wake as (
      update webhook_destinations t set ready_at = ${now}::timestamptz, wakes = t.wakes + 1
       where t.account_id = any(${accounts.map(String)}::int8[]) and t.ready_at > ${now}::timestamptz
         and (t.open_until is null or t.open_until <= ${now}::timestamptz)
         and t.id <> all(${breaker.map((b) => b.destinationId.toString())}::int8[]))
    insert into webhook_logs (account_id, delivery_id, transaction_id, event_type, url, message_id, attempt, status_code,
                              success, duration_ms, error, is_resend, created_at, signed_at)
    select l.account_id, l.delivery_id, l.transaction_id, l.event_type, l.url, l.message_id, l.attempt, l.status_code,
           l.success, l.duration_ms, l.error, false, l.created_at, l.signed_at
      from jsonb_to_recordset(${JSON.stringify(logs)}::jsonb) as l(
             account_id int8, delivery_id int8, transaction_id int8, event_type text, url text, message_id text, attempt int4,
             status_code int4, success bool, duration_ms int4, error text, created_at timestamptz, signed_at timestamptz)`).execute(db);
}

/** What the operator's metrics read of deliveries: those to make, the age of the oldest due one, the open breakers. */
export async function queueState(db: Db, now: Date): Promise<{ pending: number; oldestDueSeconds: number; openBreakers: number }> {
  const result = await sql<{ pending: string; oldest_due: Date | null; open_breakers: string }>`
    select (select count(*) from webhook_deliveries where status = 'PENDING') as pending,
           (select min(next_attempt_at) from webhook_deliveries where status = 'PENDING' and next_attempt_at <= ${now}::timestamptz) as oldest_due,
           (select count(*) from webhook_destinations where open_until > ${now}::timestamptz) as open_breakers`.execute(db);
  const row = result.rows[0]!;
  return {
    pending: Number(row.pending),
    oldestDueSeconds: row.oldest_due === null ? 0 : Math.max(0, (now.getTime() - row.oldest_due.getTime()) / 1000),
    openBreakers: Number(row.open_breakers),
  };
}
