import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { sql } from 'kysely';
import type { Db } from './client.ts';

/**
 * The SQL functions, one file each in functions/ (`<function name>.sql`, a CREATE OR REPLACE
 * FUNCTION of the current body): applied after the versioned migrations, like Flyway's
 * repeatable migrations, whenever a file's text differs from what the database recorded.
 * Why: docs/decisions/0028-function-files.md.
 */
const FUNCTIONS_DIR = new URL('./functions/', import.meta.url);

export interface FunctionFile {
  /** The function's name, which is the file's name. */
  name: string;
  sql: string;
  /** sha256 of the text, hex: what schema_functions records once it is applied. */
  hash: string;
}

let loaded: FunctionFile[] | undefined;

/** The function files in the order they are applied (see applicationOrder); read once. */
export function loadFunctionFiles(): FunctionFile[] {
  loaded ??= readFunctionFiles();
  return loaded;
}

function readFunctionFiles(): FunctionFile[] {
  const files = readdirSync(FUNCTIONS_DIR)
    .filter((file) => file.endsWith('.sql'))
    .map((file) => {
      const name = file.slice(0, -4);
      const text = readFileSync(new URL(file, FUNCTIONS_DIR), 'utf8');
      if (!/^[a-z][a-z0-9_]*$/.test(name)) throw new Error(`function file ${file}: the name must be a function's name (a-z, 0-9, _)`);
      if (!new RegExp(`CREATE OR REPLACE FUNCTION ${name}\\(`, 'i').test(text)) {
        throw new Error(`function file ${file} must hold CREATE OR REPLACE FUNCTION ${name}(...)`);
      }
      return { name, sql: text, hash: createHash('sha256').update(text).digest('hex') };
    });
  return applicationOrder(files);
}

/**
 * Callees first, then by name: a LANGUAGE sql function is checked against the functions it
 * calls when it is created. A call is another file's name followed by `(` outside comments; a
 * cycle (plpgsql only) is broken by name. Why: docs/decisions/0028-function-files.md.
 */
export function applicationOrder<T extends { name: string; sql: string }>(files: readonly T[]): T[] {
  const names = files.map((f) => f.name);
  const calls = new Map(
    files.map((f) => {
      const code = f.sql.replace(/--[^\n]*/g, '');
      return [f.name, new Set(names.filter((other) => other !== f.name && new RegExp(`\\b${other}\\s*\\(`).test(code)))];
    }),
  );
  const remaining = [...files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const ordered: T[] = [];
  while (remaining.length > 0) {
    const done = new Set(ordered.map((f) => f.name));
    const index = remaining.findIndex((f) => [...calls.get(f.name)!].every((callee) => done.has(callee)));
    ordered.push(...remaining.splice(Math.max(index, 0), 1));
  }
  return ordered;
}

/** A function file that failed: applied in one transaction, it left the previous definition in place. */
export class FunctionFileFailed extends Error {
  override name = 'FunctionFileFailed';
  constructor(file: FunctionFile, cause: unknown) {
    super(
      `function file ${file.name}.sql failed (${(cause as Error).message}); the database keeps its previous definition: ` +
        'fix the file, then start again or run npm run migrate',
      { cause },
    );
  }
}

export const CREATE_SCHEMA_FUNCTIONS = `create table if not exists schema_functions (
  name text primary key, hash text not null, applied_at timestamptz not null default now())`;

/**
 * Applies the given files, each in its own transaction with the record of its hash, in the
 * order given. `conn` is the migration lock's connection.
 */
export async function applyFunctionFiles(conn: Db, files: readonly FunctionFile[]): Promise<string[]> {
  const done: string[] = [];
  for (const file of files) {
    const record =
      `insert into schema_functions (name, hash) values ('${file.name}', '${file.hash}') ` +
      'on conflict (name) do update set hash = excluded.hash, applied_at = now()';
    try {
      await sql.raw(`begin;\n${file.sql}\n;\n${record};\ncommit;`).execute(conn);
    } catch (error) {
      // A lost connection fails the rollback too: the error worth reporting is the first.
      await sql.raw('rollback').execute(conn).catch(() => undefined);
      throw new FunctionFileFailed(file, error);
    }
    done.push(file.name);
  }
  return done;
}

/** The recorded hash of each applied function file, by name (none before the first migration). */
export async function recordedFunctionHashes(db: Db): Promise<Map<string, string>> {
  const exists = await sql<{ name: string | null }>`select to_regclass('schema_functions')::text as name`.execute(db);
  if (!exists.rows[0]?.name) return new Map();
  const rows = await db.selectFrom('schema_functions').select(['name', 'hash']).execute();
  return new Map(rows.map((r) => [r.name, r.hash]));
}

/** The function files whose text is not the one the database last applied, by name. */
export async function pendingFunctions(db: Db): Promise<string[]> {
  const recorded = await recordedFunctionHashes(db);
  return loadFunctionFiles()
    .filter((file) => recorded.get(file.name) !== file.hash)
    .map((file) => file.name);
}
