import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createTestDatabase, onPostgres } from './harness.ts';

const MAIN = new URL('../src/main.ts', import.meta.url).pathname;

interface Running {
  child: ChildProcess;
  address: string;
  stdout: () => string;
  exited: Promise<number | null>;
}

function run(env: Record<string, string>, args = ['serve']) {
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

async function start(env: Record<string, string>): Promise<Running> {
  const proc = run(env);
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start within 60 s: ${proc.stdout()} ${proc.stderr()}`)), 60_000);
    const check = () => {
      const match = /listening on (http:\/\/[\d.:]+)/.exec(proc.stdout());
      if (match && proc.stdout().includes('certificate:')) {
        clearTimeout(timer);
        resolve(match[1]!);
      } else if (proc.child.exitCode !== null) {
        clearTimeout(timer);
        reject(new Error(`exited ${proc.child.exitCode}: ${proc.stderr()}`));
      } else setTimeout(check, 50);
    };
    check();
  });
  return { child: proc.child, address, stdout: proc.stdout, exited: proc.exited };
}

async function stop(server: Running): Promise<number | null> {
  server.child.kill('SIGTERM');
  return server.exited;
}

async function demoToken(address: string, dataDir: string): Promise<{ status: number; token?: string }> {
  const demo = JSON.parse(readFileSync(join(dataDir, 'demo', 'credentials.json'), 'utf8')) as { clientId: string; clientSecret: string };
  const res = await fetch(`${address}/api/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-ssl-client-cert': readFileSync(join(dataDir, 'demo', 'client.crt.urlencoded'), 'utf8') },
    body: JSON.stringify({ clientId: demo.clientId, clientSecret: demo.clientSecret }),
  });
  const body = (await res.json()) as { access_token?: string };
  return { status: res.status, ...(body.access_token ? { token: body.access_token } : {}) };
}

describe('the service process', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'pix-api-test-'));
    dirs.push(dir);
    return dir;
  };
  after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it('starts on the embedded database, provisions the demo account, stops cleanly and keeps its data', async () => {
    const dataDir = tempDir();
    const first = await start({ DATA_DIR: dataDir });
    assert.match(first.stdout(), /clientSecret: \S{20,}/);
    assert.match(first.stdout(), /ADMIN_TOKEN .*: \S{20,}/);
    for (const file of ['client.crt', 'client.key', 'client.crt.urlencoded', 'credentials.json']) {
      assert.ok(existsSync(join(dataDir, 'demo', file)), file);
    }
    assert.equal((await fetch(`${first.address}/health`)).status, 200);
    assert.equal((await fetch(`${first.address}/ready`)).status, 200);
    const { status, token } = await demoToken(first.address, dataDir);
    assert.equal(status, 201);
    const balance = await fetch(`${first.address}/balance`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(balance.status, 200);
    // The demo account opens with R$ 1000.00, received as a PIX from the sandbox.
    assert.equal(((await balance.json()) as { netBalance: number }).netBalance, 1000);

    // A second process must not open the same embedded database.
    const intruder = run({ DATA_DIR: dataDir });
    assert.equal(await intruder.exited, 1);
    assert.match(intruder.stderr(), /in use by process/);

    assert.equal(await stop(first), 0);

    const second = await start({ DATA_DIR: dataDir });
    assert.match(second.stdout(), /clientSecret: in .*credentials\.json/, 'the demo account is not provisioned twice');
    const again = await demoToken(second.address, dataDir);
    assert.equal(again.status, 201, 'the account survived the restart');
    assert.equal(await stop(second), 0);
  });

  it('stops at start with one line naming a bad variable', async () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ PIX_MODE: 'production' }, /^Invalid configuration: DATABASE_URL .*\n$/],
      [{ PIX_MODE: 'production', DATABASE_URL: 'postgres://127.0.0.1/none' }, /^Invalid configuration: ADMIN_TOKEN .*\n$/],
      [{ PORT: 'eighty' }, /^Invalid configuration: PORT .*\n$/],
      [{ SETTLEMENT_DELAY_MS: '-5' }, /^Invalid configuration: SETTLEMENT_DELAY_MS .*\n$/],
    ];
    for (const [env, expected] of cases) {
      const proc = run({ DATA_DIR: tempDir(), ...env });
      assert.equal(await proc.exited, 1, JSON.stringify(env));
      assert.match(proc.stderr(), expected);
    }
  });

  it('runs in production mode on PostgreSQL without the demo account', { skip: !onPostgres && 'needs TEST_DATABASE_URL' }, async () => {
    const db = await createTestDatabase();
    try {
      const dataDir = tempDir();
      const proc = run({ PIX_MODE: 'production', DATABASE_URL: db.url!, ADMIN_TOKEN: 'production-admin-token-123', HOST: '127.0.0.1', DATA_DIR: dataDir });
      const address = await new Promise<string>((resolve, reject) => {
        const check = () => {
          const match = /listening on (http:\/\/[\d.:]+)/.exec(proc.stdout());
          if (match) resolve(match[1]!);
          else if (proc.child.exitCode !== null) reject(new Error(proc.stderr()));
          else setTimeout(check, 50);
        };
        check();
      });
      assert.doesNotMatch(proc.stdout(), /Demo account|ADMIN_TOKEN/);
      assert.ok(!existsSync(join(dataDir, 'demo')));
      assert.equal((await fetch(`${address}/ready`)).status, 200);
      proc.child.kill('SIGTERM');
      assert.equal(await proc.exited, 0);
    } finally {
      await db.drop();
    }
  });
});
