import { readdirSync, readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { cancelTableMaintenance } from '../worker/maintenance.ts';
import type { Db } from './client.ts';

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);
/** Arbitrary constant: the advisory lock that makes concurrent starts apply migrations once. */
const MIGRATION_LOCK = 72_620_001;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function loadMigrations(): Migration[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((file) => /^\d{4}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 4)),
      name: file.slice(5, -4),
      sql: readFileSync(new URL(file, MIGRATIONS_DIR), 'utf8'),
    }));
}

/** A migration that failed: applied in one transaction, it left the database as it was. */
export class MigrationFailed extends Error {
  override name = 'MigrationFailed';
  readonly migration: Migration;
  /** The highest migration applied before it. */
  readonly appliedVersion: number;
  constructor(migration: Migration, appliedVersion: number, cause: unknown) {
    super(
      `migration ${String(migration.version).padStart(4, '0')}_${migration.name} failed (${(cause as Error).message}); ` +
        `the database stays at migration ${appliedVersion}: fix the cause, then start again or run npm run migrate`,
      { cause },
    );
    this.migration = migration;
    this.appliedVersion = appliedVersion;
  }
}

export const LATEST_MIGRATION = Math.max(0, ...loadMigrations().map((m) => m.version));

/** Applies pending migrations, each in its own transaction; safe to run from several processes. */
export async function migrate(db: Db): Promise<number[]> {
  const migrations = loadMigrations();
  return db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK})`.execute(conn);
    const done: number[] = [];
    try {
      await sql
        .raw(
          `create table if not exists schema_migrations (
             version integer primary key, name text not null, applied_at timestamptz not null default now())`,
        )
        .execute(conn);
      const rows = await conn.selectFrom('schema_migrations').select('version').execute();
      const applied = new Set(rows.map((r) => r.version));
      if (migrations.some((m) => !applied.has(m.version))) await cancelTableMaintenance(conn);
      for (const m of migrations) {
        if (applied.has(m.version)) continue;
        const record = `insert into schema_migrations (version, name) values (${m.version}, '${m.name}')`;
        try {
          await sql.raw(`begin;\n${m.sql}\n;\n${record};\ncommit;`).execute(conn);
        } catch (error) {
          // A lost connection fails the rollback too: the error worth reporting is the first.
          await sql.raw('rollback').execute(conn).catch(() => undefined);
          throw new MigrationFailed(m, Math.max(0, ...applied, ...done), error);
        }
        done.push(m.version);
      }
    } catch (error) {
      // Best effort: the lock goes with the session anyway, and the error worth reporting is this one.
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK})`.execute(conn).catch(() => undefined);
      throw error;
    }
    await sql`select pg_advisory_unlock(${MIGRATION_LOCK})`.execute(conn);
    return done;
  });
}

/**
 * The known migrations not applied yet, by version. Not "the highest applied is below the
 * latest": migrations written on separate branches are numbered apart, so a database may hold a
 * later one and miss an earlier one.
 */
export async function pendingMigrations(db: Db): Promise<number[]> {
  const exists = await sql<{ name: string | null }>`select to_regclass('schema_migrations')::text as name`.execute(db);
  const applied = exists.rows[0]?.name ? new Set((await db.selectFrom('schema_migrations').select('version').execute()).map((r) => r.version)) : new Set<number>();
  return loadMigrations()
    .map((m) => m.version)
    .filter((version) => !applied.has(version));
}

/** The highest applied migration, or 0 when the schema does not exist yet. */
export async function appliedVersion(db: Db): Promise<number> {
  const exists = await sql<{ name: string | null }>`select to_regclass('schema_migrations')::text as name`.execute(db);
  if (!exists.rows[0]?.name) return 0;
  const result = await sql<{ version: number | null }>`select max(version) as version from schema_migrations`.execute(db);
  return result.rows[0]?.version ?? 0;
}

/** The identity migration 0015 gave this database: written once, it tells databases apart. */
export async function databaseIdentity(db: Db): Promise<{ id: string; createdAt: Date }> {
  const row = await db.selectFrom('database_identity').select(['id', 'created_at']).executeTakeFirstOrThrow();
  return { id: row.id, createdAt: row.created_at };
}
