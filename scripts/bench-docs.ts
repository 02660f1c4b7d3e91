/**
 * How long /docs takes to show its operations in a browser, as a newcomer first opens it: a
 * service started on a temporary DATA_DIR, then RUNS fresh pages of Debian's Chromium (default 5),
 * each timed from navigation to the page's `load` event (Swagger UI's script read) and to the
 * first operation group drawn. Medians, from one run of the script.
 *
 *   npm run bench:docs              RUNS=3 npm run bench:docs
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { freePort, SERVICE_MAIN } from './lib/processes.ts';

const RUNS = Number(process.env.RUNS ?? 5);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const dataDir = mkdtempSync(join(tmpdir(), 'pix-bench-docs-'));
const port = await freePort();
const child = spawn(process.execPath, [SERVICE_MAIN, 'serve'], {
  env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn' },
  stdio: 'ignore',
});
const exited = new Promise((resolve) => child.on('exit', resolve));
try {
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; !(await fetch(`${base}/ready`).then((r) => r.ok, () => false)); i++) {
    if (i > 2400) throw new Error('the service was not ready within 120 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const whole = (await (await fetch(`${base}/docs/json`)).text()).length;
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium' });
  const loaded: number[] = [];
  const drawn: number[] = [];
  try {
    for (let i = 0; i < RUNS; i++) {
      const context = await browser.newContext();
      const page = await context.newPage();
      const started = performance.now();
      await page.goto(`${base}/docs`, { waitUntil: 'load' });
      loaded.push(performance.now() - started);
      await page.waitForSelector('.opblock-tag', { timeout: 60_000 });
      drawn.push(performance.now() - started);
      await context.close();
    }
  } finally {
    await browser.close();
  }
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  console.log(`/docs in Chromium, median of ${RUNS} fresh pages (the whole document: ${Math.round(whole / 1024)} KB, shown a part at a time)`);
  console.log(`  page loaded (Swagger UI's script): ${s(median(loaded))}`);
  console.log(`  first operations drawn:            ${s(median(drawn))}`);
} finally {
  child.kill('SIGTERM');
  await exited;
  rmSync(dataDir, { recursive: true, force: true });
}
