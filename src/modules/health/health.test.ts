import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { errorMessage } from '../../../test/assertions.ts';
import { startTestApp, type TestApp } from '../../../test/harness.ts';
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

  it('is 503 MIGRATIONS_PENDING when a migration below the highest one is missing', async () => {
    // Migrations written on separate branches are numbered apart: a later one may be applied first.
    const first = loadMigrations()[0]!;
    const row = await t.db.selectFrom('schema_migrations').selectAll().where('version', '=', first.version).executeTakeFirstOrThrow();
    await t.db.deleteFrom('schema_migrations').where('version', '=', first.version).execute();
    try {
      const message = errorMessage(await t.app.inject({ method: 'GET', url: '/ready' }), 503, 'MIGRATIONS_PENDING');
      assert.equal(message, `Migrations pending: ${first.version} (at ${LATEST_MIGRATION}, expected ${LATEST_MIGRATION})`);
    } finally {
      await t.db.insertInto('schema_migrations').values(row).execute();
    }
    assert.equal((await t.app.inject({ method: 'GET', url: '/ready' })).statusCode, 200);
  });
});
