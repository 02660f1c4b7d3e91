import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../app.ts';
import { createClient, evpKey, incomingPix } from '../../../test/factories.ts';
import { adminHeaders, startTestApp, TEST_ADMIN_TOKEN, testConfig, type TestApp } from '../../../test/harness.ts';
import { CONTENT_SECURITY_POLICY } from './routes/guard.ts';
import { escapeHtml, html } from './views/html.ts';

const form = { 'content-type': 'application/x-www-form-urlencoded' };
const encode = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

function cookieOf(res: LightMyRequestResponse): string {
  const set = String(res.headers['set-cookie'] ?? '');
  assert.match(set, /^pix_console=[^;]+; Path=\/console; HttpOnly; SameSite=Strict; Max-Age=43200$/);
  return set.split(';')[0]!;
}

/** The CSRF token a page's forms carry. */
const csrfOf = (page: string) => /name="_csrf" value="([^"]+)"/.exec(page)![1]!;

describe('the console: sign-in, sessions, forms and escaping', () => {
  let t: TestApp;
  const signIn = (token = TEST_ADMIN_TOKEN, remoteAddress = '127.0.0.1') =>
    t.app.inject({ method: 'POST', url: '/console/sign-in', headers: form, payload: encode({ token, next: '/console' }), remoteAddress });
  const page = (url: string, cookie: string) => t.app.inject({ method: 'GET', url, headers: { cookie } });

  before(async () => {
    t = await startTestApp({ adminFailuresPerMinute: 3 });
  });
  after(() => t.close());

  it('without a session every page sends to the sign-in page, which names the page to come back to', async () => {
    for (const [url, next] of [
      ['/console', '%2Fconsole'],
      ['/console/accounts/1/charges?x=1', '%2Fconsole%2Faccounts%2F1%2Fcharges'],
      ['/console/network', '%2Fconsole%2Fnetwork'],
    ] as const) {
      const res = await t.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 303, url);
      assert.equal(res.headers.location, `/console/sign-in?next=${next}`);
    }
    const signInPage = await t.app.inject({ method: 'GET', url: '/console/sign-in?next=%2Fconsole%2Fnetwork' });
    assert.equal(signInPage.statusCode, 200);
    assert.match(signInPage.body, /<label for="token">Admin token<\/label>/);
    assert.match(signInPage.body, /name="next" value="\/console\/network"/);
    // The script's requests and the event stream are told, not sent to a page.
    const fromScript = await t.app.inject({ method: 'GET', url: '/console', headers: { 'x-console-request': 'refresh' } });
    assert.equal(fromScript.statusCode, 401);
    assert.equal((await t.app.inject({ method: 'GET', url: '/console/events' })).statusCode, 401);
    const action = await t.app.inject({ method: 'POST', url: '/console/actions/settle', headers: form, payload: encode({ _csrf: 'x' }) });
    assert.equal(action.statusCode, 303);
    // A forged or tampered cookie is no session.
    const forged = await page('/console', 'pix_console=AAAAAAAAAAAAAAAAAAAAAAAA.zzzzzz.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    assert.equal(forged.statusCode, 303);
  });

  it('a next page elsewhere is not followed', async () => {
    for (const next of ['https://evil.example/', '//evil.example', '/console/../admin', '/consolex']) {
      const res = await t.app.inject({ method: 'POST', url: '/console/sign-in', headers: form, payload: encode({ token: TEST_ADMIN_TOKEN, next }) });
      assert.equal(res.headers.location, '/console', next);
    }
  });

  it('signs in with the admin token: an HttpOnly, SameSite=Strict cookie on /console that holds no token, and a redirect', async () => {
    const res = await signIn();
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, '/console');
    const cookie = cookieOf(res);
    assert.ok(!cookie.includes(TEST_ADMIN_TOKEN) && !cookie.includes(Buffer.from(TEST_ADMIN_TOKEN).toString('base64').slice(0, 12)));
    const home = await page('/console', cookie);
    assert.equal(home.statusCode, 200);
    assert.match(home.body, /<h1>Accounts<\/h1>/);
    assert.equal(home.headers['content-security-policy'], CONTENT_SECURITY_POLICY);
    assert.equal(home.headers['x-content-type-options'], 'nosniff');
    assert.equal(home.headers['cache-control'], 'no-store');
    assert.doesNotMatch(home.body, /<script>|\sstyle=|\son[a-z]+=/i, 'no inline script, style or handler');
    assert.match(home.body, /<script src="\/console\/static\/console.js" defer><\/script>/);
  });

  it('signs out: the same cookie is no session any more', async () => {
    const cookie = cookieOf(await signIn());
    const csrf = csrfOf((await page('/console', cookie)).body);
    const out = await t.app.inject({ method: 'POST', url: '/console/sign-out', headers: { ...form, cookie }, payload: encode({ _csrf: csrf }) });
    assert.equal(out.statusCode, 303);
    assert.match(String(out.headers['set-cookie']), /^pix_console=; Path=\/console; HttpOnly; SameSite=Strict; Max-Age=0$/);
    assert.equal((await page('/console', cookie)).statusCode, 303);
  });

  it('refuses a form without the session token, with another session’s, or from another site', async () => {
    const cookie = cookieOf(await signIn());
    const other = cookieOf(await signIn());
    const csrf = csrfOf((await page('/console', cookie)).body);
    const otherCsrf = csrfOf((await page('/console', other)).body);
    assert.notEqual(csrf, otherCsrf);
    const settle = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
      t.app.inject({ method: 'POST', url: '/console/actions/settle', headers: { ...form, cookie, ...headers }, payload: encode(fields) });
    for (const [fields, headers] of [
      [{}, {}],
      [{ _csrf: '' }, {}],
      [{ _csrf: otherCsrf }, {}],
      [{ _csrf: `${csrf}x` }, {}],
      [{ _csrf: csrf }, { origin: 'https://evil.example' }],
      [{ _csrf: csrf }, { 'sec-fetch-site': 'cross-site' }],
      [{ _csrf: csrf }, { origin: 'null' }],
      [{ _csrf: csrf }, { origin: 'http://localhost.evil.example' }],
    ] as const) {
      const res = await settle(fields, headers);
      assert.equal(res.statusCode, 403, JSON.stringify([fields, headers]));
      assert.match(res.body, /<h1>Not done<\/h1>/);
    }
    const json = await t.app.inject({ method: 'POST', url: '/console/actions/settle', headers: { cookie, 'content-type': 'application/json' }, payload: {} });
    assert.equal(json.statusCode, 403);
    // Same host: a proxy that ends TLS sends an https Origin to a plain-HTTP service.
    const proxied = await settle({ _csrf: csrf }, { 'x-console-request': 'fetch', origin: 'https://localhost:80' });
    assert.equal(proxied.statusCode, 200, proxied.body);
    const fetched = await settle({ _csrf: csrf }, { 'x-console-request': 'fetch', origin: 'http://localhost' });
    assert.equal(fetched.statusCode, 200, fetched.body);
    assert.equal(fetched.body, 'Settlement round: 0 settled, 0 failed');
    const posted = await settle({ _csrf: csrf, returnTo: '/console/network' });
    assert.equal(posted.statusCode, 303);
    assert.match(String(posted.headers.location), /^\/console\/network\?notice=Settlement\+round%3A\+0\+settled%2C\+0\+failed&tone=ok&sig=[\w-]{43}$/);
    const shown = await page(String(posted.headers.location), cookie);
    assert.match(shown.body, /<div id="status" class="status ok"[^>]*>Settlement round: 0 settled, 0 failed<\/div>/);
    // A notice in a link from elsewhere is not shown.
    const forged = await page('/console/network?notice=Paste+your+token+at+evil.example&tone=ok&sig=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', cookie);
    assert.doesNotMatch(forged.body, /evil\.example/);
  });

  it('a refused action answers its message: as text to the script, as a page to a form', async () => {
    const cookie = cookieOf(await signIn());
    const csrf = csrfOf((await page('/console', cookie)).body);
    const payload = encode({ _csrf: csrf, pixKey: 'nobody@example.com', amount: '10,00', payerName: 'X', payerDocument: '52998224725' });
    const script = await t.app.inject({ method: 'POST', url: '/console/actions/incoming-pix', headers: { ...form, cookie, 'x-console-request': 'fetch' }, payload });
    assert.equal(script.statusCode, 422);
    assert.equal(script.body, 'PIX key not found among the keys of this institution');
    const bad = encode({ _csrf: csrf, pixKey: 'nobody@example.com', amount: '10.001', payerName: 'X', payerDocument: '52998224725' });
    const page400 = await t.app.inject({ method: 'POST', url: '/console/actions/incoming-pix', headers: { ...form, cookie }, payload: bad });
    assert.equal(page400.statusCode, 400);
    assert.match(page400.body, /amount must be an amount greater than 0 with at most 2 decimals/);
  });

  it('escapes everything an account holds: a name of <script>alert(1)</script>', async () => {
    const name = '<script>alert(1)</script>';
    const client = await createClient(t, { name });
    await incomingPix(t, await evpKey(t, client.accountId), '1234.56', { name: '"><img src=x onerror=alert(2)>' });
    const cookie = cookieOf(await signIn());
    for (const url of ['/console', `/console/accounts/${client.accountId}`]) {
      const res = await page(url, cookie);
      assert.equal(res.statusCode, 200, url);
      assert.ok(!res.body.includes(name) && !res.body.includes('<img src=x'), `${url} carries the name unescaped`);
      assert.ok(res.body.includes('&lt;script&gt;alert(1)&lt;/script&gt;'), url);
    }
    const account = await page(`/console/accounts/${client.accountId}`, cookie);
    assert.ok(account.body.includes('&quot;&gt;&lt;img src=x onerror=alert(2)&gt;'));
    assert.match(account.body, /<dd id="balance-available"><data class="money" value="1234.56">R\$\u00a01\.234,56<\/data><\/dd>/);
  });

  it('an account that does not exist is a page that says so', async () => {
    const cookie = cookieOf(await signIn());
    const res = await page('/console/accounts/999999', cookie);
    assert.equal(res.statusCode, 404);
    assert.match(res.body, /Account 999999 not found/);
  });

  it('wrong tokens count against the admin token limit: past it even the right token is 429, at the sign-in and at /sandbox/*', async () => {
    const source = '203.0.113.9';
    for (let i = 0; i < 3; i++) {
      const wrong = await signIn('not-the-admin-token-000', source);
      assert.equal(wrong.statusCode, 401);
      assert.equal(wrong.headers['set-cookie'], undefined);
      assert.match(wrong.body, /role="alert">That is not the admin token of this service\.</);
    }
    const right = await signIn(TEST_ADMIN_TOKEN, source);
    assert.equal(right.statusCode, 429);
    assert.equal(right.headers['set-cookie'], undefined);
    assert.ok(Number(right.headers['retry-after']) > 0);
    const bearer = await t.app.inject({ method: 'POST', url: '/sandbox/settle', headers: adminHeaders, remoteAddress: source });
    assert.equal(bearer.statusCode, 429);
  });
});

describe('the console in production mode', () => {
  it('does not exist: /console and its files are 404', async () => {
    const t = await startTestApp();
    const config = testConfig({ PIX_MODE: 'production', DATABASE_URL: 'postgres://127.0.0.1/unused' });
    const production = await buildApp({ config, db: t.db, clock: t.clock, logLevel: false });
    try {
      for (const [method, url] of [['GET', '/console'], ['GET', '/console/sign-in'], ['POST', '/console/sign-in'], ['GET', '/console/static/console.js'], ['GET', '/console/events']] as const) {
        const res = await production.inject({ method, url, headers: form, payload: encode({ token: TEST_ADMIN_TOKEN }) });
        assert.equal(res.statusCode, 404, `${method} ${url}`);
        assert.equal(res.json().code, 'ROUTE_NOT_FOUND');
      }
    } finally {
      await production.close();
      await t.close();
    }
  });
});

describe('html', () => {
  it('escapes every interpolated value, and only those', () => {
    const evil = `<a href="x" onclick='y'>&\`</a>`;
    assert.equal(escapeHtml(evil), '&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&#96;&lt;/a&gt;');
    assert.equal(html`<p title="${evil}">${[evil, null, undefined, false, 0n]}</p>`.toString(), `<p title="${escapeHtml(evil)}">${escapeHtml(evil)}0</p>`);
    assert.equal(html`<p>${html`<b>${evil}</b>`}</p>`.toString(), `<p><b>${escapeHtml(evil)}</b></p>`);
  });
});
