import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hasError, isDynamicPix, parsePix } from 'pix-utils';
import { createClient, evpKey, type TestClient } from '../../../../test/factories.ts';
import { startTestApp, type TestApp } from '../../../../test/harness.ts';
import { assertBcbAnswer, assertBcbProblem } from '../../../../test/support/bcb-schemas.ts';
import { randomAlphanumeric } from '../../../lib/ids.ts';

type Json = Record<string, unknown>;


describe('BCB /v2/loc', () => {
  let t: TestApp;
  let a: TestClient;
  let aKey: string;
  let b: TestClient;

  before(async () => {
    t = await startTestApp();
    a = await createClient(t);
    aKey = await evpKey(t, a.accountId);
    b = await createClient(t);
  });
  after(() => t.close());

  const req = (method: 'POST' | 'GET' | 'DELETE' | 'PUT', url: string, body?: unknown, client: TestClient = a, headers = client.headers) =>
    t.app.inject({ method, url, headers, ...(body === undefined ? {} : { payload: body as Json }) });

  async function newLoc(tipoCob = 'cob', client: TestClient = a): Promise<Json> {
    const res = await req('POST', '/v2/loc', { tipoCob }, client);
    assert.equal(res.statusCode, 201, res.body);
    assertBcbAnswer('POST /loc', res);
    return res.json<Json>();
  }

  async function scopedHeaders(client: TestClient, scope: string): Promise<Record<string, string>> {
    const basic = Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64');
    const res = await t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}`, 'x-ssl-client-cert': client.cert.header },
      payload: new URLSearchParams({ grant_type: 'client_credentials', scope }).toString(),
    });
    assert.equal(res.statusCode, 200, res.body);
    return { authorization: `Bearer ${res.json<{ access_token: string }>().access_token}`, 'x-ssl-client-cert': client.cert.header };
  }

  it('POST creates a location of each kind; a bad tipoCob is 400 PayloadLocationOperacaoInvalida', async () => {
    const cob = await newLoc('cob');
    assert.equal(cob.tipoCob, 'cob');
    assert.match(String(cob.location), /^127\.0\.0\.1:\d+\/qr\/v2\/[a-z0-9]{32}$/);
    const cobv = await newLoc('cobv');
    assert.match(String(cobv.location), /\/qr\/v2\/cobv\/[a-z0-9]{32}$/);
    const bad = await req('POST', '/v2/loc', { tipoCob: 'cobr' });
    assertBcbProblem(bad, 400, 'PayloadLocationOperacaoInvalida');
    assertBcbAnswer('POST /loc', bad);
  });

  it('GET /loc/{id} shows the txid of its charge; unknown and other accounts\' are 404', async () => {
    const loc = await newLoc();
    const txid = randomAlphanumeric(30);
    const put = await req('PUT', `/v2/cob/${txid}`, { calendario: {}, valor: { original: '1.00' }, chave: aKey, loc: { id: loc.id } });
    assert.equal(put.statusCode, 201, put.body);
    const res = await req('GET', `/v2/loc/${String(loc.id)}`);
    assertBcbAnswer('GET /loc/{id}', res);
    assert.deepEqual(res.json(), { ...loc, txid });
    for (const [url, client] of [[`/v2/loc/${String(loc.id)}`, b], ['/v2/loc/999999999', a], ['/v2/loc/abc', a]] as const) {
      const missing = await req('GET', url, undefined, client);
      assertBcbProblem(missing, 404, 'PayloadLocationNaoEncontrado');
      assertBcbAnswer('GET /loc/{id}', missing);
    }
  });

  it('DELETE /loc/{id}/txid unlinks: the location shows no txid, the charge no location, its status unchanged, its payload 404', async () => {
    const txid = randomAlphanumeric(30);
    const cob = (await req('PUT', `/v2/cob/${txid}`, { calendario: {}, valor: { original: '1.00' }, chave: aKey })).json<{ loc: { id: number }; location: string }>();
    const res = await req('DELETE', `/v2/loc/${cob.loc.id}/txid`);
    assertBcbAnswer('DELETE /loc/{id}/txid', res);
    assert.equal(res.json<Json>().txid, undefined);
    const after = await req('GET', `/v2/cob/${txid}`);
    assertBcbAnswer('GET /cob/{txid}', after);
    const shown = after.json<Json>();
    assert.equal(shown.status, 'ATIVA');
    for (const field of ['loc', 'location', 'pixCopiaECola']) assert.ok(!(field in shown), field);
    const payload = await t.app.inject({ method: 'GET', url: `/qr/v2/${cob.location.split('/').at(-1)!}` });
    assertBcbProblem(payload, 404, 'CobPayloadNaoEncontrado');
    // The location is free again: another charge takes it.
    const again = await req('PUT', `/v2/cob/${randomAlphanumeric(30)}`, { calendario: {}, valor: { original: '2.00' }, chave: aKey, loc: { id: cob.loc.id } });
    assert.equal(again.statusCode, 201, again.body);
    assertBcbProblem(await req('DELETE', `/v2/loc/${cob.loc.id}/txid`, undefined, b), 404, 'PayloadLocationNaoEncontrado');
  });

  it('DELETE /loc/{id}/txid unlinks a cobv: it shows no loc nor pixCopiaECola and an empty location, as GET and GET /cobv; linked again, it shows the new one', async () => {
    const txid = randomAlphanumeric(30);
    const day = new Date(t.clock.now().getTime() + 10 * 86_400_000).toISOString().slice(0, 10);
    const body = { calendario: { dataDeVencimento: day }, devedor: { cpf: '12345678909', nome: 'Francisco da Silva' }, valor: { original: '10.00' }, chave: aKey };
    const created = await req('PUT', `/v2/cobv/${txid}`, body);
    assert.equal(created.statusCode, 201, created.body);
    const cobv = created.json<{ loc: { id: number; location: string }; location: string; pixCopiaECola: string }>();
    assert.equal(cobv.location, cobv.loc.location);
    const unlinked = await req('DELETE', `/v2/loc/${cobv.loc.id}/txid`);
    assertBcbAnswer('DELETE /loc/{id}/txid', unlinked);
    assert.equal(unlinked.json<Json>().txid, undefined);

    const after = await req('GET', `/v2/cobv/${txid}`);
    assertBcbAnswer('GET /cobv/{txid}', after);
    const shown = after.json<Json>();
    assert.equal(shown.status, 'ATIVA');
    for (const field of ['loc', 'pixCopiaECola']) assert.ok(!(field in shown), field);
    // CobVGerada requires `location`, which names nothing once the charge has none.
    assert.equal(shown.location, '');
    const from = new Date(t.clock.now().getTime() - 60_000).toISOString();
    const to = new Date(t.clock.now().getTime() + 60_000).toISOString();
    const listed = await req('GET', `/v2/cobv?inicio=${from}&fim=${to}&locationPresente=false`);
    assertBcbAnswer('GET /cobv', listed);
    assert.deepEqual(listed.json<{ cobs: Json[] }>().cobs.find((c) => c.txid === txid), shown);
    const payload = await t.app.inject({ method: 'GET', url: cobv.loc.location.slice(cobv.loc.location.indexOf('/qr/')) });
    assertBcbProblem(payload, 404, 'CobPayloadNaoEncontrado');

    // A revision that names a location of the account links the cobv to it again.
    const loc = await newLoc('cobv');
    const linked = await req('PUT', `/v2/cobv/${txid}`, { ...body, loc: { id: loc.id } });
    assertBcbAnswer('PUT /cobv/{txid}', linked);
    const relinked = linked.json<{ loc: Json; location: string; pixCopiaECola: string }>();
    assert.deepEqual(relinked.loc, { ...loc, txid });
    assert.equal(relinked.location, loc.location);
    assert.ok(relinked.pixCopiaECola.includes(String(loc.location)));
  });

  it('GET /loc lists with filters and BCB paging; bad queries are PayloadLocationConsultaInvalida', async () => {
    const c = await createClient(t);
    const from = new Date(t.clock.now().getTime() - 60_000).toISOString();
    const to = new Date(t.clock.now().getTime() + 60_000).toISOString();
    await newLoc('cob', c);
    await newLoc('cobv', c);
    await newLoc('cob', c);
    const list = (q = '') => req('GET', `/v2/loc?inicio=${from}&fim=${to}${q}`, undefined, c);
    const all = await list();
    assertBcbAnswer('GET /loc', all);
    assert.equal(all.json<{ loc: Json[] }>().loc.length, 3);
    const cobs = await list('&tipoCob=cob&txIdPresente=false&paginacao.itensPorPagina=1');
    assertBcbAnswer('GET /loc', cobs);
    const answer = cobs.json<{ parametros: { paginacao: Json }; loc: Json[] }>();
    assert.deepEqual(answer.parametros.paginacao, { paginaAtual: 0, itensPorPagina: 1, quantidadeDePaginas: 2, quantidadeTotalDeItens: 2 });
    assert.equal((await list('&txIdPresente=true')).json<{ loc: Json[] }>().loc.length, 0);
    assertBcbProblem(await req('GET', `/v2/loc?inicio=${to}&fim=${from}`, undefined, c), 400, 'PayloadLocationConsultaInvalida');
    assertBcbProblem(await list('&tipoCob=rec'), 400, 'PayloadLocationConsultaInvalida');
  });

  it('GET /loc/{id}/qrcode: the charge\'s BR Code and a PNG of it', async () => {
    const txid = randomAlphanumeric(30);
    const cob = (await req('PUT', `/v2/cob/${txid}`, { calendario: {}, valor: { original: '1.00' }, chave: aKey })).json<{ loc: { id: number }; pixCopiaECola: string; location: string }>();
    const res = await req('GET', `/v2/loc/${cob.loc.id}/qrcode`);
    assert.equal(res.statusCode, 200, res.body);
    const { qrcode, imagemQrcode } = res.json<{ qrcode: string; imagemQrcode: string }>();
    assert.equal(qrcode, cob.pixCopiaECola);
    const pix = parsePix(qrcode);
    assert.ok(!hasError(pix) && isDynamicPix(pix));
    assert.equal(pix.url, cob.location);
    const png = Buffer.from(imagemQrcode.replace(/^data:image\/png;base64,/, ''), 'base64');
    assert.deepEqual([...png.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
    assertBcbProblem(await req('GET', `/v2/loc/${cob.loc.id}/qrcode`, undefined, b), 404, 'PayloadLocationNaoEncontrado');
  });

  it('scopes: payloadlocation.write to create and unlink, payloadlocation.read to read', async () => {
    const loc = await newLoc();
    const readOnly = await scopedHeaders(a, 'payloadlocation.read');
    const writeOnly = await scopedHeaders(a, 'payloadlocation.write cob.read');
    const denied = await req('POST', '/v2/loc', { tipoCob: 'cob' }, a, readOnly);
    assertBcbProblem(denied, 403, 'AcessoNegado');
    assertBcbAnswer('POST /loc', denied);
    assertBcbProblem(await req('DELETE', `/v2/loc/${String(loc.id)}/txid`, undefined, a, readOnly), 403, 'AcessoNegado');
    assertBcbProblem(await req('GET', `/v2/loc/${String(loc.id)}`, undefined, a, writeOnly), 403, 'AcessoNegado');
    assertBcbProblem(await req('GET', `/v2/loc/${String(loc.id)}/qrcode`, undefined, a, writeOnly), 403, 'AcessoNegado');
    assertBcbProblem(await req('GET', '/v2/loc?inicio=2020-01-01T00:00:00Z&fim=2020-01-02T00:00:00Z', undefined, a, writeOnly), 403, 'AcessoNegado');
    assert.equal((await req('GET', `/v2/loc/${String(loc.id)}`, undefined, a, readOnly)).statusCode, 200);
  });
});
