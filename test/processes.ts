import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { promisify } from 'node:util';

/** Tests that run `src/main.ts` as real processes, as a person or a supervisor does. */
const MAIN = new URL('../src/main.ts', import.meta.url).pathname;

export interface Proc {
  readonly child: ChildProcess;
  /** Resolves with the exit code once the process has exited. */
  readonly exited: Promise<number | null>;
  stdout(): string;
  stderr(): string;
}

/** Every process started here: killed when the test file ends, whatever its assertions did. */
const children = new Set<ChildProcess>();

export function killAll(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/** Runs `node src/main.ts ...args` with a clean environment (PORT=0 unless given). */
export function run(args: string[], env: Record<string, string>): Proc {
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) =>
    // 'close' comes after the output is read to its end ('exit' may come before).
    child.on('close', (code, signal) => {
      // A process ended by a signal has no exit code: say which, and what it printed.
      if (signal) stderr += `[ended by ${signal}]\n${stdout.slice(-2000)}`;
      resolve(code);
    }),
  );
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

/**
 * The exit code of a process that must end by itself: one still running after `withinMs` is
 * killed and fails the test (a start failure that leaves something running never ends).
 */
export async function exitsByItself(proc: Proc, withinMs = 60_000): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), withinMs)));
  const outcome = await Promise.race([proc.exited, late]);
  clearTimeout(timer);
  if (outcome === 'late') {
    proc.child.kill('SIGKILL');
    assert.fail(`still running ${withinMs} ms later; stderr: ${proc.stderr()}`);
  }
  return outcome;
}

/**
 * Runs a command that must fail: it exits 1 by itself, having printed one line on stderr and no
 * stack trace. Resolves with that line.
 */
export async function failsWithOneLine(args: string[], env: Record<string, string>): Promise<string> {
  const proc = run(args, env);
  const code = await exitsByItself(proc);
  const stderr = proc.stderr();
  assert.equal(code, 1, `${args.join(' ')} ${JSON.stringify(env)}: exit ${code}, stderr ${stderr}`);
  assert.match(stderr, /^[^\n]+\n$/, `one line on stderr, got: ${stderr}`);
  assert.doesNotMatch(stderr, /^\s+at /m, 'no stack trace');
  return stderr.trimEnd();
}

/** Resolves once the process printed its whole banner; rejects if it exits first. */
export function started(proc: Proc, complete: (stdout: string) => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (complete(proc.stdout())) {
        proc.child.stdout!.off('data', check);
        proc.child.off('exit', onExit);
        resolve();
      }
    };
    const onExit = (code: number | null) => reject(new Error(`exited ${code} before starting: ${proc.stderr()}`));
    proc.child.stdout!.on('data', check);
    proc.child.once('exit', onExit);
    check();
  });
}

/** The banner's address of the main listener, and of the operator one when it is apart. */
export function listenAddresses(stdout: string): { main: string; admin: string | undefined } {
  const main = /listening on (https?:\/\/[\d.:]+)/.exec(stdout)?.[1];
  assert.ok(main, `no address in: ${stdout}`);
  return { main, admin: /Operator API \(\/admin\/\*\) listening on (https?:\/\/[\d.:]+)/.exec(stdout)?.[1] };
}

/** A complete sandbox banner ends with the demo's commands. */
export const sandboxBanner = (stdout: string) => /listening on/.test(stdout) && /\/balance -H .*\n/.test(stdout);
/** A production banner has no demo. */
export const productionBanner = (stdout: string) => /listening on/.test(stdout) && /^Database: .*\n/m.test(stdout);

/** The commands the banner prints under "try it:", as one shell script. */
export function tryItScript(stdout: string): string {
  const lines = stdout.split('\n');
  const first = lines.findIndex((line) => line.startsWith('  try it:'));
  assert.ok(first >= 0, `no "try it" in: ${stdout}`);
  const script: string[] = [];
  for (const line of lines.slice(first)) {
    if (script.length > 0 && !line.startsWith(' '.repeat(16))) break;
    script.push(line.slice(16));
  }
  return script.join('\n');
}

/** Runs the banner's commands in a shell, as a person pasting them; resolves with what they print. */
export async function runTryIt(stdout: string): Promise<string> {
  const { stdout: out } = await promisify(execFile)('bash', ['-c', tryItScript(stdout)], { timeout: 30_000 });
  return out;
}

/** The directory the banner names for this database's demo files. */
export function demoDirectory(stdout: string): string {
  const dir = /^ {2}files: +(.+)\/ \(this database's demo files\)$/m.exec(stdout)?.[1];
  assert.ok(dir, `no demo files directory in: ${stdout}`);
  return dir;
}

export { freePort } from '../scripts/lib/processes.ts';

/** Holds a port (as another program would) until the returned function is called. */
export async function holdPort(): Promise<{ port: number; release: () => Promise<void> }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { port, release: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Stops a process with SIGTERM, as a supervisor does; resolves with its exit code. */
export async function stop(proc: Proc): Promise<number | null> {
  proc.child.kill('SIGTERM');
  const code = await exitsByItself(proc);
  if (code !== 0) assert.fail(`exit ${code} after SIGTERM: ${proc.stderr()}`);
  return code;
}
