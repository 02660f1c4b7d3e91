import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, type Transaction } from 'kysely';
import pg from 'pg';
import { parsePostgresUrl, postgresTarget } from './connection.ts';
import { awaitFailover, currentServer, multiHostClient } from './multi-host.ts';
import { NodePostgresDialect } from './node-postgres-dialect.ts';
import { PGliteDialect } from './pglite-dialect.ts';
import { timestamptzParser } from './timestamptz.ts';
import type { DB } from './schema.ts';

export type Db = Kysely<DB>;
export type Trx = Transaction<DB>;
export type DbExecutor = Db | Trx;

export interface Database {
  readonly db: Db;
  /**
   * Where account lists run (http/list-queries.ts): on PostgreSQL a pool of its own whose
   * statements are cut off at a time limit, so lists can neither take the connections of the
   * other requests nor run without end; on PGlite, one session, the same as `db`.
   */
  readonly lists: Db;
  readonly kind: 'pglite' | 'postgres';
  /** The API pool's connections now (on PGlite, its one session): for metrics and health. */
  stats(): PoolStats;
  /**
   * `host:port` of the server the connections are on: for a multi-host URL the read-write server
   * last found (it changes with a failover); for one host, that host; undefined on PGlite, and on
   * a multi-host URL before the first connection.
   */
  server(): string | undefined;
  /** The embedded database's files as one tar (PGlite's dumpDataDir): what `template` takes. Absent on PostgreSQL. */
  dump?: () => Promise<Blob>;
  close(): Promise<void>;
}

export interface PoolStats {
  /** Connections open, in use or idle. */
  readonly total: number;
  readonly idle: number;
  /** Callers waiting for a connection. */
  readonly waiting: number;
}

const INT8_OID = 20;
const NUMERIC_OID = 1700;
/** A calendar date stays its YYYY-MM-DD text: a Date would place it at a time zone's midnight. */
const DATE_OID = 1082;
const TIMESTAMPTZ_OID = 1184;

/**
 * The same type parsing on both drivers: int8 becomes bigint (money and ids never pass through
 * a float), numeric stays a decimal string, timestamptz becomes a Date.
 */
const parseInt8 = (value: string): bigint => BigInt(value);
const parseTimestamptz = timestamptzParser(pg.types.getTypeParser(TIMESTAMPTZ_OID, 'text'));
const keepString = (value: string): string => value;

export interface OpenOptions {
  /** PostgreSQL connection string; absent means embedded PGlite. */
  url?: string | undefined;
  /** Directory of the embedded database; absent (with no url) means in memory. */
  dataDir?: string | undefined;
  /** An in-memory embedded database starts as this dump of one (PGlite's dumpDataDir), not empty: tests start from a migrated one. */
  template?: Blob | undefined;
  poolSize?: number;
  /**
   * PostgreSQL: how long a caller may wait for a connection (all in use, or a new one being
   * opened) before its query fails with a 503-mapped error; absent, it waits as long as it
   * takes. Under a sustained overload the wait, not the work, is what grows: this bounds it.
   * Why, and what was measured: docs/decisions/0020-limits-on-the-database-wait.md.
   */
  queueTimeoutMs?: number | undefined;
  /** PostgreSQL application_name, to tell the pools apart in pg_stat_activity. */
  applicationName?: string;
  /** PostgreSQL: the pool of the account lists (`Database.lists`); absent, lists share `db` (tools, the worker). */
  lists?: ListPoolOptions | undefined;
}

export interface ListPoolOptions {
  poolSize: number;
  /** Every statement on these connections is cancelled after this long (SQLSTATE 57014). */
  statementTimeoutMs: number;
}

export async function openDatabase(options: OpenOptions): Promise<Database> {
  if (!options.url) return openPGlite(options.dataDir, options.template);
  const name = options.applicationName ?? 'pix-api';
  const url = options.url;
  // A process started while its multi-host database fails over waits for the new primary.
  await awaitFailover(url);
  const { db, pool } = postgresPool({ url, poolSize: options.poolSize ?? 10, queueTimeoutMs: options.queueTimeoutMs, applicationName: name });
  const stats = () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount });
  const first = postgresTarget(url);
  const server = () => (parsePostgresUrl(url).multiHost ? currentServer(url) : `${first.host}:${first.port}`);
  const list = options.lists;
  if (!list) return { db, lists: db, kind: 'postgres', stats, server, close: () => db.destroy() };
  // A list is one statement on one core: the time limit bounds it, and no parallel workers take
  // more cores for it than its connection has. Every list names the account and has an index that
  // starts with it: without sequential scans, none reads other accounts' rows, even for an account
  // that holds most of a table (where the planner would otherwise scan it whole to count).
  const { db: lists } = postgresPool({
    url,
    poolSize: list.poolSize,
    queueTimeoutMs: options.queueTimeoutMs,
    applicationName: `${name}-lists`,
    settings: `-c statement_timeout=${list.statementTimeoutMs} -c max_parallel_workers_per_gather=0 -c enable_seqscan=off`,
  });
  return {
    db,
    lists,
    kind: 'postgres',
    stats,
    server,
    close: async () => {
      await Promise.all([db.destroy(), lists.destroy()]);
    },
  };
}

interface PoolOptions {
  url: string;
  poolSize: number;
  queueTimeoutMs: number | undefined;
  applicationName: string;
  /** Session settings sent when each connection starts (libpq's `options`). */
  settings?: string;
}

function postgresPool({ url, poolSize, queueTimeoutMs, applicationName, settings }: PoolOptions): { db: Db; pool: pg.Pool } {
  // A multi-host URL: each new connection goes host by host and keeps a read-write one
  // (db/multi-host.ts); keepalives find a server gone without a word. One host: node-postgres's own.
  const where = parsePostgresUrl(url).multiHost ? { Client: multiHostClient(url), keepAlive: true } : { connectionString: url };
  const pool = new pg.Pool({
    ...where,
    max: poolSize,
    ...(queueTimeoutMs ? { connectionTimeoutMillis: queueTimeoutMs } : {}),
    ...(settings ? { options: settings } : {}),
    application_name: applicationName,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
        if (oid === INT8_OID) return parseInt8;
        if (oid === NUMERIC_OID || oid === DATE_OID) return keepString;
        if (oid === TIMESTAMPTZ_OID && format !== 'binary') return parseTimestamptz;
        return format === 'binary' ? pg.types.getTypeParser(oid, 'binary') : pg.types.getTypeParser(oid, 'text');
      }) as typeof pg.types.getTypeParser,
    },
  });
  // A client losing its server (restart, failover) must not crash the process: an idle one
  // errs on the pool, a checked-out one on itself (its query fails, and the pool drops it).
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
  });
  return { db: new Kysely<DB>({ dialect: new NodePostgresDialect(pool) }), pool };
}

async function openPGlite(dataDir: string | undefined, template?: Blob): Promise<Database> {
  let path: string | undefined;
  let unlock = () => undefined as void;
  if (dataDir) {
    path = join(dataDir, 'pgdata');
    try {
      mkdirSync(path, { recursive: true });
    } catch (error) {
      throw new EmbeddedDatabaseUnusable(`DATA_DIR ${dataDir} cannot hold the embedded database (${(error as Error).message}): set DATA_DIR to a writable directory`, { cause: error });
    }
    unlock = lockDataDir(dataDir);
  }
  let pglite: PGlite | undefined;
  try {
    pglite = new PGlite({
      ...(path ? { dataDir: path } : template ? { loadDataDir: template } : {}),
      parsers: { [INT8_OID]: parseInt8, [NUMERIC_OID]: keepString, [DATE_OID]: keepString },
    });
    await pglite.waitReady;
  } catch (error) {
    // What it took is given back: the next start must not find the directory locked.
    await pglite?.close().catch(() => undefined);
    unlock();
    throw new EmbeddedDatabaseUnusable(
      `the embedded database in ${path} cannot be opened (${(error as Error).message}): move that directory away to start afresh, or set DATA_DIR to another directory`,
      { cause: error },
    );
  }
  const db = new Kysely<DB>({ dialect: new PGliteDialect(pglite) });
  return {
    db,
    lists: db,
    kind: 'pglite',
    stats: () => ({ total: 1, idle: 0, waiting: 0 }),
    server: () => undefined,
    dump: () => pglite.dumpDataDir('none') as Promise<Blob>,
    close: async () => {
      await db.destroy();
      unlock();
    },
  };
}

export class DatabaseInUse extends Error {
  override name = 'DatabaseInUse';
}

export class EmbeddedDatabaseUnusable extends Error {
  override name = 'EmbeddedDatabaseUnusable';
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * PGlite is one process's database: a second process opening the same directory would corrupt
 * it. A lock file with the owner's pid keeps a second one out (a stale lock is taken over).
 */
function lockDataDir(dataDir: string): () => void {
  const file = join(dataDir, 'pgdata.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      return () => rmSync(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number(readFileSync(file, 'utf8'));
      if (owner && owner !== process.pid && processAlive(owner)) {
        throw new DatabaseInUse(
          `the embedded database in ${dataDir} is in use by process ${owner}: stop that process, use the operator API (/admin/*) of the running service, or set DATA_DIR to another directory`,
        );
      }
      rmSync(file, { force: true });
    }
  }
  throw new DatabaseInUse(`could not lock the embedded database in ${dataDir}`);
}
