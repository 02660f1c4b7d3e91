import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createTestDatabase, onPostgres } from './harness.ts';
import { freePort, killAll, listenAddresses, run, sandboxBanner, started, stop } from './processes.ts';

/** `npm run demo` as a person runs it: on its own, and against a service already running. */
const DEMO = new URL('../scripts/demo.ts', import.meta.url).pathname;
const ADMIN_TOKEN = 'demo-test-admin-token-0123';
const RUN_LIMIT_MS = 60_000;

after(killAll);

const dirs: string[] = [];
after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pix-demo-test-'));
  dirs.push(dir);
  return dir;
}

interface DemoRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** What the run left in its TMPDIR. */
  left: string[];
}

/**
 * Runs the demo with a clean environment and a TMPDIR of its own; one still running after the
 * limit is killed with what it started (its process group) and fails the test.
 */
function runDemo(env: Record<string, string>): Promise<DemoRun> {
  const tmp = tempDir();
  const child = spawn(process.execPath, [DEMO], { env: { PATH: process.env.PATH ?? '', TMPDIR: tmp, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      process.kill(-child.pid!, 'SIGKILL');
      reject(new Error(`the demo still ran after ${RUN_LIMIT_MS} ms: ${stdout.slice(-1000)}${stderr}`));
    }, RUN_LIMIT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, left: readdirSync(tmp) });
    });
  });
}

/** The run went to its last step, with the three webhooks, each signature verified. */
function assertWhole(demo: DemoRun): string[] {
  assert.equal(demo.code, 0, `exit ${demo.code}: ${demo.stderr}\n${demo.stdout.slice(-2000)}`);
  assert.match(demo.stdout, /^4\. The test clock moves two days ahead/m);
  assert.match(demo.stdout, /^11\. The transaction list$/m);
  assert.match(demo.stdout, /^Done: 3 webhooks received, every signature verified\.$/m);
  const verified = [...demo.stdout.matchAll(/^ {3}webhook (\S+) (\w+), webhook-id msg_\w+: signature verified$/gm)].map((m) => `${m[1]} ${m[2]}`);
  assert.equal(verified.length, 3, demo.stdout);
  return verified;
}

describe('npm run demo', () => {
  it('on its own starts the service on the embedded database with a local HTTPS receiver, and removes what it made', async () => {
    const demo = await runDemo({});
    assert.deepEqual(assertWhole(demo), ['/pix/cash_in RECEIVE', '/pix/refund_in REFUND', '/pix/cash_out TRANSFER']);
    assert.match(demo.stdout, /service: http:\/\/127\.0\.0\.1:\d+ \(started on the embedded database in /);
    // Its DATA_DIR and the receiver's CA are gone; the QR code it showed stays.
    assert.deepEqual(
      demo.left.filter((file) => !/^pix-demo-demo\w+\.png$/.test(file)),
      [],
    );
    assert.equal(demo.left.length, 1);
  });

  it('against a running service sends the webhooks to its inbox, under names of its own, and fails in one line', async () => {
    const database = onPostgres ? await createTestDatabase() : undefined;
    const service = run(['serve'], { DATA_DIR: tempDir(), PIX_MODE: 'sandbox', ADMIN_TOKEN, ...(database ? { DATABASE_URL: database.url! } : {}) });
    try {
      await started(service, sandboxBanner);
      const { main } = listenAddresses(service.stdout());
      const demo = await runDemo({ PIX_API_URL: main, ADMIN_TOKEN });
      const verified = assertWhole(demo);
      assert.match(demo.stdout, new RegExp(`service: ${main} \\(running\\)`));
      const inbox = /^\/sandbox\/inbox\/(demo-[0-9a-f]{8})-cash_in RECEIVE$/.exec(verified[0]!)?.[1];
      assert.ok(inbox, `the inbox: ${verified.join(', ')}`);
      assert.deepEqual(verified, [`/sandbox/inbox/${inbox}-cash_in RECEIVE`, `/sandbox/inbox/${inbox}-refund_in REFUND`, `/sandbox/inbox/${inbox}-cash_out TRANSFER`]);
      // What the demo read is the service's record: one delivery at each URL, signed.
      for (const eventType of ['cash_in', 'refund_in', 'cash_out']) {
        const res = await fetch(`${main}/sandbox/inbox/${inbox}-${eventType}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
        const { data } = (await res.json()) as { data: { status: number; headers: Record<string, string> }[] };
        assert.deepEqual(
          data.map((a) => [a.status, a.headers['x-demo'], /^v1,/.test(a.headers['webhook-signature'] ?? '')]),
          [[200, 'yes', true]],
          eventType,
        );
      }

      const refused = await runDemo({ PIX_API_URL: main, ADMIN_TOKEN: 'not-the-admin-token-0123' });
      assert.equal(refused.code, 1);
      assert.equal(refused.stdout, '', 'nothing printed before the service is known to fit');
      assert.equal(refused.stderr, `demo failed: the service at ${main} refused ADMIN_TOKEN (401): give the admin token it printed at start\n`);
    } finally {
      await stop(service);
      await database?.drop();
    }
  });

  it('says in one line what it needs and cannot reach, with no stack trace', async () => {
    const nobody = `http://127.0.0.1:${await freePort()}`;
    for (const [env, line] of [
      [{ PIX_API_URL: nobody }, /^demo failed: PIX_API_URL needs ADMIN_TOKEN/],
      [{ PIX_API_URL: nobody, ADMIN_TOKEN }, new RegExp(`^demo failed: cannot reach the service at ${nobody} \\(ECONNREFUSED\\)$`)],
    ] as const) {
      const demo = await runDemo(env);
      assert.equal(demo.code, 1, demo.stdout);
      assert.match(demo.stderr, /^[^\n]+\n$/, `one line: ${demo.stderr}`);
      assert.match(demo.stderr.trimEnd(), line);
    }
  });
});
