import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyRequest } from 'fastify';
import { clientAddress } from '../../http/client-certificate.ts';
import { createAccount, linkCertificate, type LinkedCertificate, type TestAccount } from '../../../test/factories.ts';
import { adminHeaders, startTestApp, type TestApp } from '../../../test/harness.ts';
import { assertError } from '../../../test/assertions.ts';

const credentials = (account: TestAccount, secret = account.clientSecret) => ({ clientId: account.clientId, clientSecret: secret });

/** A token request through the local proxy (127.0.0.1, trusted by default) for the client at `from`. */
function tokenRequest(t: TestApp, cert: LinkedCertificate, body: { clientId: string; clientSecret: string }, from = '203.0.113.10') {
  return t.app.inject({
    method: 'POST',
    url: '/api/auth/token',
    headers: { 'x-ssl-client-cert': cert.header, 'x-forwarded-for': from },
    payload: body,
  });
}

describe('token requests: failed attempts per address', () => {
  let t: TestApp;
  let account: TestAccount;
  let cert: LinkedCertificate;

  before(async () => {
    t = await startTestApp({ secretCheckLimits: { failuresPerMinute: 3 } });
    account = await createAccount(t);
    cert = await linkCertificate(t, account.accountId);
  });
  after(() => t.close());

  it('after 3 failures in a minute an address gets 429 with Retry-After, even with the right secret, until the oldest failure is a minute old', async () => {
    const from = '203.0.113.20';
    for (let i = 0; i < 3; i++) {
      assertError(await tokenRequest(t, cert, credentials(account, `wrong-${i}`), from), 401, /credentials/);
      t.clock.advance(10_000);
    }
    const refused = await tokenRequest(t, cert, credentials(account), from);
    assertError(refused, 429, /failed token requests/);
    assert.equal(refused.headers['retry-after'], '30');
    // An unknown client id counts as a failure too, and is refused the same way.
    assertError(await tokenRequest(t, cert, { clientId: 'pix_nobody', clientSecret: 'x' }, from), 429);

    // Another address is not held up by this one.
    assert.equal((await tokenRequest(t, cert, credentials(account), '203.0.113.21')).statusCode, 201);

    t.clock.advance(30_000);
    assert.equal((await tokenRequest(t, cert, credentials(account), from)).statusCode, 201);
  });

  it('a success does not count: a client may ask for as many tokens as it likes', async () => {
    for (let i = 0; i < 5; i++) assert.equal((await tokenRequest(t, cert, credentials(account), '203.0.113.30')).statusCode, 201);
  });

  it('the address is the last hop before the trusted proxy: a client cannot pick a fresh one by adding its own', async () => {
    const real = '203.0.113.40';
    for (let i = 0; i < 3; i++) assertError(await tokenRequest(t, cert, credentials(account, 'wrong'), `198.51.100.${i}, ${real}`), 401);
    assertError(await tokenRequest(t, cert, credentials(account), `198.51.100.99, ${real}`), 429);
  });
});

describe('token requests: slow hashes in progress', () => {
  let t: TestApp;
  let account: TestAccount;
  let cert: LinkedCertificate;

  before(async () => {
    t = await startTestApp({ secretCheckLimits: { concurrency: 1, maxWaiting: 1, failuresPerMinute: 1_000 } });
    account = await createAccount(t);
    cert = await linkCertificate(t, account.accountId);
  });
  after(() => t.close());

  it('a flood of wrong credentials: one hash runs, one waits, the rest get 503 with Retry-After at once', async () => {
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => tokenRequest(t, cert, credentials(account, `wrong-${i}`), `192.0.2.${i + 1}`)),
    );
    const statuses = answers.map((a) => a.statusCode).sort();
    assert.deepEqual(statuses, [401, 401, 503, 503, 503, 503, 503, 503]);
    for (const refused of answers.filter((a) => a.statusCode === 503)) {
      assertError(refused, 503, /Too many token requests/);
      assert.equal(refused.headers['retry-after'], '1');
    }
  });

  it('a client whose secret was verified before gets its token during such a flood', async () => {
    assert.equal((await tokenRequest(t, cert, credentials(account))).statusCode, 201);
    const flood = Array.from({ length: 6 }, (_, i) => tokenRequest(t, cert, credentials(account, `wrong-${i}`), `192.0.2.${i + 20}`));
    const mine = await tokenRequest(t, cert, credentials(account));
    assert.equal(mine.statusCode, 201, mine.body);
    assert.ok((await Promise.all(flood)).some((a) => a.statusCode === 503), 'the flood filled the gate');
  });

  it('a remembered secret is forgotten when the secret is rotated', async () => {
    const other = await createAccount(t);
    const otherCert = await linkCertificate(t, other.accountId);
    assert.equal((await tokenRequest(t, otherCert, credentials(other))).statusCode, 201);
    const rotated = await t.app.inject({ method: 'POST', url: `/admin/accounts/${other.accountId}/client-secret`, headers: adminHeaders });
    assert.equal(rotated.statusCode, 201, rotated.body);
    assertError(await tokenRequest(t, otherCert, credentials(other)), 401, /credentials/);
    const fresh = rotated.json<{ clientSecret: string }>().clientSecret;
    assert.equal((await tokenRequest(t, otherCert, credentials(other, fresh))).statusCode, 201);
  });
});

describe('clientAddress', () => {
  const trust = { trustedProxies: ['127.0.0.1', '10.0.0.5'] };
  const app = Fastify();
  app.get('/', async (request: FastifyRequest) => ({ address: clientAddress(request, trust) }));
  after(() => app.close());
  const addressOf = async (remoteAddress: string, forwarded?: string) => {
    const res = await app.inject({ method: 'GET', url: '/', remoteAddress, headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded } });
    return res.json<{ address: string }>().address;
  };

  it('the peer itself when it is not a trusted proxy, whatever it forwards', async () => {
    assert.equal(await addressOf('198.51.100.7'), '198.51.100.7');
    assert.equal(await addressOf('198.51.100.7', '203.0.113.1'), '198.51.100.7');
  });

  it('behind trusted proxies, the rightmost address that is not one of them', async () => {
    assert.equal(await addressOf('127.0.0.1'), '127.0.0.1');
    assert.equal(await addressOf('127.0.0.1', '203.0.113.1'), '203.0.113.1');
    assert.equal(await addressOf('127.0.0.1', '6.6.6.6, 203.0.113.1, 10.0.0.5'), '203.0.113.1');
    assert.equal(await addressOf('::ffff:127.0.0.1', '::ffff:203.0.113.2'), '203.0.113.2');
    assert.equal(await addressOf('127.0.0.1', '10.0.0.5'), '127.0.0.1');
  });

  it('the peer when the forwarded chain holds something that is not an address', async () => {
    assert.equal(await addressOf('127.0.0.1', '203.0.113.1, not-an-ip'), '127.0.0.1');
  });
});
