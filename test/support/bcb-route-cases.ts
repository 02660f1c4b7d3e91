/**
 * The cases every operation of BCB's dialect (/v2) must pass, generated for each operation of
 * openapi.json that names an `oauth2` scope: no token, a token with another account's certificate
 * (401 AcessoNegado with WWW-Authenticate: Bearer), a token without the operation's scope (403
 * AcessoNegado), another account's resource (404 with the operation's problem type), and the
 * owner's answer, valid against BCB's schemas for that operation (an extension BCB does not
 * define, as GET /loc/{id}/qrcode, is checked for its problems only). The cases that need a resource
 * read it from BCB_ROUTE_FIXTURES, keyed by operationId; an operation without an entry fails.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { ProblemName } from '../../src/dialects/bcb/problems.ts';
import { SCOPES } from '../../src/modules/auth/scopes.ts';
import type { Method } from '../../scripts/lib/api-client.ts';
import type { TestClient } from '../factories.ts';
import type { TestApp } from '../harness.ts';
import { assertBcbAnswer, assertBcbDefinition, BCB_OPERATIONS } from './bcb-schemas.ts';
import { exampleRequest, type AccountOperation, type Parameter, type RequestChanges, type RouteRequest } from './route-cases.ts';

export interface BcbOperation extends AccountOperation {
  /** The scope its `security` names. */
  scope: string;
  /** BCB's `METHOD /path` of it (the path without /v2). */
  bcb: string;
}

interface DocumentOperation {
  operationId: string;
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { example?: unknown }> };
}

/** Every operation of openapi.json under /v2 that requires a scope of BCB's. */
export function bcbOperations(): BcbOperation[] {
  const doc = JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8')) as { paths: Record<string, Record<string, DocumentOperation>> };
  const operations: BcbOperation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const scope = op.security?.find((s) => 'oauth2' in s)?.oauth2?.[0];
      if (scope === undefined) continue;
      const body = op.requestBody ? Object.values(op.requestBody.content)[0]?.example : undefined;
      operations.push({
        operationId: op.operationId,
        method: method.toUpperCase() as Method,
        path,
        // An optional parameter whose example is null is left out of the example request.
        parameters: (op.parameters ?? []).filter((p) => p.example !== null),
        ...(body === undefined ? {} : { body }),
        scope,
        bcb: `${method.toUpperCase()} ${path.replace(/^\/v2/, '')}`,
      });
    }
  }
  return operations;
}

/** What a case is given: the app, the owner (A) and another account (B), and A's resources. */
export interface BcbContext<Owned> {
  t: TestApp;
  a: TestClient;
  b: TestClient;
  owned: Owned;
  /** A's headers with a token that holds every scope but `scope`. */
  withoutScope(scope: string): Promise<Record<string, string>>;
  send(request: RouteRequest, headers: Record<string, string>): Promise<LightMyRequestResponse>;
}

export type BcbForeign<Owned> = { none: string } | { request: (owned: Owned) => RequestChanges; problem: ProblemName };

export interface BcbRouteFixture<Owned> {
  /** The request the owner makes (changes to the operation's example): its answer is checked against BCB's schemas. */
  own: (owned: Owned) => RequestChanges;
  foreign: BcbForeign<Owned>;
}

/** A token of the client that holds every scope but `scope` (the standard OAuth request). */
export async function tokenWithout(t: TestApp, client: TestClient, scope: string): Promise<string> {
  const scopes = SCOPES.filter((s) => s !== scope).join(' ');
  const res = await t.app.inject({
    method: 'POST',
    url: '/oauth/token',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
      'x-ssl-client-cert': client.cert.header,
    },
    payload: new URLSearchParams({ grant_type: 'client_credentials', scope: scopes }).toString(),
  });
  assert.equal(res.statusCode, 200, res.body);
  return (res.json() as { access_token: string }).access_token;
}

function assertProblem(res: LightMyRequestResponse, status: number, name: ProblemName): void {
  assert.equal(res.statusCode, status, res.body);
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
  const body = res.json() as { type: string };
  assertBcbDefinition('Problema', body);
  assert.equal(body.type, `https://pix.bcb.gov.br/api/v2/error/${name}`, res.body);
}

/** The cases of one operation, as `it` blocks; `context` is read when they run. */
export function bcbRouteCases<Owned>(op: BcbOperation, fixture: BcbRouteFixture<Owned> | undefined, context: () => BcbContext<Owned>): void {
  if (!fixture) {
    it('has its cases in test/support/bcb-route-fixtures.ts', () => assert.fail(`${op.operationId} has no entry in BCB_ROUTE_FIXTURES`));
    return;
  }
  const request = (owned: Owned) => exampleRequest(op, fixture.own(owned));

  it('no token is 401 AcessoNegado, with WWW-Authenticate: Bearer', async () => {
    const { a, owned, send } = context();
    const res = await send(request(owned), { 'x-ssl-client-cert': a.cert.header });
    assertProblem(res, 401, 'AcessoNegado');
    assert.match(String(res.headers['www-authenticate']), /^Bearer/);
  });

  it("a token with another account's certificate is 401 AcessoNegado", async () => {
    const { a, b, owned, send } = context();
    assertProblem(await send(request(owned), { authorization: a.headers.authorization!, 'x-ssl-client-cert': b.cert.header }), 401, 'AcessoNegado');
  });

  it(`a token without ${op.scope} is 403 AcessoNegado`, async () => {
    const { owned, send, withoutScope } = context();
    const res = await send(request(owned), await withoutScope(op.scope));
    assertProblem(res, 403, 'AcessoNegado');
    if (BCB_OPERATIONS.includes(op.bcb)) assertBcbAnswer(op.bcb, res);
  });

  it("the owner's answer is what BCB's specification says", async () => {
    const { a, owned, send } = context();
    const res = await send(request(owned), a.headers);
    assert.ok(res.statusCode >= 200 && res.statusCode < 300, `${res.statusCode}: ${res.body}`);
    if (BCB_OPERATIONS.includes(op.bcb)) assertBcbAnswer(op.bcb, res);
  });

  const { foreign } = fixture;
  if ('none' in foreign) it(`another account's resource: none (${foreign.none})`, () => undefined);
  else {
    it(`another account's resource is 404 ${foreign.problem}`, async () => {
      const { b, owned, send } = context();
      const res = await send(exampleRequest(op, foreign.request(owned)), b.headers);
      assertProblem(res, 404, foreign.problem);
      if (BCB_OPERATIONS.includes(op.bcb)) assertBcbAnswer(op.bcb, res);
    });
  }
}
