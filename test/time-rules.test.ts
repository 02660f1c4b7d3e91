import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';

/**
 * Business time has one source: the service's clock (src/lib/clock.ts), which the sandbox's test
 * clock moves. No other code of the service reads the time of the machine or of the database:
 * neither `Date.now()` nor `new Date()` in TypeScript, nor `now()` in SQL. Intervals and pacing
 * use the monotonic `performance.now()`; real time (tokens, certificates, limits) is read through
 * the real clock that is injected beside the business one.
 */
const ROOT = new URL('..', import.meta.url).pathname;
const SRC = join(ROOT, 'src');

/** Where the machine's time may be read, and why. */
const ALLOWED: Record<string, string> = {
  'src/lib/clock.ts': 'the clock itself',
  'src/db/migrate.ts': 'when a migration was applied: bookkeeping of the schema, not business time',
  'src/db/function-files.ts': 'when a function file was applied: bookkeeping of the schema, not business time',
};

/** Columns that record real time (when a key, a certificate or the schema itself came to be), not business events. */
const REAL_TIME_COLUMNS = new Set([
  'accounts.created_at',
  'account_certificates.created_at',
  'signing_keys.created_at',
  'payload_signing_authority.created_at',
  'payload_signing_keys.created_at',
  'dict_keys.created_at',
  'ledger_accounts.created_at',
  'database_identity.created_at',
  'demo_account.created_at',
  'schema_migrations.applied_at',
  'schema_functions.applied_at',
]);

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

const READS_TIME = [
  { name: 'Date.now()', pattern: /\bDate\.now\(\)/ },
  { name: 'new Date()', pattern: /\bnew Date\(\s*\)/ },
  { name: 'SQL now()', pattern: /(?<![.\w])now\(\)/i },
  { name: 'SQL current_timestamp', pattern: /\b(current_timestamp|localtimestamp|clock_timestamp|statement_timestamp|transaction_timestamp)\b/i },
];

describe('business time has one source', () => {
  it('no code of the service reads the time of the machine or the database outside the clock', () => {
    const found: string[] = [];
    for (const path of files(SRC)) {
      const name = relative(ROOT, path);
      if (!/\.(ts|sql)$/.test(name) || name.endsWith('.test.ts') || name.startsWith('src/db/migrations/') || ALLOWED[name]) continue;
      readFileSync(path, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          // Comments may speak of the clock.
          const code = line.replace(/\/\/.*$|--.*$|^\s*\*.*$/, '');
          for (const { name: what, pattern } of READS_TIME) if (pattern.test(code)) found.push(`${name}:${i + 1}: ${what}: ${line.trim()}`);
        });
    }
    assert.deepEqual(found, []);
  });

  it('no column of a business record takes its time from the database (a DEFAULT now()): every insert names it', () => {
    const snapshot = JSON.parse(readFileSync(join(SRC, 'db/schema.snapshot.json'), 'utf8')) as { columns: string[] };
    const defaulted = snapshot.columns.filter((c) => /default now\(\)/.test(c)).map((c) => c.split(' ')[0]!);
    assert.deepEqual(defaulted.filter((c) => !REAL_TIME_COLUMNS.has(c)), []);
    // The allowance is no wider than what is there.
    assert.deepEqual([...REAL_TIME_COLUMNS].filter((c) => !defaulted.includes(c)), []);
  });
});
