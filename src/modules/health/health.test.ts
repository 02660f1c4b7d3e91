import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { errorMessage } from '../../../test/assertions.ts';
import { startTestApp, type TestApp } from '../../../test/harness.ts';
import { loadFunctionFiles } from '../../db/function-files.ts';
import { LATEST_MIGRATION, loadMigrations } from '../../db/migrate.ts';

describe('GET /ready', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t?.close());

  it('is 200 with the highest migration once every known migration is applied', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/ready' });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { status: 'ready', migration: LATEST_MIGRATION });
  });

  it('is 503 MIGRATIONS_PENDING when a known migration is missing, whatever the highest applied', async () => {
    // Migrations written on separate branches are numbered apart: a later one may be applied first.
    const first = loadMigrations()[0]!;
    const row = await t.db.selectFrom('schema_migrations').selectAll().where('version', '=', first.version).executeTakeFirstOrThrow();
    await t.db.deleteFrom('schema_migrations').where('version', '=', first.version).execute();
    const highest = Math.max(0, ...loadMigrations().map((m) => m.version).filter((v) => v !== first.version));
    try {
      const message = errorMessage(await t.app.inject({ method: 'GET', url: '/ready' }), 503, 'MIGRATIONS_PENDING');
      assert.equal(message, `Migrations pending: ${first.version} (at ${highest}, expected ${LATEST_MIGRATION})`);
    } finally {
      await t.db.insertInto('schema_migrations').values(row).execute();
    }
    assert.equal((await t.app.inject({ method: 'GET', url: '/ready' })).statusCode, 200);
  });

  it('is 503 MIGRATIONS_PENDING, naming it, when a function file is not the text the database applied', async () => {
    const [file] = loadFunctionFiles();
    await t.db.updateTable('schema_functions').set({ hash: 'an earlier text' }).where('name', '=', file!.name).execute();
    try {
      const message = errorMessage(await t.app.inject({ method: 'GET', url: '/ready' }), 503, 'MIGRATIONS_PENDING');
      assert.equal(message, `Migrations pending: function ${file!.name} (at ${LATEST_MIGRATION}, expected ${LATEST_MIGRATION})`);
    } finally {
      await t.db.updateTable('schema_functions').set({ hash: file!.hash }).where('name', '=', file!.name).execute();
    }
    assert.equal((await t.app.inject({ method: 'GET', url: '/ready' })).statusCode, 200);
  });
});
