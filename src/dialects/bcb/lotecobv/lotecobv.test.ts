import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { adminHeaders, startTestApp, type TestApp } from '../../../../test/harness.ts';
import { createClient, evpKey, type TestClient } from '../../../../test/factories.ts';
import { assertBcbAnswer } from '../../../../test/support/bcb-schemas.ts';
import { formatDay, parseDay } from '../../../lib/banking-days.ts';
import { saoPauloDay } from '../../../modules/cobv/due.ts';

const T1 = 'lote0000000000000000000000001';
const T2 = 'lote0000000000000000000000002';
const T3 = 'lote0000000000000000000000003';

interface Lote {
  id: number;
  descricao: string;
  cobsv: { txid: string; status: string; problema?: { type: string; detail: string }; criacao?: string }[];
}

describe('BCB dialect: lotecobv', () => {
  let t: TestApp;
  let a: TestClient;
  let b: TestClient;
  let chave: string;
  before(async () => {
    t = await startTestApp();
    a = await createClient(t);
    b = await createClient(t);
    chave = await evpKey(t, a.accountId);
  });
  after(() => t.close());

  const due = () => formatDay(parseDay(saoPauloDay(t.clock.now()))! + 20);
  const cobv = (txid: string, original = '50.00', cpf = '12345678909') => ({
    txid,
    calendario: { dataDeVencimento: due() },
    devedor: { cpf, nome: 'Aluno' },
    valor: { original },
    chave,
  });
  const call = (method: 'PUT' | 'PATCH' | 'GET', url: string, payload?: unknown, c: TestClient = a) =>
    t.app.inject({ method, url: `/v2${url}`, headers: c.headers, ...(payload === undefined ? {} : { payload: payload as object }) });
  const isProblem = (res: LightMyRequestResponse, status: number, name: string) => {
    assert.equal(res.statusCode, status, res.body);
    assert.equal(res.json<{ type: string }>().type, `https://pix.bcb.gov.br/api/v2/error/${name}`);
  };

  it('PUT creates each charge, refusing one with its problem; GET shows each outcome', async () => {
    const res = await call('PUT', '/lotecobv/7', { descricao: 'Turma A', cobsv: [cobv(T1), cobv(T2, '50.00', '12345678900')] });
    assertBcbAnswer('PUT /lotecobv/{id}', res);
    assert.equal(res.statusCode, 202, res.body);
    assert.equal(res.body, '');
    const got = await call('GET', '/lotecobv/7');
    assertBcbAnswer('GET /lotecobv/{id}', got);
    const lote = got.json<Lote>();
    assert.equal(lote.id, 7);
    assert.deepEqual(lote.cobsv.map((i) => [i.txid, i.status]), [[T1, 'CRIADA'], [T2, 'NEGADA']]);
    assert.ok(lote.cobsv[0]!.criacao);
    assert.equal(lote.cobsv[1]!.problema?.type, 'https://pix.bcb.gov.br/api/v2/error/CobVOperacaoInvalida');
    assert.equal((await call('GET', `/cobv/${T1}`)).statusCode, 200);
    // The refused one exists in no list and cannot be created outside its batch.
    isProblem(await call('PUT', `/cobv/${T2}`, cobv(T2)), 400, 'CobVOperacaoInvalida');
    const listed = await call('GET', `/cobv?inicio=${new Date(Date.now() - 3_600_000).toISOString()}&fim=${new Date(Date.now() + 3_600_000).toISOString()}&loteCobVId=7`);
    assert.deepEqual(listed.json<{ cobs: { txid: string }[] }>().cobs.map((c) => c.txid), [T1]);
  });

  it('PUT again with the same charges replaces them; other charges are refused whole', async () => {
    isProblem(await call('PUT', '/lotecobv/7', { descricao: 'Turma A', cobsv: [cobv(T1), cobv(T3)] }), 400, 'LoteCobVOperacaoInvalida');
    isProblem(await call('PUT', '/lotecobv/8', { descricao: 'Turma B', cobsv: [cobv(T1)] }), 400, 'LoteCobVOperacaoInvalida');
    const again = await call('PUT', '/lotecobv/7', { descricao: 'Turma A (2)', cobsv: [cobv(T1, '60.00'), cobv(T2)] });
    assert.equal(again.statusCode, 202, again.body);
    const lote = (await call('GET', '/lotecobv/7')).json<Lote>();
    assert.equal(lote.descricao, 'Turma A (2)');
    assert.deepEqual(lote.cobsv.map((i) => i.status), ['CRIADA', 'CRIADA']);
    const t1 = (await call('GET', `/cobv/${T1}`)).json<{ valor: { original: string }; revisao: number }>();
    assert.deepEqual([t1.valor.original, t1.revisao], ['60.00', 1]);
  });

  it('PATCH revises some of its charges, and only its own', async () => {
    isProblem(await call('PATCH', '/lotecobv/7', { cobsv: [{ txid: T3, valor: { original: '1.00' } }] }), 400, 'LoteCobVOperacaoInvalida');
    const res = await call('PATCH', '/lotecobv/7', { cobsv: [{ txid: T2, valor: { original: '70.00' } }] });
    assertBcbAnswer('PATCH /lotecobv/{id}', res);
    assert.equal(res.statusCode, 202, res.body);
    assert.equal((await call('GET', `/cobv/${T2}`)).json<{ valor: { original: string } }>().valor.original, '70.00');
  });

  it('lists batches; another account sees none; a missing scope is AcessoNegado', async () => {
    const q = `/lotecobv?inicio=${new Date(Date.now() - 3_600_000).toISOString()}&fim=${new Date(Date.now() + 3_600_000).toISOString()}`;
    const list = await call('GET', q);
    assertBcbAnswer('GET /lotecobv', list);
    assert.deepEqual(list.json<{ lotes: Lote[] }>().lotes.map((l) => l.id), [7]);
    assert.equal((await call('GET', q, undefined, b)).json<{ lotes: Lote[] }>().lotes.length, 0);
    const other = await call('GET', '/lotecobv/7', undefined, b);
    assertBcbAnswer('GET /lotecobv/{id}', other);
    isProblem(other, 404, 'LoteCobVNaoEncontrado');
    isProblem(await call('PATCH', '/lotecobv/7', { descricao: 'x' }, b), 404, 'LoteCobVNaoEncontrado');
    const limit = (scopes: string[] | null) => t.app.inject({ method: 'PATCH', url: `/admin/accounts/${b.accountId}`, headers: adminHeaders, payload: { scopes } });
    assert.equal((await limit(['cobv.read'])).statusCode, 200);
    const token = await t.app.inject({
      method: 'POST', url: '/oauth/token',
      headers: { 'x-ssl-client-cert': b.cert.header, 'content-type': 'application/x-www-form-urlencoded' },
      payload: `grant_type=client_credentials&client_id=${b.clientId}&client_secret=${b.clientSecret}`,
    });
    const denied = await t.app.inject({ method: 'GET', url: '/v2/lotecobv/7', headers: { ...b.headers, authorization: `Bearer ${token.json<{ access_token: string }>().access_token}` } });
    assertBcbAnswer('GET /lotecobv/{id}', denied);
    isProblem(denied, 403, 'AcessoNegado');
  });

  it("a query BCB's schema or sense refuses, of the list or of one batch, is LoteCobVConsultaInvalida", async () => {
    const from = new Date(Date.now() - 3_600_000).toISOString();
    const to = new Date(Date.now() + 3_600_000).toISOString();
    for (const query of [
      `inicio=${from}`,
      `inicio=${to}&fim=${from}`,
      `inicio=${from}&fim=${to}&paginacao.paginaAtual=-1`,
      `inicio=${from}&fim=${to}&paginacao.itensPorPagina=0`,
      `inicio=ontem&fim=${to}`,
      `inicio=${from}&fim=${to}&status=ATIVA`,
    ]) {
      const res = await call('GET', `/lotecobv?${query}`);
      isProblem(res, 400, 'LoteCobVConsultaInvalida');
      assert.equal(res.json<{ title: string }>().title, 'Consulta inválida.');
    }
    isProblem(await call('GET', '/lotecobv/sete'), 400, 'LoteCobVConsultaInvalida');
  });
});
