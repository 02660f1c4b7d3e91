import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { transferRow } from '../../../test/factories.ts';
import { createTestDatabase, type TestDatabase } from '../../../test/harness.ts';
import { AppError } from '../../http/errors.ts';
import { TransferBatcher } from './batcher.ts';

const row = (accountId: bigint) => transferRow({ accountId });

describe('transfer batcher admission control', () => {
  let t: TestDatabase;
  before(async () => {
    t = await createTestDatabase();
  });
  after(() => t.drop());

  it('refuses at once with 503 and Retry-After beyond its queue, instead of queueing into timeouts', async () => {
    const batcher = new TransferBatcher(t.db, { maxQueue: 2, maxBatch: 64 });
    // The first goes to the database at once; the next two wait; the rest are refused.
    const answers = await Promise.allSettled(Array.from({ length: 6 }, () => batcher.submit(row(1n))));
    const refused = answers.filter((a) => a.status === 'rejected' && a.reason instanceof AppError && a.reason.statusCode === 503);
    assert.equal(refused.length, 3);
    const error = (refused[0] as PromiseRejectedResult).reason as AppError;
    assert.equal(error.headers?.['retry-after'], '1');
    // The admitted ones reached the database (no such account, so each fails there, not here).
    for (const a of answers.slice(0, 3)) {
      assert.ok(a.status === 'fulfilled' || !(a.reason instanceof AppError && a.reason.statusCode === 503));
    }
  });
});
