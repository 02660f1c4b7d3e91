// What the measuring and demo scripts share: child processes that print "listening on ...", a
// free port, a database's URL on the server, and service processes that are killed and started
// again on the same port (npm run chaos).
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

export const SERVICE_MAIN = new URL('../../src/main.ts', import.meta.url).pathname;

/** `server` (a PostgreSQL URL, of one host or of several) with another database name. */
export function databaseUrl(server: string, name: string): string {
  return server.replace(/^(postgres(?:ql)?:\/\/[^/?#]*)(\/[^?#]*)?/, `$1/${name}`);
}

/** A port nobody listens on now (for processes that must keep their port across restarts). */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer().once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** The first of `count` consecutive ports nobody listens on now (a cluster's monitor and nodes), from a random start. */
export async function freePortRange(count: number): Promise<number> {
  for (;;) {
    // Below Linux's ephemeral range (32768 and up): no outgoing connection takes one of them
    // between the check and the server's start.
    const base = 20_000 + Math.floor(Math.random() * (32_000 - 20_000 - count));
    let free = true;
    for (let port = base; port < base + count && free; port++) free = await portFree(port);
    if (free) return base;
  }
}

/** The port a process prints ("listening on ..."); its later output is read and dropped. */
function listening(child: ChildProcess, name: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let out = '';
    const onData = (c: Buffer) => {
      out += c.toString();
      const match = /listening on (?:\S*:)?(\d+)\b/.exec(out);
      if (!match) return;
      child.stdout!.off('data', onData);
      child.stdout!.resume();
      resolve(Number(match[1]));
    };
    child.stdout!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`${name} exited ${code}: ${out.slice(-500)}`)));
  });
}

/** Starts a Node process and resolves with it and the port it printed ("listening on ..."). */
export async function startChild(args: string[], env: Record<string, string>): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return { child, port: await listening(child, String(args.at(-1))) };
}

/** Sends `signal` and waits for the exit; a process still there after `graceMs` is killed. */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM', graceMs = Infinity): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  if (graceMs === Infinity) return void (await exited);
  let timer: NodeJS.Timeout | undefined;
  const late = await Promise.race([exited.then(() => false), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), graceMs)))]);
  clearTimeout(timer);
  if (late) {
    child.kill('SIGKILL');
    await exited;
  }
}

/** How long a process with no port is given to get ready: a worker prints nothing when it is. */
const WORKER_SETTLE_MS = 1500;
const START_TIMEOUT_MS = 30_000;

/** A process with no port is ready when it first prints, or a moment after it started; its output is read and dropped. */
function firstWords(child: ChildProcess, name: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    child.stdout!.resume();
    setTimeout(resolve, WORKER_SETTLE_MS);
    child.once('exit', (code) => reject(new Error(`${name} exited ${code}`)));
  });
}

/**
 * A service process (`node src/main.ts <args>`) that can be killed and started again, on the same
 * port when it has one. Any exit this object did not ask for is a crash: `onCrash` hears of it
 * with the end of what the process wrote on stderr.
 */
export class ServiceProcess {
  readonly name: string;
  readonly args: string[];
  readonly port: number | null;
  child: ChildProcess | null = null;
  /** Listening (a worker: started): callers pick only processes that are. */
  up = false;
  crashes = 0;
  kills = 0;
  onCrash: (exit: string, stderr: string) => void = () => undefined;
  #stopping = false;

  constructor(name: string, args: string[], port: number | null) {
    this.name = name;
    this.args = args;
    this.port = port;
  }

  /** Resolves once it listens (a worker: shortly after it started). */
  start(env: Record<string, string>): Promise<void> {
    const child = spawn(process.execPath, [SERVICE_MAIN, ...this.args], {
      env: { ...process.env, ...env, ...(this.port ? { PORT: String(this.port) } : {}) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    this.up = false;
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-8000)));
    child.on('exit', (code, signal) => {
      if (this.child === child) {
        this.child = null;
        this.up = false;
      }
      if (this.#stopping) return;
      this.crashes++;
      this.onCrash(String(code ?? signal), stderr);
    });
    return this.#ready(child);
  }

  #ready(child: ChildProcess): Promise<void> {
    const ready = this.port === null ? firstWords(child, this.name) : listening(child, this.name).then(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${this.name} did not start`)), START_TIMEOUT_MS)));
    return Promise.race([ready, late]).then(
      () => {
        clearTimeout(timer);
        if (this.child === child) this.up = true;
      },
      (error: unknown) => {
        clearTimeout(timer);
        throw error;
      },
    );
  }

  /** Stops it with `signal` (SIGKILL after 15 s); not a crash. */
  async stop(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.#stopping = true;
    await stopChild(child, signal, 15_000);
    this.#stopping = false;
  }
}
