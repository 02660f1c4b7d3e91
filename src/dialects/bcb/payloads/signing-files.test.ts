import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { compactVerify, decodeProtectedHeader, importJWK, type JWK } from 'jose';
import { createClient, evpKey } from '../../../../test/factories.ts';
import { startTestApp, type TestApp } from '../../../../test/harness.ts';
import { ConfigError, loadConfig } from '../../../config.ts';
import { randomAlphanumeric } from '../../../lib/ids.ts';
import { generateRoot, issueSigningCertificate } from '../../../modules/locations/signing/pki.ts';

const pem = (der: Buffer) => new X509Certificate(der).toString();

describe('QR_SIGNING_KEY_FILE and QR_SIGNING_CHAIN_FILE', () => {
  const dir = mkdtempSync(join(tmpdir(), 'qr-signing-'));
  const path = (name: string) => join(dir, name);
  let rootDer: Buffer;

  before(async () => {
    const now = new Date();
    const root = await generateRoot(now);
    const leaf = await issueSigningCertificate(root, '127.0.0.1', now);
    const other = await generateRoot(now);
    rootDer = root.certificateDer;
    writeFileSync(path('key.pem'), leaf.privateKeyPem);
    writeFileSync(path('chain.pem'), pem(leaf.certificateDer) + pem(root.certificateDer));
    writeFileSync(path('leaf-only.pem'), pem(leaf.certificateDer));
    writeFileSync(path('wrong-root.pem'), pem(leaf.certificateDer) + pem(other.certificateDer));
    writeFileSync(path('other-key.pem'), other.privateKeyPem);
    writeFileSync(path('garbage.pem'), 'not a key');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const refused = (env: Record<string, string>, message: RegExp) =>
    assert.throws(() => loadConfig(env), (e: unknown) => e instanceof ConfigError && message.test(e.message));

  it('are read together, checked at start, and absent by default', () => {
    assert.equal(loadConfig({}).qrSigning, undefined);
    const config = loadConfig({ QR_SIGNING_KEY_FILE: path('key.pem'), QR_SIGNING_CHAIN_FILE: path('chain.pem') });
    assert.deepEqual(config.qrSigning, { keyFile: path('key.pem'), chainFile: path('chain.pem') });
    refused({ QR_SIGNING_KEY_FILE: path('key.pem') }, /^QR_SIGNING_CHAIN_FILE must be set together/);
    refused({ QR_SIGNING_CHAIN_FILE: path('chain.pem') }, /^QR_SIGNING_KEY_FILE must be set together/);
    refused({ QR_SIGNING_KEY_FILE: path('missing.pem'), QR_SIGNING_CHAIN_FILE: path('chain.pem') }, /^QR_SIGNING_KEY_FILE must name an existing file/);
    refused({ QR_SIGNING_KEY_FILE: path('garbage.pem'), QR_SIGNING_CHAIN_FILE: path('chain.pem') }, /^QR_SIGNING_KEY_FILE must hold a private key/);
    refused({ QR_SIGNING_KEY_FILE: path('other-key.pem'), QR_SIGNING_CHAIN_FILE: path('chain.pem') }, /^QR_SIGNING_KEY_FILE is not the key/);
    refused({ QR_SIGNING_KEY_FILE: path('key.pem'), QR_SIGNING_CHAIN_FILE: path('leaf-only.pem') }, /^QR_SIGNING_CHAIN_FILE must hold the signing certificate and its chain/);
    refused({ QR_SIGNING_KEY_FILE: path('key.pem'), QR_SIGNING_CHAIN_FILE: path('wrong-root.pem') }, /^QR_SIGNING_CHAIN_FILE holds certificate 1, not issued/);
  });

  describe('a service started with them', () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ env: { QR_SIGNING_KEY_FILE: path('key.pem'), QR_SIGNING_CHAIN_FILE: path('chain.pem') } });
    });
    after(() => t.close());

    it('signs payloads with the key of the files, its JWK Set carrying their chain', async () => {
      const a = await createClient(t);
      const key = await evpKey(t, a.accountId);
      const cob = await t.app.inject({ method: 'PUT', url: `/v2/cob/${randomAlphanumeric(30)}`, headers: a.headers, payload: { calendario: {}, valor: { original: '1.00' }, chave: key } });
      assert.equal(cob.statusCode, 201, cob.body);
      const res = await t.app.inject({ method: 'GET', url: `/qr/v2/${cob.json<{ location: string }>().location.split('/').at(-1)!}` });
      assert.equal(res.statusCode, 200, res.body);
      const jwk = (await t.app.inject({ method: 'GET', url: '/qr/jwks' })).json<{ keys: (JWK & { x5c: string[] })[] }>().keys[0]!;
      assert.equal(decodeProtectedHeader(res.body).kid, jwk.kid);
      assert.deepEqual(Buffer.from(jwk.x5c.at(-1)!, 'base64'), rootDer);
      await compactVerify(res.body, await importJWK(jwk, 'PS256'));
    });
  });
});
