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

export const LATEST_MIGRATION = Math.max(0, ...loadMigrations().map((m) => m.version));

/** Applies pending migrations, each in its own transaction; safe to run from several processes. */
export async function migrate(db: Db): Promise<number[]> {
  const migrations = loadMigrations();
  return db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK})`.execute(conn);
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
      const done: number[] = [];
      for (const m of migrations) {
        if (applied.has(m.version)) continue;
        const record = `insert into schema_migrations (version, name) values (${m.version}, '${m.name}')`;
        try {
          await sql.raw(`begin;\n${m.sql}\n;\n${record};\ncommit;`).execute(conn);
        } catch (error) {
          await sql.raw('rollback').execute(conn);
          throw new Error(`migration ${m.version}_${m.name} failed: ${(error as Error).message}`, { cause: error });
        }
        done.push(m.version);
      }
      return done;
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK})`.execute(conn);
    }
  });
}

/** The highest applied migration, or 0 when the schema does not exist yet. */
export async function appliedVersion(db: Db): Promise<number> {
  const exists = await sql<{ name: string | null }>`select to_regclass('schema_migrations')::text as name`.execute(db);
  if (!exists.rows[0]?.name) return 0;
  const result = await sql<{ version: number | null }>`select max(version) as version from schema_migrations`.execute(db);
  return result.rows[0]?.version ?? 0;
}
