import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openDatabase, type Db } from '../src/db/client.ts';
import { DEMO_NAME } from '../src/modules/admin/demo.ts';
import { createTestDatabase, onPostgres } from './harness.ts';
import { demoDirectory, killAll, run, runTryIt, sandboxBanner, started, stop } from './processes.ts';

after(killAll);

const dirs: string[] = [];
after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pix-demo-files-'));
  dirs.push(dir);
  return dir;
}

/** Starts the service, checks that the banner's commands work, stops it; resolves with its banner. */
async function startUseAndStop(env: Record<string, string>): Promise<string> {
  const proc = run(['serve'], env);
  await started(proc, sandboxBanner);
  try {
    const balance = JSON.parse(await runTryIt(proc.stdout())) as { netBalance?: number };
    assert.equal(typeof balance.netBalance, 'number', `the banner's commands work: ${JSON.stringify(balance)}`);
  } finally {
    assert.equal(await stop(proc), 0);
  }
  return proc.stdout();
}

/** Every file of a directory with its content, to see that nothing in it changed. */
/** A demo directory's files, but admin-token: that is the ADMIN_TOKEN of the latest run, new on every start. */
const contents = (dir: string) =>
  Object.fromEntries(
    readdirSync(dir)
      .filter((file) => file !== 'admin-token')
      .sort()
      .map((file) => [file, readFileSync(join(dir, file), 'utf8')]),
  );
const credentials = (dir: string) => JSON.parse(readFileSync(join(dir, 'credentials.json'), 'utf8')) as { clientId: string; database?: { id: string } };

/** A database's demo accounts: the one it recorded (with its client), and how many carry the demo's name. */
async function demoAccounts(db: Db): Promise<{ clientIds: string[]; named: number }> {
  const recorded = await db.selectFrom('demo_account').innerJoin('accounts', 'accounts.id', 'demo_account.account_id').select('accounts.client_id').execute();
  const named = await db.selectFrom('accounts').select('id').where('name', '=', DEMO_NAME).execute();
  return { clientIds: recorded.map((r) => r.client_id), named: named.length };
}

async function embeddedDemoAccounts(dataDir: string) {
  const database = await openDatabase({ dataDir });
  try {
    return await demoAccounts(database.db);
  } finally {
    await database.close();
  }
}

describe('demo files belong to their database', () => {
  it('another database\'s files in DATA_DIR/demo are kept and named; this database\'s go to a directory of their own', async () => {
    const dataDir = tempDir();
    const demo = join(dataDir, 'demo');
    // Files as the service wrote them before databases had an identity, for a client this database does not have.
    mkdirSync(demo);
    writeFileSync(join(demo, 'credentials.json'), JSON.stringify({ clientId: 'pix_written_for_another_database', clientSecret: 's' }));
    writeFileSync(join(demo, 'client.crt'), 'another database\'s certificate');
    const before = contents(demo);

    const first = await startUseAndStop({ DATA_DIR: dataDir });
    const own = demoDirectory(first);
    assert.match(own, new RegExp(`^${dataDir}/demo-[0-9a-f-]{36}$`));
    assert.match(first, /note: +.*\/demo holds the demo files of another database \(written before databases had an identity; its client pix_written_for_another_database is not one of this database's\): kept as they are/);
    assert.match(first, /clientSecret: \S{20,}/, 'a new demo account, said so in the banner');
    assert.deepEqual(contents(demo), before);

    // Now they name their database: the banner says which.
    const otherId = randomUUID();
    writeFileSync(join(demo, 'credentials.json'), JSON.stringify({ clientId: 'pix_x', database: { id: otherId, description: 'PostgreSQL database "elsewhere" on 10.0.0.1:5432' } }));
    const named = contents(demo);
    const second = await startUseAndStop({ DATA_DIR: dataDir });
    assert.equal(demoDirectory(second), own);
    assert.match(second, new RegExp(`holds the demo files of PostgreSQL database "elsewhere" on 10\\.0\\.0\\.1:5432 \\(id ${otherId}\\): kept as they are`));
    assert.match(second, /clientSecret: in .*credentials\.json/, 'its files are used again');
    assert.deepEqual(contents(demo), named);

    assert.deepEqual(await embeddedDemoAccounts(dataDir), { clientIds: [credentials(own).clientId], named: 1 });
  });

  it('the generated ADMIN_TOKEN of the run is in DATA_DIR/demo/admin-token (0600); with ADMIN_TOKEN set there is none', async () => {
    const dataDir = tempDir();
    const file = join(dataDir, 'demo', 'admin-token');
    const first = await startUseAndStop({ DATA_DIR: dataDir });
    const printed = /ADMIN_TOKEN .*\): (\S+)/.exec(first)?.[1];
    assert.ok(printed, first);
    assert.equal(readFileSync(file, 'utf8').trim(), printed);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    await startUseAndStop({ DATA_DIR: dataDir, ADMIN_TOKEN: 'an-operator-token-of-my-own' });
    assert.equal(existsSync(file), false, 'a token that no longer works is not left behind');
  });

  it('embedded, then PostgreSQL, then embedded again on one DATA_DIR: each keeps its files and its one demo account', { skip: !onPostgres && 'needs TEST_DATABASE_URL' }, async () => {
    const dataDir = tempDir();
    const testDb = await createTestDatabase();
    try {
      const embedded = demoDirectory(await startUseAndStop({ DATA_DIR: dataDir }));
      assert.equal(embedded, join(dataDir, 'demo'));
      const embeddedFiles = contents(embedded);

      const pgBanner = await startUseAndStop({ DATA_DIR: dataDir, DATABASE_URL: testDb.url! });
      const postgres = demoDirectory(pgBanner);
      const name = new URL(testDb.url!).pathname.slice(1);
      assert.match(postgres, new RegExp(`^${dataDir}/demo-${name}-[0-9a-f]{8}$`));
      assert.match(pgBanner, new RegExp(`Database: PostgreSQL database "${name}" on `));
      assert.deepEqual(contents(embedded), embeddedFiles, 'the embedded database\'s files are untouched');
      const postgresFiles = contents(postgres);

      const again = await startUseAndStop({ DATA_DIR: dataDir });
      assert.equal(demoDirectory(again), embedded);
      assert.match(again, /clientSecret: in .*credentials\.json/);
      assert.doesNotMatch(again, /note:/);
      assert.deepEqual(contents(embedded), embeddedFiles);
      assert.deepEqual(contents(postgres), postgresFiles);

      assert.deepEqual(await embeddedDemoAccounts(dataDir), { clientIds: [credentials(embedded).clientId], named: 1 });
      assert.deepEqual(await demoAccounts(testDb.db), { clientIds: [credentials(postgres).clientId], named: 1 });
      assert.notEqual(credentials(embedded).database!.id, credentials(postgres).database!.id);
    } finally {
      await testDb.drop();
    }
  });

  it('files written before databases had an identity are claimed by the database that holds their client', { skip: !onPostgres && 'needs TEST_DATABASE_URL' }, async () => {
    const dataDir = tempDir();
    const testDb = await createTestDatabase();
    try {
      const own = demoDirectory(await startUseAndStop({ DATA_DIR: dataDir, DATABASE_URL: testDb.url! }));
      // As the service left things before: the files in DATA_DIR/demo naming no database, the database recording no demo account.
      const legacy = join(dataDir, 'demo');
      renameSync(own, legacy);
      const unnamed = JSON.parse(readFileSync(join(legacy, 'credentials.json'), 'utf8')) as Record<string, unknown>;
      delete unnamed.database;
      writeFileSync(join(legacy, 'credentials.json'), JSON.stringify(unnamed));
      await testDb.db.deleteFrom('demo_account').execute();
      const copy = join(tempDir(), 'copy');
      cpSync(legacy, copy, { recursive: true });

      const banner = await startUseAndStop({ DATA_DIR: dataDir, DATABASE_URL: testDb.url! });
      assert.equal(demoDirectory(banner), own);
      assert.match(banner, new RegExp(`note: +moved this database's demo files from ${legacy} to ${own}`));
      assert.match(banner, /note: +account 1, provisioned before the database recorded its demo account, is its demo account/);
      assert.match(banner, /clientSecret: in .*credentials\.json/, 'the same credentials');
      assert.ok(!existsSync(legacy));
      assert.equal(readFileSync(join(own, 'client.key'), 'utf8'), readFileSync(join(copy, 'client.key'), 'utf8'));
      assert.deepEqual(await demoAccounts(testDb.db), { clientIds: [unnamed.clientId as string], named: 1 });
    } finally {
      await testDb.drop();
    }
  });
});
