import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { adminHeaders, startTestApp, type TestApp } from '../../../../test/harness.ts';
import { ManualClock } from '../../../lib/clock.ts';
import { createClient, evpKey, requestToken, type TestClient } from '../../../../test/factories.ts';
import { assertBcbAnswer } from '../../../../test/support/bcb-schemas.ts';
import { formatDay, isBankingDay, parseDay } from '../../../lib/banking-days.ts';
import { saoPauloDay } from '../../../modules/cobv/due.ts';
import type { CobvView } from './views.ts';

const TXID = 'cobvtest0000000000000000000001';
const DEVEDOR = { cpf: '12345678909', nome: 'Francisco da Silva', logradouro: 'Alameda Souza, 80', cidade: 'Recife', uf: 'PE', cep: '70011750' };

describe('BCB dialect: cobv', () => {
  let t: TestApp;
  let a: TestClient;
  let b: TestClient;
  let chave: string;
  before(async () => {
    t = await startTestApp();
    a = await createClient(t, { name: 'Empresa de Logistica SA' });
    b = await createClient(t);
    chave = await evpKey(t, a.accountId);
  });
  after(() => t.close());

  /** The day `n` days from today in São Paulo. */
  const D = (n: number) => formatDay(parseDay(saoPauloDay(t.clock.now()))! + n);
  const body = (over: Record<string, unknown> = {}) => ({
    calendario: { dataDeVencimento: D(29), validadeAposVencimento: 30 },
    devedor: DEVEDOR,
    valor: { original: '100.00', multa: { modalidade: 2, valorPerc: '2.00' }, juros: { modalidade: 1, valorPerc: '0.10' } },
    chave,
    solicitacaoPagador: 'Mensalidade',
    ...over,
  });
  const call = (method: 'PUT' | 'PATCH' | 'GET', url: string, payload?: unknown, c: TestClient = a) =>
    t.app.inject({ method, url: `/v2${url}`, headers: c.headers, ...(payload === undefined ? {} : { payload: payload as object }) });
  const problemOf = (res: LightMyRequestResponse, status: number, name: string) => {
    assert.equal(res.statusCode, status, res.body);
    assert.equal(res.json<{ type: string }>().type, `https://pix.bcb.gov.br/api/v2/error/${name}`);
  };

  it('PUT creates a cobv with its location, dynamic BR Code and recebedor; GET shows it', async () => {
    const res = await call('PUT', `/cobv/${TXID}`, body());
    assertBcbAnswer('PUT /cobv/{txid}', res);
    const cobv = res.json<CobvView>();
    assert.equal(res.statusCode, 201);
    assert.equal(cobv.status, 'ATIVA');
    assert.equal(cobv.revisao, 0);
    assert.equal(cobv.loc?.tipoCob, 'cobv');
    assert.match(cobv.loc!.location, /\/qr\/v2\/cobv\/[a-f0-9]{32}$/);
    assert.equal(cobv.location, cobv.loc!.location);
    assert.ok(cobv.pixCopiaECola!.includes(cobv.loc!.location));
    assert.deepEqual(cobv.valor.multa, { modalidade: 2, valorPerc: '2.00' });
    assert.equal(cobv.recebedor.nome, 'Empresa de Logistica SA');
    assert.equal(cobv.recebedor.uf, 'SP');
    const got = await call('GET', `/cobv/${TXID}`);
    assertBcbAnswer('GET /cobv/{txid}', got);
    assert.deepEqual(got.json(), cobv);
  });

  it('PATCH revises (revisao + 1, the earlier revision kept for ?revisao=0); status alone removes', async () => {
    const res = await call('PATCH', `/cobv/${TXID}`, { valor: { original: '120.00' } });
    assertBcbAnswer('PATCH /cobv/{txid}', res);
    assert.equal(res.json<{ revisao: number }>().revisao, 1);
    assert.equal(res.json<{ valor: { original: string } }>().valor.original, '120.00');
    const first = await call('GET', `/cobv/${TXID}?revisao=0`);
    assertBcbAnswer('GET /cobv/{txid}', first);
    assert.equal(first.json<{ valor: { original: string } }>().valor.original, '100.00');
    problemOf(await call('GET', `/cobv/${TXID}?revisao=7`), 400, 'CobVConsultaInvalida');
    // A PATCH that changes nothing (the devedor's fields in another order than stored) keeps revisao, as BCB says.
    const same = await call('PATCH', `/cobv/${TXID}`, { valor: { original: '120.00' }, devedor: { cep: DEVEDOR.cep, uf: DEVEDOR.uf, cidade: DEVEDOR.cidade, logradouro: DEVEDOR.logradouro, nome: DEVEDOR.nome, cpf: DEVEDOR.cpf } });
    assert.equal(same.statusCode, 200, same.body);
    assertBcbAnswer('PATCH /cobv/{txid}', same);
    assert.deepEqual(same.json(), res.json());
    problemOf(await call('GET', `/cobv/${TXID}?revisao=2`), 400, 'CobVConsultaInvalida');
    assertBcbAnswer('GET /cobv/{txid}', await call('GET', `/cobv/${TXID}?revisao=1`));
  });

  it('lists cobv (GET /cobv) with the filters', async () => {
    const q = (extra = '') => call('GET', `/cobv?inicio=${new Date(t.clock.now().getTime() - 3_600_000).toISOString()}&fim=${new Date(t.clock.now().getTime() + 3_600_000).toISOString()}${extra}`);
    const all = await q();
    assertBcbAnswer('GET /cobv', all);
    assert.deepEqual(all.json<{ cobs: { txid: string }[] }>().cobs.map((c) => c.txid), [TXID]);
    assert.equal((await q('&locationPresente=false')).json<{ cobs: unknown[] }>().cobs.length, 0);
    assert.equal((await q('&cpf=12345678909&status=ATIVA')).json<{ cobs: unknown[] }>().cobs.length, 1);
    problemOf(await q('&cpf=12345678909&cnpj=12345678000195'), 400, 'CobVConsultaInvalida');
  });

  it("takes each modalidade as BCB's own example writes it (\"2\"), answers integers, and refuses a string that is no digit", async () => {
    const valor = { original: '100.00', multa: { modalidade: '2', valorPerc: '2.00' }, juros: { modalidade: '2', valorPerc: '1.00' }, desconto: { modalidade: '1', descontoDataFixa: [{ data: D(20), valorPerc: '30.00' }] } };
    const res = await call('PUT', '/cobv/cobvmodalidade000000000000000001', body({ valor }));
    assert.equal(res.statusCode, 201, res.body);
    assertBcbAnswer('PUT /cobv/{txid}', res);
    const cobv = res.json<CobvView>();
    assert.deepEqual([cobv.valor.multa?.modalidade, cobv.valor.juros?.modalidade, cobv.valor.desconto?.modalidade], [2, 2, 1]);
    const revised = await call('PATCH', '/cobv/cobvmodalidade000000000000000001', { valor: { ...valor, juros: { modalidade: '7', valorPerc: '1.00' } } });
    assert.equal(revised.statusCode, 200, revised.body);
    assert.equal(revised.json<CobvView>().valor.juros?.modalidade, 7);
    const refused = await call('PUT', '/cobv/cobvmodalidade000000000000000002', body({ valor: { ...valor, multa: { modalidade: 'dois', valorPerc: '2.00' } } }));
    problemOf(refused, 400, 'CobVOperacaoInvalida');
    assert.deepEqual(
      refused.json<{ violacoes: { propriedade: string }[] }>().violacoes.map((v) => v.propriedade),
      ['valor.multa.modalidade'],
    );
  });

  it('refuses each rule BCB states, and takes the corrected request', async () => {
    const cases: [Record<string, unknown>, Record<string, unknown>][] = [
      [{ calendario: { dataDeVencimento: '2026-02-30' } }, { calendario: { dataDeVencimento: D(60) } }],
      [{ calendario: { dataDeVencimento: D(-1) } }, { calendario: { dataDeVencimento: D(0) } }],
      [{ devedor: { nome: 'Sem documento' } }, { devedor: { cnpj: '12345678000195', nome: 'Com CNPJ' } }],
      [{ devedor: { cpf: '12345678900', nome: 'CPF errado' } }, { devedor: { cpf: '12345678909', nome: 'CPF certo' } }],
      [{ valor: { original: '0.00' } }, { valor: { original: '0.01' } }],
      [{ valor: { original: '10.00', multa: { modalidade: 3, valorPerc: '1.00' } } }, { valor: { original: '10.00', multa: { modalidade: 1, valorPerc: '1.00' } } }],
      [{ valor: { original: '10.00', juros: { modalidade: 9, valorPerc: '1.00' } } }, { valor: { original: '10.00', juros: { modalidade: 8, valorPerc: '1.00' } } }],
      [{ valor: { original: '10.00', abatimento: { modalidade: 1, valorPerc: '10.00' } } }, { valor: { original: '10.00', abatimento: { modalidade: 1, valorPerc: '9.99' } } }],
      [{ valor: { original: '10.00', abatimento: { modalidade: 2, valorPerc: '100.00' } } }, { valor: { original: '10.00', abatimento: { modalidade: 2, valorPerc: '99.00' } } }],
      [
        { valor: { original: '10.00', desconto: { modalidade: 1, descontoDataFixa: [{ data: D(30), valorPerc: '1.00' }] } } },
        { valor: { original: '10.00', desconto: { modalidade: 1, descontoDataFixa: [{ data: D(29), valorPerc: '1.00' }] } } },
      ],
      [{ valor: { original: '10.00', desconto: { modalidade: 1, valorPerc: '1.00' } } }, { valor: { original: '10.00', desconto: { modalidade: 3, valorPerc: '1.00' } } }],
      [
        { valor: { original: '10.00', desconto: { modalidade: 5, descontoDataFixa: [{ data: D(10), valorPerc: '1.00' }] } } },
        { valor: { original: '10.00', desconto: { modalidade: 2, descontoDataFixa: [{ data: D(10), valorPerc: '1.00' }] } } },
      ],
      [{ valor: { original: '10.00', desconto: { modalidade: 6, valorPerc: '100.00' } } }, { valor: { original: '10.00', desconto: { modalidade: 6, valorPerc: '0.50' } } }],
      [{ chave: 'someone-else@example.com' }, {}],
    ];
    let n = 0;
    for (const [wrong, right] of cases) {
      const txid = `cobvrule${String(++n).padStart(22, '0')}`;
      const refused = await call('PUT', `/cobv/${txid}`, body(wrong));
      assertBcbAnswer('PUT /cobv/{txid}', refused);
      problemOf(refused, 400, 'CobVOperacaoInvalida');
      const taken = await call('PUT', `/cobv/${txid}`, body(right));
      assert.equal(taken.statusCode, 201, `${JSON.stringify(right)}: ${taken.body}`);
    }
  });

  it("a cob's txid, another account's cobv, a missing scope", async () => {
    const cob = await t.app.inject({ method: 'PUT', url: '/cob/cobtxid000000000000000000000001', headers: a.headers, payload: { calendario: { expiracao: 3600 }, valor: { original: '5.00' }, chave } });
    assert.equal(cob.statusCode, 201, cob.body);
    problemOf(await call('PUT', '/cobv/cobtxid000000000000000000000001', body()), 400, 'CobVOperacaoInvalida');
    const other = await call('GET', `/cobv/${TXID}`, undefined, b);
    assertBcbAnswer('GET /cobv/{txid}', other);
    problemOf(other, 404, 'CobVNaoEncontrada');
    problemOf(await call('PATCH', `/cobv/${TXID}`, { solicitacaoPagador: 'x' }, b), 404, 'CobVNaoEncontrada');
    const limit = (scopes: string[] | null) => t.app.inject({ method: 'PATCH', url: `/admin/accounts/${a.accountId}`, headers: adminHeaders, payload: { scopes } });
    assert.equal((await limit(['cobv.read'])).statusCode, 200);
    const token = (await t.app.inject({ method: 'POST', url: '/oauth/token', headers: { 'x-ssl-client-cert': a.cert.header, 'content-type': 'application/x-www-form-urlencoded' }, payload: `grant_type=client_credentials&client_id=${a.clientId}&client_secret=${a.clientSecret}` })).json<{ access_token: string }>().access_token;
    const denied = await t.app.inject({ method: 'PUT', url: `/v2/cobv/${TXID}`, headers: { ...a.headers, authorization: `Bearer ${token}` }, payload: body() });
    assertBcbAnswer('PUT /cobv/{txid}', denied);
    problemOf(denied, 403, 'AcessoNegado');
    assert.equal((await limit(null)).statusCode, 200);
  });
});


describe('BCB dialect: a cobv due on a Saturday', () => {
  let t: TestApp;
  let a: TestClient;
  let chave: string;
  // A Wednesday after today whose Monday is a banking day: the certificates of the test are
  // issued on the real clock, so the test's clock starts after it.
  const wednesday = (() => {
    let day = Math.floor(Date.now() / 86_400_000) + 2;
    while (new Date(day * 86_400_000).getUTCDay() !== 3 || !isBankingDay(day + 5) || !isBankingDay(day)) day++;
    return day;
  })();
  const date = (offset: number) => formatDay(wednesday + offset);
  before(async () => {
    // Wednesday, noon in São Paulo.
    t = await startTestApp({ clock: new ManualClock(`${date(0)}T15:00:00.000Z`) });
    a = await createClient(t);
    chave = await evpKey(t, a.accountId);
  });
  after(() => t.close());

  let headers: Record<string, string>;
  const get = (url: string) => t.app.inject({ method: 'GET', url: `/v2${url}`, headers });
  /** Moves the clock, and takes a new token (the old one expired meanwhile). */
  const moveTo = async (at: string) => {
    t.clock.set(at);
    headers = { ...a.headers, authorization: `Bearer ${await requestToken(t, a, a.cert)}` };
  };
  const listed = async (status: string) => {
    const res = await get(`/cobv?inicio=${date(-1)}T00:00:00Z&fim=${date(1)}T00:00:00Z&status=${status}`);
    assertBcbAnswer('GET /cobv', res);
    return res.json<{ cobs: { txid: string }[] }>().cobs.map((c) => c.txid);
  };

  it('is payable until the next banking day, and the list filter says what the charge says', async () => {
    const txid = 'cobvsaturday00000000000000001';
    const res = await t.app.inject({
      method: 'PUT',
      url: `/v2/cobv/${txid}`,
      headers: a.headers,
      payload: { calendario: { dataDeVencimento: date(3), validadeAposVencimento: 0 }, devedor: DEVEDOR, valor: { original: '10.00' }, chave },
    });
    assert.equal(res.statusCode, 201, res.body);
    // Monday, 23:00 in São Paulo: the due date moved to this banking day.
    await moveTo(`${date(6)}T02:00:00.000Z`);
    assert.equal((await get(`/cobv/${txid}`)).json<{ status: string }>().status, 'ATIVA');
    assert.deepEqual(await listed('ATIVA'), [txid]);
    assert.deepEqual(await listed('REMOVIDA_PELO_PSP'), []);
    // Tuesday: past its last payable day.
    await moveTo(`${date(6)}T03:00:00.000Z`);
    assert.equal((await get(`/cobv/${txid}`)).json<{ status: string }>().status, 'REMOVIDA_PELO_PSP');
    assert.deepEqual(await listed('ATIVA'), []);
    assert.deepEqual(await listed('REMOVIDA_PELO_PSP'), [txid]);
  });
});
