import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount, creditAccount } from '../../../test/factories.ts';
import { startTestApp, type TestApp } from '../../../test/harness.ts';
import { BalanceReader } from './balance-reader.ts';
import { holderBalances } from './service.ts';

describe('coalesced balance reads', () => {
  let t: TestApp;
  let accounts: number[];
  before(async () => {
    t = await startTestApp();
    accounts = [];
    for (let i = 0; i < 5; i++) {
      const a = await createAccount(t);
      await creditAccount(t.db, a.accountId, BigInt(1000 * (i + 1) + i));
      accounts.push(a.accountId);
    }
  });
  after(() => t.close());

  it('answers each of many concurrent reads with its own account, as a direct read would', async () => {
    const reader = new BalanceReader(t.db);
    const asked = Array.from({ length: 60 }, (_, i) => BigInt(accounts[i % accounts.length]!));
    const answers = await Promise.all(asked.map((id) => reader.read(id)));
    for (const [i, id] of asked.entries()) {
      assert.deepEqual(answers[i], await holderBalances(t.db, id));
      assert.equal(answers[i]!.available, BigInt(1000 * ((i % accounts.length) + 1) + (i % accounts.length)));
      assert.equal(answers[i]!.blocked, 0n);
    }
  });

  it('answers undefined for an account that does not exist, beside ones that do', async () => {
    const reader = new BalanceReader(t.db);
    const [missing, present] = await Promise.all([reader.read(987_654_321n), reader.read(BigInt(accounts[0]!))]);
    assert.equal(missing, undefined);
    assert.equal(present!.available, 1000n);
  });

  it('never answers from a read that started before the request: a credit committed before it is seen', async () => {
    const reader = new BalanceReader(t.db);
    const id = accounts[1]!;
    const before = (await reader.read(BigInt(id)))!.available;
    // A read in flight while the credit commits, then a read asked after the commit.
    const inFlight = reader.read(BigInt(id));
    await creditAccount(t.db, id, 7n);
    const after = await reader.read(BigInt(id));
    assert.equal(after!.available, before + 7n);
    assert.ok([before, before + 7n].includes((await inFlight)!.available));
  });
});
