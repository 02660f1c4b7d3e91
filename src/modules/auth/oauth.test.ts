import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify from 'fastify';
import { decodeJwt } from 'jose';
import { createClient, type TestClient } from '../../../test/factories.ts';
import { adminHeaders, startTestApp, type TestApp } from '../../../test/harness.ts';
import { runOperatorCommand } from '../../cli.ts';
import { registerErrorHandling } from '../../http/errors.ts';
import { SCOPES, SERVICE_SCOPES, requireScope } from './scopes.ts';
import { scopesOfClaim } from './tokens.ts';
import { hashSecret } from './secrets.ts';

const FORM = 'application/x-www-form-urlencoded';
const ALL = SCOPES.join(' ');

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

describe('OAuth 2.0 client-credentials token request', () => {
  let t: TestApp;
  let a: TestClient;

  before(async () => {
    t = await startTestApp();
    a = await createClient(t);
  });
  after(() => t.close());

  const cert = (c: TestClient = a) => ({ 'x-ssl-client-cert': c.cert.header });
  const form = (fields: Record<string, string>, headers: Record<string, string> = {}, url = '/oauth/token') =>
    t.app.inject({ method: 'POST', url, headers: { 'content-type': FORM, ...headers }, payload: new URLSearchParams(fields).toString() });

  function assertOAuthError(res: Awaited<ReturnType<typeof form>>, status: number, error: string) {
    assert.equal(res.statusCode, status, res.body);
    const body = res.json<Record<string, unknown>>();
    assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description'], res.body);
    assert.equal(body.error, error, res.body);
    assert.equal(typeof body.error_description, 'string');
    assert.equal(res.headers['cache-control'], 'no-store');
    if (status === 401) assert.match(String(res.headers['www-authenticate']), /^Basic /);
  }

  function assertGranted(res: Awaited<ReturnType<typeof form>>, scope = ALL) {
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json<Record<string, unknown>>();
    assert.deepEqual(Object.keys(body).sort(), ['access_token', 'expires_in', 'scope', 'token_type']);
    assert.equal(body.token_type, 'Bearer');
    assert.equal(body.expires_in, 1800);
    assert.equal(body.scope, scope);
    assert.equal(res.headers['cache-control'], 'no-store');
    const claims = decodeJwt(body.access_token as string);
    assert.equal(claims.sub, String(a.accountId));
    assert.equal(claims.scope, scope);
    assert.ok((claims.cnf as Record<string, unknown>)['x5t#S256']);
    return body.access_token as string;
  }

  it('form with HTTP Basic and no scope: every scope the client holds, a token that works', async () => {
    for (const url of ['/oauth/token', '/api/auth/token']) {
      const token = assertGranted(await form({ grant_type: 'client_credentials' }, { ...cert(), authorization: basic(a.clientId, a.clientSecret) }, url));
      const used = await t.app.inject({ method: 'GET', url: '/balance', headers: { authorization: `Bearer ${token}`, ...cert() } });
      assert.equal(used.statusCode, 200, used.body);
    }
  });

  it('form with client_id and client_secret, and the scopes asked for', async () => {
    const res = await form({ grant_type: 'client_credentials', client_id: a.clientId, client_secret: a.clientSecret, scope: 'cob.read cob.write' }, cert());
    assertGranted(res, 'cob.write cob.read');
  });

  it('JSON body with grant_type and HTTP Basic', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { ...cert(), authorization: basic(a.clientId, a.clientSecret) },
      payload: { grant_type: 'client_credentials', scope: 'pix.read' },
    });
    assertGranted(res, 'pix.read');
  });

  it('HTTP Basic whose parts are form-urlencoded (RFC 6749 §2.3.1)', async () => {
    const b = await createClient(t);
    const secret = 'p@ss:wörd +/%&=é';
    await t.db.updateTable('accounts').set({ client_secret_hash: await hashSecret(secret) }).where('id', '=', BigInt(b.accountId)).execute();
    const encoded = `${encodeURIComponent(b.clientId)}:${encodeURIComponent(secret).replaceAll('%20', '+')}`;
    const res = await form({ grant_type: 'client_credentials' }, { ...cert(b), authorization: `Basic ${Buffer.from(encoded).toString('base64')}` });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(decodeJwt(res.json<{ access_token: string }>().access_token).sub, String(b.accountId));
  });

  it('the seed JSON request still answers 201 with its shape', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/oauth/token', headers: cert(), payload: { clientId: a.clientId, clientSecret: a.clientSecret } });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(Object.keys(res.json()).sort(), ['access_token', 'expires_in', 'token_type']);
    assert.equal(decodeJwt(res.json<{ access_token: string }>().access_token).scope, ALL);
    const bad = await t.app.inject({ method: 'POST', url: '/oauth/token', headers: cert(), payload: { clientId: a.clientId, clientSecret: 'wrong' } });
    assert.equal(bad.statusCode, 401);
    assert.deepEqual(Object.keys(bad.json()).sort(), ['code', 'error', 'message', 'statusCode']);
  });

  describe('a body carrying grant_type is an OAuth request, whatever its content type', () => {
    const send = (payload: string, contentType: string | undefined, headers: Record<string, string> = {}, url = '/oauth/token') =>
      t.app.inject({ method: 'POST', url, headers: { ...(contentType === undefined ? {} : { 'content-type': contentType }), ...headers }, payload });
    const auth = () => ({ ...cert(), authorization: basic(a.clientId, a.clientSecret) });
    const TYPES = ['text/plain', 'text/plain; charset=utf-8', undefined, 'application/octet-stream'];

    function assertSeed415(res: Awaited<ReturnType<typeof form>>, label: string) {
      assert.equal(res.statusCode, 415, `${label}: ${res.body}`);
      const body = res.json<Record<string, unknown>>();
      assert.deepEqual(Object.keys(body).sort(), ['code', 'error', 'message', 'statusCode'], label);
      assert.deepEqual([body.statusCode, body.error, body.code], [415, 'Unsupported Media Type', 'UNSUPPORTED_MEDIA_TYPE'], label);
    }

    it('a form sent as text/plain, or with no content type, is read as a form: a token, on both routes', async () => {
      for (const url of ['/oauth/token', '/api/auth/token']) {
        for (const type of TYPES) {
          const res = await send('grant_type=client_credentials&scope=cob.read', type, auth(), url);
          assertGranted(res, 'cob.read');
        }
        const inForm = await send(new URLSearchParams({ grant_type: 'client_credentials', client_id: a.clientId, client_secret: a.clientSecret }).toString(), undefined, cert(), url);
        assertGranted(inForm);
      }
    });

    it('a JSON body with grant_type sent as text/plain is one too', async () => {
      assertGranted(await send(JSON.stringify({ grant_type: 'client_credentials', scope: 'pix.read' }), 'text/plain', auth()), 'pix.read');
    });

    it('its failures are RFC 6749 §5.2 bodies', async () => {
      for (const type of TYPES) {
        assertOAuthError(await send('grant_type=password', type, auth()), 400, 'unsupported_grant_type');
        assertOAuthError(await send('grant_type=', type, auth()), 400, 'invalid_request');
        assertOAuthError(await send('grant_type=client_credentials', type, cert()), 401, 'invalid_client');
        assertOAuthError(await send('grant_type=client_credentials', type, { ...cert(), authorization: basic(a.clientId, 'wrong') }), 401, 'invalid_client');
        assertOAuthError(await send('grant_type=client_credentials&scope=a&scope=b', type, auth()), 400, 'invalid_request');
        assertOAuthError(await send('grant_type=client_credentials&scope=saque.write', type, auth(), '/api/auth/token'), 400, 'invalid_scope');
        assertOAuthError(await send('grant_type=client_credentials', type, { authorization: basic(a.clientId, a.clientSecret) }), 400, 'invalid_request');
      }
    });

    it('without grant_type, other content types keep their 415 (the seed JSON request is unchanged)', async () => {
      const seedJson = JSON.stringify({ clientId: a.clientId, clientSecret: a.clientSecret });
      for (const url of ['/oauth/token', '/api/auth/token']) {
        for (const type of [...TYPES, 'application/xml', 'multipart/form-data; boundary=x']) {
          const label = `${url} ${type ?? '(none)'}`;
          assertSeed415(await send(seedJson, type, cert(), url), label);
          assertSeed415(await send(`clientId=${a.clientId}&clientSecret=${a.clientSecret}`, type, cert(), url), label);
          assertSeed415(await send('scope=a&scope=b', type, auth(), url), label);
          // Too long to be a token request: not read as one.
          assertSeed415(await send(`grant_type=client_credentials&scope=${'x'.repeat(10_000)}`, type, auth(), url), label);
        }
        const seed = await t.app.inject({ method: 'POST', url, headers: { ...cert(), 'content-type': 'application/json' }, payload: seedJson });
        assert.equal(seed.statusCode, 201, seed.body);
        assert.deepEqual(Object.keys(seed.json()).sort(), ['access_token', 'expires_in', 'token_type']);
        const empty = await t.app.inject({ method: 'POST', url, headers: cert() });
        assert.equal(empty.statusCode, 400, empty.body);
        assert.deepEqual(Object.keys(empty.json()).sort(), ['code', 'error', 'message', 'statusCode']);
      }
    });
  });

  describe('errors are RFC 6749 §5.2 bodies', () => {
    const auth = () => ({ ...cert(), authorization: basic(a.clientId, a.clientSecret) });
    it('missing grant_type: invalid_request', async () => assertOAuthError(await form({ scope: 'cob.read' }, auth()), 400, 'invalid_request'));
    it('another grant type: unsupported_grant_type', async () => assertOAuthError(await form({ grant_type: 'password' }, auth()), 400, 'unsupported_grant_type'));
    it('a JSON body with another grant type', async () => {
      const res = await t.app.inject({ method: 'POST', url: '/oauth/token', headers: auth(), payload: { grant_type: 'authorization_code' } });
      assertOAuthError(res, 400, 'unsupported_grant_type');
    });
    it('a parameter sent twice: invalid_request', async () => {
      const res = await t.app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': FORM, ...auth() }, payload: 'grant_type=client_credentials&scope=a&scope=b' });
      assertOAuthError(res, 400, 'invalid_request');
    });
    it('a malformed Basic header: invalid_client', async () => {
      for (const authorization of ['Basic !!!', `Basic ${Buffer.from('no-colon').toString('base64')}`, `Basic ${Buffer.from('id:%zz').toString('base64')}`]) {
        assertOAuthError(await form({ grant_type: 'client_credentials' }, { ...cert(), authorization }), 401, 'invalid_client');
      }
    });
    it('no client authentication: invalid_client', async () => assertOAuthError(await form({ grant_type: 'client_credentials' }, cert()), 401, 'invalid_client'));
    it('Basic and form credentials at once: invalid_request', async () => {
      assertOAuthError(await form({ grant_type: 'client_credentials', client_id: a.clientId, client_secret: a.clientSecret }, auth()), 400, 'invalid_request');
    });
    it('a wrong secret: invalid_client', async () => {
      assertOAuthError(await form({ grant_type: 'client_credentials' }, { ...cert(), authorization: basic(a.clientId, 'wrong') }), 401, 'invalid_client');
    });
    it('no certificate: invalid_request, 400 as for the JSON request', async () => {
      assertOAuthError(await form({ grant_type: 'client_credentials' }, { authorization: basic(a.clientId, a.clientSecret) }), 400, 'invalid_request');
    });
    it('a certificate of another client: invalid_client', async () => {
      const b = await createClient(t);
      assertOAuthError(await form({ grant_type: 'client_credentials' }, { ...cert(b), authorization: basic(a.clientId, a.clientSecret) }), 401, 'invalid_client');
    });
    it('an unknown scope: invalid_scope', async () => assertOAuthError(await form({ grant_type: 'client_credentials', scope: 'cob.read saque.write' }, auth()), 400, 'invalid_scope'));
  });

  describe('the operator limits the scopes a client holds', () => {
    it('over HTTP: the scope not held is invalid_scope, no scope asked gives those held; null gives them all back', async () => {
      const b = await createClient(t);
      const patch = (scopes: unknown, id: number = b.accountId) =>
        t.app.inject({ method: 'PATCH', url: `/admin/accounts/${id}`, headers: adminHeaders, payload: { scopes } });
      const limited = await patch(['cob.read', 'pix.read', 'cob.read']);
      assert.equal(limited.statusCode, 200, limited.body);
      assert.deepEqual(limited.json(), { accountId: b.accountId, clientId: b.clientId, scopes: ['cob.read', 'pix.read'], address: null });
      const auth = { ...cert(b), authorization: basic(b.clientId, b.clientSecret) };
      const held = await form({ grant_type: 'client_credentials' }, auth);
      assert.equal(held.json<{ scope: string }>().scope, 'cob.read pix.read');
      assertOAuthError(await form({ grant_type: 'client_credentials', scope: 'cob.read cob.write' }, auth), 400, 'invalid_scope');
      assert.equal((await patch(['saque.read'])).statusCode, 400);
      assert.equal((await patch(['cob.read'], 999_999_999)).statusCode, 404);
      assert.equal((await patch(null)).json<{ scopes: string[] }>().scopes.join(' '), ALL);
      assert.equal((await form({ grant_type: 'client_credentials' }, auth)).json<{ scope: string }>().scope, ALL);
    });

    it('with the CLI', async () => {
      const b = await createClient(t);
      const out = JSON.parse(await runOperatorCommand(t.db, t.config, ['scopes', 'limit', '--account', String(b.accountId), '--scopes', 'webhook.read,webhook.write']));
      assert.deepEqual(out.scopes, ['webhook.write', 'webhook.read']);
      const auth = { ...cert(b), authorization: basic(b.clientId, b.clientSecret) };
      assert.equal((await form({ grant_type: 'client_credentials' }, auth)).json<{ scope: string }>().scope, 'webhook.write webhook.read');
      const all = JSON.parse(await runOperatorCommand(t.db, t.config, ['scopes', 'limit', '--account', String(b.accountId), '--scopes', 'all']));
      assert.equal(all.scopes.join(' '), ALL);
    });
  });

  it("a token from before the service's own scopes existed keeps the root routes only if it carries every one of BCB's", () => {
    const bcb = SCOPES.filter((scope) => !SERVICE_SCOPES.includes(scope)).join(' ');
    assert.deepEqual([...scopesOfClaim(bcb, undefined)].sort(), [...SCOPES].sort());
    assert.deepEqual([...scopesOfClaim('cob.read pix.read', undefined)], ['cob.read', 'pix.read']);
    assert.deepEqual([...scopesOfClaim(bcb, 2)].sort(), bcb.split(' ').sort(), 'a token of today carries what it says');
  });

  it('requireScope: a token without the scope is 403', async () => {
    const granted = await form({ grant_type: 'client_credentials', scope: 'cob.read' }, { ...cert(), authorization: basic(a.clientId, a.clientSecret) });
    const token = granted.json<{ access_token: string }>().access_token;
    const app = Fastify();
    registerErrorHandling(app);
    app.addHook('onRequest', async (request) => {
      request.tokenScopes = new Set(String(decodeJwt(request.headers.authorization!.slice(7)).scope).split(' '));
    });
    app.get('/write', { preHandler: requireScope('cob.write') }, async () => ({ ok: true }));
    app.get('/read', { preHandler: requireScope('cob.read') }, async () => ({ ok: true }));
    const headers = { authorization: `Bearer ${token}` };
    const denied = await app.inject({ url: '/write', headers });
    assert.equal(denied.statusCode, 403);
    assert.equal(denied.json<{ code: string }>().code, 'SCOPE_NOT_GRANTED');
    assert.equal((await app.inject({ url: '/read', headers })).statusCode, 200);
    await app.close();
  });
});
