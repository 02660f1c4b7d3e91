import { sql } from 'kysely';
import type { Db, DbExecutor, Trx } from '../../db/client.ts';
import type { FaultEffect, FaultKind, FaultStage } from '../../db/schema.ts';

/** The one row every process polls: the test clock's offset and the faults' version. */
export function readState(db: DbExecutor) {
  return db.selectFrom('sandbox_state').select(['clock_offset_ms', 'clock_epoch', 'faults_version']).executeTakeFirstOrThrow();
}

/**
 * The console's marker of the clock and the faults: the epoch, the offset and the faults'
 * version together, so that an advance, a reset and every change of the faults change it.
 */
export const changeMarker = (db: DbExecutor) =>
  db.selectFrom('sandbox_state').select(sql<string>`clock_epoch || 'x' || clock_offset_ms || 'x' || faults_version`.as('marker'));

/** The console's markers of the inboxes: a new arrival (the newest id), and an inbox emptied (how many are kept). */
export const inboxMarkers = [
  (db: DbExecutor) => db.selectFrom('sandbox_inbox').select((eb) => eb.fn.max('id').as('marker')),
  (db: DbExecutor) => db.selectFrom('sandbox_inbox').select((eb) => eb.fn.countAll().as('marker')),
] as const;

/** Moves the offset forward by `byMs`; returns the new offset. */
/** The shared clock after a change: its offset, in its epoch. */
export interface ClockReading {
  clock_offset_ms: bigint;
  clock_epoch: bigint;
}

/** Puts the clock back at the real time: offset 0, in a new epoch. */
export function resetClock(db: DbExecutor): Promise<ClockReading> {
  return db
    .updateTable('sandbox_state')
    .set({ clock_offset_ms: 0n, clock_epoch: sql<bigint>`clock_epoch + 1` })
    .returning(['clock_offset_ms', 'clock_epoch'])
    .executeTakeFirstOrThrow();
}

export function advanceClockBy(db: DbExecutor, byMs: bigint): Promise<ClockReading> {
  return db
    .updateTable('sandbox_state')
    .set({ clock_offset_ms: sql<bigint>`clock_offset_ms + ${byMs}` })
    .returning(['clock_offset_ms', 'clock_epoch'])
    .executeTakeFirstOrThrow();
}

/** Moves the offset forward to `offsetMs` unless it is already there or beyond. */
export function advanceClockTo(db: DbExecutor, offsetMs: bigint): Promise<ClockReading> {
  return db
    .updateTable('sandbox_state')
    .set({ clock_offset_ms: sql<bigint>`greatest(clock_offset_ms, ${offsetMs})` })
    .returning(['clock_offset_ms', 'clock_epoch'])
    .executeTakeFirstOrThrow();
}

export interface NewFault {
  kind: FaultKind;
  effect: FaultEffect;
  urlPrefix?: string | undefined;
  pixKey?: string | undefined;
  status?: number | undefined;
  delayMs?: bigint | undefined;
  reason?: string | undefined;
  remaining?: number | undefined;
  stage?: FaultStage | undefined;
  createdAt: Date;
}

const bumpVersion = (db: DbExecutor) =>
  db.updateTable('sandbox_state').set({ faults_version: sql<bigint>`faults_version + 1` }).execute();

/** Sets a fault (a settlement fault replaces the key's earlier one), in one transaction with the version's bump. */
export function insertFault(db: Db, fault: NewFault) {
  return db.transaction().execute(async (trx) => {
    if (fault.kind === 'settlement') await trx.deleteFrom('sandbox_faults').where('kind', '=', 'settlement').where('pix_key', '=', fault.pixKey!).execute();
    if (fault.kind === 'directory') await trx.deleteFrom('sandbox_faults').where('kind', '=', 'directory').execute();
    const row = await trx
      .insertInto('sandbox_faults')
      .values({
        kind: fault.kind,
        effect: fault.effect,
        url_prefix: fault.urlPrefix ?? null,
        pix_key: fault.pixKey ?? null,
        status: fault.status ?? null,
        delay_ms: fault.delayMs ?? null,
        reason: fault.reason ?? null,
        remaining: fault.remaining ?? null,
        stage: fault.stage ?? null,
        created_at: fault.createdAt,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await bumpVersion(trx);
    return row;
  });
}

export function listFaults(db: DbExecutor) {
  return db.selectFrom('sandbox_faults').selectAll().orderBy('id').limit(MAX_FAULTS).execute();
}

export type FaultRow = Awaited<ReturnType<typeof listFaults>>[number];

/** Faults there may be at once: each is read on the paths it touches. */
export const MAX_FAULTS = 100;

export async function countFaults(db: DbExecutor): Promise<number> {
  const row = await db.selectFrom('sandbox_faults').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Clears one fault, or every one; returns how many went. */
export function deleteFaults(db: Db, id?: bigint): Promise<number> {
  return db.transaction().execute(async (trx) => {
    let query = trx.deleteFrom('sandbox_faults');
    if (id !== undefined) query = query.where('id', '=', id);
    const deleted = Number((await query.executeTakeFirst()).numDeletedRows);
    if (deleted > 0) await bumpVersion(trx);
    return deleted;
  });
}

/**
 * Uses up one of a counted fault's deliveries; false when another process used the last one.
 * The fault goes with its last use.
 */
export function useFault(db: Db, id: bigint): Promise<boolean> {
  return db.transaction().execute((trx) => spendFault(trx, id));
}

/** useFault's statements, in the caller's transaction (a Pix Automático step's: undone with it). */
export async function spendFault(trx: Trx, id: bigint): Promise<boolean> {
  const row = await trx
    .updateTable('sandbox_faults')
    .set({ remaining: sql<number>`remaining - 1` })
    .where('id', '=', id)
    .where('remaining', '>', 0)
    .returning('remaining')
    .executeTakeFirst();
  if (!row) return false;
  if (row.remaining === 0) {
    await trx.deleteFrom('sandbox_faults').where('id', '=', id).execute();
    await bumpVersion(trx);
  }
  return true;
}

/**
 * Whether a delivery to `url` of the destination other than `exceptId` is held by a webhook
 * `late` fault now (a `late` fault holds one at a time: the next one releases it), or is
 * `pendingId`, which a worker decided to hold, still under its claim's lease (the hold not
 * recorded yet).
 */
export async function holdsLate(db: DbExecutor, destinationId: bigint, url: string, exceptId: bigint, pendingId?: bigint): Promise<boolean> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('destination_id', '=', destinationId)
    .where('url', '=', url)
    .where((eb) => {
      const held = eb('late_until', 'is not', null);
      return pendingId === undefined ? held : eb.or([held, eb.and([eb('id', '=', pendingId), eb('status', '=', 'PENDING'), eb('leased_until', 'is not', null)])]);
    })
    .where('id', '<>', exceptId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** How much the inboxes keep: arrivals and body bytes per inbox (its oldest go first), and inboxes in all. */
export interface InboxBounds {
  readonly arrivals: number;
  readonly bytes: number;
  readonly names: number;
}

/**
 * Records what arrived at an inbox, then trims: the inbox keeps its newest `arrivals` whose
 * bodies add up to at most `bytes`; and when the arrival opened a new inbox beyond `names`,
 * the inbox written to longest ago is emptied.
 */
export async function recordArrival(
  db: Db,
  arrival: { name: string; path: string; receivedAt: Date; method: string; headers: Record<string, string>; body: string; status: number },
  bounds: InboxBounds,
) {
  const known = await db.selectFrom('sandbox_inbox').select('id').where('name', '=', arrival.name).limit(1).executeTakeFirst();
  const row = await db
    .insertInto('sandbox_inbox')
    .values({
      name: arrival.name,
      path: arrival.path,
      received_at: arrival.receivedAt,
      method: arrival.method,
      headers: JSON.stringify(arrival.headers),
      body: arrival.body,
      status: arrival.status,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await sql`
    delete from sandbox_inbox where id in (
      select id from (
        select id, row_number() over newest as n, sum(octet_length(body)) over newest as bytes
          from sandbox_inbox where name = ${arrival.name}
        window newest as (order by id desc)
      ) kept
      where n > ${bounds.arrivals} or bytes > ${bounds.bytes}
    )`.execute(db);
  if (!known) {
    await sql`
      delete from sandbox_inbox where name in (
        select name from sandbox_inbox group by name order by max(id) desc offset ${bounds.names}
      )`.execute(db);
  }
  return row.id;
}

export function listArrivals(db: DbExecutor, name: string, limit: number) {
  return db.selectFrom('sandbox_inbox').selectAll().where('name', '=', name).orderBy('id', 'desc').limit(limit).execute();
}

export async function clearInbox(db: DbExecutor, name: string): Promise<number> {
  return Number((await db.deleteFrom('sandbox_inbox').where('name', '=', name).executeTakeFirst()).numDeletedRows);
}
