import { readdirSync, readFileSync } from 'node:fs';
import { sql } from 'kysely';
import type { Db } from './client.ts';
import { applyFunctionFiles, CREATE_SCHEMA_FUNCTIONS, loadFunctionFiles, recordedFunctionHashes } from './function-files.ts';

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);
/** Arbitrary constant: the advisory lock that makes concurrent starts apply migrations once. */
const MIGRATION_LOCK = 72_620_001;

/** A migration as its file is named: `0001_baseline`. */
const label = (m: { version: number; name: string }) => `${String(m.version).padStart(4, '0')}_${m.name}`;

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
      `migration ${label(migration)} failed (${(cause as Error).message}); ` +
        `the database stays at migration ${appliedVersion}: fix the cause, then start again or run npm run migrate`,
      { cause },
    );
    this.migration = migration;
    this.appliedVersion = appliedVersion;
  }
}

/**
 * The database records migrations this version does not have: it was made by another set of
 * migrations (the one before the baseline, or a later version's), and cannot be brought to this
 * one. Nothing was changed.
 */
export class UnknownMigrations extends Error {
  override name = 'UnknownMigrations';
  /** What the database records, as `0002_pix_functions`. */
  readonly recorded: string[];
  /** The same, shortened for a line: the first three and the count. */
  readonly shown: string;
  constructor(recorded: string[]) {
    const shown = recorded.length > 3 ? `${recorded.slice(0, 3).join(', ')}, ... ${recorded.length} in all` : recorded.join(', ');
    super(`the database was made by migrations this version does not have (${shown}) and cannot be brought up to date: use a new database`);
    this.recorded = recorded;
    this.shown = shown;
  }
}

export const LATEST_MIGRATION = Math.max(0, ...loadMigrations().map((m) => m.version));

export interface MigrateOptions {
  /**
   * Runs on the migrating connection, under the lock, before the first pending versioned
   * migration (not when none is pending): the caller's way to clear what would hold up an
   * ALTER TABLE, such as another process's table maintenance.
   */
  beforeSchemaChange?: (conn: Db) => Promise<unknown>;
}

/** What one run applied: versioned migrations by version, function files by name. */
export interface Migrated {
  migrations: number[];
  functions: string[];
}

/**
 * Applies pending migrations, each in its own transaction, then the function files that changed
 * (docs/decisions/0028-function-files.md); safe to run from several processes at once. A
 * database that records migrations this version does not have is refused (UnknownMigrations).
 */
export async function migrate(db: Db, options: MigrateOptions = {}): Promise<Migrated> {
  return db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK})`.execute(conn);
    let result: Migrated;
    try {
      result = await migrateLocked(conn, options);
    } catch (error) {
      // Best effort: the lock goes with the session anyway, and the error worth reporting is this one.
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK})`.execute(conn).catch(() => undefined);
      throw error;
    }
    await sql`select pg_advisory_unlock(${MIGRATION_LOCK})`.execute(conn);
    return result;
  });
}

async function migrateLocked(conn: Db, options: MigrateOptions): Promise<Migrated> {
  const migrations = loadMigrations();
  await sql
    .raw(
      `create table if not exists schema_migrations (
         version integer primary key, name text not null, applied_at timestamptz not null default now())`,
    )
    .execute(conn);
  const rows = await conn.selectFrom('schema_migrations').select(['version', 'name']).execute();
  const unknown = rows.filter((r) => !migrations.some((m) => m.version === r.version && m.name === r.name));
  if (unknown.length > 0) throw new UnknownMigrations(unknown.sort((a, b) => a.version - b.version).map(label));
  await sql.raw(CREATE_SCHEMA_FUNCTIONS).execute(conn);

  const applied = new Set(rows.map((r) => r.version));
  const pending = migrations.filter((m) => !applied.has(m.version));
  if (pending.length > 0) await options.beforeSchemaChange?.(conn);
  const done: number[] = [];
  for (const m of pending) {
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

  // After a versioned migration every file is applied again: the migration may have dropped what
  // a file made (a function whose signature changes, a table a trigger is on).
  const files = loadFunctionFiles();
  const recorded = await recordedFunctionHashes(conn);
  const due = done.length > 0 ? files : files.filter((f) => recorded.get(f.name) !== f.hash);
  return { migrations: done, functions: await applyFunctionFiles(conn, due) };
}

/**
 * The known migrations not applied yet, by version. Not "the highest applied is below the
 * latest": migrations written on separate branches are numbered apart, so a database may hold a
 * later one and miss an earlier one.
 */
export async function pendingMigrations(db: Db): Promise<number[]> {
  const exists = await sql<{ name: string | null }>`select to_regclass('schema_migrations')::text as name`.execute(db);
  const rows = exists.rows[0]?.name ? await db.selectFrom('schema_migrations').select(['version', 'name']).execute() : [];
  const applied = new Set(rows.map(label));
  return loadMigrations()
    .filter((m) => !applied.has(label(m)))
    .map((m) => m.version);
}

/** The highest applied migration, or 0 when the schema does not exist yet. */
export async function appliedVersion(db: Db): Promise<number> {
  const exists = await sql<{ name: string | null }>`select to_regclass('schema_migrations')::text as name`.execute(db);
  if (!exists.rows[0]?.name) return 0;
  const result = await sql<{ version: number | null }>`select max(version) as version from schema_migrations`.execute(db);
  return result.rows[0]?.version ?? 0;
}

/** The identity the baseline migration gave this database: written once, it tells databases apart. */
export async function databaseIdentity(db: Db): Promise<{ id: string; createdAt: Date }> {
  const row = await db.selectFrom('database_identity').select(['id', 'created_at']).executeTakeFirstOrThrow();
  return { id: row.id, createdAt: row.created_at };
}
