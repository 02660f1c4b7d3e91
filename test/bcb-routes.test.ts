/**
 * Every operation of BCB's dialect (/v2) in openapi.json, through the shared cases of
 * test/support/bcb-route-cases.ts: the token and its certificate, the operation's scope, another
 * account's resource, and the owner's answer against BCB's schemas. An operation added to /v2 is
 * covered as soon as it is documented, and fails until test/support/bcb-route-fixtures.ts says
 * what its cases need.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createClient, randomCnpj, type TestClient } from './factories.ts';
import { startTestApp, type TestApp } from './harness.ts';
import { bcbOperations, bcbRouteCases, tokenWithout, type BcbContext } from './support/bcb-route-cases.ts';
import { BCB_ROUTE_FIXTURES, makeBcbOwned, type BcbOwned } from './support/bcb-route-fixtures.ts';
import { BCB_OPERATIONS } from './support/bcb-schemas.ts';

const OPERATIONS = bcbOperations();

describe("every operation of BCB's dialect", () => {
  let context: BcbContext<BcbOwned>;
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
    // A company: Pix Automático's receiver is one.
    const a: TestClient = await createClient(t, { name: 'Padaria Pao Quente', document: randomCnpj() });
    const b: TestClient = await createClient(t);
    const owned = await makeBcbOwned(t, a);
    const tokens = new Map<string, Record<string, string>>();
    context = {
      t,
      a,
      b,
      owned,
      withoutScope: async (scope) => {
        if (!tokens.has(scope)) tokens.set(scope, { authorization: `Bearer ${await tokenWithout(t, a, scope)}`, 'x-ssl-client-cert': a.cert.header });
        return tokens.get(scope)!;
      },
      send: (request, headers) =>
        t.app.inject({ method: request.method, url: request.url, headers: { ...request.headers, ...headers }, ...(request.payload === undefined ? {} : { payload: request.payload }) }),
    };
  });
  after(() => t.close());

  it("openapi.json has every operation of BCB's specification in scope, each with an entry in the fixtures", () => {
    const served = new Set(OPERATIONS.map((op) => op.bcb));
    const publicPayloads = new Set(['GET /{pixUrlAccessToken}', 'GET /cobv/{pixUrlAccessToken}', 'GET /rec/{recUrlAccessToken}']);
    assert.deepEqual(BCB_OPERATIONS.filter((op) => !served.has(op) && !publicPayloads.has(op)), [], "BCB's operations not served under /v2");
    const ids = new Set(OPERATIONS.map((op) => op.operationId));
    assert.deepEqual([...ids].filter((id) => !Object.hasOwn(BCB_ROUTE_FIXTURES, id)), [], 'operations without fixtures');
    assert.deepEqual(Object.keys(BCB_ROUTE_FIXTURES).filter((id) => !ids.has(id)), [], 'fixtures of no operation');
  });

  for (const op of OPERATIONS) {
    describe(`${op.method} ${op.path} (${op.operationId}, ${op.scope})`, () => bcbRouteCases(op, BCB_ROUTE_FIXTURES[op.operationId], () => context));
  }
});
