import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes, X509Certificate } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import pg from 'pg';
import { openDatabase, type Db } from '../src/db/client.ts';
import { generateRoot, issueSigningCertificate } from '../src/modules/locations/signing/pki.ts';
import { createTestDatabase, onPostgres } from './harness.ts';
import { TEST_REDIS_URL } from './redis.ts';
import {
  exitsByItself,
  failsWithOneLine,
  freePort,
  holdPort,
  killAll,
  listenAddresses,
  productionBanner,
  run,
  runTryIt,
  sandboxBanner,
  started,
  stop,
  type Proc,
} from './processes.ts';

after(killAll);

const ADMIN_TOKEN = 'server-test-admin-token-0123';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };

async function start(env: Record<string, string>): Promise<Proc & { main: string; admin: string | undefined }> {
  const proc = run(['serve'], env);
  await started(proc, env.PIX_MODE === 'production' ? productionBanner : sandboxBanner);
  return { ...proc, ...listenAddresses(proc.stdout()) };
}

const readDemo = (dir: string) => JSON.parse(readFileSync(join(dir, 'credentials.json'), 'utf8')) as { clientId: string; clientSecret: string; accountId: number };
const demoCertificate = (dir: string) => readFileSync(join(dir, 'client.crt.urlencoded'), 'utf8');

async function demoToken(address: string, dir: string): Promise<{ status: number; token?: string }> {
  const demo = readDemo(dir);
  const res = await fetch(`${address}/api/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-ssl-client-cert': demoCertificate(dir) },
    body: JSON.stringify({ clientId: demo.clientId, clientSecret: demo.clientSecret }),
  });
  const body = (await res.json()) as { access_token?: string };
  return { status: res.status, ...(body.access_token ? { token: body.access_token } : {}) };
}

const createAccount = (address: string, headers: Record<string, string> = admin) =>
  fetch(`${address}/admin/accounts`, { method: 'POST', headers, body: JSON.stringify({ name: 'Conta Operador', document: '52998224725' }) });

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pix-api-test-'));
  dirs.push(dir);
  return dir;
}
after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

const lockFile = (dataDir: string) => join(dataDir, 'pgdata.lock');

/** What does not depend on TEST_DATABASE_URL runs once, in the suite's run on the embedded database. */
const sameOnBoth = onPostgres && 'does not use TEST_DATABASE_URL: the run on the embedded database covers it';

describe('the service process', () => {
  it('starts on the embedded database, provisions the demo account, stops cleanly and keeps its data', { skip: sameOnBoth }, async () => {
    const dataDir = tempDir();
    const demoDir = join(dataDir, 'demo');
    const first = await start({ DATA_DIR: dataDir });
    assert.match(first.stdout(), /clientSecret: \S{20,}/);
    assert.match(first.stdout(), /ADMIN_TOKEN .*: \S{20,}/);
    assert.match(first.stdout(), new RegExp(`files: +${demoDir}/ `));
    for (const file of ['client.crt', 'client.key', 'client.crt.urlencoded', 'credentials.json', 'token-request.json']) {
      assert.ok(existsSync(join(demoDir, file)), file);
    }
    assert.equal((await fetch(`${first.main}/health`)).status, 200);
    assert.equal((await fetch(`${first.main}/ready`)).status, 200);
    // The banner's commands, pasted into a shell: a token, then the balance with token and certificate.
    // The demo account opens with R$ 1000.00, received as a PIX from the sandbox.
    assert.equal((JSON.parse(await runTryIt(first.stdout())) as { netBalance: number }).netBalance, 1000);

    // A second process must not open the same embedded database, nor take the lock from the first.
    const line = await failsWithOneLine(['serve'], { DATA_DIR: dataDir });
    assert.match(line, /^the embedded database in .* is in use by process \d+: .*DATA_DIR/);
    assert.equal(readFileSync(lockFile(dataDir), 'utf8'), String(first.child.pid));
    assert.equal((await demoToken(first.main, demoDir)).status, 201, 'the first process still serves');

    assert.equal(await stop(first), 0);
    assert.ok(!existsSync(lockFile(dataDir)), 'a clean stop releases the lock');

    // The ADMIN_TOKEN made at the first start is kept (0600) and used again: a console session and a terminal's $ADMIN_TOKEN outlive a restart.
    const tokenOf = (proc: Proc) => /ADMIN_TOKEN .*\(kept in (\S+) until ADMIN_TOKEN is set\): (\S+)/.exec(proc.stdout())!;
    const [, keptIn, firstToken] = tokenOf(first);
    assert.equal(keptIn, join(dataDir, 'admin-token'));
    assert.equal(readFileSync(keptIn!, 'utf8').trim(), firstToken);
    assert.equal(statSync(keptIn!).mode & 0o777, 0o600);
    assert.equal(readlinkSync(join(dataDir, 'current')), 'demo', 'data/current names the embedded database\'s demo files');
    assert.match(first.stdout(), /^─+\nPix API \(sandbox\) listening on .*\nConsole: http:\/\/127\.0\.0\.1:\d+\/console /m, 'the banner is framed apart and names the console');
    const second = await start({ DATA_DIR: dataDir });
    assert.match(second.stdout(), /clientSecret: in .*credentials\.json/, 'the demo account is not provisioned twice');
    assert.equal(tokenOf(second)[2], firstToken, 'the same ADMIN_TOKEN after a restart');
    assert.equal((await fetch(`${second.main}/sandbox/clock`, { headers: { authorization: `Bearer ${firstToken}` } })).status, 200);
    assert.equal((await demoToken(second.main, demoDir)).status, 201, 'the account survived the restart');
    assert.equal(await stop(second), 0);
    // A token set in the environment is used, and written nowhere.
    const withToken = await start({ DATA_DIR: dataDir, ADMIN_TOKEN });
    assert.doesNotMatch(withToken.stdout(), /ADMIN_TOKEN for/);
    assert.ok(!existsSync(join(demoDir, 'admin-token')), 'no copy of a token that is not the kept one');
    assert.equal(readFileSync(keptIn!, 'utf8').trim(), firstToken, 'the kept one stays for the next start without ADMIN_TOKEN');
    assert.equal(await stop(withToken), 0);

    // The signing keys of this database were sealed under the key generated in DATA_DIR (0600).
    const keyFile = join(dataDir, 'key-encryption-key');
    assert.equal(statSync(keyFile).mode & 0o777, 0o600);
    const wrongKey = await failsWithOneLine(['serve'], { DATA_DIR: dataDir, KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64') });
    assert.match(wrongKey, /^Invalid configuration: KEY_ENCRYPTION_KEY does not open signing key [\w-]+: /);
    assert.ok(!existsSync(lockFile(dataDir)), 'a wrong key releases the embedded database');
    const given = run(['signing-keys', 'rotate'], { DATA_DIR: dataDir, KEY_ENCRYPTION_KEY: readFileSync(keyFile, 'utf8').trim() });
    assert.equal(await exitsByItself(given), 0, 'the generated key, given as KEY_ENCRYPTION_KEY, opens the keys (a rotation checks it first)');
  });

  it('stops at start with one line naming a bad variable', { skip: sameOnBoth }, async () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ PIX_MODE: 'production' }, /^Invalid configuration: DATABASE_URL /],
      [{ PIX_MODE: 'production', DATABASE_URL: 'postgres://127.0.0.1/none' }, /^Invalid configuration: ADMIN_TOKEN /],
      [
        { PIX_MODE: 'production', DATABASE_URL: 'postgres://127.0.0.1/none', ADMIN_TOKEN: 'production-admin-token-123' },
        /^Invalid configuration: KEY_ENCRYPTION_KEY is required when PIX_MODE=production /,
      ],
      [
        { PIX_MODE: 'production', DATABASE_URL: 'postgres://127.0.0.1/none', ADMIN_TOKEN: 'production-admin-token-123', KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64') },
        /^Invalid configuration: PUBLIC_URL is required when PIX_MODE=production/,
      ],
      [
        {
          PIX_MODE: 'production',
          DATABASE_URL: 'postgres://127.0.0.1/none',
          ADMIN_TOKEN: 'production-admin-token-123',
          KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
          PUBLIC_URL: 'https://pix.example.com',
        },
        /^Invalid configuration: QR_SIGNING_KEY_FILE and QR_SIGNING_CHAIN_FILE are required to serve when PIX_MODE=production/,
      ],
      [{ KEY_ENCRYPTION_KEY: 'c2hvcnQ=' }, /^Invalid configuration: KEY_ENCRYPTION_KEY must be 32 bytes in base64/],
      [{ PORT: 'eighty' }, /^Invalid configuration: PORT /],
      [{ SETTLEMENT_DELAY_MS: '-5' }, /^Invalid configuration: SETTLEMENT_DELAY_MS /],
      [{ ADMIN_PORT: 'admin' }, /^Invalid configuration: ADMIN_PORT /],
      [{ PORT: '8090', ADMIN_PORT: '8090' }, /^Invalid configuration: ADMIN_PORT must differ from PORT/],
      [{ ADMIN_HOST: '127.0.0.1' }, /^Invalid configuration: ADMIN_HOST needs ADMIN_PORT/],
      [{ TLS_CERT_FILE: import.meta.filename, TLS_KEY_FILE: import.meta.filename }, /^Invalid configuration: TLS_CERT_FILE must name a PEM certificate/],
    ];
    for (const [env, expected] of cases) {
      assert.match(await failsWithOneLine(['serve'], { DATA_DIR: tempDir(), ...env }), expected, JSON.stringify(env));
    }
  });

  it('a port in use stops the start in one line and releases the embedded database, the other listener and the worker', { skip: sameOnBoth }, async () => {
    const dataDir = tempDir();
    const held = await holdPort();
    try {
      const line = await failsWithOneLine(['serve'], { DATA_DIR: dataDir, PORT: String(held.port) });
      assert.equal(line, `PORT ${held.port} is already in use on 127.0.0.1: stop the process that holds it, or set PORT to a free port`);
      assert.ok(!existsSync(lockFile(dataDir)), 'the lock is released');

      // The main listener binds, the operator one fails: the main one is closed again, and so
      // are the Redis connections the listeners opened (up or down, they would keep it running).
      const port = await freePort();
      const adminLine = await failsWithOneLine(['serve'], { DATA_DIR: dataDir, PORT: String(port), ADMIN_PORT: String(held.port), REDIS_URL: TEST_REDIS_URL });
      assert.match(adminLine, new RegExp(`^ADMIN_PORT ${held.port} is already in use on 127.0.0.1: .*set ADMIN_PORT to a free port$`));
      assert.ok(!existsSync(lockFile(dataDir)));

      // The next start, on the same directory and the same main port, succeeds.
      const next = await start({ DATA_DIR: dataDir, PORT: String(port) });
      assert.equal(next.main, `http://127.0.0.1:${port}`);
      assert.match(next.stdout(), /clientSecret: \S{20,}/, 'the failed starts provisioned nothing');
      assert.equal(await stop(next), 0);
    } finally {
      await held.release();
    }
  });

  it('a failed migration stops the start in one line, keeps the database as it was, and releases it', { skip: sameOnBoth }, async () => {
    const dataDir = tempDir();
    // A table in the way of the baseline migration, made before the service ever ran there.
    const blocked = await openDatabase({ dataDir });
    await sql`create table database_identity (id int)`.execute(blocked.db);
    await blocked.close();

    const line = await failsWithOneLine(['serve'], { DATA_DIR: dataDir });
    assert.match(line, /^migration 0001_baseline failed \(relation "database_identity" already exists\); the database stays at migration 0: .*npm run migrate$/);
    assert.ok(!existsSync(lockFile(dataDir)));
    assert.match(await failsWithOneLine(['migrate'], { DATA_DIR: dataDir }), /^migration 0001_baseline failed/);

    const fixed = await openDatabase({ dataDir });
    const applied = await sql<{ n: bigint }>`select count(*) as n from schema_migrations`.execute(fixed.db);
    assert.equal(applied.rows[0]!.n, 0n, 'the migration is not applied, nor any part of it');
    await sql`drop table database_identity`.execute(fixed.db);
    await fixed.close();

    const migrated = run(['migrate'], { DATA_DIR: dataDir });
    assert.equal(await exitsByItself(migrated), 0, migrated.stderr());
    assert.equal(migrated.stdout(), 'migrations applied\n');
    assert.ok(!existsSync(lockFile(dataDir)));
  });

  it('a database made by the migrations before the baseline stops serve, worker and migrate in one line saying what to do', async () => {
    // What those migrations recorded (the first two of sixteen), with nothing else: only the record is read.
    const recordOld = (db: Db) =>
      sql
        .raw(
          `create table schema_migrations (version integer primary key, name text not null, applied_at timestamptz not null default now());
           insert into schema_migrations (version, name) values (1, 'initial'), (2, 'pix_functions')`,
        )
        .execute(db);
    const dataDir = tempDir();
    const old = await openDatabase({ dataDir });
    await recordOld(old.db);
    await old.close();
    const embedded =
      `the embedded database in ${join(dataDir, 'pgdata')} was made by migrations this version does not have (0001_initial, 0002_pix_functions) ` +
      `and cannot be brought up to date: delete the data directory ${dataDir} (DATA_DIR), or set DATA_DIR to another directory, and start again`;
    for (const command of ['serve', 'worker', 'migrate']) {
      assert.equal(await failsWithOneLine([command], { DATA_DIR: dataDir }), embedded, command);
      assert.ok(!existsSync(lockFile(dataDir)), command);
    }
    const after = await openDatabase({ dataDir });
    const tables = await sql<{ name: string | null }>`select to_regclass('schema_functions')::text as name`.execute(after.db);
    await after.close();
    assert.equal(tables.rows[0]!.name, null, 'nothing was changed');

    if (!onPostgres) return;
    const t = await createTestDatabase();
    try {
      await sql`drop table schema_migrations`.execute(t.db);
      await recordOld(t.db);
      const name = new URL(t.url!).pathname.slice(1);
      for (const command of ['serve', 'worker', 'migrate']) {
        const line = await failsWithOneLine([command], { DATA_DIR: tempDir(), DATABASE_URL: t.url! });
        assert.match(line, new RegExp(`^PostgreSQL database "${name}" on .* was made by migrations this version does not have \\(0001_initial, 0002_pix_functions\\) .*: create a new database and set DATABASE_URL to it, or drop database "${name}" and create it again$`), command);
      }
    } finally {
      await t.drop();
    }
  });

  it('an unreachable database stops serve, worker, migrate and operator commands in one line naming DATABASE_URL', { skip: sameOnBoth }, async () => {
    const port = await freePort();
    const env = { DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/pix`, DATA_DIR: tempDir() };
    for (const args of [['serve'], ['worker'], ['migrate'], ['accounts', 'create', '--name', 'Ana', '--document', '52998224725']]) {
      const line = await failsWithOneLine(args, env);
      assert.match(line, new RegExp(`^cannot reach PostgreSQL at 127\\.0\\.0\\.1:${port} \\(connect ECONNREFUSED .*\\): start PostgreSQL, or correct DATABASE_URL$`), args[0]);
    }
  });

  it('a sandbox with ADMIN_PORT serves /admin/* there only; /sandbox/* stays on the main listener', { skip: sameOnBoth }, async () => {
    const server = await start({ DATA_DIR: tempDir(), ADMIN_TOKEN, ADMIN_PORT: '0' });
    try {
      assert.ok(server.admin && server.admin !== server.main, server.stdout());
      const onMain = await createAccount(server.main);
      assert.equal(onMain.status, 404);
      assert.equal(((await onMain.json()) as { code: string }).code, 'ROUTE_NOT_FOUND');
      assert.equal((await createAccount(server.admin)).status, 201);
      assert.equal((await createAccount(server.admin, { 'content-type': 'application/json' })).status, 401);
      assert.equal((await fetch(`${server.main}/sandbox/settle`, { method: 'POST', headers: admin, body: '{}' })).status, 200);
      assert.equal((await fetch(`${server.admin}/sandbox/settle`, { method: 'POST', headers: admin, body: '{}' })).status, 404);
      for (const address of [server.main, server.admin]) assert.equal((await fetch(`${address}/ready`)).status, 200, address);
    } finally {
      assert.equal(await stop(server), 0);
    }
  });

  it('a sandbox without ADMIN_PORT serves /admin/* and /sandbox/* on its one listener', { skip: sameOnBoth }, async () => {
    const server = await start({ DATA_DIR: tempDir(), ADMIN_TOKEN });
    try {
      assert.equal(server.admin, undefined);
      assert.doesNotMatch(server.stdout(), /Operator API/);
      assert.equal((await createAccount(server.main)).status, 201);
      assert.equal((await fetch(`${server.main}/sandbox/settle`, { method: 'POST', headers: admin, body: '{}' })).status, 200);
    } finally {
      assert.equal(await stop(server), 0);
    }
  });
});

describe('the service process on PostgreSQL', { skip: !onPostgres && 'needs TEST_DATABASE_URL' }, () => {
  const serverUrl = process.env.TEST_DATABASE_URL ?? '';
  const withDatabase = (name: string) => Object.assign(new URL(serverUrl), { pathname: `/${name}` }).toString();
  const dropDatabase = async (name: string) => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    await client.query(`drop database if exists ${name} with (force)`);
    await client.end();
  };

  it('runs in production mode with the operator API on its own listener only, and without the demo account', async () => {
    const db = await createTestDatabase();
    try {
      const dataDir = tempDir();
      // The payload-signing key and chain an operator gives (the sandbox makes its own).
      const root = await generateRoot(new Date());
      const leaf = await issueSigningCertificate(root, 'pix.example.com', new Date());
      writeFileSync(join(dataDir, 'qr.key'), leaf.privateKeyPem);
      writeFileSync(join(dataDir, 'qr-chain.pem'), [leaf.certificateDer, root.certificateDer].map((der) => new X509Certificate(der).toString()).join(''));
      const server = await start({
        PIX_MODE: 'production',
        DATABASE_URL: db.url!,
        ADMIN_TOKEN,
        KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        PUBLIC_URL: 'https://pix.example.com',
        QR_SIGNING_KEY_FILE: join(dataDir, 'qr.key'),
        QR_SIGNING_CHAIN_FILE: join(dataDir, 'qr-chain.pem'),
        HOST: '127.0.0.1',
        ADMIN_PORT: '0',
        DATA_DIR: dataDir,
      });
      assert.doesNotMatch(server.stdout(), /Demo account|ADMIN_TOKEN/);
      assert.ok(!existsSync(join(dataDir, 'demo')));
      assert.ok(!existsSync(join(dataDir, 'key-encryption-key')), 'production never generates the key');
      assert.ok(server.admin && server.admin !== server.main, server.stdout());
      const onMain = await createAccount(server.main);
      assert.equal(onMain.status, 404);
      assert.equal(((await onMain.json()) as { code: string }).code, 'ROUTE_NOT_FOUND');
      assert.equal((await createAccount(server.admin)).status, 201);
      for (const address of [server.main, server.admin]) {
        assert.equal((await fetch(`${address}/sandbox/settle`, { method: 'POST', headers: admin, body: '{}' })).status, 404, address);
        assert.equal((await fetch(`${address}/ready`)).status, 200, address);
      }
      assert.equal(await stop(server), 0);
    } finally {
      await db.drop();
    }
  });

  it('a database that does not exist stops the start in one line saying how to create it; created so, the next start succeeds', async () => {
    const name = `pix_missing_${process.pid}_${Date.now()}`;
    const url = withDatabase(name);
    try {
      const line = await failsWithOneLine(['serve'], { DATABASE_URL: url, DATA_DIR: tempDir() });
      const { hostname, port, username } = new URL(serverUrl);
      const createdb = `createdb -h ${hostname} -p ${port || 5432} -U ${username} ${name}`;
      assert.equal(line, `database "${name}" does not exist on PostgreSQL at ${hostname}:${port || 5432}: create it (${createdb}), or set DATABASE_URL to an existing database`);
      assert.match(await failsWithOneLine(['worker'], { DATABASE_URL: url }), /does not exist .*createdb/);
      // The command as printed, run by a shell (where the client programs are installed).
      await promisify(execFile)('bash', ['-c', createdb]).catch(async (error: { code?: unknown }) => {
        if (error.code !== 127) throw error;
        const client = new pg.Client({ connectionString: serverUrl });
        await client.connect();
        await client.query(`create database ${name}`);
        await client.end();
      });
      const server = await start({ DATABASE_URL: url, DATA_DIR: tempDir() });
      assert.equal(await stop(server), 0);
    } finally {
      await dropDatabase(name);
    }
  });
});
