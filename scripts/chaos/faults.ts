// The faults of npm run chaos: service processes (API + worker) and an extra worker on one
// database, killed with SIGKILL and started again while clients run, and PostgreSQL restarted once.
import { execFileSync } from 'node:child_process';
import { appendFileSync, readdirSync } from 'node:fs';
import { Agent } from 'undici';
import { ApiClient, undiciTransport } from '../lib/api-client.ts';
import { query } from '../lib/pg.ts';
import { freePort, ServiceProcess } from '../lib/processes.ts';
import { log, pick, sleep } from './common.ts';

/** The service processes and the extra worker, with a client for each process that listens. */
export class Cluster {
  readonly procs: ServiceProcess[];
  /** Exits nobody asked for, with what the process wrote on stderr. */
  readonly crashes: string[] = [];
  readonly #env: Record<string, string>;
  readonly #http = new Agent({ connections: 64, keepAliveTimeout: 1000 });
  readonly #clients = new Map<ServiceProcess, ApiClient>();

  private constructor(procs: ServiceProcess[], env: Record<string, string>) {
    this.procs = procs;
    this.#env = env;
    for (const p of procs) {
      p.onCrash = (exit, stderr) => {
        if (process.env.CHAOS_CRASH_LOG) appendFileSync(process.env.CHAOS_CRASH_LOG, `--- ${p.name} ${exit}\n${stderr}\n`);
        this.crashes.push(`${p.name} exited by itself (${exit}): ${stderr.slice(-1500)}`);
      };
      if (p.port !== null) this.#clients.set(p, new ApiClient(undiciTransport(this.#http, { origin: `http://127.0.0.1:${p.port}`, timeoutMs: 20_000 })));
    }
  }

  /** `serve` processes, each on a port of its own, and a worker; none started yet. */
  static async create(serveProcesses: number, env: Record<string, string>): Promise<Cluster> {
    const procs: ServiceProcess[] = [];
    for (let i = 0; i < serveProcesses; i++) procs.push(new ServiceProcess(`serve-${i}`, ['serve'], await freePort()));
    procs.push(new ServiceProcess('worker', ['worker'], null));
    return new Cluster(procs, env);
  }

  /** Starts every process that is not running; `quiet` ignores those that fail to. */
  async startStopped(quiet = false): Promise<void> {
    for (const p of this.procs.filter((p) => !p.child)) await (quiet ? p.start(this.#env).catch(() => undefined) : p.start(this.#env));
  }

  /** The first API process's client (for set-up and settling). */
  first(): ApiClient {
    return this.#clients.values().next().value!;
  }

  /** An API process's client at random, among those listening if any is. */
  any(): ApiClient {
    const servers = [...this.#clients.keys()];
    const up = servers.filter((p) => p.up);
    return this.#clients.get(pick(up.length > 0 ? up : servers))!;
  }

  /** Kills one process, among those killed least so far, and starts it again. */
  async killOne(): Promise<void> {
    // At random among those killed least so far, so a short run (CI's) kills every kind of
    // process, API and worker, and not only whichever the dice favoured.
    const fewest = Math.min(...this.procs.map((p) => p.kills));
    const victim = pick(this.procs.filter((p) => p.kills === fewest));
    if (!victim.child) return;
    victim.kills++;
    log(`kill -9 ${victim.name}`);
    await victim.stop('SIGKILL');
    await sleep(200 + Math.random() * 800);
    await victim.start(this.#env).catch((e: unknown) => log(`restart of ${victim.name} failed: ${(e as Error).message}`));
  }

  async close(): Promise<void> {
    for (const p of this.procs) await p.stop('SIGTERM');
    await this.#http.close();
  }
}

export async function waitForPostgres(server: string): Promise<void> {
  for (let i = 0; i < 60; i++) {
    try {
      await query(server, 'select 1');
      return;
    } catch {
      await sleep(500);
    }
  }
  throw new Error('PostgreSQL did not come back');
}

function restartPostgres(): void {
  const version = readdirSync('/etc/postgresql').sort()[0]!;
  execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', 'restart', '-m', 'fast'], { stdio: 'ignore' });
}

export interface FaultSettings {
  seconds: number;
  killEveryMs: number;
  restartPg: boolean;
  /** The PostgreSQL server, to know when it is back. */
  server: string;
  /** The first kill this long after the start, rather than killEveryMs or so (to land while something just begun runs). */
  firstKillAfterMs?: number;
}

/** Until `signal` aborts: every killEveryMs or so, a process killed and restarted; PostgreSQL restarted once, half-way. */
export async function injectFaults(cluster: Cluster, s: FaultSettings, signal: AbortSignal): Promise<void> {
  const started = Date.now();
  let pgRestarted = false;
  let first = s.firstKillAfterMs;
  while (!signal.aborted) {
    await sleep(first ?? s.killEveryMs * (0.5 + Math.random()));
    first = undefined;
    if (signal.aborted) break;
    if (s.restartPg && !pgRestarted && Date.now() - started > (s.seconds * 1000) / 2) {
      pgRestarted = true;
      log('restarting PostgreSQL (fast: active transactions are aborted)');
      restartPostgres();
      await waitForPostgres(s.server);
      log('PostgreSQL is back');
      continue;
    }
    await cluster.startStopped(true);
    await cluster.killOne();
  }
}
