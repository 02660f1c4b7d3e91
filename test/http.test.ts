import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BODY_LIMIT_BYTES } from '../src/app.ts';
import { isDatabaseUnavailable } from '../src/http/errors.ts';
import { createClient, type TestClient } from './factories.ts';
import { startTestApp, type TestApp } from './harness.ts';
import { assertErrorShape } from './assertions.ts';

const isErrorBody = (body: unknown, status: number) => assertErrorShape(body, status);

describe('HTTP plumbing', () => {
  let t: TestApp;
  let client: TestClient;

  before(async () => {
    t = await startTestApp({ captureLogs: true });
    t.app.get('/test/boom', async () => {
      throw new Error('database password is hunter2');
    });
    client = await createClient(t);
  });
  after(() => t.close());

  it('answers an unknown route with 404 in the error shape', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/no/such/route?x=1' });
    assert.equal(res.statusCode, 404);
    const body = isErrorBody(res.json(), 404);
    assert.equal(body.error, 'Not Found');
    assert.equal(body.message, 'Route GET /no/such/route not found');
  });

  it('answers malformed JSON with 400', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/auth/token',
      headers: { 'content-type': 'application/json' },
      payload: '{"clientId": "a",',
    });
    assert.equal(res.statusCode, 400);
    assert.equal(isErrorBody(res.json(), 400).error, 'Bad Request');
  });

  it('answers an empty JSON body with 400', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/auth/token', headers: { 'content-type': 'application/json' }, payload: '' });
    assert.equal(res.statusCode, 400);
    isErrorBody(res.json(), 400);
  });

  it('answers an oversized body with 413', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/auth/token',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ clientId: 'x'.repeat(BODY_LIMIT_BYTES), clientSecret: 'y' }),
    });
    assert.equal(res.statusCode, 413);
    assert.equal(isErrorBody(res.json(), 413).error, 'Payload Too Large');
  });

  it('answers a body that is not JSON with 415 (the token routes also take an OAuth form)', async () => {
    const admin = { authorization: 'Bearer test-admin-token-0123456789' };
    for (const type of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded']) {
      const res = await t.app.inject({ method: 'POST', url: '/api/auth/token', headers: { 'content-type': type }, payload: 'clientId=a' });
      if (type === 'application/x-www-form-urlencoded') {
        // A form is an OAuth 2.0 request (RFC 6749 §4.4): its errors are OAuth's.
        assert.deepEqual([res.statusCode, res.json().error], [400, 'invalid_request'], res.body);
      } else {
        assert.equal(res.statusCode, 415, type);
        assert.equal(isErrorBody(res.json(), 415).error, 'Unsupported Media Type');
      }
      const other = await t.app.inject({ method: 'POST', url: '/admin/accounts', headers: { ...admin, 'content-type': type }, payload: 'name=a' });
      assert.equal(other.statusCode, 415, `${type} on /admin/accounts`);
      assert.equal(isErrorBody(other.json(), 415).error, 'Unsupported Media Type');
    }
  });

  it('names the field in validation errors', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/admin/accounts',
      headers: { authorization: 'Bearer test-admin-token-0123456789' },
      payload: { name: 'Ana', document: 12345678909 },
    });
    assert.equal(res.statusCode, 400);
    assert.match(isErrorBody(res.json(), 400).message, /document/);
  });

  it('hides an unexpected error behind a generic 500 and logs its stack', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/test/boom' });
    assert.equal(res.statusCode, 500);
    const body = isErrorBody(res.json(), 500);
    assert.equal(body.message, 'Internal server error');
    assert.doesNotMatch(res.body, /hunter2/);
    const logged = t.logs.map((l) => JSON.parse(l) as { msg?: string; reqId?: string; err?: { stack?: string } }).find((l) => l.msg === 'unhandled error');
    assert.ok(logged?.err?.stack?.includes('hunter2'), 'the stack is logged for the operator');
    // The request's logger is bound to its id, as the answer names it.
    assert.equal(logged?.reqId, res.headers['x-request-id']);
  });

  it('gives every answer a request id, echoing a sane x-request-id', async () => {
    const own = await t.app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'trace-abc_123' } });
    assert.equal(own.headers['x-request-id'], 'trace-abc_123');
    const generated = await t.app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'bad id\u0001<script>' } });
    assert.match(String(generated.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    const error = await t.app.inject({ method: 'GET', url: '/nowhere' });
    assert.match(String(error.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  });

  it('never logs tokens, secrets, certificates or documents', async () => {
    await t.app.inject({ method: 'GET', url: '/balance', headers: client.headers });
    await t.app.inject({ method: 'GET', url: `/api/pix/transactions/pix-key/${client.document}` });
    await t.app.inject({
      method: 'POST',
      url: '/api/auth/token',
      headers: { 'x-ssl-client-cert': client.cert.header },
      payload: { clientId: client.clientId, clientSecret: client.clientSecret },
    });
    const all = t.logs.join('\n');
    assert.ok(all.length > 0);
    assert.ok(!all.includes(client.token), 'token');
    assert.ok(!all.includes(client.token.split('.')[2]!), 'token signature');
    assert.ok(!all.includes(client.clientSecret), 'client secret');
    assert.ok(!all.includes(client.cert.header.slice(60, 120)), 'certificate');
    assert.ok(!all.includes(client.document), 'document');
  });

  it('serves the OpenAPI document and the docs page', async () => {
    const json = await t.app.inject({ method: 'GET', url: '/docs/json' });
    assert.equal(json.statusCode, 200);
    const doc = json.json<{ openapi: string; paths: Record<string, unknown> }>();
    assert.equal(doc.openapi, '3.1.0');
    for (const path of ['/api/auth/token', '/oauth/token', '/accounts/balances', '/balance', '/admin/accounts']) {
      assert.ok(doc.paths[path], path);
    }
    const page = await t.app.inject({ method: 'GET', url: '/docs/' });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /swagger/i);
  });

  it('shows /docs a part at a time, as OpenAPI 3.0: the parts hold every path of the whole document once', async () => {
    const whole = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json<{ openapi: string; paths: Record<string, unknown> }>();
    assert.equal(whole.openapi, '3.1.0', 'the whole document stays 3.1');
    const initializer = await t.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
    const seen: string[] = [];
    const bodies: string[] = [];
    for (const part of ['account', 'api-pix', 'operator']) {
      assert.match(initializer.body, new RegExp(`/docs/parts/${part}`), 'the page lists the part');
      const res = await t.app.inject({ method: 'GET', url: `/docs/parts/${part}` });
      assert.equal(res.statusCode, 200);
      const doc = res.json<{ openapi: string; paths: Record<string, unknown> }>();
      assert.equal(doc.openapi, '3.0.3');
      assert.ok(Object.keys(doc.paths).length > 0, part);
      seen.push(...Object.keys(doc.paths));
      // Nothing 3.0 does not say: type arrays, a null type, const.
      assert.doesNotMatch(res.body, /"type":\[|"type":"null"|"const":/);
      bodies.push(res.body);
    }
    assert.ok(bodies.some((body) => body.includes('"nullable":true')), 'nullable types said as 3.0 says them');
    assert.deepEqual(seen.sort(), Object.keys(whole.paths).sort());
    assertErrorShape((await t.app.inject({ method: 'GET', url: '/docs/parts/other' })).json(), 400);
  });

  it('takes a request with no body on every route that takes none, whatever its content type says', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json<{ paths: Record<string, Record<string, { requestBody?: unknown }>> }>();
    const admin = { authorization: 'Bearer test-admin-token-0123456789' };
    let routes = 0;
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (!['post', 'put', 'patch', 'delete'].includes(method) || operation.requestBody) continue;
        routes++;
        const url = path.replace(/\{[^}]+\}/g, '999999');
        const auth = /^\/(admin|sandbox)\//.test(path) ? admin : client.headers;
        const send = (headers: Record<string, string>) => t.app.inject({ method: method.toUpperCase() as 'POST', url, headers: { ...auth, ...headers } });
        const plain = await send({});
        // As SDKs send them: with a JSON content type and a zero length, or no length at all.
        const typedHeaders: Record<string, string>[] = [{ 'content-type': 'application/json', 'content-length': '0' }, { 'content-type': 'application/json; charset=utf-8' }];
        for (const headers of typedHeaders) {
          const typed = await send(headers);
          assert.equal(typed.statusCode, plain.statusCode, `${method} ${path} ${JSON.stringify(headers)}: ${typed.body}`);
          assert.doesNotMatch(typed.body, /Body is empty/);
        }
      }
    }
    assert.ok(routes >= 10, `${routes} routes take no body`);
    const none = await t.app.inject({ method: 'DELETE', url: '/v2/webhook/some-key', headers: { ...client.headers, 'content-type': 'application/json' } });
    assert.equal(none.statusCode, 404, none.body);
    // A route that takes a body still says that it is missing.
    const missing = await t.app.inject({ method: 'POST', url: '/api/webhooks', headers: { ...client.headers, 'content-type': 'application/json', 'content-length': '0' } });
    assert.equal(missing.statusCode, 400);
  });

  it('reports liveness and readiness', async () => {
    const health = await t.app.inject({ method: 'GET', url: '/health' });
    assert.deepEqual([health.statusCode, health.json()], [200, { status: 'ok' }]);
    const ready = await t.app.inject({ method: 'GET', url: '/ready' });
    assert.equal(ready.statusCode, 200);
    assert.equal(ready.json().status, 'ready');
  });
});

describe('hostile strings', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  it('refuses NUL characters and lone surrogates anywhere in a request with 400, never 500', async () => {
    const admin = { authorization: 'Bearer test-admin-token-0123456789' };
    const cases = [
      { method: 'POST' as const, url: '/admin/accounts', payload: { name: 'a\u0000b', document: '52998224725' }, where: /name/ },
      {
        method: 'POST' as const,
        url: '/sandbox/dict/keys',
        payload: { key: 'x@example.com', name: 'Zé', document: '52998224725', ispb: '12345678', bankName: '\u0000' },
        where: /bankName/,
      },
      { method: 'GET' as const, url: '/admin/accounts/1/certificates/%00', payload: undefined, where: /params/ },
      // A lone surrogate is valid JSON text but no database text: 400 naming the field too.
      { method: 'POST' as const, url: '/admin/accounts', payload: '{"name":"a\\ud800b","document":"52998224725"}', where: /name/ },
    ];
    for (const c of cases) {
      const headers = typeof c.payload === 'string' ? { ...admin, 'content-type': 'application/json' } : admin;
      const res = await t.app.inject({ method: c.method, url: c.url, headers, ...(c.payload ? { payload: c.payload } : {}) });
      assert.notEqual(res.statusCode, 500, res.body);
      assert.equal(res.statusCode === 400 || res.statusCode === 404, true, `${c.url}: ${res.statusCode} ${res.body}`);
      isErrorBody(res.json(), res.statusCode);
      if (res.statusCode === 400) assert.match(res.json<{ message: string }>().message, c.where);
    }
  });
});

describe('database outages', () => {
  it('are told apart from other errors: they answer 503, to be retried with the same idempotency key', () => {
    for (const error of [
      { code: '57P01', message: 'terminating connection due to administrator command' },
      { code: '57P03', message: 'the database system is starting up' },
      { code: '08006', message: 'connection failure' },
      { code: '53300', message: 'too many connections' },
      { code: '40P01', message: 'deadlock detected' },
      { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:5432' },
      new Error('Connection terminated unexpectedly'),
      new Error('Client has encountered a connection error and is not queryable'),
    ]) {
      assert.equal(isDatabaseUnavailable(error), true, JSON.stringify(error));
    }
    for (const error of [new Error('boom'), { code: '23505', message: 'duplicate key' }, { code: '22P02' }, null, 'text']) {
      assert.equal(isDatabaseUnavailable(error), false, JSON.stringify(error));
    }
  });
});
