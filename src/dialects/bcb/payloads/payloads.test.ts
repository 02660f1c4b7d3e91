import assert from 'node:assert/strict';
import { createHash, X509Certificate } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { compactVerify, decodeProtectedHeader, importJWK, type JWK } from 'jose';
import { createClient, evpKey, type TestClient } from '../../../../test/factories.ts';
import { adminHeaders, startTestApp, type TestApp } from '../../../../test/harness.ts';
import { assertBcbAnswer, assertBcbDefinition } from '../../../../test/support/bcb-schemas.ts';
import { randomAlphanumeric } from '../../../lib/ids.ts';

type Json = Record<string, unknown>;

describe('BCB payload location of a cob (/qr/v2/{token}) and its JWK Set', () => {
  let t: TestApp;
  let a: TestClient;
  let key: string;

  before(async () => {
    t = await startTestApp();
    a = await createClient(t);
    key = await evpKey(t, a.accountId);
  });
  after(() => t.close());

  async function charge(): Promise<{ txid: string; token: string; location: string }> {
    const txid = randomAlphanumeric(30);
    const res = await t.app.inject({ method: 'PUT', url: `/v2/cob/${txid}`, headers: a.headers, payload: { calendario: { expiracao: 600 }, valor: { original: '25.00' }, chave: key, solicitacaoPagador: 'Pedido' } });
    assert.equal(res.statusCode, 201, res.body);
    const location = res.json<{ location: string }>().location;
    return { txid, token: location.split('/').at(-1)!, location };
  }

  /** The payload of the location, its JWS verified with the JWK Set's key as a payer does. */
  async function fetchPayload(token: string): Promise<Json> {
    const res = await t.app.inject({ method: 'GET', url: `/qr/v2/${token}` });
    assert.equal(res.statusCode, 200, res.body);
    assertBcbAnswer('GET /{pixUrlAccessToken}', res);
    assert.match(String(res.headers['content-type']), /^application\/jose/);
    const header = decodeProtectedHeader(res.body);
    const jwks = await t.app.inject({ method: 'GET', url: '/qr/jwks' });
    assert.equal(jwks.statusCode, 200, jwks.body);
    assert.match(String(jwks.headers['content-type']), /^application\/json/);
    const jwk = jwks.json<{ keys: (JWK & { x5c: string[]; kid: string })[] }>().keys.find((k) => k.kid === header.kid)!;
    assert.ok(jwk, 'the JWK Set holds the kid of the header');
    assert.equal(header.alg, 'PS256');
    assert.equal(header.jku, `${t.config.publicUrl}/qr/jwks`);
    const leaf = Buffer.from(jwk.x5c[0]!, 'base64');
    assert.equal(header.x5t, createHash('sha1').update(leaf).digest('base64url'));
    assert.equal(header['x5t#S256'], createHash('sha256').update(leaf).digest('base64url'));
    const root = new X509Certificate(Buffer.from(jwk.x5c.at(-1)!, 'base64'));
    assert.ok(root.verify(root.publicKey), 'x5c ends with a self-signed root');
    const { payload } = await compactVerify(res.body, await importJWK(jwk, 'PS256'));
    const json = JSON.parse(Buffer.from(payload).toString('utf8')) as Json;
    assertBcbDefinition('CobPayload', json);
    return json;
  }

  it('serves the signed CobPayload of the current revision, apresentacao = now', async () => {
    const { txid, token } = await charge();
    const payload = await fetchPayload(token);
    assert.equal(payload.txid, txid);
    assert.equal(payload.revisao, 0);
    assert.equal(payload.status, 'ATIVA');
    assert.equal(payload.chave, key);
    assert.deepEqual(payload.valor, { original: '25.00', modalidadeAlteracao: 0 });
    assert.equal((payload.calendario as Json).apresentacao, t.clock.now().toISOString());
    assert.equal((payload.calendario as Json).expiracao, 600);
    const patched = await t.app.inject({ method: 'PATCH', url: `/v2/cob/${txid}`, headers: a.headers, payload: { valor: { original: '30.00' } } });
    assert.equal(patched.statusCode, 200, patched.body);
    const revised = await fetchPayload(token);
    assert.equal(revised.revisao, 1);
    assert.equal((revised.valor as Json).original, '30.00');
  });

  it('a paid, removed or expired charge is served with its status', async () => {
    const paid = await charge();
    assert.equal((await t.app.inject({ method: 'POST', url: `/sandbox/cob/${paid.txid}/pay`, headers: adminHeaders })).statusCode, 201);
    assert.equal((await fetchPayload(paid.token)).status, 'CONCLUIDA');
    const removed = await charge();
    await t.app.inject({ method: 'PATCH', url: `/v2/cob/${removed.txid}`, headers: a.headers, payload: { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' } });
    assert.equal((await fetchPayload(removed.token)).status, 'REMOVIDA_PELO_USUARIO_RECEBEDOR');
    const expired = await charge();
    t.clock.advance(601_000);
    assert.equal((await fetchPayload(expired.token)).status, 'REMOVIDA_PELO_PSP');
  });

  it('an unknown token, a location with no charge, or a cobv location is 404 CobPayloadNaoEncontrado', async () => {
    const free = await t.app.inject({ method: 'POST', url: '/v2/loc', headers: a.headers, payload: { tipoCob: 'cob' } });
    const cobv = await t.app.inject({ method: 'POST', url: '/v2/loc', headers: a.headers, payload: { tipoCob: 'cobv' } });
    const tokens = ['0'.repeat(32), 'not-a-token', free.json<{ location: string }>().location.split('/').at(-1)!, cobv.json<{ location: string }>().location.split('/').at(-1)!];
    for (const token of tokens) {
      const res = await t.app.inject({ method: 'GET', url: `/qr/v2/${token}` });
      assert.equal(res.statusCode, 404, res.body);
      assertBcbAnswer('GET /{pixUrlAccessToken}', res);
      assert.equal(res.json<{ type: string }>().type, 'https://pix.bcb.gov.br/api/v2/error/CobPayloadNaoEncontrado');
    }
  });
});
