import assert from 'node:assert/strict';
import { createHash, randomBytes, X509Certificate } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { compactVerify, createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet } from 'jose';
import { createTestDatabase, type TestDatabase } from '../../../../test/harness.ts';
import { testKek } from '../../../../test/signing-keys.ts';
import { ConfigError } from '../../../config.ts';
import { openDatabase } from '../../../db/client.ts';
import { unseal, type KeyEncryptionKey } from '../../auth/key-encryption.ts';
import { preparePayloadSigner, RENEW_BEFORE_DAYS, signingAddress } from './service.ts';
import { JWK_SET_PATH, PAYLOAD_SIGNING_ALGORITHM, type PayloadSigner } from './signer.ts';

const PUBLIC_URL = 'http://127.0.0.1:3000';
const NOW = new Date('2026-11-22T12:00:00.000Z');
const DAY_MS = 86_400_000;
const kek: KeyEncryptionKey = { key: testKek(), source: 'KEY_ENCRYPTION_KEY' };
const payload = { txid: 'fc9a4366ff3d4964b5dbc6c91a8722d3', revisao: 0, status: 'ATIVA', valor: { original: '37.00' } };
const b64url = /^[A-Za-z0-9_-]+$/;

const countRows = async (t: TestDatabase) => ({
  roots: (await t.db.selectFrom('payload_signing_authority').selectAll().execute()).length,
  keys: (await t.db.selectFrom('payload_signing_keys').selectAll().execute()).length,
});

async function verify(signer: PayloadSigner, jws: string) {
  return compactVerify(jws, createLocalJWKSet(signer.jwkSet as JSONWebKeySet), { algorithms: [PAYLOAD_SIGNING_ALGORITHM] });
}

describe('payload signing: the sandbox PKI kept with the database', () => {
  let t: TestDatabase;
  let signer: PayloadSigner;
  before(async () => {
    t = await createTestDatabase();
    signer = await preparePayloadSigner(t.db, kek, { publicUrl: PUBLIC_URL, now: NOW });
  });
  after(() => t.drop());

  it('is created once and reused by a restart (another instance on the same database)', async () => {
    const again = await preparePayloadSigner(t.db, kek, { publicUrl: PUBLIC_URL, now: new Date(NOW.getTime() + DAY_MS) });
    assert.equal(again.kid, signer.kid);
    assert.deepEqual(again.jwkSet, signer.jwkSet);
    assert.deepEqual(await countRows(t), { roots: 1, keys: 1 });
  });

  it('creates one set when instances start together', async () => {
    const fresh = await createTestDatabase();
    // On PostgreSQL, a second connection pool stands for a second process.
    const other = fresh.url ? await openDatabase({ url: fresh.url }) : undefined;
    try {
      const dbs = [fresh.db, other?.db ?? fresh.db];
      const signers = await Promise.all([0, 1, 2, 3].map((i) => preparePayloadSigner(dbs[i % 2]!, kek, { publicUrl: PUBLIC_URL, now: NOW })));
      assert.equal(new Set(signers.map((s) => s.kid)).size, 1);
      assert.deepEqual(await countRows(fresh), { roots: 1, keys: 1 });
    } finally {
      await other?.close();
      await fresh.drop();
    }
  });

  it('publishes a JWK Set whose key carries x5c (leaf then root), base64url x5t and x5t#S256, use and alg', () => {
    assert.equal(signer.jwkSet.keys.length, 1);
    const jwk = signer.jwkSet.keys[0]!;
    assert.equal(jwk.kty, 'RSA');
    assert.equal(jwk.use, 'sig');
    assert.equal(jwk.alg, PAYLOAD_SIGNING_ALGORITHM);
    assert.equal(jwk.kid, signer.kid);
    assert.equal(jwk.d, undefined, 'no private part');
    assert.equal(jwk.x5c.length, 2);
    const [leafDer, rootDer] = jwk.x5c.map((cert) => Buffer.from(cert, 'base64'));
    assert.equal(jwk.x5t, createHash('sha1').update(leafDer!).digest('base64url'));
    assert.equal(jwk['x5t#S256'], createHash('sha256').update(leafDer!).digest('base64url'));
    assert.match(jwk.x5t, b64url);
    assert.match(jwk['x5t#S256'], b64url);
    const leaf = new X509Certificate(leafDer!);
    const root = new X509Certificate(rootDer!);
    assert.ok(leaf.verify(root.publicKey), 'the leaf is signed by the root');
    assert.ok(root.verify(root.publicKey), 'the root is self-signed');
    assert.ok(leaf.checkIssued(root));
    assert.equal(root.ca, true);
    assert.equal(leaf.ca, false);
    assert.equal(leaf.subjectAltName, 'IP Address:127.0.0.1');
    assert.equal(root.fingerprint256, signer.root.fingerprint256);
    assert.deepEqual(leaf.publicKey.export({ format: 'jwk' }), { kty: jwk.kty, n: jwk.n, e: jwk.e });
  });

  it('signs payloads with the header a payer checks, and the JWK Set verifies them', async () => {
    const jws = await signer.signPayload(payload);
    const header = decodeProtectedHeader(jws);
    const jwk = signer.jwkSet.keys[0]!;
    assert.deepEqual(header, { alg: jwk.alg, kid: jwk.kid, jku: `${PUBLIC_URL}${JWK_SET_PATH}`, x5t: jwk.x5t, 'x5t#S256': jwk['x5t#S256'] });
    const verified = await verify(signer, jws);
    assert.deepEqual(JSON.parse(Buffer.from(verified.payload).toString('utf8')), payload);
    assert.equal(verified.protectedHeader.alg, 'PS256');
  });

  it('refuses a tampered payload or header', async () => {
    const [head, body, signature] = (await signer.signPayload(payload)).split('.');
    const altered = Buffer.from(JSON.stringify({ ...payload, valor: { original: '0.01' } })).toString('base64url');
    await assert.rejects(verify(signer, `${head}.${altered}.${signature}`), { code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' });
    const otherHead = Buffer.from(JSON.stringify({ ...decodeProtectedHeader(`${head}.${body}.${signature}`), jku: 'https://evil.example/jwks' })).toString('base64url');
    await assert.rejects(verify(signer, `${otherHead}.${body}.${signature}`), { code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' });
  });

  it('keeps private keys sealed, never in clear', async () => {
    const root = await t.db.selectFrom('payload_signing_authority').selectAll().executeTakeFirstOrThrow();
    const keys = await t.db.selectFrom('payload_signing_keys').selectAll().execute();
    const sealedKeys = [{ id: 'payload-signing-root', sealed: root.private_key_sealed }, ...keys.map((key) => ({ id: key.kid, sealed: key.private_key_sealed }))];
    for (const { id, sealed } of sealedKeys) {
      assert.match(sealed, /^v1\./);
      const pem = unseal(kek.key, id, sealed);
      assert.match(pem, /^-----BEGIN PRIVATE KEY-----\n/);
      const body = pem.split('\n').slice(1, -2).join('');
      assert.ok(!sealed.includes('-----') && !sealed.includes(body.slice(0, 32)) && !sealed.includes(Buffer.from(body, 'base64').toString('base64url').slice(0, 32)));
    }
    const other: KeyEncryptionKey = { key: randomBytes(32), source: 'KEY_ENCRYPTION_KEY' };
    await assert.rejects(preparePayloadSigner(t.db, other, { publicUrl: PUBLIC_URL, now: NOW }), (error: unknown) => {
      return error instanceof ConfigError && /KEY_ENCRYPTION_KEY does not open payload-signing key/.test(error.message);
    });
  });

  it('issues a certificate per host under the same root', async () => {
    const other = await preparePayloadSigner(t.db, kek, { publicUrl: 'https://pix.example.com', now: NOW });
    assert.notEqual(other.kid, signer.kid);
    assert.equal(other.root.fingerprint256, signer.root.fingerprint256);
    assert.equal(other.jku, 'https://pix.example.com/qr/jwks');
    const leaf = new X509Certificate(Buffer.from(other.jwkSet.keys[0]!.x5c[0]!, 'base64'));
    assert.equal(leaf.subjectAltName, 'DNS:pix.example.com');
    assert.deepEqual(await countRows(t), { roots: 1, keys: 2 });
  });

  it('renews a certificate near its end under the same root, and the older one still verifies', async () => {
    const jwk = signer.jwkSet.keys[0]!;
    const notAfter = new X509Certificate(Buffer.from(jwk.x5c[0]!, 'base64')).validToDate;
    const later = new Date(notAfter.getTime() - (RENEW_BEFORE_DAYS - 1) * DAY_MS);
    const renewed = await preparePayloadSigner(t.db, kek, { publicUrl: PUBLIC_URL, now: later });
    assert.notEqual(renewed.kid, signer.kid);
    assert.equal(renewed.root.fingerprint256, signer.root.fingerprint256);
    assert.deepEqual(
      renewed.jwkSet.keys.map((key) => key.kid),
      [renewed.kid, signer.kid],
    );
    await verify(renewed, await signer.signPayload(payload));
    await verify(renewed, await renewed.signPayload(payload));
    const again = await preparePayloadSigner(t.db, kek, { publicUrl: PUBLIC_URL, now: later });
    assert.equal(again.kid, renewed.kid, 'renewed once');
  });
});

describe('signingAddress', () => {
  it('takes the host without its port, and puts the JWK Set under PUBLIC_URL', () => {
    assert.deepEqual(signingAddress('http://127.0.0.1:3000'), { host: '127.0.0.1', jku: 'http://127.0.0.1:3000/qr/jwks' });
    assert.deepEqual(signingAddress('https://pix.example.com/'), { host: 'pix.example.com', jku: 'https://pix.example.com/qr/jwks' });
    assert.deepEqual(signingAddress('http://[::1]:8080'), { host: '[::1]', jku: 'http://[::1]:8080/qr/jwks' });
  });
});
