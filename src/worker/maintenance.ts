import { sql } from 'kysely';
import type { Database, Db } from '../db/client.ts';

/**
 * What PostgreSQL's autovacuum does, for a database where it does not run: a server started with
 * `autovacuum = off` (this machine's CI configuration is one) and PGlite, which runs PostgreSQL
 * in single-user mode, where no autovacuum launcher exists. Without it nothing refreshes the
 * planner's statistics, and the hot path degrades: a ledger_accounts analysed when it held one
 * row is planned as a one-page table, so every `UPDATE ... WHERE id = $1` on the grown table
 * became a sequential scan of all its rows, several per transfer. Nor does anything reclaim the dead rows of the tables the
 * service churns (the settlement queue gets a row and loses it with every transfer).
 *
 * The rules are autovacuum's own, read from the server's settings: a table is vacuumed when its
 * dead rows pass `autovacuum_vacuum_threshold + autovacuum_vacuum_scale_factor × rows` (or its
 * rows inserted since the last vacuum pass the insert threshold), and analysed when the rows
 * changed since its last analysis pass `autovacuum_analyze_threshold +
 * autovacuum_analyze_scale_factor × rows`. Where autovacuum runs, this does nothing.
 * Why, and what was measured: docs/decisions/0014-table-maintenance-without-autovacuum.md.
 */

/** An advisory lock key: one maintainer at a time among the processes sharing the database. */
export const MAINTENANCE_LOCK = 7_262_001;

/**
 * Cancels a maintenance round running in another session. Autovacuum gives way to a statement
 * that needs a conflicting lock; a VACUUM run by hand does not, so a migration's ALTER TABLE
 * would wait behind it, and every query on that table behind the ALTER. A process that applies
 * migrations runs this first (main.ts gives it to migrate). (The round fails, is logged, and
 * runs again later.)
 * Why, and what was measured: docs/decisions/0014-table-maintenance-without-autovacuum.md.
 */
export async function cancelTableMaintenance(db: Db): Promise<number> {
  // A bigint advisory key is held as (classid, objid) = (high, low 32 bits), objsubid 1.
  const { rows } = await sql<{ cancelled: boolean }>`
    select pg_cancel_backend(pid) as cancelled from pg_locks
     where locktype = 'advisory' and classid = 0 and objid = ${MAINTENANCE_LOCK} and objsubid = 1
       and granted and pid <> pg_backend_pid()`.execute(db);
  return rows.filter((r) => r.cancelled).length;
}

export interface TableWork {
  table: string;
  vacuum: boolean;
  analyze: boolean;
  /** How long its statement took, ms (set once done). */
  ms?: number;
}

/**
 * The statistics target of this maintenance's ANALYZE (PostgreSQL's default is 100): the sample
 * is 300 × the target rows. What the hot path's plans need is the tables' sizes and the spread of
 * a few keys, which 3,000 rows give as well as 30,000; the larger sample made each round many
 * times longer under load, and the answers stalled while it ran.
 * Why, and what was measured: docs/decisions/0014-table-maintenance-without-autovacuum.md.
 */
export const MAINTENANCE_STATISTICS_TARGET = 10;

interface TableStats {
  relname: string;
  reltuples: number;
  n_dead_tup: string | bigint;
  n_ins_since_vacuum: string | bigint;
  n_mod_since_analyze: string | bigint;
  vacuum_threshold: number;
  vacuum_scale: number;
  insert_threshold: number;
  insert_scale: number;
  analyze_threshold: number;
  analyze_scale: number;
}

/** The tables of the service's schema that autovacuum's rules say are due, and for what. */
export function dueTables(stats: readonly TableStats[]): TableWork[] {
  const work: TableWork[] = [];
  for (const s of stats) {
    const rows = Math.max(0, s.reltuples);
    const vacuum =
      Number(s.n_dead_tup) > s.vacuum_threshold + s.vacuum_scale * rows ||
      (s.insert_threshold >= 0 && Number(s.n_ins_since_vacuum) > s.insert_threshold + s.insert_scale * rows);
    const analyze = Number(s.n_mod_since_analyze) > s.analyze_threshold + s.analyze_scale * rows;
    if (vacuum || analyze) work.push({ table: s.relname, vacuum, analyze });
  }
  return work;
}

/** Whether this database needs the service to do autovacuum's work. */
export async function needsMaintenance(db: Db, kind: Database['kind']): Promise<boolean> {
  if (kind === 'pglite') return true;
  const { rows } = await sql<{ autovacuum: string }>`select current_setting('autovacuum') as autovacuum`.execute(db);
  return rows[0]?.autovacuum !== 'on';
}

/**
 * One round: under an advisory lock (several processes, one maintainer), vacuums and analyses
 * the tables that are due, one statement each, outside any transaction (VACUUM cannot run in
 * one). Returns what was done; an empty list when nothing was due or another process holds the
 * lock.
 */
export async function maintenanceRound(db: Db, kind: Database['kind']): Promise<TableWork[]> {
  return db.connection().execute(async (conn) => {
    const { rows: locked } = await sql<{ ok: boolean }>`select pg_try_advisory_lock(${MAINTENANCE_LOCK}) as ok`.execute(conn);
    if (!locked[0]?.ok) return [];
    let sampled = false;
    try {
      // The counters below are what backends have reported; PGlite's single backend reports
      // its own only when asked to (at the end of the next statement).
      if (kind === 'pglite') await sql`select pg_stat_force_next_flush()`.execute(conn);
      const { rows: stats } = await sql<TableStats>`
        with settings as (
          select current_setting('autovacuum_vacuum_threshold')::float8 as vacuum_threshold,
                 current_setting('autovacuum_vacuum_scale_factor')::float8 as vacuum_scale,
                 current_setting('autovacuum_vacuum_insert_threshold')::float8 as insert_threshold,
                 current_setting('autovacuum_vacuum_insert_scale_factor')::float8 as insert_scale,
                 current_setting('autovacuum_analyze_threshold')::float8 as analyze_threshold,
                 current_setting('autovacuum_analyze_scale_factor')::float8 as analyze_scale)
        select s.relname, c.reltuples, s.n_dead_tup, s.n_ins_since_vacuum, s.n_mod_since_analyze, settings.*
          from pg_stat_user_tables s join pg_class c on c.oid = s.relid cross join settings
         where s.schemaname = current_schema()
         order by s.relname`.execute(conn);
      const work = dueTables(stats);
      sampled = work.some((w) => w.analyze);
      if (sampled) await sql`set default_statistics_target = ${sql.lit(MAINTENANCE_STATISTICS_TARGET)}`.execute(conn);
      for (const w of work) {
        const action = w.vacuum ? (w.analyze ? sql.raw('vacuum (analyze)') : sql.raw('vacuum')) : sql.raw('analyze');
        const started = performance.now();
        await sql`${action} ${sql.id(w.table)}`.execute(conn);
        w.ms = Math.round(performance.now() - started);
      }
      return work;
    } finally {
      // The connection goes back to the pool (on PGlite it is the only one): as it came.
      if (sampled) await sql`reset default_statistics_target`.execute(conn);
      await sql`select pg_advisory_unlock(${MAINTENANCE_LOCK})`.execute(conn);
    }
  });
}
