import assert from 'node:assert/strict';
import { createHash, randomUUID, X509Certificate } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { decodeJwt, decodeProtectedHeader, generateKeyPair, SignJWT } from 'jose';
import { issueCertificate } from '../../lib/certificate-authority.ts';
import {
  createAccount,
  createClient,
  creditAccount,
  linkCertificate,
  requestToken,
  type LinkedCertificate,
  type TestAccount,
  type TestClient,
} from '../../../test/factories.ts';
import { adminHeaders, startTestApp, type TestApp } from '../../../test/harness.ts';
import { assertError } from '../../../test/assertions.ts';
import { serviceSigningKey } from '../../../test/signing-keys.ts';

const DAY_MS = 86_400_000;


const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function thumbprintOf(pem: string): string {
  return createHash('sha256').update(new X509Certificate(pem).raw).digest('base64url');
}

describe('auth: token issuance and bearer verification', () => {
  let t: TestApp;
  let a: TestClient;
  let b: TestClient;

  before(async () => {
    t = await startTestApp();
    [a, b] = await Promise.all([createClient(t), createClient(t)]);
    await creditAccount(t.db, a.accountId, 10_000n);
    await creditAccount(t.db, b.accountId, 250n);
  });
  after(() => t.close());

  function token(headers: Record<string, string>, payload: object, extra: { url?: string; remoteAddress?: string } = {}) {
    return t.app.inject({
      method: 'POST',
      url: extra.url ?? '/api/auth/token',
      headers,
      payload,
      ...(extra.remoteAddress ? { remoteAddress: extra.remoteAddress } : {}),
    });
  }
  const credentials = (account: TestAccount) => ({ clientId: account.clientId, clientSecret: account.clientSecret });
  const certHeader = (cert: LinkedCertificate) => ({ 'x-ssl-client-cert': cert.header });
  const balance = (headers: Record<string, string>) => t.app.inject({ method: 'GET', url: '/balance', headers });

  describe('POST /api/auth/token', () => {
    for (const url of ['/api/auth/token', '/oauth/token']) {
      it(`${url} issues a certificate-bound EdDSA JWT valid for 1800 s`, async () => {
        const res = await token(certHeader(a.cert), credentials(a), { url });
        assert.equal(res.statusCode, 201, res.body);
        const body = res.json<{ access_token: string; token_type: string; expires_in: number }>();
        assert.deepEqual(Object.keys(body).sort(), ['access_token', 'expires_in', 'token_type']);
        assert.equal(body.token_type, 'Bearer');
        assert.equal(body.expires_in, 1800);
        assert.equal(res.headers['cache-control'], 'no-store');

        const header = decodeProtectedHeader(body.access_token);
        assert.equal(header.alg, 'EdDSA');
        assert.equal(typeof header.kid, 'string');
        const key = await t.db.selectFrom('signing_keys').select('kid').where('kid', '=', header.kid!).executeTakeFirst();
        assert.ok(key, 'the kid names a signing key of the service');

        const claims = decodeJwt(body.access_token);
        assert.equal(claims.sub, String(a.accountId));
        assert.equal(claims.iat, Math.floor(t.clock.now().getTime() / 1000));
        assert.equal(claims.exp, claims.iat! + 1800);
        assert.deepEqual(claims.cnf, { 'x5t#S256': thumbprintOf(a.cert.certPem) });

        const used = await balance({ authorization: `Bearer ${body.access_token}`, ...certHeader(a.cert) });
        assert.equal(used.statusCode, 200, used.body);
      });
    }

    it('a second request gives a new token', async () => {
      const first = await token(certHeader(a.cert), credentials(a));
      const second = await token(certHeader(a.cert), credentials(a));
      assert.equal(first.statusCode, 201);
      assert.equal(second.statusCode, 201);
      assert.notEqual(first.json().access_token, second.json().access_token);
    });

    describe('400: certificate missing or malformed', () => {
      const notACertificate = '-----BEGIN CERTIFICATE-----\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n-----END CERTIFICATE-----\n';
      const cases: [string, () => Record<string, string>][] = [
        ['header absent', () => ({})],
        ['header empty', () => ({ 'x-ssl-client-cert': '' })],
        ['raw PEM, not URL-encoded', () => ({ 'x-ssl-client-cert': a.cert.certPem.trim().replaceAll('\n', ' ') })],
        ['URL-encoded garbage', () => ({ 'x-ssl-client-cert': encodeURIComponent('not a certificate at all!') })],
        ['URL-encoded PEM block that is not X.509', () => ({ 'x-ssl-client-cert': encodeURIComponent(notACertificate) })],
        ['URL-encoded private key', () => ({ 'x-ssl-client-cert': encodeURIComponent(a.cert.keyPem) })],
        ['invalid percent-encoding', () => ({ 'x-ssl-client-cert': '-----BEGIN%20CERTIFICATE%ZZ%E0%A4%A' })],
      ];
      for (const [name, headers] of cases) {
        it(name, async () => {
          assertError(await token(headers(), credentials(a)), 400, /X-SSL-Client-Cert/);
        });
      }
    });

    describe('400: body', () => {
      const cases: [string, (x: TestAccount) => object, RegExp][] = [
        ['clientId missing', (x) => ({ clientSecret: x.clientSecret }), /clientId is required/],
        ['clientSecret missing', (x) => ({ clientId: x.clientId }), /clientSecret is required/],
        ['clientId not a string', (x) => ({ clientId: 42, clientSecret: x.clientSecret }), /clientId/],
        ['clientSecret not a string', (x) => ({ clientId: x.clientId, clientSecret: ['x'] }), /clientSecret/],
        ['extra field', (x) => ({ ...credentials(x), grantType: 'client_credentials' }), /grantType is not an allowed property/],
        ['empty clientId', (x) => ({ clientId: '', clientSecret: x.clientSecret }), /clientId/],
      ];
      for (const [name, payload, message] of cases) {
        it(name, async () => {
          assertError(await token(certHeader(a.cert), payload(a)), 400, message);
        });
      }

      it('no body at all', async () => {
        assertError(await t.app.inject({ method: 'POST', url: '/api/auth/token', headers: certHeader(a.cert) }), 400);
      });

      it('a body that is not JSON', async () => {
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/auth/token',
          headers: { ...certHeader(a.cert), 'content-type': 'application/json' },
          payload: '{"clientId":',
        });
        assertError(res, 400);
      });
    });

    describe('401: credentials or certificate refused', () => {
      it('wrong secret', async () => {
        assertError(await token(certHeader(a.cert), { clientId: a.clientId, clientSecret: b.clientSecret }), 401, /credentials/);
      });

      it("unknown clientId: the certificate is another client's, whether or not the id exists", async () => {
        const unknown = await token(certHeader(a.cert), { clientId: 'pix_nobody', clientSecret: a.clientSecret });
        assertError(unknown, 401, /another account/, 'CERTIFICATE_OTHER_ACCOUNT');
        const known = await token(certHeader(a.cert), { clientId: b.clientId, clientSecret: a.clientSecret });
        assert.deepEqual(known.json(), unknown.json(), 'no way to tell an existing client id from a made-up one');
      });

      it('a certificate linked to another account', async () => {
        assertError(await token(certHeader(b.cert), credentials(a)), 401, /another account/, 'CERTIFICATE_OTHER_ACCOUNT');
      });

      it('a certificate that expired after it was linked', async () => {
        const start = t.clock.now();
        try {
          const account = await createAccount(t);
          const cert = await linkCertificate(t, account.accountId, { notBefore: new Date(start.getTime() - DAY_MS), notAfter: new Date(start.getTime() + DAY_MS) });
          t.clock.advance(DAY_MS + 1_000);
          assertError(await token(certHeader(cert), credentials(account)), 401, /expired/, 'CERTIFICATE_EXPIRED');
        } finally {
          t.clock.set(start);
        }
      });

      it('a certificate not yet valid (the clock moved back since it was linked)', async () => {
        const start = t.clock.now();
        try {
          const account = await createAccount(t);
          const cert = await linkCertificate(t, account.accountId, { notBefore: new Date(start.getTime() - 60_000) });
          t.clock.advance(-120_000);
          assertError(await token(certHeader(cert), credentials(account)), 401, /not yet valid/, 'CERTIFICATE_EXPIRED');
        } finally {
          t.clock.set(start);
        }
      });

      it('a rotated secret: the old one is refused, the new one works, tokens issued under the old one are revoked', async () => {
        const account = await createAccount(t);
        const cert = await linkCertificate(t, account.accountId);
        const before = await requestToken(t, account, cert);
        assert.equal((await balance({ authorization: `Bearer ${before}`, ...certHeader(cert) })).statusCode, 200);
        const rotated = await t.app.inject({ method: 'POST', url: `/admin/accounts/${account.accountId}/client-secret`, headers: adminHeaders });
        assert.equal(rotated.statusCode, 201, rotated.body);
        const fresh = rotated.json<{ clientId: string; clientSecret: string }>();
        assert.equal(fresh.clientId, account.clientId);
        assert.notEqual(fresh.clientSecret, account.clientSecret);
        assertError(await token(certHeader(cert), credentials(account)), 401, /credentials/, 'INVALID_CLIENT');
        assertError(await balance({ authorization: `Bearer ${before}`, ...certHeader(cert) }), 401, /revoked/, 'TOKEN_INVALID');
        const after = await token(certHeader(cert), fresh);
        assert.equal(after.statusCode, 201);
        assert.equal((await balance({ authorization: `Bearer ${after.json().access_token}`, ...certHeader(cert) })).statusCode, 200);
      });
    });

    it('403: a valid certificate linked to no account', async () => {
      const stranger = await issueCertificate({ commonName: 'stranger' });
      assertError(await token({ 'x-ssl-client-cert': encodeURIComponent(stranger.certPem) }, credentials(a)), 403, /not linked/);
    });

    it('the header from an address that is not a trusted proxy is not believed', async () => {
      const res = await token(certHeader(a.cert), credentials(a), { remoteAddress: '10.1.2.3' });
      assertError(res, 400, /trusted proxy/);
    });

    it('an IPv4-mapped IPv6 loopback address is the trusted 127.0.0.1', async () => {
      const res = await token(certHeader(a.cert), credentials(a), { remoteAddress: '::ffff:127.0.0.1' });
      assert.equal(res.statusCode, 201, res.body);
    });
  });

  describe('bearer verification (GET /balance)', () => {
    it('no Authorization header: 401', async () => {
      assertError(await balance({}), 401, /Missing access token/);
    });

    for (const authorization of ['Bearer garbage', 'Bearer a.b.c', 'Basic x', 'Bearer', 'Bearer  ']) {
      it(`"${authorization}": 401`, async () => {
        assertError(await balance({ authorization }), 401);
      });
    }

    it('the scheme name is case-insensitive', async () => {
      assert.equal((await balance({ authorization: `bearer ${a.token}`, ...certHeader(a.cert) })).statusCode, 200);
    });

    it('a token without its certificate is 401 (RFC 8705 §3): a stolen token alone reads nothing', async () => {
      assertError(await balance({ authorization: `Bearer ${a.token}` }), 401, /bound to a client certificate/, 'CERTIFICATE_REQUIRED');
    });

    it("a token with another account's linked certificate is 401", async () => {
      assertError(await balance({ authorization: `Bearer ${a.token}`, ...certHeader(b.cert) }), 401, /does not match/, 'CERTIFICATE_MISMATCH');
    });

    it('expires after 1800 s: valid at 1799 s, 401 at 1801 s', async () => {
      const start = t.clock.now();
      try {
        const client = await createClient(t);
        t.clock.advance(1_799_000);
        assert.equal((await balance(client.headers)).statusCode, 200);
        t.clock.set(start);
        t.clock.advance(1_801_000);
        assertError(await balance(client.headers), 401, /expired/);
      } finally {
        t.clock.set(start);
      }
    });

    it('a tampered payload (sub changed to another account) is refused', async () => {
      const [header, payload, signature] = a.token.split('.');
      const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8')) as Record<string, unknown>;
      const forged = `${header}.${b64url({ ...claims, sub: String(b.accountId) })}.${signature}`;
      assertError(await balance({ authorization: `Bearer ${forged}` }), 401, /invalid/);
    });

    it('a tampered signature is refused', async () => {
      const [header, payload, signature] = a.token.split('.');
      // A middle character: the last one of a base64url signature partly encodes padding bits.
      const i = 20;
      const flipped = signature!.slice(0, i) + (signature![i] === 'A' ? 'B' : 'A') + signature!.slice(i + 1);
      assertError(await balance({ authorization: `Bearer ${header}.${payload}.${flipped}` }), 401, /invalid/);
    });

    it('an unsigned (alg none) token is refused', async () => {
      const header = decodeProtectedHeader(a.token);
      const claims = decodeJwt(a.token);
      const unsigned = `${b64url({ ...header, alg: 'none' })}.${b64url(claims)}.`;
      assertError(await balance({ authorization: `Bearer ${unsigned}` }), 401, /invalid/);
    });

    it('a token signed by another key under the service key id is refused', async () => {
      const header = decodeProtectedHeader(a.token);
      const claims = decodeJwt(a.token);
      const { privateKey } = await generateKeyPair('EdDSA');
      const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA', kid: header.kid!, typ: header.typ! }).sign(privateKey);
      assertError(await balance({ authorization: `Bearer ${forged}` }), 401, /invalid/);
    });

    it('a token signed by the service key is refused when it lives longer than 1800 s', async () => {
      const header = decodeProtectedHeader(a.token);
      const claims = decodeJwt(a.token);
      const key = await serviceSigningKey(t.db, header.kid!);
      const signed = async (iat: number, exp: number) =>
        `Bearer ${await new SignJWT({ ...claims, iat, exp, jti: randomUUID() }).setProtectedHeader({ alg: 'EdDSA', kid: header.kid!, typ: 'at+jwt' }).sign(key)}`;
      const now = Math.floor(t.clock.now().getTime() / 1000);
      // The same hand-made token with the service's lifetime passes: what is refused below is the lifetime.
      assert.equal((await balance({ authorization: await signed(now, now + 1800), ...certHeader(a.cert) })).statusCode, 200);
      assertError(await balance({ authorization: await signed(now, now + 1801), ...certHeader(a.cert) }), 401, /lifetime/, 'TOKEN_INVALID');
      assertError(await balance({ authorization: await signed(now, now + 30 * 86_400), ...certHeader(a.cert) }), 401, /lifetime/, 'TOKEN_INVALID');
      // Issued "an hour ago" and still valid for ten minutes: 4200 s.
      assertError(await balance({ authorization: await signed(now - 3600, now + 600), ...certHeader(a.cert) }), 401, /lifetime/, 'TOKEN_INVALID');
    });

    it('a token with an unknown key id is refused', async () => {
      const claims = decodeJwt(a.token);
      const { privateKey } = await generateKeyPair('EdDSA');
      const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA', kid: 'unknown-kid', typ: 'at+jwt' }).sign(privateKey);
      assertError(await balance({ authorization: `Bearer ${forged}` }), 401);
    });

    it('a certificate header other than the bound certificate is refused', async () => {
      // Even another certificate of the same account: the token is bound to one certificate.
      const second = await linkCertificate(t, a.accountId);
      assertError(await balance({ authorization: `Bearer ${a.token}`, ...certHeader(second) }), 401, /does not match/);
      assertError(await balance({ authorization: `Bearer ${a.token}`, ...certHeader(b.cert) }), 401, /does not match/);
      assert.equal((await balance({ authorization: `Bearer ${a.token}`, ...certHeader(a.cert) })).statusCode, 200);
    });

    it('a malformed certificate header on an account route is 400', async () => {
      assertError(await balance({ authorization: `Bearer ${a.token}`, 'x-ssl-client-cert': 'not-encoded' }), 400, /X-SSL-Client-Cert/);
    });

    it('unlinking the certificate invalidates tokens bound to it', async () => {
      const client = await createClient(t);
      assert.equal((await balance(client.headers)).statusCode, 200);
      const unlink = await t.app.inject({
        method: 'DELETE',
        url: `/admin/accounts/${client.accountId}/certificates/${client.cert.fingerprint}`,
        headers: adminHeaders,
      });
      assert.equal(unlink.statusCode, 204, unlink.body);
      assertError(await balance(client.headers), 401, /no longer linked/);
      assertError(await balance({ authorization: client.headers.authorization! }), 401, /bound to a client certificate/);
      // And the certificate no longer buys a token.
      assertError(await token(certHeader(client.cert), credentials(client)), 403);
    });

    it('a token stops working when its bound certificate expires', async () => {
      const start = t.clock.now();
      try {
        const account = await createAccount(t);
        const cert = await linkCertificate(t, account.accountId, { notBefore: new Date(start.getTime() - DAY_MS), notAfter: new Date(start.getTime() + 600_000) });
        const issued = await requestToken(t, account, cert);
        assert.equal((await balance({ authorization: `Bearer ${issued}`, ...certHeader(cert) })).statusCode, 200);
        t.clock.advance(601_000);
        assertError(await balance({ authorization: `Bearer ${issued}`, ...certHeader(cert) }), 401, /expired/);
      } finally {
        t.clock.set(start);
      }
    });
  });

  describe('isolation', () => {
    it("A's token reads A's balance, B's token B's", async () => {
      const resA = await balance(a.headers);
      const resB = await balance(b.headers);
      assert.equal(resA.statusCode, 200);
      assert.equal(resB.statusCode, 200);
      assert.equal(resA.json().netBalance, 100);
      assert.equal(resB.json().netBalance, 2.5);
      const viewA = await t.app.inject({ method: 'GET', url: '/accounts/balances', headers: a.headers });
      assert.equal(viewA.json().data[0].balanceAmount.available, 100);
    });

    it("A's token with B's certificate, or B's credentials with A's certificate, get nothing", async () => {
      assertError(await balance({ authorization: `Bearer ${a.token}`, ...certHeader(b.cert) }), 401);
      assertError(await token(certHeader(a.cert), credentials(b)), 401);
    });
  });

  it('the client secret is stored only as an scrypt hash', async () => {
    const row = await t.db.selectFrom('accounts').select('client_secret_hash').where('id', '=', BigInt(a.accountId)).executeTakeFirstOrThrow();
    assert.match(row.client_secret_hash, /^scrypt\$\d+\$\d+\$\d+\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+$/);
    assert.ok(!row.client_secret_hash.includes(a.clientSecret));
  });
});

describe('auth: TRUSTED_PROXIES', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ env: { TRUSTED_PROXIES: '10.1.2.3' } });
  });
  after(() => t.close());

  it('the header is believed from a configured proxy and no longer from loopback', async () => {
    const account = await createAccount(t);
    const cert = await linkCertificate(t, account.accountId);
    const request = (remoteAddress: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/auth/token',
        headers: { 'x-ssl-client-cert': cert.header },
        payload: { clientId: account.clientId, clientSecret: account.clientSecret },
        remoteAddress,
      });
    const fromProxy = await request('10.1.2.3');
    assert.equal(fromProxy.statusCode, 201, fromProxy.body);
    assertError(await request('127.0.0.1'), 400, /trusted proxy/);

    // On account routes a header from elsewhere proves nothing: not even the bound certificate
    // in it lets the token through, and another certificate is not matched against the token.
    const bearer = fromProxy.json<{ access_token: string }>().access_token;
    const other = await issueCertificate({ commonName: 'other' });
    const read = (remoteAddress: string, header: string) =>
      t.app.inject({ method: 'GET', url: '/balance', headers: { authorization: `Bearer ${bearer}`, 'x-ssl-client-cert': header }, remoteAddress });
    assertError(await read('127.0.0.1', encodeURIComponent(other.certPem)), 401, /trusted proxy/, 'CERTIFICATE_REQUIRED');
    assertError(await read('127.0.0.1', cert.header), 401, /trusted proxy/, 'CERTIFICATE_REQUIRED');
    assert.equal((await read('10.1.2.3', cert.header)).statusCode, 200);
    assertError(await read('10.1.2.3', encodeURIComponent(other.certPem)), 401, /does not match/, 'CERTIFICATE_MISMATCH');
  });
});
