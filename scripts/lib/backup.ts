// Backups of the cluster's primary (npm run cluster): a base backup with pg_basebackup, the WAL
// that every node archives into the cluster's archive/ (postgresql-pix.conf), and a restore of
// both into a new data directory, started on a port of its own. scripts/backup-restore.ts runs
// them from the command line; test/cluster.test.ts restores one and reads the writes made after it.
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PG_BIN, type PgCluster } from './cluster.ts';
import { query } from './pg.ts';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const isRoot = () => process.getuid?.() === 0;

/** A command as the postgres user when run by root (the files stay that user's). */
async function asPostgres(command: string, args: string[]): Promise<string> {
  const [file, argv] = isRoot() ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  try {
    return (await run(file, argv, { encoding: 'utf8' })).stdout;
  } catch (error) {
    const e = error as { stderr?: string; message: string };
    throw new Error(`${command.split('/').at(-1)} ${args[0]} failed: ${(e.stderr || e.message).trim().split('\n').slice(-3).join(' ')}`, { cause: error });
  }
}

/**
 * A base backup of the primary into `dir` (by default backups/<time>/ in the cluster's folder),
 * taken at once (a fast checkpoint) with the WAL it needs streamed in: it restores alone, and with
 * the archive up to any later moment. Resolves with its directory.
 */
export async function baseBackup(cluster: PgCluster, dir = join(cluster.dir, 'backups', new Date().toISOString().replace(/[:.]/g, '-'))): Promise<string> {
  const primary = await cluster.primary();
  await asPostgres(`${PG_BIN}/pg_basebackup`, ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', dir, '-X', 'stream', '-c', 'fast']);
  return dir;
}

/**
 * Ends the primary's current WAL segment and resolves once the archive has it: every write
 * committed before the call can then be restored from the archive.
 */
export async function archiveNow(cluster: PgCluster, timeoutMs = 30_000): Promise<string> {
  const url = cluster.nodeUrl(await cluster.primary(), 'postgres');
  const [{ segment }] = (await query<{ segment: string }>(url, 'select pg_walfile_name(pg_switch_wal()) as segment')) as [{ segment: string }];
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (existsSync(join(cluster.archive, segment))) return segment;
    await sleep(100);
  }
  throw new Error(`WAL segment ${segment} was not archived within ${timeoutMs} ms`);
}

export interface Restored {
  pgdata: string;
  port: number;
  /** A URL of the restored server (its database `pix`). */
  url: string;
}

/**
 * Restores `backup` into `pgdata` (which must not exist) and starts it on `port`, replaying the
 * archived WAL to its end (or to `targetTime`), then promoted: a server of its own, which neither
 * archives nor waits for a standby. Resolves once it takes writes.
 */
export async function restore(cluster: PgCluster, options: { backup: string; pgdata: string; port: number; targetTime?: string }): Promise<Restored> {
  const { backup, pgdata, port, targetTime } = options;
  if (existsSync(pgdata)) throw new Error(`${pgdata} exists: restore into a new directory`);
  mkdirSync(pgdata, { recursive: true, mode: 0o700 });
  cpSync(backup, pgdata, { recursive: true });
  // What made the backed-up node a standby of another, if it was one, is not the restored server's.
  for (const file of ['standby.signal', 'postmaster.pid', 'postgresql-auto-failover-standby.conf']) rmSync(join(pgdata, file), { force: true });
  writeFileSync(join(pgdata, 'postgresql-auto-failover-standby.conf'), '');
  writeFileSync(join(pgdata, 'recovery.signal'), '');
  writeFileSync(
    join(pgdata, 'postgresql.auto.conf'),
    [
      `restore_command = 'cp ${cluster.archive}/%f %p'`,
      "recovery_target_timeline = 'latest'",
      ...(targetTime ? [`recovery_target_time = '${targetTime}'`] : []),
      "recovery_target_action = 'promote'",
      `port = ${port}`,
      "listen_addresses = '127.0.0.1'",
      "archive_mode = 'off'",
      "synchronous_standby_names = ''",
      "default_transaction_read_only = 'off'",
      "primary_conninfo = ''",
      "logging_collector = 'off'",
      '',
    ].join('\n'),
  );
  if (isRoot()) await run('chown', ['-R', 'postgres:postgres', pgdata]);
  try {
    await asPostgres(`${PG_BIN}/pg_ctl`, ['start', '-w', '-t', '120', '-D', pgdata, '-l', `${pgdata}.log`]);
  } catch (error) {
    // The server's own log says why it did not start: its last lines go with the error.
    const log = existsSync(`${pgdata}.log`) ? readFileSync(`${pgdata}.log`, 'utf8').trim().split('\n').slice(-5).join(' | ') : 'no log';
    throw new Error(`${(error as Error).message}; its log: ${log}`, { cause: error });
  }
  const url = `postgres://postgres@127.0.0.1:${port}/pix`;
  const deadline = performance.now() + 120_000;
  for (;;) {
    const [state] = await query<{ recovering: boolean }>(url, 'select pg_is_in_recovery() as recovering').catch(() => [{ recovering: true }]);
    if (!state!.recovering) return { pgdata, port, url };
    if (performance.now() > deadline) throw new Error(`the restored server on ${port} is still recovering after 120 s`);
    await sleep(100);
  }
}

/** Stops a restored server and deletes its directory. */
export async function dropRestored(restored: { pgdata: string }): Promise<void> {
  if (existsSync(join(restored.pgdata, 'postmaster.pid'))) await asPostgres(`${PG_BIN}/pg_ctl`, ['stop', '-w', '-m', 'immediate', '-D', restored.pgdata]).catch(() => undefined);
  rmSync(restored.pgdata, { recursive: true, force: true });
  rmSync(`${restored.pgdata}.log`, { force: true });
}
