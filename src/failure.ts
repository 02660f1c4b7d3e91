import { UsageError } from './cli.ts';
import { ConfigError } from './config.ts';
import { DatabaseInUse, EmbeddedDatabaseUnusable } from './db/client.ts';
import { FunctionFileFailed } from './db/function-files.ts';
import { MigrationFailed, UnknownMigrations } from './db/migrate.ts';
import { AppError } from './http/errors.ts';
import { StartFailure } from './lifecycle.ts';

/** Errors whose message already says what to do, in one line. */
const SELF_EXPLAINED = [StartFailure, DatabaseInUse, EmbeddedDatabaseUnusable, MigrationFailed, FunctionFileFailed, UnknownMigrations];

/**
 * What a failed command prints on stderr: one line that says what to do, never a stack trace
 * (LOG_LEVEL=debug adds it, for a failure nobody foresaw).
 */
export function failureLine(error: unknown, usage: string): string {
  if (error instanceof ConfigError) return `Invalid configuration: ${error.message}`;
  if (SELF_EXPLAINED.some((kind) => error instanceof kind)) return oneLine((error as Error).message);
  // Usage errors carry the usage text on purpose: the person typed the command just now.
  if (error instanceof UsageError) return error.message;
  if (error instanceof AppError) return `Error ${error.statusCode}: ${oneLine(error.message)}`;
  if ((error as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `${(error as Error).message}\n${usage}`;
  const message = error instanceof Error ? error.message : String(error);
  if (process.env.LOG_LEVEL === 'debug' && error instanceof Error && error.stack) return error.stack;
  return `${oneLine(message)} (LOG_LEVEL=debug prints the stack trace)`;
}

/** A message from a library may span lines; the failure is one. */
const oneLine = (text: string) => text.replace(/\s*[\r\n]+\s*/g, ' ').trim();

/**
 * After a failure everything taken was released, so the process ends by itself. Should anything
 * still hold it open, it is said (a second line, which the tests look for) and the process ends.
 */
export function exitIfStillRunning(afterMs = 5_000): void {
  setTimeout(() => {
    process.stderr.write(`still running ${afterMs} ms after the failure (something was not released): exiting\n`);
    process.exit(1);
  }, afterMs).unref();
}
