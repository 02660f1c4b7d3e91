/**
 * Every account route of openapi.json, through the shared cases of test/support/route-cases.ts:
 * authentication (no token, a wrong certificate, an untrusted address), another account's
 * resource, and an invalid input. A route added to the API is covered as soon as it is
 * documented, and fails until test/support/route-fixtures.ts says what its cases need.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountOperations, routeCases, startRouteContext, type RouteContext } from './support/route-cases.ts';
import { ROUTE_FIXTURES } from './support/route-fixtures.ts';

const OPERATIONS = accountOperations();

describe('every account route', () => {
  let context: RouteContext;
  before(async () => {
    context = await startRouteContext();
  });
  after(() => context.close());

  it('openapi.json lists the account routes, each with an entry in the fixtures and none of another', () => {
    assert.ok(OPERATIONS.length >= 20, `${OPERATIONS.length} account operations`);
    assert.ok(OPERATIONS.some((op) => op.method === 'POST' && op.path === '/dict/pix'));
    const ids = new Set(OPERATIONS.map((op) => op.operationId));
    assert.deepEqual([...ids].filter((id) => !Object.hasOwn(ROUTE_FIXTURES.operations, id)), [], 'operations without fixtures');
    assert.deepEqual(Object.keys(ROUTE_FIXTURES.operations).filter((id) => !ids.has(id)), [], 'fixtures of no account operation');
  });

  for (const op of OPERATIONS) {
    describe(`${op.method} ${op.path} (${op.operationId})`, () => routeCases(op, () => context));
  }
});
