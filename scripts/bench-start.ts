/**
 * How long `npm start` takes to be ready, as a developer meets it: the first start on an empty
 * DATA_DIR (the embedded database made, migrated, the demo account provisioned), a later start on
 * the same DATA_DIR, and a start whose PORT another process holds (until its one line and exit).
 * Each is run RUNS times (default 5) in this one run of the script; the medians and their ratio
 * are printed. Times are wall-clock, from spawning the process to GET /ready answering 200.
 *
 *   npm run bench:start              RUNS=3 npm run bench:start
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, SERVICE_MAIN } from './lib/processes.ts';

const RUNS = Number(process.env.RUNS ?? 5);
const TIMEOUT_MS = 120_000;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

/** Milliseconds from spawning `serve` to /ready (or, with `untilExit`, to the process's exit), then stopped. */
async function timeStart(dataDir: string, port: number, untilExit = false): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, [SERVICE_MAIN, 'serve'], {
    env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn' },
    stdio: 'ignore',
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    if (untilExit) {
      await exited;
      return performance.now() - started;
    }
    for (;;) {
      if (performance.now() - started > TIMEOUT_MS) throw new Error(`not ready within ${TIMEOUT_MS} ms`);
      if (child.exitCode !== null) throw new Error(`serve exited ${child.exitCode} before it was ready`);
      const ready = await fetch(`http://127.0.0.1:${port}/ready`).then((r) => r.ok, () => false);
      if (ready) return performance.now() - started;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  } finally {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
  }
}

const first: number[] = [];
const later: number[] = [];
const inUse: number[] = [];
for (let i = 0; i < RUNS; i++) {
  const dataDir = mkdtempSync(join(tmpdir(), 'pix-bench-start-'));
  try {
    const port = await freePort();
    first.push(await timeStart(dataDir, port));
    later.push(await timeStart(dataDir, port));
    const held = createServer();
    await new Promise<void>((resolve) => held.listen(port, '127.0.0.1', resolve));
    inUse.push(await timeStart(dataDir, port, true));
    await new Promise<void>((resolve) => held.close(() => resolve()));
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
console.log(`start-up, median of ${RUNS} runs (each: ${[first, later, inUse].map((v) => v.map((ms) => (ms / 1000).toFixed(1)).join('/')).join(' | ')} s)`);
console.log(`  first start (empty DATA_DIR) to /ready: ${seconds(median(first))}`);
console.log(`  later start to /ready:                  ${seconds(median(later))}`);
console.log(`  PORT in use, to the one line and exit:  ${seconds(median(inUse))}`);
console.log(`  later / first: ${(median(later) / median(first)).toFixed(2)}`);
