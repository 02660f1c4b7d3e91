import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createClient, creditAccount, type TestClient } from '../../../test/factories.ts';
import { startTestApp, type TestApp } from '../../../test/harness.ts';

describe('balances', () => {
  let t: TestApp;
  let a: TestClient;
  let b: TestClient;

  before(async () => {
    t = await startTestApp();
    [a, b] = await Promise.all([createClient(t), createClient(t)]);
    await creditAccount(t.db, a.accountId, 123_450n);
    await creditAccount(t.db, b.accountId, 1n);
  });
  after(() => t.close());

  it('GET /accounts/balances answers the central-bank view with one item', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/accounts/balances', headers: a.headers });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.data.length, 1);
    assert.deepEqual(body.data[0].balanceAmount, { available: 1234.5, blocked: 0, overdraft: 0 });
    assert.equal(body.data[0].eventDate, t.clock.now().toISOString());
  });

  it('GET /balance answers the standard view', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/balance', headers: b.headers });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { grossBalance: 0.01, blockedBalance: 0, netBalance: 0.01, consultedAt: t.clock.now().toISOString() });
  });
});
