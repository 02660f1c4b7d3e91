import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { buildApp } from '../../app.ts';
import { clientAddress, failureSource } from '../../http/client-certificate.ts';
import { issueCertificate } from '../../lib/certificate-authority.ts';
import { createAccount, linkCertificate, type LinkedCertificate, type TestAccount } from '../../../test/factories.ts';
import { adminHeaders, startTestApp, testConfig, type TestApp } from '../../../test/harness.ts';
import { assertError } from '../../../test/assertions.ts';
import { redisAnswers, TEST_REDIS_URL } from '../../../test/redis.ts';

const redisUp = await redisAnswers();

const credentials = (account: TestAccount, secret = account.clientSecret) => ({ clientId: account.clientId, clientSecret: secret });
type Body = { clientId: string; clientSecret: string };

/** A token request through the local proxy (127.0.0.1, trusted by default) for the client at `from`. */
function tokenRequest(app: FastifyInstance, cert: { header: string }, body: Body, from = '203.0.113.10') {
  return app.inject({ method: 'POST', url: '/api/auth/token', headers: { 'x-ssl-client-cert': cert.header, 'x-forwarded-for': from }, payload: body });
}

/** A fresh /64 of the documentation prefix for each `i` (random per run: Redis outlives a run). */
const run = randomInt(0x1000, 0xffff).toString(16);
const sixty4 = (i: number, host = '1') => `2001:db8:${run}:${i.toString(16)}::${host}`;

describe('failureSource', () => {
  it('an IPv4 address is itself, an IPv6 address its /64', () => {
    assert.equal(failureSource('203.0.113.7'), '203.0.113.7');
    assert.equal(failureSource('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
    assert.equal(failureSource('2001:DB8:0001:0002::ffff'), '2001:db8:1:2::/64');
    assert.equal(failureSource('2001:db8:1:3::1'), '2001:db8:1:3::/64');
    assert.equal(failureSource('::ffff:198.51.100.1'), '198.51.100.1');
  });
});

describe('token requests: failures per source, certificate and client id', () => {
  let t: TestApp;
  const token = (cert: { header: string }, body: Body, from: string) => tokenRequest(t.app, cert, body, from);

  before(async () => {
    t = await startTestApp({ secretCheckLimits: { failuresPerMinute: 3, clientFailuresPerMinute: 5 } });
  });
  after(() => t.close());

  async function client(): Promise<{ account: TestAccount; cert: LinkedCertificate }> {
    const account = await createAccount(t);
    return { account, cert: await linkCertificate(t, account.accountId) };
  }

  it('an IPv6 source is its /64: new addresses in it share the count, another /64 does not', async () => {
    const { account, cert } = await client();
    for (const host of ['1', '2', 'abcd:ef01:2345']) {
      assertError(await token(cert, credentials(account, 'wrong'), sixty4(1, host)), 401, /credentials/, 'INVALID_CLIENT');
    }
    const refused = await token(cert, credentials(account), sixty4(1, 'ffff:1:2'));
    assertError(refused, 429, /failed token requests/, 'TOO_MANY_FAILED_ATTEMPTS');
    assert.equal(refused.headers['retry-after'], '60');
    assert.equal((await token(cert, credentials(account), sixty4(2))).statusCode, 201);
  });

  it('after 3 failures in a minute an IPv4 address gets 429, even with the right secret, until the oldest failure is a minute old', async () => {
    const { account, cert } = await client();
    const from = '203.0.113.20';
    for (let i = 0; i < 3; i++) {
      assertError(await token(cert, credentials(account, `wrong-${i}`), from), 401, /credentials/);
      t.clock.advance(10_000);
    }
    const refused = await token(cert, credentials(account), from);
    assertError(refused, 429, /failed token requests/, 'TOO_MANY_FAILED_ATTEMPTS');
    assert.equal(refused.headers['retry-after'], '30');
    assert.equal((await token(cert, credentials(account), '203.0.113.21')).statusCode, 201);
    t.clock.advance(30_000);
    assert.equal((await token(cert, credentials(account), from)).statusCode, 201);
  });

  it('a certificate linked to no account is 403, counted against the source only', async () => {
    const { account } = await client();
    const stranger = await issueCertificate({ commonName: 'stranger' });
    const header = { header: encodeURIComponent(stranger.certPem) };
    for (let i = 0; i < 3; i++) assertError(await token(header, credentials(account), '203.0.113.30'), 403, /not linked/, 'CERTIFICATE_NOT_LINKED');
    assertError(await token(header, credentials(account), '203.0.113.30'), 429);
  });

  it("a stranger's failures against a client id count against the stranger's certificate, never the client's", async () => {
    const victim = await client();
    const stranger = await client();
    // From a new /64 every time, with the victim's client id and the stranger's own linked certificate.
    for (let i = 0; i < 20; i++) {
      assertError(await token(stranger.cert, credentials(victim.account, `guess-${i}`), sixty4(100 + i)), 401, /another account/, 'CERTIFICATE_OTHER_ACCOUNT');
    }
    // The victim is not held up at all...
    assert.equal((await token(victim.cert, credentials(victim.account), sixty4(200))).statusCode, 201);
    // ...while the stranger's certificate is spent, even with its own right credentials.
    const refused = await token(stranger.cert, credentials(stranger.account), sixty4(201));
    assertError(refused, 429, /failed token requests/, 'TOO_MANY_FAILED_ATTEMPTS');
    assert.ok(Number(refused.headers['retry-after']) >= 1);
  });

  it("a client id counts the failures made with its own certificates, whichever of them and from wherever", async () => {
    const { account, cert } = await client();
    const second = await linkCertificate(t, account.accountId);
    const start = t.clock.now();
    for (let i = 0; i < 5; i++) {
      const which = i % 2 === 0 ? cert : second;
      assertError(await token(which, credentials(account, `wrong-${i}`), sixty4(300 + i)), 401, /credentials/, 'INVALID_CLIENT');
    }
    // A sixth certificate of the account, never used, from a new /64: the client id is spent.
    const third = await linkCertificate(t, account.accountId);
    const refused = await token(third, credentials(account), sixty4(310));
    assertError(refused, 429, /failed token requests/, 'TOO_MANY_FAILED_ATTEMPTS');
    assert.equal(refused.headers['retry-after'], '60');
    t.clock.set(new Date(start.getTime() + 60_001));
    assert.equal((await token(third, credentials(account), sixty4(311))).statusCode, 201);
  });

  it('a success takes its attempt back: a client may ask for as many tokens as it likes', async () => {
    const { account, cert } = await client();
    for (let i = 0; i < 12; i++) assert.equal((await token(cert, credentials(account), '203.0.113.40')).statusCode, 201);
  });

  it('the address is the last hop before the trusted proxy: a client cannot pick a fresh one by adding its own', async () => {
    const { account, cert } = await client();
    const real = '203.0.113.50';
    for (let i = 0; i < 3; i++) assertError(await token(cert, credentials(account, 'wrong'), `198.51.100.${i}, ${real}`), 401);
    assertError(await token(cert, credentials(account), `198.51.100.99, ${real}`), 429);
  });
});

describe('token requests: no slow hash before the certificate is checked', () => {
  let t: TestApp;
  let victim: TestAccount;
  let own: { account: TestAccount; cert: LinkedCertificate };

  before(async () => {
    // One hash at a time and none waiting: a request that reached the hash while another runs gets 503.
    t = await startTestApp({ secretCheckLimits: { concurrency: 1, maxWaiting: 0, failuresPerMinute: 10_000, clientFailuresPerMinute: 10_000 } });
    victim = await createAccount(t);
    await linkCertificate(t, victim.accountId);
    const account = await createAccount(t);
    own = { account, cert: await linkCertificate(t, account.accountId) };
  });
  after(() => t.close());

  it('certificates linked to no account, or to another account, are answered without one: never 503', async () => {
    const stranger = { header: encodeURIComponent((await issueCertificate({ commonName: 'stranger' })).certPem) };
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => tokenRequest(t.app, i % 2 ? stranger : own.cert, credentials(victim, `guess-${i}`), sixty4(400 + i))),
    );
    for (const [i, answer] of answers.entries()) {
      if (i % 2) assertError(answer, 403, /not linked/, 'CERTIFICATE_NOT_LINKED');
      else assertError(answer, 401, /another account/, 'CERTIFICATE_OTHER_ACCOUNT');
    }
  });

  it('(the control: requests that do reach the hash, sent at once, overflow this gate)', async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => tokenRequest(t.app, own.cert, credentials(own.account, `wrong-${i}`), sixty4(500 + i))));
    assert.ok(answers.some((a) => a.statusCode === 503), answers.map((a) => a.statusCode).join(' '));
  });
});

describe('token requests: a flood from a new /64 every request', () => {
  let t: TestApp;

  before(async () => {
    // Room for 5 hashes (1 running, 4 waiting); 3 failures per certificate or client id.
    t = await startTestApp({ secretCheckLimits: { concurrency: 1, maxWaiting: 4, failuresPerMinute: 3, clientFailuresPerMinute: 3 } });
  });
  after(() => t.close());

  it('the victim, whose secret this process has never verified, gets its token while 300 requests arrive at once', async (ctx) => {
    const victim = await createAccount(t);
    const victimCert = await linkCertificate(t, victim.accountId);
    const attacker = await createAccount(t);
    const attackerCert = await linkCertificate(t, attacker.accountId);
    const unlinked = { header: encodeURIComponent((await issueCertificate({ commonName: 'flood' })).certPem) };
    const kinds = [
      { cert: unlinked, body: (i: number) => credentials(victim, `guess-${i}`) },
      { cert: attackerCert, body: (i: number) => credentials(victim, `guess-${i}`) },
      { cert: attackerCert, body: (i: number) => credentials(attacker, `guess-${i}`) },
    ];
    const flood = Array.from({ length: 300 }, (_, i) => tokenRequest(t.app, kinds[i % 3]!.cert, kinds[i % 3]!.body(i), sixty4(1000 + i)));
    const started = performance.now();
    const mine = await tokenRequest(t.app, victimCert, credentials(victim), '198.51.100.7');
    const victimMs = performance.now() - started;
    const answers = await Promise.all(flood);

    assert.equal(mine.statusCode, 201, mine.body);
    const seen = new Map<string, number>();
    for (const answer of answers) {
      const key = `${answer.statusCode} ${answer.json<{ code?: string }>().code}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    ctx.diagnostic(`victim answered in ${Math.round(victimMs)} ms; flood: ${[...seen].map(([k, n]) => `${k} x${n}`).join(', ')}`);
    assert.equal(seen.get('403 CERTIFICATE_NOT_LINKED'), 100);
    assert.equal(seen.get('401 CERTIFICATE_OTHER_ACCOUNT'), 100);
    // The attacker's own client: at most 3 hashes (its certificate's allowance), the rest refused before one.
    assert.ok((seen.get('401 INVALID_CLIENT') ?? 0) <= 3, JSON.stringify([...seen]));
    assert.equal((seen.get('401 INVALID_CLIENT') ?? 0) + (seen.get('429 TOO_MANY_FAILED_ATTEMPTS') ?? 0), 100);
    assert.equal(seen.get('503 OVERLOADED'), undefined, 'the gate of slow hashes never filled');
  });
});

describe('token requests: the counts are shared through Redis', { skip: redisUp ? false : `no Redis answers at ${TEST_REDIS_URL}` }, () => {
  let t: TestApp;
  let second: FastifyInstance;
  const limits = { failuresPerMinute: 2, clientFailuresPerMinute: 2 };

  before(async () => {
    t = await startTestApp({ env: { REDIS_URL: TEST_REDIS_URL }, secretCheckLimits: limits });
    second = await buildApp({ config: testConfig({ REDIS_URL: TEST_REDIS_URL }), db: t.db, clock: t.clock, logLevel: false, secretCheckLimits: limits });
  });
  after(async () => {
    await second.close();
    await t.close();
  });

  it('failures in one process count in the other, per certificate and per /64', async () => {
    const victim = await createAccount(t);
    const stranger = await createAccount(t);
    const strangerCert = await linkCertificate(t, stranger.accountId);
    for (let i = 0; i < 2; i++) assertError(await tokenRequest(t.app, strangerCert, credentials(victim), sixty4(2000 + i)), 401);
    assertError(await tokenRequest(second, strangerCert, credentials(stranger), sixty4(2010)), 429, /failed token requests/);

    const own = await linkCertificate(t, victim.accountId);
    for (const host of ['a', 'b']) assertError(await tokenRequest(t.app, own, credentials(victim, 'wrong'), sixty4(2020, host)), 401);
    assertError(await tokenRequest(second, own, credentials(victim), sixty4(2020, 'c')), 429, /failed token requests/);
  });
});

describe('token requests: slow hashes in progress', () => {
  let t: TestApp;
  let account: TestAccount;
  let cert: LinkedCertificate;

  before(async () => {
    t = await startTestApp({ secretCheckLimits: { concurrency: 1, maxWaiting: 1, failuresPerMinute: 1_000, clientFailuresPerMinute: 1_000 } });
    account = await createAccount(t);
    cert = await linkCertificate(t, account.accountId);
  });
  after(() => t.close());

  it('a flood of wrong credentials: one hash runs, one waits, the rest get 503 with Retry-After at once', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => tokenRequest(t.app, cert, credentials(account, `wrong-${i}`), `192.0.2.${i + 1}`)));
    const count = (status: number) => answers.filter((a) => a.statusCode === status).length;
    // One hash runs and one waits; the rest are refused while they do. On a loaded machine a hash
    // may end before the last requests arrive and let one more in, but never the flood.
    assert.equal(count(401) + count(503), 8, answers.map((a) => a.statusCode).join());
    assert.ok(count(401) >= 2 && count(503) >= 4, answers.map((a) => a.statusCode).join());
    for (const refused of answers.filter((a) => a.statusCode === 503)) {
      assertError(refused, 503, /Too many token requests/);
      assert.equal(refused.headers['retry-after'], '1');
    }
  });

  it('a client whose secret was verified before gets its token during such a flood', async () => {
    assert.equal((await tokenRequest(t.app, cert, credentials(account))).statusCode, 201);
    const flood = Array.from({ length: 6 }, (_, i) => tokenRequest(t.app, cert, credentials(account, `wrong-${i}`), `192.0.2.${i + 20}`));
    const mine = await tokenRequest(t.app, cert, credentials(account));
    assert.equal(mine.statusCode, 201, mine.body);
    assert.ok((await Promise.all(flood)).some((a) => a.statusCode === 503), 'the flood filled the gate');
  });

  it('a remembered secret is forgotten when the secret is rotated', async () => {
    const other = await createAccount(t);
    const otherCert = await linkCertificate(t, other.accountId);
    assert.equal((await tokenRequest(t.app, otherCert, credentials(other))).statusCode, 201);
    const rotated = await t.app.inject({ method: 'POST', url: `/admin/accounts/${other.accountId}/client-secret`, headers: adminHeaders });
    assert.equal(rotated.statusCode, 201, rotated.body);
    assertError(await tokenRequest(t.app, otherCert, credentials(other)), 401, /credentials/);
    const fresh = rotated.json<{ clientSecret: string }>().clientSecret;
    assert.equal((await tokenRequest(t.app, otherCert, credentials(other, fresh))).statusCode, 201);
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
