/**
 * A `/v2` 400 about the request lists every field at fault in `violacoes`: every schema
 * violation, and every rule of the core that refused a field, each with the value the request
 * gave it. The root dialect still shows the first.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createClient, evpKey, type TestClient } from '../../../test/factories.ts';
import { startTestApp, type TestApp } from '../../../test/harness.ts';
import { assertBcbDefinition } from '../../../test/support/bcb-schemas.ts';

interface Problem {
  type: string;
  violacoes?: { razao: string; propriedade?: string; valor?: string }[];
}

describe('/v2 violacoes name every field at fault', () => {
  let t: TestApp;
  let a: TestClient;
  let key: string;
  const txid = () => `viol${Math.random().toString(36).slice(2)}${'0'.repeat(26)}`.slice(0, 30);

  before(async () => {
    t = await startTestApp();
    a = await createClient(t);
    key = await evpKey(t, a.accountId);
  });
  after(() => t.close());

  async function refused(method: 'PUT' | 'POST', url: string, payload: object): Promise<Problem> {
    const res = await t.app.inject({ method, url, headers: a.headers, payload });
    assert.equal(res.statusCode, 400, res.body);
    const body = res.json<Problem>();
    assertBcbDefinition('Problema', body);
    return body;
  }
  const fields = (p: Problem) => (p.violacoes ?? []).map((v) => [v.propriedade, v.valor]);

  it('schema rules together: a malformed valor.original and a devedor with both cpf and cnpj', async () => {
    const devedor = { cpf: '12345678909', cnpj: '11222333000181', nome: 'Ana' };
    const problem = await refused('PUT', `/v2/cob/${txid()}`, { calendario: { expiracao: 3600 }, valor: { original: '1.0' }, chave: key, devedor });
    assert.deepEqual(fields(problem), [
      ['devedor', JSON.stringify(devedor)],
      ['valor.original', '1.0'],
    ]);
    assert.match(problem.violacoes![0]!.razao, /cpf e cnpj ao mesmo tempo/);
  });

  it("the core's rules together: an amount of zero, a CPF with wrong check digits and a key not the account's", async () => {
    const problem = await refused('PUT', `/v2/cob/${txid()}`, {
      calendario: { expiracao: 3600 },
      valor: { original: '0.00' },
      chave: 'alguem@example.com',
      devedor: { cpf: '12345678900', nome: 'Ana' },
    });
    assert.deepEqual(fields(problem), [
      ['valor.original', '0.00'],
      ['devedor.cpf', '12345678900'],
      ['chave', 'alguem@example.com'],
    ]);
    // In Portuguese, as the rest of BCB's dialect.
    assert.deepEqual(
      problem.violacoes!.map((v) => v.razao),
      [
        'O campo valor.original deve ser maior que 0.',
        'O campo devedor.cpf deve ser um CPF válido: 11 dígitos com dígitos verificadores corretos.',
        'O campo chave não é uma chave Pix da conta.',
      ],
    );
    assert.equal((problem as { detail?: string }).detail, 'O campo valor.original deve ser maior que 0.');
  });

  it("a cobv's rules together: a due date in the past and a devedor with wrong check digits", async () => {
    const problem = await refused('PUT', `/v2/cobv/${txid()}`, {
      calendario: { dataDeVencimento: '2020-01-01' },
      valor: { original: '10.00' },
      chave: key,
      devedor: { cnpj: '11222333000180', nome: 'Empresa' },
    });
    assert.deepEqual(fields(problem), [
      ['calendario.dataDeVencimento', '2020-01-01'],
      ['devedor.cnpj', '11222333000180'],
    ]);
  });

  it('a webhook URL that is not HTTPS names webhookUrl', async () => {
    const problem = await refused('PUT' as const, `/v2/webhook/${key}`, { webhookUrl: 'http://example.com/pix' });
    assert.deepEqual(fields(problem), [['webhookUrl', 'http://example.com/pix']]);
    assert.equal(problem.violacoes![0]!.razao, 'O campo webhookUrl deve usar HTTPS.');
  });

  it("a batch's refused charge names its fields under cobv., as BCB's example does", async () => {
    const id = String(Date.now() % 1e9);
    const put = await t.app.inject({
      method: 'PUT',
      url: `/v2/lotecobv/${id}`,
      headers: a.headers,
      payload: { descricao: 'Lote', cobsv: [{ calendario: { dataDeVencimento: '2020-01-01' }, devedor: { cpf: '12345678909', nome: 'F' }, valor: { original: '10.00' }, chave: key, txid: txid() }] },
    });
    assert.equal(put.statusCode, 202, put.body);
    const batch = (await t.app.inject({ method: 'GET', url: `/v2/lotecobv/${id}`, headers: a.headers })).json<{ cobsv: { status: string; problema?: Problem }[] }>();
    const [item] = batch.cobsv;
    assert.equal(item!.status, 'NEGADA');
    assertBcbDefinition('Problema', item!.problema);
    assert.deepEqual(fields(item!.problema!), [['cobv.calendario.dataDeVencimento', '2020-01-01']]);
  });

  it('the root dialect still answers with the first rule that failed', async () => {
    const res = await t.app.inject({
      method: 'PUT',
      url: `/cob/${txid()}`,
      headers: a.headers,
      payload: { calendario: { expiracao: 3600 }, valor: { original: '0.00' }, devedor: { cpf: '12345678900', nome: 'Ana' } },
    });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), { statusCode: 400, message: 'valor.original must be greater than 0', error: 'Bad Request', code: 'INVALID_AMOUNT' });
  });
});
