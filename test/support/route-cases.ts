/**
 * The cases every account route must pass, generated for each operation of openapi.json that
 * takes the bearer token (after Unkey's `runSharedRoleTests`): no token, a token with a wrong
 * certificate or from an address that is not a trusted proxy (401), another account's resource
 * (404) and an invalid input (400 with its code). The cases that need a fixture read it from
 * ROUTE_FIXTURES, keyed by operationId; an operation without an entry fails, so a new route
 * cannot ship without its cases.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { issueCertificate } from '../../src/lib/certificate-authority.ts';
import type { ErrorCode } from '../../src/http/error-codes.ts';
import type { AccountApi, Method } from '../../scripts/lib/api-client.ts';
import { assertError, assertErrorShape } from '../assertions.ts';
import { apiClient, createClient, operator, type TestClient } from '../factories.ts';
import { startTestApp, type TestApp } from '../harness.ts';
import { ROUTE_FIXTURES, type Owned } from './route-fixtures.ts';
import { isScope } from '../../src/modules/auth/scopes.ts';
import { tokenWithout } from './bcb-route-cases.ts';

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  example?: unknown;
}

export interface AccountOperation {
  operationId: string;
  method: Method;
  /** The path template, /cob/{txid}. */
  path: string;
  parameters: Parameter[];
  /** The request body's example, if the operation takes a body. */
  body?: unknown;
  /** The scope its `security` names (BCB's, or the service's own). */
  scope: string;
}

interface DocumentOperation {
  operationId: string;
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { example?: unknown }> };
}

/** Every operation of openapi.json that takes the account's bearer token. */
export function accountOperations(): AccountOperation[] {
  const doc = JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8')) as {
    paths: Record<string, Record<string, DocumentOperation>>;
  };
  const operations: AccountOperation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const bearer = op.security?.find((s) => 'bearerAuth' in s)?.bearerAuth;
      if (!bearer) continue;
      const body = op.requestBody ? Object.values(op.requestBody.content)[0]?.example : undefined;
      const scope = bearer[0] ?? '';
      operations.push({ operationId: op.operationId, method: method.toUpperCase() as Method, path, parameters: op.parameters ?? [], scope, ...(body === undefined ? {} : { body }) });
    }
  }
  return operations;
}

/** Changes to an operation's example request: parameters by name (undefined drops one), and the body. */
export interface RequestChanges {
  params?: Record<string, unknown>;
  body?: unknown;
}

export interface RouteRequest {
  method: Method;
  url: string;
  headers: Record<string, string>;
  payload?: string;
}

/** The operation's example request (openapi.json's examples) with `changes`, and a fresh idempotency key. */
export function exampleRequest(op: AccountOperation, changes: RequestChanges = {}): RouteRequest {
  const value = (p: Parameter) => (changes.params && Object.hasOwn(changes.params, p.name) ? changes.params[p.name] : p.example);
  const url = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    const p = op.parameters.find((q) => q.in === 'path' && q.name === name);
    assert.ok(p && value(p) !== undefined, `${op.operationId}: no value for path parameter ${name}`);
    return encodeURIComponent(String(value(p)));
  });
  const query = new URLSearchParams();
  const headers: Record<string, string> = { 'x-idempotency-key': randomUUID() };
  for (const p of op.parameters) {
    const v = value(p);
    if (v === undefined || p.in === 'path') continue;
    if (p.in === 'query') query.set(p.name, String(v));
    else if (p.name !== 'x-idempotency-key') headers[p.name] = String(v);
  }
  const body = changes.body !== undefined ? changes.body : op.body;
  return {
    method: op.method,
    url: query.size > 0 ? `${url}?${query}` : url,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  };
}

/** The app the cases run on: accounts A (the owner) and B, a certificate linked to no account, and A's resources. */
export interface RouteContext {
  t: TestApp;
  a: TestClient;
  b: TestClient;
  /** X-SSL-Client-Cert of a certificate no account has linked. */
  unlinked: string;
  owned: Owned;
  /** A's routes, through the API client. */
  owner: AccountApi;
  /** Sends a request from the trusted proxy (or `remoteAddress`), with `headers` on top of its own. */
  send(request: RouteRequest, headers: Record<string, string>, remoteAddress?: string): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export const TRUSTED_PROXY = '10.9.8.7';

export async function startRouteContext(): Promise<RouteContext> {
  const t = await startTestApp({ env: { TRUSTED_PROXIES: `127.0.0.1,::1,${TRUSTED_PROXY}` } });
  const a = await createClient(t);
  const b = await createClient(t);
  const unlinked = encodeURIComponent((await issueCertificate({ commonName: 'linked-to-nobody' })).certPem);
  const owner = apiClient(t).account(a.headers);
  const owned = await ROUTE_FIXTURES.make(owner, operator(t), a.accountId);
  return {
    t,
    a,
    b,
    unlinked,
    owned,
    owner,
    send: (request, headers, remoteAddress = TRUSTED_PROXY) =>
      t.app.inject({ method: request.method, url: request.url, headers: { ...request.headers, ...headers }, remoteAddress, ...(request.payload === undefined ? {} : { payload: request.payload }) }),
    close: () => t.close(),
  };
}

/** The cases of one operation, as `it` blocks (in the caller's describe); `context` is read when they run. */
export function routeCases(op: AccountOperation, context: () => RouteContext): void {
  const entry = ROUTE_FIXTURES.operations[op.operationId];
  if (!entry) {
    it('has its cases in test/support/route-fixtures.ts', () => assert.fail(`${op.operationId} has no entry in ROUTE_FIXTURES: say what another account's resource and an invalid input are (or that it has none)`));
    return;
  }
  authenticationCases(op, context);

  const { foreign, invalid } = entry;
  if ('none' in foreign) it(`another account's resource: none (${foreign.none})`, () => undefined);
  else {
    it(`another account's resource is 404 ${foreign.code}, and its owner's answer is ${foreign.ownerStatus ?? '2xx'}`, async () => {
      const { a, b, owned, owner, send } = context();
      const changes = await foreign.request({ owned, owner });
      const request = () => exampleRequest(op, changes);
      assertError(await send(request(), b.headers), 404, undefined, foreign.code);
      const mine = await send(request(), a.headers);
      if (foreign.ownerStatus === undefined) assert.ok(mine.statusCode >= 200 && mine.statusCode < 300, `the owner got ${mine.statusCode}: ${mine.body}`);
      else assert.equal(mine.statusCode, foreign.ownerStatus, mine.body);
    });
  }

  if ('none' in invalid) it(`invalid input: none (${invalid.none})`, () => undefined);
  else {
    it(`invalid input is 400 ${invalid.code}`, async () => {
      const { a, owned, owner, send } = context();
      assertError(await send(exampleRequest(op, await invalid.request({ owned, owner })), a.headers), 400, undefined, invalid.code);
    });
  }
}

function authenticationCases(op: AccountOperation, context: () => RouteContext): void {
  const check = (res: LightMyRequestResponse, code: ErrorCode, message?: RegExp) => assertError(res, 401, message, code);

  it('no token is 401 TOKEN_MISSING', async () => {
    const { a, send } = context();
    check(await send(exampleRequest(op), { 'x-ssl-client-cert': a.cert.header }), 'TOKEN_MISSING');
  });

  it('a token without its certificate is 401 CERTIFICATE_REQUIRED', async () => {
    const { a, send } = context();
    check(await send(exampleRequest(op), { authorization: a.headers.authorization! }), 'CERTIFICATE_REQUIRED', /bound to a client certificate/);
  });

  it("a token with another account's certificate is 401 CERTIFICATE_MISMATCH", async () => {
    const { a, b, send } = context();
    check(await send(exampleRequest(op), { authorization: a.headers.authorization!, 'x-ssl-client-cert': b.cert.header }), 'CERTIFICATE_MISMATCH');
  });

  it('a token with a certificate linked to no account is 401 CERTIFICATE_MISMATCH', async () => {
    const { a, unlinked, send } = context();
    check(await send(exampleRequest(op), { authorization: a.headers.authorization!, 'x-ssl-client-cert': unlinked }), 'CERTIFICATE_MISMATCH');
  });

  it('the bound certificate from an address that is not a trusted proxy is 401', async () => {
    const { a, send } = context();
    check(await send(exampleRequest(op), a.headers, '192.0.2.10'), 'CERTIFICATE_REQUIRED', /trusted proxy/);
  });

  it(`requires a scope (${op.scope || 'none named'}): a token without it is 403 SCOPE_NOT_GRANTED`, async () => {
    assert.ok(isScope(op.scope), `${op.operationId} names the scope it requires in its security entry`);
    const { a, t, send } = context();
    const without = await tokenWithout(t, a, op.scope);
    const res = await send(exampleRequest(op), { ...a.headers, authorization: `Bearer ${without}` });
    assertError(res, 403, new RegExp(op.scope.replace('.', '\\.')), 'SCOPE_NOT_GRANTED');
  });

  it('the bound certificate from the trusted proxy gets past authentication', async () => {
    const { a, send } = context();
    const res = await send(exampleRequest(op), a.headers);
    assert.notEqual(res.statusCode, 401, res.body);
    if (res.statusCode >= 400) assertErrorShape(res.json(), res.statusCode);
  });
}
