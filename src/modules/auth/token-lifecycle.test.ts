import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { decodeProtectedHeader, exportJWK, generateKeyPair, calculateJwkThumbprint } from 'jose';
import { buildApp } from '../../app.ts';
import { runOperatorCommand } from '../../cli.ts';
import { ConfigError } from '../../config.ts';
import { openDatabase } from '../../db/client.ts';
import { ManualClock } from '../../lib/clock.ts';
import { createAccount, createClient, linkCertificate, type TestAccount, type TestClient } from '../../../test/factories.ts';
import { adminHeaders, startTestApp, testConfig, type TestApp } from '../../../test/harness.ts';
import { assertError } from '../../../test/assertions.ts';
import { testKek } from '../../../test/signing-keys.ts';
import { unseal } from './key-encryption.ts';
import { SIGNING_KEY_CACHE_TTL_MS } from './key-ring.ts';
import { LINK_CACHE_TTL_MS } from './link-cache.ts';
import type { SigningKeyView } from './signing-keys.ts';

/**
 * Another instance of the service on the same database, with a clock of its own: on PostgreSQL a
 * pool of its own too, as a second process would have.
 */
async function secondInstance(t: TestApp, clock: ManualClock, env: Record<string, string> = {}): Promise<{ app: FastifyInstance; close(): Promise<void> }> {
  const database = t.testDb.url ? await openDatabase({ url: t.testDb.url, poolSize: 4 }) : null;
  const app = await buildApp({ config: testConfig(env), db: database?.db ?? t.db, clock, logLevel: false });
  return {
    app,
    close: async () => {
      await app.close();
      await database?.close();
    },
  };
}

const balance = (app: FastifyInstance, token: string, cert: { header: string }) =>
  app.inject({ method: 'GET', url: '/balance', headers: { authorization: `Bearer ${token}`, 'x-ssl-client-cert': cert.header } });

async function tokenFrom(app: FastifyInstance, account: TestAccount, cert: { header: string }, secret = account.clientSecret): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/api/auth/token', headers: { 'x-ssl-client-cert': cert.header }, payload: { clientId: account.clientId, clientSecret: secret } });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<{ access_token: string }>().access_token;
}

const kidOf = (token: string) => decodeProtectedHeader(token).kid!;

describe('token lifecycle: two instances of the service on one database', () => {
  let t: TestApp;
  let clockB: ManualClock;
  let b: { app: FastifyInstance; close(): Promise<void> };
  const admin = (method: 'GET' | 'POST', url: string) => t.app.inject({ method, url, headers: adminHeaders });

  before(async () => {
    t = await startTestApp();
    clockB = new ManualClock(t.clock.now());
    b = await secondInstance(t, clockB);
  });
  after(async () => {
    await b?.close();
    await t?.close();
  });

  describe('rotating a client secret', () => {
    let client: TestClient;
    before(async () => {
      client = await createClient(t);
    });

    it('through the operator API: the old tokens are refused at once here, and by the other instance within 5 s', async () => {
      assert.equal((await balance(t.app, client.token, client.cert)).statusCode, 200);
      assert.equal((await balance(b.app, client.token, client.cert)).statusCode, 200);
      const rotated = await t.app.inject({ method: 'POST', url: `/admin/accounts/${client.accountId}/client-secret`, headers: adminHeaders });
      assert.equal(rotated.statusCode, 201, rotated.body);

      assertError(await balance(t.app, client.token, client.cert), 401, /revoked/, 'TOKEN_INVALID');
      // The other instance goes on trusting what it read for LINK_CACHE_TTL_MS, and no longer.
      clockB.advance(LINK_CACHE_TTL_MS - 1);
      assert.equal((await balance(b.app, client.token, client.cert)).statusCode, 200);
      clockB.advance(1);
      assertError(await balance(b.app, client.token, client.cert), 401, /revoked/, 'TOKEN_INVALID');

      const fresh = rotated.json<{ clientSecret: string }>().clientSecret;
      const renewed = await tokenFrom(b.app, client, client.cert, fresh);
      assert.equal((await balance(t.app, renewed, client.cert)).statusCode, 200);
      assert.equal((await balance(b.app, renewed, client.cert)).statusCode, 200);
      client = { ...client, clientSecret: fresh, token: renewed };
    });

    it('through the CLI (a process of its own): every instance refuses the old tokens within 5 s', async () => {
      assert.equal((await balance(t.app, client.token, client.cert)).statusCode, 200);
      assert.equal((await balance(b.app, client.token, client.cert)).statusCode, 200);
      await runOperatorCommand(t.db, t.config, ['client-secret', 'rotate', '--account', String(client.accountId)]);
      t.clock.advance(LINK_CACHE_TTL_MS);
      clockB.advance(LINK_CACHE_TTL_MS);
      assertError(await balance(t.app, client.token, client.cert), 401, /revoked/, 'TOKEN_INVALID');
      assertError(await balance(b.app, client.token, client.cert), 401, /revoked/, 'TOKEN_INVALID');
    });
  });

  describe('narrowing a client scopes', () => {
    const transfer = (app: FastifyInstance, client: TestClient) =>
      app.inject({ method: 'POST', url: '/dict/pix', headers: { ...client.headers, 'x-idempotency-key': randomUUID() }, payload: { pixKey: 'nobody@example.com', payment: { currency: 'BRL', amount: 1 } } });
    const secret = (app: FastifyInstance, client: TestClient) => app.inject({ method: 'GET', url: '/api/webhooks/signing-secret', headers: client.headers });
    const cobs = (app: FastifyInstance, client: TestClient) => app.inject({ method: 'GET', url: '/cob?inicio=2026-01-01T00:00:00Z&fim=2026-01-02T00:00:00Z', headers: client.headers });

    it('through the operator API: live tokens lose the removed scopes at once here, and in the other instance within 5 s; they keep the others', async () => {
      const client = await createClient(t);
      assert.equal((await secret(b.app, client)).statusCode, 200, 'every scope held, the default');
      const narrowed = await t.app.inject({ method: 'PATCH', url: `/admin/accounts/${client.accountId}`, headers: adminHeaders, payload: { scopes: ['cob.read'] } });
      assert.deepEqual(narrowed.json<{ scopes: string[] }>().scopes, ['cob.read']);

      assertError(await transfer(t.app, client), 403, /pix\.send/, 'SCOPE_NOT_GRANTED');
      assertError(await secret(t.app, client), 403, /webhooksecret\.read/, 'SCOPE_NOT_GRANTED');
      assert.equal((await cobs(t.app, client)).statusCode, 200);
      clockB.advance(LINK_CACHE_TTL_MS - 1);
      assert.equal((await secret(b.app, client)).statusCode, 200, 'the other instance still has what it read');
      clockB.advance(1);
      assertError(await secret(b.app, client), 403, /webhooksecret\.read/, 'SCOPE_NOT_GRANTED');
      assertError(await transfer(b.app, client), 403, /pix\.send/, 'SCOPE_NOT_GRANTED');
      assert.equal((await cobs(b.app, client)).statusCode, 200);

      // Given back, the token (which carries them) may use them again.
      await t.app.inject({ method: 'PATCH', url: `/admin/accounts/${client.accountId}`, headers: adminHeaders, payload: { scopes: null } });
      assert.equal((await secret(t.app, client)).statusCode, 200);
    });

    it('through the CLI (a process of its own): every instance applies it within 5 s', async () => {
      const client = await createClient(t);
      await runOperatorCommand(t.db, t.config, ['scopes', 'limit', '--account', String(client.accountId), '--scopes', 'cob.read,balance.read']);
      t.clock.advance(LINK_CACHE_TTL_MS);
      clockB.advance(LINK_CACHE_TTL_MS);
      for (const app of [t.app, b.app]) {
        assertError(await transfer(app, client), 403, /pix\.send/, 'SCOPE_NOT_GRANTED');
        assert.equal((await balance(app, client.token, client.cert)).statusCode, 200);
      }
    });
  });

  describe('signing keys', () => {
    const list = async () => (await admin('GET', '/admin/signing-keys')).json<{ data: SigningKeyView[] }>().data;

    it('rotate: the new key signs at once here and within 5 s in the other instance; the previous one still verifies; retire: it stops verifying everywhere within 5 s', async () => {
      const account = await createAccount(t);
      const cert = await linkCertificate(t, account.accountId);
      const before = await tokenFrom(t.app, account, cert);
      const oldKid = kidOf(before);
      assert.equal((await list()).find((k) => k.status === 'signing')?.kid, oldKid);
      assert.equal((await balance(b.app, before, cert)).statusCode, 200);

      const rotated = await admin('POST', '/admin/signing-keys');
      assert.equal(rotated.statusCode, 201, rotated.body);
      const created = rotated.json<SigningKeyView>();
      assert.deepEqual(Object.keys(created).sort(), ['algorithm', 'createdAt', 'kid', 'retiredAt', 'status']);
      assert.equal(created.status, 'signing');
      assert.equal(created.algorithm, 'EdDSA');
      assert.equal(created.retiredAt, null);
      const newKid = created.kid;
      assert.notEqual(newKid, oldKid);

      assert.equal(kidOf(await tokenFrom(t.app, account, cert)), newKid);
      assert.equal(kidOf(await tokenFrom(b.app, account, cert)), oldKid, 'the other instance learns of it within SIGNING_KEY_CACHE_TTL_MS');
      clockB.advance(SIGNING_KEY_CACHE_TTL_MS);
      const fromB = await tokenFrom(b.app, account, cert);
      assert.equal(kidOf(fromB), newKid);
      for (const app of [t.app, b.app]) for (const token of [before, fromB]) assert.equal((await balance(app, token, cert)).statusCode, 200);
      assert.deepEqual(
        (await list()).filter((k) => [oldKid, newKid].includes(k.kid)).map((k) => [k.kid, k.status]),
        [
          [newKid, 'signing'],
          [oldKid, 'verifying'],
        ],
      );

      const retired = await admin('POST', `/admin/signing-keys/${oldKid}/retire`);
      assert.equal(retired.statusCode, 200, retired.body);
      assert.equal(retired.json<SigningKeyView>().status, 'retired');
      assert.match(retired.json<SigningKeyView>().retiredAt!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      // Here at once, although this instance had verified the token already.
      assertError(await balance(t.app, before, cert), 401, /retired/, 'TOKEN_INVALID');
      clockB.advance(SIGNING_KEY_CACHE_TTL_MS - 1);
      assert.equal((await balance(b.app, before, cert)).statusCode, 200);
      clockB.advance(1);
      assertError(await balance(b.app, before, cert), 401, /retired/, 'TOKEN_INVALID');
      for (const app of [t.app, b.app]) assert.equal((await balance(app, fromB, cert)).statusCode, 200);

      const row = await t.db.selectFrom('signing_keys').select(['private_jwk', 'private_key_sealed', 'retired_at']).where('kid', '=', oldKid).executeTakeFirstOrThrow();
      assert.deepEqual({ ...row, retired_at: row.retired_at?.toISOString() }, { private_jwk: null, private_key_sealed: null, retired_at: retired.json<SigningKeyView>().retiredAt });
      // Again: the same answer.
      const again = await admin('POST', `/admin/signing-keys/${oldKid}/retire`);
      assert.deepEqual(again.json(), retired.json());
    });

    it('a key created by another process verifies here at once, before this instance would have looked again', async () => {
      const account = await createAccount(t);
      const cert = await linkCertificate(t, account.accountId);
      const created = JSON.parse(await runOperatorCommand(t.db, t.config, ['signing-keys', 'rotate'])) as SigningKeyView;
      clockB.advance(SIGNING_KEY_CACHE_TTL_MS);
      const fromB = await tokenFrom(b.app, account, cert);
      assert.equal(kidOf(fromB), created.kid);
      assert.equal((await balance(t.app, fromB, cert)).statusCode, 200);
    });

    it('the only active key cannot be retired; unknown and malformed kids are 404 and 400', async () => {
      for (const key of (await list()).filter((k) => k.status === 'verifying')) {
        assert.equal((await admin('POST', `/admin/signing-keys/${key.kid}/retire`)).statusCode, 200);
      }
      const [signing, ...others] = (await list()).filter((k) => k.status !== 'retired');
      assert.deepEqual(others, []);
      assertError(await admin('POST', `/admin/signing-keys/${signing!.kid}/retire`), 409, /rotate first/, 'SIGNING_KEY_LAST_ACTIVE');
      assertError(await admin('POST', '/admin/signing-keys/nokey/retire'), 404, /nokey/, 'SIGNING_KEY_NOT_FOUND');
      assertError(await admin('POST', `/admin/signing-keys/${'%2E'.repeat(3)}/retire`), 400);
      // Still signing.
      const client = await createClient(t);
      assert.equal(kidOf(client.token), signing!.kid);
    });

    it('the operator routes want the admin token', async () => {
      for (const [method, url] of [
        ['GET', '/admin/signing-keys'],
        ['POST', '/admin/signing-keys'],
        ['POST', '/admin/signing-keys/abc/retire'],
      ] as const) {
        assertError(await t.app.inject({ method, url }), 401, /admin/, 'ADMIN_TOKEN_INVALID');
      }
    });
  });
});

describe('private signing keys at rest', () => {
  let t: TestApp;

  before(async () => {
    t = await startTestApp();
  });
  after(() => t?.close());

  it('are sealed under KEY_ENCRYPTION_KEY with the kid as additional data: the database alone mints nothing', async () => {
    const client = await createClient(t);
    const kid = kidOf(client.token);
    const row = await t.db.selectFrom('signing_keys').select(['private_jwk', 'private_key_sealed']).where('kid', '=', kid).executeTakeFirstOrThrow();
    assert.equal(row.private_jwk, null);
    const sealed = row.private_key_sealed!;
    assert.match(sealed, /^v1\.[\w-]{16}\.[\w-]+\.[\w-]{22}$/);
    const jwk = JSON.parse(unseal(testKek(), kid, sealed)) as { d: string; x: string };
    assert.ok(!sealed.includes(jwk.d) && !JSON.stringify(row).includes(jwk.d), 'no plain private key in the row');
    assert.throws(() => unseal(randomBytes(32), kid, sealed), /does not open/);
    assert.throws(() => unseal(testKek(), `${kid}x`, sealed), /does not open/, 'sealed for one kid, it does not open as another');
    const tampered = sealed.slice(0, -3) + (sealed.at(-3) === 'A' ? 'B' : 'A') + sealed.slice(-2);
    assert.throws(() => unseal(testKek(), kid, tampered), /does not open/);
  });

  it('a wrong KEY_ENCRYPTION_KEY is a start-up error naming the variable, not a 500 per request', async () => {
    await assert.rejects(
      buildApp({ config: testConfig({ KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64') }), db: t.db, clock: t.clock, logLevel: false }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError, String(error));
        assert.match(error.message, /^KEY_ENCRYPTION_KEY does not open signing key [\w-]+: this database's signing keys were sealed under another key-encryption key$/);
        return true;
      },
    );
  });

  it('rows written before keys were sealed are sealed at start-up, and go on signing and verifying', async () => {
    const legacy = async (retired: boolean) => {
      const { privateKey, publicKey } = await generateKeyPair('EdDSA', { extractable: true });
      const publicJwk = await exportJWK(publicKey);
      const kid = await calculateJwkThumbprint(publicJwk);
      await t.db
        .insertInto('signing_keys')
        .values({ kid, algorithm: 'EdDSA', private_jwk: JSON.stringify(await exportJWK(privateKey)), public_jwk: JSON.stringify(publicJwk) })
        .execute();
      if (retired) await t.db.updateTable('signing_keys').set({ retired_at: new Date() }).where('kid', '=', kid).execute();
      return kid;
    };
    const retiredKid = await legacy(true);
    const activeKid = await legacy(false);

    const restarted = await secondInstance(t, new ManualClock(t.clock.now()));
    try {
      const rows = await t.db.selectFrom('signing_keys').select(['kid', 'private_jwk', 'private_key_sealed']).where('kid', 'in', [retiredKid, activeKid]).execute();
      const byKid = new Map(rows.map((r) => [r.kid, r]));
      assert.deepEqual(byKid.get(retiredKid), { kid: retiredKid, private_jwk: null, private_key_sealed: null }, 'a retired key loses its private part');
      assert.equal(byKid.get(activeKid)!.private_jwk, null);
      assert.equal(JSON.parse(unseal(testKek(), activeKid, byKid.get(activeKid)!.private_key_sealed!)).kty, 'OKP');

      // The newest active key signs (the restarted instance), and every instance verifies it.
      const account = await createAccount(t);
      const cert = await linkCertificate(t, account.accountId);
      const token = await tokenFrom(restarted.app, account, cert);
      assert.equal(kidOf(token), activeKid);
      assert.equal((await balance(t.app, token, cert)).statusCode, 200);
    } finally {
      await restarted.close();
    }
  });
});
