import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildListeners, type Listeners } from '../src/app.ts';
import { ManualClock } from '../src/lib/clock.ts';
import { errorMessage } from './assertions.ts';
import { createAccount, linkCertificate, randomCpf, requestToken } from './factories.ts';
import { adminHeaders, createTestDatabase, testConfig, type TestApp, type TestDatabase } from './harness.ts';

/** The factories take a test app; here each listener is one. */
const on = (app: FastifyInstance) => ({ app }) as TestApp;

describe('the listeners of a production process (ADMIN_PORT, by default 8081 on 127.0.0.1)', () => {
  let testDb: TestDatabase;
  let listeners: Listeners;

  before(async () => {
    testDb = await createTestDatabase();
    const config = testConfig({ PIX_MODE: 'production', DATABASE_URL: 'postgres://127.0.0.1/unused' });
    assert.deepEqual(config.admin, { port: 8081, host: '127.0.0.1' });
    listeners = await buildListeners({ config, db: testDb.db, clock: new ManualClock(new Date()), logLevel: false });
  });
  after(async () => {
    await listeners?.close();
    await testDb?.drop();
  });

  it('the operator API answers on the operator listener only: 404 ROUTE_NOT_FOUND on the public one', async () => {
    assert.notEqual(listeners.admin, listeners.main);
    const payload = { name: 'Conta Operada', document: randomCpf() };
    const onMain = await listeners.main.inject({ method: 'POST', url: '/admin/accounts', headers: adminHeaders, payload });
    errorMessage(onMain, 404, 'ROUTE_NOT_FOUND');
    const onAdmin = await listeners.admin.inject({ method: 'POST', url: '/admin/accounts', headers: adminHeaders, payload });
    assert.equal(onAdmin.statusCode, 201, onAdmin.body);
    errorMessage(await listeners.admin.inject({ method: 'POST', url: '/admin/accounts', payload }), 401, 'ADMIN_TOKEN_INVALID');
  });

  it('the account API and the sandbox are not on the operator listener; probes are on both', async () => {
    errorMessage(await listeners.admin.inject({ method: 'POST', url: '/api/auth/token', payload: {} }), 404, 'ROUTE_NOT_FOUND');
    errorMessage(await listeners.admin.inject({ method: 'GET', url: '/balance' }), 404, 'ROUTE_NOT_FOUND');
    for (const app of [listeners.main, listeners.admin]) {
      errorMessage(await app.inject({ method: 'POST', url: '/sandbox/settle', headers: adminHeaders, payload: {} }), 404, 'ROUTE_NOT_FOUND');
      assert.equal((await app.inject({ method: 'GET', url: '/health' })).statusCode, 200);
      assert.equal((await app.inject({ method: 'GET', url: '/ready' })).statusCode, 200);
    }
  });

  it('a certificate unlinked on the operator listener stops working on the public one at once', async () => {
    const account = await createAccount(on(listeners.admin));
    const cert = await linkCertificate(on(listeners.admin), account.accountId);
    const token = await requestToken(on(listeners.main), account, cert);
    const balance = () => listeners.main.inject({ method: 'GET', url: '/balance', headers: { authorization: `Bearer ${token}`, 'x-ssl-client-cert': cert.header } });
    assert.equal((await balance()).statusCode, 200);
    const unlinked = await listeners.admin.inject({ method: 'DELETE', url: `/admin/accounts/${account.accountId}/certificates/${cert.fingerprint}`, headers: adminHeaders });
    assert.equal(unlinked.statusCode, 204);
    assert.notEqual((await balance()).statusCode, 200);
  });
});

describe('the listeners of a sandbox process', () => {
  it('without ADMIN_PORT, one listener serves everything', async () => {
    const testDb = await createTestDatabase();
    const listeners = await buildListeners({ config: testConfig(), db: testDb.db, clock: new ManualClock(new Date()), logLevel: false });
    try {
      assert.equal(listeners.admin, listeners.main);
      const created = await listeners.main.inject({ method: 'POST', url: '/admin/accounts', headers: adminHeaders, payload: { name: 'Conta', document: randomCpf() } });
      assert.equal(created.statusCode, 201, created.body);
      assert.equal((await listeners.main.inject({ method: 'POST', url: '/sandbox/settle', headers: adminHeaders, payload: {} })).statusCode, 200);
    } finally {
      await listeners.close();
      await testDb.drop();
    }
  });
});
