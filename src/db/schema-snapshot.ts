import { sql } from 'kysely';
import type { Db } from './client.ts';

export interface SchemaSnapshot {
  columns: string[];
  constraints: string[];
  indexes: string[];
  functions: FunctionSnapshot[];
}

export interface FunctionSnapshot {
  name: string;
  arguments: string;
  result: string;
  /** pg_get_functiondef, by line, without trailing blanks: attributes and body as the database holds them. */
  definition: string[];
}

/**
 * A comparable description of the public schema: columns with types, nullability and
 * defaults; constraints and indexes by definition; functions with their definitions. The same
 * migrations and function files must give the same snapshot on PGlite and PostgreSQL.
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
  const functions = await sql<{ name: string; arguments: string; result: string; definition: string }>`
    select p.proname as name, pg_get_function_identity_arguments(p.oid) as arguments,
           pg_get_function_result(p.oid) as result, pg_get_functiondef(p.oid) as definition
      from pg_proc p
     where p.pronamespace = 'public'::regnamespace
     order by 1, 2`.execute(db);
  return {
    columns: columns.rows.map((r) => r.line),
    constraints: constraints.rows.map((r) => r.line),
    indexes: indexes.rows.map((r) => r.line),
    functions: functions.rows.map((r) => ({
      name: r.name,
      arguments: r.arguments,
      result: r.result,
      definition: r.definition.trimEnd().split('\n').map((line) => line.trimEnd()),
    })),
  };
}
