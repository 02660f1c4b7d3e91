import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createClient, creditAccount, type TestClient } from '../../../test/factories.ts';
import { adminHeaders, startTestApp, type TestApp } from '../../../test/harness.ts';
import { deleteExpiredIdempotencyKeys } from './repo.ts';

describe('idempotency housekeeping', () => {
  let t: TestApp;
  let client: TestClient;

  before(async () => {
    t = await startTestApp();
    client = await createClient(t);
    await creditAccount(t.db, client.accountId, 100_00n);
    const key = await t.app.inject({
      method: 'POST',
      url: '/sandbox/dict/keys',
      headers: adminHeaders,
      payload: { key: 'house@example.com', name: 'House', document: '11222333000181', ispb: '60746948' },
    });
    assert.equal(key.statusCode, 201, key.body);
  });
  after(() => t.close());

  it('deletes stored answers only once their 24 hours are over, and never the transfers', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/dict/pix',
        headers: { ...client.headers, 'x-idempotency-key': randomUUID() },
        payload: { pixKey: 'house@example.com', payment: { currency: 'BRL', amount: 1 } },
      });
      assert.equal(res.statusCode, 201, res.body);
    }
    const count = async (table: 'idempotency_keys' | 'transactions') =>
      (await t.db.selectFrom(table).select((eb) => eb.fn.countAll<bigint>().as('n')).executeTakeFirstOrThrow()).n;

    assert.equal(await deleteExpiredIdempotencyKeys(t.db, new Date(t.clock.now().getTime() + 23 * 3_600_000), 100), 0);
    assert.equal(await count('idempotency_keys'), 3n);
    // Bounded batches: two now, the last one in the next call.
    const later = new Date(t.clock.now().getTime() + 24 * 3_600_000 + 1);
    assert.equal(await deleteExpiredIdempotencyKeys(t.db, later, 2), 2);
    assert.equal(await deleteExpiredIdempotencyKeys(t.db, later, 2), 1);
    assert.equal(await count('idempotency_keys'), 0n);
    assert.equal(await count('transactions'), 3n);
  });
});
