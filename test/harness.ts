import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { buildApp, type AppDeps } from '../src/app.ts';
import { loadConfig, type Config } from '../src/config.ts';
import { openDatabase, type Database, type Db } from '../src/db/client.ts';
import { migrate } from '../src/db/migrate.ts';
import { ManualClock } from '../src/lib/clock.ts';
import { SandboxControls } from '../src/modules/controls/service.ts';

/**
 * Test harness: a fresh database per test file (in-memory PGlite by default; a new database on
 * the PostgreSQL server of TEST_DATABASE_URL when set), migrated, and the app built on it.
 */
export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789';
/** Seals the signing keys of test databases: set, so that no test writes a generated one into ./data. */
export const TEST_KEY_ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64');
export const onPostgres = Boolean(process.env.TEST_DATABASE_URL);

export interface TestDatabase {
  readonly database: Database;
  readonly db: Db;
  /** Connection string of the fresh PostgreSQL database (undefined on PGlite). */
  readonly url: string | undefined;
  drop(): Promise<void>;
}

function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

/**
 * A migrated embedded database, dumped (PGlite's dumpDataDir), that each test's database starts
 * from: making one takes PGlite's initdb, seconds per test file; loading a dump, one. Kept in the
 * system's temporary directory under a name made of what the migrations and function files say
 * and PGlite's version, so that every test process of a run (and the next run) makes it once.
 */
let template: Promise<Blob> | undefined;

function pgliteTemplate(): Promise<Blob> {
  template ??= (async () => {
    const pgliteVersion = (JSON.parse(readFileSync(new URL('../node_modules/@electric-sql/pglite/package.json', import.meta.url), 'utf8')) as { version: string }).version;
    const hash = createHash('sha256').update(pgliteVersion);
    for (const dir of ['migrations', 'functions']) {
      const root = new URL(`../src/db/${dir}/`, import.meta.url);
      for (const name of readdirSync(root).sort()) hash.update(name).update(readFileSync(new URL(name, root)));
    }
    const file = join(tmpdir(), `pix-api-test-database-${hash.digest('hex').slice(0, 16)}.tar`);
    if (existsSync(file)) return new Blob([readFileSync(file)]);
    const database = await openDatabase({});
    await migrate(database.db);
    const dumped = await database.dump!();
    await database.close();
    const fresh = `${file}.${process.pid}`;
    writeFileSync(fresh, Buffer.from(await dumped.arrayBuffer()));
    renameSync(fresh, file);
    return dumped;
  })();
  return template;
}

/** A fresh database, migrated. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) {
    const database = await openDatabase({ template: await pgliteTemplate() });
    // A database of its own, not a copy of the template's.
    await sql`delete from database_identity; insert into database_identity default values`.execute(database.db);
    await migrate(database.db);
    return { database, db: database.db, url: undefined, drop: () => database.close() };
  }
  const name = `pix_test_${Date.now()}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = withDatabase(serverUrl, name);
  // The list connections as the service opens them (their pool and statement time limit).
  const defaults = testConfig();
  const database = await openDatabase({
    url,
    poolSize: 20,
    lists: { poolSize: defaults.databaseListPoolSize, statementTimeoutMs: defaults.databaseListStatementTimeoutMs },
  });
  await migrate(database.db);
  return {
    database,
    db: database.db,
    url,
    drop: async () => {
      await database.close();
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}

export interface TestApp {
  readonly app: FastifyInstance;
  readonly db: Db;
  /** The real clock of the app (tokens, rate limits), and under the test clock's offset its business time. */
  readonly clock: ManualClock;
  /** Sandbox mode: the test clock, faults and inbox (`controls.clock` is business time). */
  readonly controls: SandboxControls | undefined;
  readonly config: Config;
  readonly testDb: TestDatabase;
  /** Log lines written by the app, when built with captureLogs. */
  readonly logs: string[];
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  captureLogs?: boolean;
  clock?: ManualClock;
  secretCheckLimits?: AppDeps['secretCheckLimits'];
  /** The app's metrics registry, for tests that read it beside the app (its own otherwise). */
  metrics?: AppDeps['metrics'];
  /**
   * Wrong admin tokens a minute per address. Many test files send them on purpose, all from
   * 127.0.0.1 on a clock that does not move, to check that every operator route refuses them:
   * by default the limit does not get in their way (its own tests set it).
   */
  adminFailuresPerMinute?: number;
}

export function testConfig(env: Record<string, string> = {}): Config {
  // Production needs the address payers reach: a test's own, or one that is never fetched.
  const publicUrl = env.PIX_MODE === 'production' ? { PUBLIC_URL: 'https://pix.example.com' } : {};
  return loadConfig({ ADMIN_TOKEN: TEST_ADMIN_TOKEN, PIX_MODE: 'sandbox', SETTLEMENT_DELAY_MS: '0', KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY, ...publicUrl, ...env });
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const testDb = await createTestDatabase();
  const clock = options.clock ?? new ManualClock(new Date());
  const config = testConfig(options.env);
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const controls = config.mode === 'sandbox' ? new SandboxControls(testDb.db, clock, { publicUrl: config.publicUrl }) : undefined;
  await controls?.refresh();
  const app = await buildApp({
    config,
    db: testDb.db,
    listDb: testDb.database.lists,
    clock: controls?.clock ?? clock,
    realClock: clock,
    ...(controls ? { controls } : {}),
    logLevel: options.captureLogs ? 'info' : false,
    ...(options.captureLogs ? { logStream } : {}),
    ...(options.secretCheckLimits ? { secretCheckLimits: options.secretCheckLimits } : {}),
    adminFailuresPerMinute: options.adminFailuresPerMinute ?? 1_000_000,
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
  return {
    app,
    db: testDb.db,
    clock,
    controls,
    config,
    testDb,
    logs,
    close: async () => {
      await app.close();
      await testDb.drop();
    },
  };
}

export const adminHeaders = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
