// A replicated PostgreSQL 15 on one machine, kept by pg_auto_failover: a monitor, a primary and a
// standby, each on a port and in a data directory of its own under one folder, with synchronous
// replication (a commit waits for the standby) and WAL archiving. `npm run cluster` builds it
// (scripts/cluster.ts); the failover tests, `npm run chaos -- --failover`, the backup test and the
// cluster bench drive it through this class. pg_autoctl refuses to run as root: run by root, every
// node runs as the postgres user and the folder is that user's.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { chownSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { query } from './pg.ts';

export const PG_BIN = '/usr/lib/postgresql/15/bin';
const INSTALL = new URL('../install-cluster.sh', import.meta.url).pathname;
const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The packages could not be installed (no apt-get, no root, no network): the cluster cannot be built here. */
export class ClusterUnavailable extends Error {
  override name = 'ClusterUnavailable';
}

export interface ClusterNode {
  readonly name: string;
  readonly port: number;
  readonly pgdata: string;
}

/** A node as the monitor sees it: the state it reported and the one it is assigned. */
export interface NodeState {
  readonly name: string;
  readonly port: number;
  readonly reported: string;
  readonly goal: string;
}

/** Installs pg_auto_failover from Debian's packages when missing (scripts/install-cluster.sh). */
export function installPackages(): void {
  try {
    execFileSync('bash', [INSTALL], { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  } catch (error) {
    const e = error as { stderr?: string; message: string };
    throw new ClusterUnavailable(`pg_auto_failover could not be installed: ${(e.stderr || e.message).trim().split('\n').at(-1)}`, { cause: error });
  }
}

const isRoot = () => process.getuid?.() === 0;

export interface ClusterOptions {
  /** The folder of every data directory, pg_autoctl's configuration and state, the logs and the WAL archive. */
  dir: string;
  /** The monitor's port; the nodes take the next two. */
  basePort: number;
}

/**
 * The monitor's clock for one machine: a node that stops answering is found in about 2 s (by
 * default 20 s), and a promotion waits 3 s (30 s) for the old primary to demote itself before the
 * new one takes writes. A keeper cut off from the monitor and from its standby demotes its
 * node after 2 s (20 s), before that. Synchronous replication keeps acknowledged commits safe
 * whatever these are: an old primary that went on alone could not commit without its standby.
 */
const MONITOR_SETTINGS = {
  'pgautofailover.health_check_period': '1000',
  'pgautofailover.health_check_timeout': '1000',
  'pgautofailover.health_check_max_retries': '1',
  'pgautofailover.health_check_retry_delay': '500',
  'pgautofailover.node_considered_unhealthy_timeout': '2000',
  'pgautofailover.primary_demote_timeout': '3000',
};
const NETWORK_PARTITION_TIMEOUT_S = '2';

/** The settings every node starts with (an include of its postgresql.conf, copied to the standby by its base backup). */
function nodeSettings(archive: string): string {
  return [
    '# Written by scripts/lib/cluster.ts: a commit waits for the standby, and WAL is archived for restores.',
    "synchronous_commit = 'on'",
    "archive_mode = 'on'",
    `archive_command = 'test ! -f ${archive}/%f && cp %p ${archive}/%f'`,
    "archive_timeout = '60s'",
    'max_connections = 200',
    // pg_auto_failover sizes memory for a machine of its own (6 GB of shared buffers each here);
    // two nodes and the machine's own server share this one: the sizes of Debian's defaults.
    "shared_buffers = '128MB'",
    "effective_cache_size = '4GB'",
    "work_mem = '4MB'",
    "maintenance_work_mem = '64MB'",
    "wal_keep_size = '1GB'",
    '',
  ].join('\n');
}

export class PgCluster {
  readonly dir: string;
  readonly monitorPort: number;
  readonly nodes: readonly ClusterNode[];
  readonly archive: string;

  constructor({ dir, basePort }: ClusterOptions) {
    this.dir = resolve(dir);
    this.monitorPort = basePort;
    this.nodes = [1, 2].map((i) => ({ name: `node${i}`, port: basePort + i, pgdata: join(this.dir, `node${i}`) }));
    this.archive = join(this.dir, 'archive');
  }

  /** The service's DATABASE_URL: both nodes, and only the read-write one kept. */
  get url(): string {
    return `postgres://postgres@${this.nodes.map((n) => `127.0.0.1:${n.port}`).join(',')}/pix?target_session_attrs=read-write`;
  }
  /** One node's URL (any database on it). */
  nodeUrl(node: ClusterNode, database = 'pix'): string {
    return `postgres://postgres@127.0.0.1:${node.port}/${database}`;
  }
  get monitorUrl(): string {
    return `postgres://postgres@127.0.0.1:${this.monitorPort}/pg_auto_failover`;
  }
  get #monitorPgdata(): string {
    return join(this.dir, 'monitor');
  }
  get #stateFile(): string {
    return join(this.dir, 'cluster.json');
  }

  /** pg_autoctl's files live under the folder too, not in the postgres user's home. */
  #env(): string[] {
    return [`XDG_CONFIG_HOME=${join(this.dir, 'config')}`, `XDG_DATA_HOME=${join(this.dir, 'share')}`, `XDG_RUNTIME_DIR=${join(this.dir, 'run')}`, `PATH=${PG_BIN}:/usr/bin:/bin`];
  }
  /** A command as the postgres user when run by root, else as the caller. */
  #as(command: string, args: string[]): [string, string[]] {
    const env = ['env', ...this.#env(), command, ...args];
    return isRoot() ? ['runuser', ['-u', 'postgres', '--', ...env]] : [env[0]!, env.slice(1)];
  }
  async autoctl(args: string[]): Promise<string> {
    const [file, argv] = this.#as('pg_autoctl', args);
    try {
      return (await run(file, argv, { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 })).stdout;
    } catch (error) {
      const e = error as { stderr?: string; message: string };
      throw new Error(`pg_autoctl ${args.slice(0, 2).join(' ')} failed: ${(e.stderr || e.message).trim().split('\n').slice(-5).join('\n')}`, { cause: error });
    }
  }

  /** Starts `pg_autoctl run` for a data directory, detached, its log appended to logs/<name>.log. */
  startKeeper(pgdata: string): void {
    const name = pgdata.split('/').at(-1)!;
    const log = openSync(join(this.dir, 'logs', `${name}.log`), 'a');
    const [file, argv] = this.#as('pg_autoctl', ['run', '--pgdata', pgdata]);
    const child = spawn(file, argv, { detached: true, stdio: ['ignore', log, log] });
    child.unref();
    closeSync(log);
  }

  /** The supervisor's pid of a data directory, when it runs. */
  keeperPid(pgdata: string): number | undefined {
    const file = join(this.dir, 'run', 'pg_autoctl', pgdata.replace(/^\//, ''), 'pg_autoctl.pid');
    const pid = existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[0]) : NaN;
    return Number.isInteger(pid) && pid > 0 && alive(pid) ? pid : undefined;
  }

  /** The postmaster's pid of a node, when it runs. */
  postmasterPid(node: ClusterNode): number | undefined {
    const file = join(node.pgdata, 'postmaster.pid');
    const pid = existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[0]) : NaN;
    return Number.isInteger(pid) && pid > 0 && alive(pid) ? pid : undefined;
  }

  /** Every node as the monitor sees it. */
  async states(): Promise<NodeState[]> {
    const rows = await query<{ name: string; port: number; reported: string; goal: string }>(
      this.monitorUrl,
      'select nodename as name, nodeport as port, reportedstate::text as reported, goalstate::text as goal from pgautofailover.node order by nodeid',
    );
    return rows;
  }

  /** Resolves once `test` holds on the monitor's view (polled every 100 ms), or fails after `timeoutMs`. */
  async waitFor(what: string, test: (states: NodeState[]) => boolean, timeoutMs = 60_000): Promise<NodeState[]> {
    const deadline = performance.now() + timeoutMs;
    let last: NodeState[] = [];
    while (performance.now() < deadline) {
      last = await this.states().catch(() => last);
      if (test(last)) return last;
      await sleep(100);
    }
    throw new Error(`the cluster did not reach "${what}" in ${timeoutMs} ms: ${JSON.stringify(last)}`);
  }

  /** Both nodes settled: one primary, one secondary, each at its goal. */
  waitHealthy(timeoutMs = 60_000): Promise<NodeState[]> {
    return this.waitFor('a primary and a secondary', (s) => healthy(s), timeoutMs);
  }

  /**
   * The node the monitor has as primary (a wait_primary too: it writes, without a standby yet).
   * A failover in progress is waited for (up to `timeoutMs`): a promoted standby accepts writes
   * while it is still in stop_replication, before the monitor settles it as primary.
   */
  async primary(timeoutMs = 30_000): Promise<ClusterNode> {
    const states = await this.waitFor('a settled primary', (all) => settledPrimary(all) !== undefined, timeoutMs);
    const p = settledPrimary(states)!;
    return this.nodes.find((n) => n.port === p.port)!;
  }

  /** kill -9 of a node's postmaster (its keeper stays: the monitor fails over, the keeper brings the node back as a standby). */
  killPostmaster(node: ClusterNode): number {
    const pid = this.postmasterPid(node);
    if (pid === undefined) throw new Error(`${node.name} has no postmaster running`);
    process.kill(pid, 'SIGKILL');
    return pid;
  }

  /**
   * The node lost, as a machine is: kill -9 of its postmaster and, in the same instant, of its
   * pg_autoctl keeper (the process group they share), which would otherwise start the postmaster
   * again in place. The monitor finds the node gone and promotes the standby; `startKeeper` later
   * brings the node back, as a standby of the new primary. Resolves with the postmaster's pid.
   */
  killNode(node: ClusterNode): number {
    const postmaster = this.postmasterPid(node);
    const keeper = this.keeperPid(node.pgdata);
    if (postmaster === undefined || keeper === undefined) throw new Error(`${node.name} is not running (postmaster ${postmaster}, keeper ${keeper})`);
    process.kill(postmaster, 'SIGKILL');
    process.kill(-processGroup(keeper), 'SIGKILL');
    return postmaster;
  }

  /**
   * Brings a lost node back: its keeper rejoins it as a standby of the new primary (pg_rewind, or
   * a base backup when that fails). pg_autoctl 2.0 runs the crash recovery pg_rewind needs with
   * the node already made a standby, which PostgreSQL 15's pg_rewind refuses, so the recovery is
   * done first: the old primary is started on no TCP address (nothing can write to it) with
   * archiving off (its last WAL is not the new primary's) and stopped cleanly.
   */
  async restartNode(node: ClusterNode): Promise<void> {
    if (this.keeperPid(node.pgdata)) return;
    if (this.postmasterPid(node) === undefined) {
      const settings = `-c listen_addresses='' -c unix_socket_directories='${join(this.dir, 'run')}' -c archive_mode=off -c port=${node.port}`;
      await this.#pgctl(['start', '-w', '-t', '60', '-D', node.pgdata, '-l', join(this.dir, 'logs', `${node.name}-recovery.log`), '-o', settings]);
      await this.#pgctl(['stop', '-w', '-m', 'fast', '-D', node.pgdata]);
    }
    this.startKeeper(node.pgdata);
  }

  async #pgctl(args: string[]): Promise<void> {
    const [file, argv] = this.#as(`${PG_BIN}/pg_ctl`, args);
    await run(file, argv, { encoding: 'utf8' });
  }

  /**
   * A planned switchover (`pg_autoctl perform switchover`): the primary is demoted once the standby
   * has caught up, the standby promoted, and the old primary made its standby; resolves when done.
   */
  async switchover(): Promise<void> {
    await this.autoctl(['perform', 'switchover', '--monitor', `postgres://autoctl_node@127.0.0.1:${this.monitorPort}/pg_auto_failover?sslmode=disable`]);
    await this.waitHealthy();
  }

  /** Whether a build finished in the folder (it may be stopped). */
  built(): boolean {
    return existsSync(this.#stateFile);
  }

  /** pg_autoctl show state, as printed. */
  showState(): Promise<string> {
    return this.autoctl(['show', 'state', '--pgdata', this.#monitorPgdata]);
  }

  /**
   * Builds the cluster, or starts what of an earlier build is stopped; resolves once one node is
   * primary and the other secondary. Installs the packages first when they are missing.
   */
  async up(): Promise<{ built: boolean; ms: number }> {
    const started = performance.now();
    installPackages();
    if (existsSync(this.#stateFile)) {
      if (!this.keeperPid(this.#monitorPgdata)) this.startKeeper(this.#monitorPgdata);
      for (const node of this.nodes) await this.restartNode(node);
      await this.waitHealthy();
      return { built: false, ms: performance.now() - started };
    }
    // Half a build (one interrupted): from scratch.
    if (existsSync(this.dir)) await this.down();
    await this.#build();
    writeFileSync(this.#stateFile, `${JSON.stringify({ monitorPort: this.monitorPort, nodes: this.nodes, url: this.url }, null, 2)}\n`);
    return { built: true, ms: performance.now() - started };
  }

  async #build(): Promise<void> {
    for (const sub of ['', 'config', 'share', 'run', 'logs', 'archive', 'backups']) mkdirSync(join(this.dir, sub), { recursive: true, mode: 0o700 });
    if (isRoot()) chownTree(this.dir);
    const common = ['--hostname', '127.0.0.1', '--auth', 'trust', '--no-ssl', '--pgctl', `${PG_BIN}/pg_ctl`];
    await this.autoctl(['create', 'monitor', '--pgdata', this.#monitorPgdata, '--pgport', String(this.monitorPort), ...common]);
    await this.#listenOnLoopback(this.#monitorPgdata);
    this.startKeeper(this.#monitorPgdata);
    await this.#waitReady(this.monitorUrl);
    for (const [name, value] of Object.entries(MONITOR_SETTINGS)) await query(this.monitorUrl, `alter system set ${name} = '${value}'`);
    await query(this.monitorUrl, 'select pg_reload_conf()');
    const monitor = `postgres://autoctl_node@127.0.0.1:${this.monitorPort}/pg_auto_failover?sslmode=disable`;
    for (const node of this.nodes) {
      const args = ['create', 'postgres', '--pgdata', node.pgdata, '--pgport', String(node.port), '--listen', '127.0.0.1', '--name', node.name];
      await this.autoctl([...args, '--dbname', 'pix', '--monitor', monitor, ...common]);
      // The first node's settings reach the second through its base backup; written again, to be sure.
      this.#writeSettings(node);
      await this.autoctl(['config', 'set', '--pgdata', node.pgdata, 'timeout.network_partition_timeout', NETWORK_PARTITION_TIMEOUT_S]);
      this.startKeeper(node.pgdata);
      if (node === this.nodes[0]) await this.waitFor('a single node', (s) => s.some((n) => n.reported === 'single' && n.goal === 'single'));
    }
    await this.waitHealthy();
  }

  /** The monitor listens on the loopback only, as the nodes do (pg_autoctl's default is every address). */
  async #listenOnLoopback(pgdata: string): Promise<void> {
    await this.autoctl(['config', 'set', '--pgdata', pgdata, 'postgresql.listen_addresses', '127.0.0.1']);
  }

  #writeSettings(node: ClusterNode): void {
    const include = join(node.pgdata, 'postgresql-pix.conf');
    writeFileSync(include, nodeSettings(this.archive));
    const conf = join(node.pgdata, 'postgresql.conf');
    const text = readFileSync(conf, 'utf8');
    if (!text.includes("include 'postgresql-pix.conf'")) writeFileSync(conf, `${text}\ninclude 'postgresql-pix.conf'\n`);
    if (isRoot()) chownTree(node.pgdata);
  }

  async #waitReady(url: string, timeoutMs = 30_000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      try {
        await query(url, 'select 1');
        return;
      } catch (error) {
        if (performance.now() > deadline) throw error;
        await sleep(100);
      }
    }
  }

  /** Stops every keeper and server (at once: the data goes too) and deletes the folder. */
  async down(): Promise<void> {
    const pgdatas = [...this.nodes.map((n) => n.pgdata), this.#monitorPgdata];
    for (const pgdata of pgdatas) {
      const keeper = this.keeperPid(pgdata);
      if (keeper) process.kill(keeper, 'SIGQUIT');
    }
    const postmasters = [...this.nodes.map((n) => this.postmasterPid(n)), this.postmasterPid({ name: 'monitor', port: this.monitorPort, pgdata: this.#monitorPgdata })];
    for (const pid of postmasters) if (pid) process.kill(pid, 'SIGQUIT');
    const deadline = performance.now() + 15_000;
    for (const pid of postmasters) {
      while (pid && alive(pid) && performance.now() < deadline) await sleep(50);
      if (pid && alive(pid)) process.kill(pid, 'SIGKILL');
    }
    for (const pgdata of pgdatas) {
      const keeper = this.keeperPid(pgdata);
      if (keeper) process.kill(keeper, 'SIGKILL');
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function settledPrimary(states: readonly NodeState[]): NodeState | undefined {
  return states.find((s) => (s.reported === 'primary' || s.reported === 'wait_primary') && s.goal === s.reported);
}

export function healthy(states: readonly NodeState[]): boolean {
  const settled = states.every((s) => s.reported === s.goal);
  return settled && states.some((s) => s.reported === 'primary') && states.some((s) => s.reported === 'secondary');
}

/** A process's group (the fifth field of /proc/<pid>/stat, after the command in parentheses). */
function processGroup(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function chownTree(dir: string): void {
  const { uid, gid } = postgresUser();
  chownSync(dir, uid, gid);
  execFileSync('chown', ['-R', `${uid}:${gid}`, dir]);
}

function postgresUser(): { uid: number; gid: number } {
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }));
    return { uid: id('-u'), gid: id('-g') };
  } catch (error) {
    throw new ClusterUnavailable(`no postgres user to run the nodes as (running as ${userInfo().username})`, { cause: error });
  }
}
