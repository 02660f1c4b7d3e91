import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, onPostgres, type TestDatabase } from './harness.ts';
import { killAll, listenAddresses, run, sandboxBanner, started, type Proc } from './processes.ts';

/**
 * The sandbox's controls across real service processes on one PostgreSQL database: what one
 * process changes (the test clock, a fault), every other one follows, without a restart.
 */
const ADMIN_TOKEN = 'controls-processes-admin-token-01';
const needsPostgres = onPostgres ? {} : { skip: 'several processes share one database only on PostgreSQL: set TEST_DATABASE_URL' };

describe('sandbox controls shared by several processes', needsPostgres, () => {
  let database: TestDatabase;
  let dataDir: string;
  const procs: { proc: Proc; url: string }[] = [];

  before(async () => {
    database = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), 'pix-controls-'));
    for (let i = 0; i < 2; i++) {
      const proc = run(['serve'], { DATABASE_URL: database.url!, ADMIN_TOKEN, DATA_DIR: dataDir, KEY_ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64') });
      await started(proc, sandboxBanner);
      procs.push({ proc, url: listenAddresses(proc.stdout()).main });
    }
  });
  after(async () => {
    killAll();
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const call = (at: number, method: string, path: string, body?: object) =>
    fetch(`${procs[at]!.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
  /** Polls `check` until it holds, for at most 3 s (each process reads the shared row every 200 ms). */
  async function eventually(check: () => Promise<boolean>, what: string): Promise<number> {
    const started = performance.now();
    while (!(await check())) {
      assert.ok(performance.now() - started < 3000, `not seen within 3 s: ${what}`);
      await delay(25);
    }
    return performance.now() - started;
  }

  it("one process's clock advance is the other's business time", async () => {
    const moved = await call(0, 'POST', '/sandbox/clock/advance', { seconds: 86_400 });
    assert.equal(moved.status, 200, await moved.text());
    await eventually(async () => ((await (await call(1, 'GET', '/sandbox/clock')).json()) as { offsetSeconds: number }).offsetSeconds === 86_400, 'offset 86400 at the second process');
    // The worker of the second process follows the same clock: its housekeeping and settlement read it too.
    const seen = ((await (await call(1, 'GET', '/sandbox/clock')).json()) as { now: string }).now;
    assert.ok(new Date(seen).getTime() - Date.now() > 86_390_000, seen);
  });

  /** The demo account's token and certificate headers, from its files. */
  async function demoHeaders(at: number): Promise<Record<string, string>> {
    const dir = join(dataDir, readdirSync(dataDir).find((name) => name.startsWith('demo'))!);
    const cert = readFileSync(join(dir, 'client.crt.urlencoded'), 'utf8').trim();
    const res = await fetch(`${procs[at]!.url}/api/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-ssl-client-cert': cert },
      body: readFileSync(join(dir, 'token-request.json')),
    });
    assert.equal(res.status, 201, await res.clone().text());
    return { authorization: `Bearer ${((await res.json()) as { access_token: string }).access_token}`, 'x-ssl-client-cert': cert };
  }

  it("a fault set through one process applies in the other's requests, and clearing it there too", async () => {
    const headers = await demoHeaders(1);
    const lookup = async () => (await fetch(`${procs[1]!.url}/dict/keys/12345678909`, { headers })).status;
    assert.notEqual(await lookup(), 503);
    const set = await call(0, 'POST', '/sandbox/faults', { kind: 'directory', effect: 'unavailable' });
    assert.equal(set.status, 201, await set.text());
    await eventually(async () => (await lookup()) === 503, 'the directory unavailable at the second process');
    assert.equal((await call(0, 'DELETE', '/sandbox/faults')).status, 204);
    await eventually(async () => (await lookup()) !== 503, 'the directory back at the second process');
  });
});
