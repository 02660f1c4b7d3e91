import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createClient, type TestClient } from '../../../../test/factories.ts';
import { startTestApp, type TestApp } from '../../../../test/harness.ts';
import { assertBcbAnswer, assertBcbProblem } from '../../../../test/support/bcb-schemas.ts';

type Json = Record<string, unknown>;


describe('BCB /v2/locrec', () => {
  let t: TestApp;
  let a: TestClient;
  let b: TestClient;

  before(async () => {
    t = await startTestApp();
    a = await createClient(t);
    b = await createClient(t);
  });
  after(() => t.close());

  const req = (method: 'POST' | 'GET' | 'DELETE', url: string, body?: unknown, client: TestClient = a) =>
    t.app.inject({ method, url, headers: client.headers, ...(body === undefined ? {} : { payload: body as Json }) });

  async function newLocRec(client: TestClient = a): Promise<Json> {
    const res = await req('POST', '/v2/locrec', { tipo: 'rec' }, client);
    assert.equal(res.statusCode, 201, res.body);
    assertBcbAnswer('POST /locrec', res);
    assert.equal(res.headers.location, res.json<Json>().location);
    return res.json<Json>();
  }

  it('POST makes a free location of its own kind at /qr/v2/rec/{token}; another tipo or none is 400', async () => {
    const made = await newLocRec();
    assert.equal(made.tipo, 'rec');
    assert.match(String(made.location), /^127\.0\.0\.1:\d+\/qr\/v2\/rec\/[a-z0-9]{32}$/);
    assert.equal(made.idRec, undefined, 'no recurrence yet');
    assert.equal(made.criacao, t.clock.now().toISOString());
    const other = await newLocRec();
    assert.notEqual(other.id, made.id);
    assert.notEqual(other.location, made.location);
    for (const body of [{ tipo: 'cob' }, {}, { tipo: 'rec', txid: 'x' }]) assertBcbProblem(await req('POST', '/v2/locrec', body), 400, 'RequisicaoInvalida');
    // A location of recurrences is not a charge's: /v2/loc does not know it.
    assert.equal((await req('GET', `/v2/loc/${String(made.id)}`)).statusCode, 404);
  });

  it("GET /locrec/{id} and DELETE /locrec/{id}/idRec answer the account's own; another's, an unknown id and a malformed one are 404", async () => {
    const made = await newLocRec();
    const got = await req('GET', `/v2/locrec/${String(made.id)}`);
    assert.equal(got.statusCode, 200, got.body);
    assertBcbAnswer('GET /locrec/{id}', got);
    assert.deepEqual(got.json(), made);
    const unlinked = await req('DELETE', `/v2/locrec/${String(made.id)}/idRec`);
    assert.equal(unlinked.statusCode, 200, unlinked.body);
    assertBcbAnswer('DELETE /locrec/{id}/idRec', unlinked);
    assert.deepEqual(unlinked.json(), made);
    for (const id of [String(made.id), '999999999', 'abc']) {
      for (const [method, url] of [['GET', `/v2/locrec/${id}`], ['DELETE', `/v2/locrec/${id}/idRec`]] as const) {
        const client = id === String(made.id) ? b : a;
        const res = await req(method, url, undefined, client);
        assertBcbProblem(res, 404, 'PayloadLocationRecNaoEncontrado');
        assertBcbAnswer(method === 'GET' ? 'GET /locrec/{id}' : 'DELETE /locrec/{id}/idRec', res);
      }
    }
  });

  it('GET /locrec lists the interval newest first, with its filters in parametros and BCB paging; bad queries are PayloadLocationRecConsultaInvalida', async () => {
    const c = await createClient(t);
    const from = new Date(t.clock.now().getTime() - 1000).toISOString();
    const first = await newLocRec(c);
    const second = await newLocRec(c);
    const to = new Date(t.clock.now().getTime() + 1000).toISOString();
    const list = (extra = '') => req('GET', `/v2/locrec?inicio=${from}&fim=${to}${extra}`, undefined, c);

    const all = await list();
    assert.equal(all.statusCode, 200, all.body);
    assertBcbAnswer('GET /locrec', all);
    const body = all.json<{ parametros: Json; loc: Json[] }>();
    assert.deepEqual(body.loc.map((l) => l.id), [second.id, first.id]);
    assert.deepEqual(body.parametros.paginacao, { paginaAtual: 0, itensPorPagina: 100, quantidadeDePaginas: 1, quantidadeTotalDeItens: 2 });

    const page = await list('&paginacao.itensPorPagina=1&paginacao.paginaAtual=1');
    assert.deepEqual(page.json<{ loc: Json[] }>().loc.map((l) => l.id), [first.id]);
    const free = await list('&idRecPresente=false');
    assert.equal(free.json<{ loc: Json[] }>().loc.length, 2, 'no location serves a recurrence yet');
    const serving = await list('&idRecPresente=true&convenio=Plano%20A');
    assertBcbAnswer('GET /locrec', serving);
    assert.deepEqual(serving.json<{ parametros: Json; loc: Json[] }>().parametros, {
      inicio: new Date(from).toISOString(),
      fim: new Date(to).toISOString(),
      idRecPresente: true,
      recebedor: { convenio: 'Plano A' },
      paginacao: { paginaAtual: 0, itensPorPagina: 100, quantidadeDePaginas: 1, quantidadeTotalDeItens: 0 },
    });
    // Another account's locations are not listed.
    assert.equal((await req('GET', `/v2/locrec?inicio=${from}&fim=${to}`, undefined, b)).json<{ loc: Json[] }>().loc.length, 0);

    assertBcbProblem(await req('GET', `/v2/locrec?inicio=${to}&fim=${from}`, undefined, c), 400, 'PayloadLocationRecConsultaInvalida');
    assertBcbProblem(await list('&idRecPresente=talvez'), 400, 'PayloadLocationRecConsultaInvalida');
    assertBcbProblem(await req('GET', '/v2/locrec?inicio=2026-01-01T00:00:00Z&fim=2026-03-01T00:00:00Z', undefined, c), 400, 'PayloadLocationRecConsultaInvalida');
    assertBcbProblem(await list(`&convenio=${'x'.repeat(61)}`), 400, 'PayloadLocationRecConsultaInvalida');
  });
});
