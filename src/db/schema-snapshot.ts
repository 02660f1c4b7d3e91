import { sql } from 'kysely';
import type { Db } from './client.ts';

export interface SchemaSnapshot {
  columns: string[];
  constraints: string[];
  indexes: string[];
}

/**
 * A comparable description of the public schema: columns with types, nullability and
 * defaults; constraints and indexes by definition. The same migrations must give the same
 * snapshot on PGlite and PostgreSQL.
 */
export async function schemaSnapshot(db: Db): Promise<SchemaSnapshot> {
  const columns = await sql<{ line: string }>`
    select table_name || '.' || column_name || ' ' || coalesce(domain_name, data_type)
           || case when is_nullable = 'NO' then ' not null' else '' end
           || coalesce(' default ' || column_default, '')
           || case when is_identity = 'YES' then ' identity ' || identity_generation else '' end as line
      from information_schema.columns
     where table_schema = 'public'
     order by table_name, column_name`.execute(db);
  const constraints = await sql<{ line: string }>`
    select conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid) as line
      from pg_constraint
     where connamespace = 'public'::regnamespace
       -- PostgreSQL 18 (PGlite) also lists NOT NULL as constraints; nullability is in columns.
       and contype <> 'n'
     order by conrelid::regclass::text, conname`.execute(db);
  const indexes = await sql<{ line: string }>`
    select indexdef as line from pg_indexes where schemaname = 'public' order by tablename, indexname`.execute(db);
  return {
    columns: columns.rows.map((r) => r.line),
    constraints: constraints.rows.map((r) => r.line),
    indexes: indexes.rows.map((r) => r.line),
  };
}
