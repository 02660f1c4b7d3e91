import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pixIdentifier } from '../../../lib/ids.ts';
import { receivePix } from '../../../modules/settlement/service.ts';
import { createClient, evpKey, operator, randomCpf, requestToken, type TestClient } from '../../../../test/factories.ts';
import { startTestApp, type TestApp } from '../../../../test/harness.ts';
import { assertBcbAnswer, assertBcbProblem } from '../../../../test/support/bcb-schemas.ts';
import { headersWithScope } from '../../../../test/support/bcb-tokens.ts';

const DAY_MS = 86_400_000;


describe('BCB dialect: received Pix and refunds (/v2/pix)', () => {
  let t: TestApp;
  let owner: TestClient;
  let other: TestClient;
  let key: string;
  let plain: string;
  let withTxid: string;
  let saque: string;
  const txid = 'pedido2026000000000000000001';
  const payerCpf = randomCpf();

  const call = (method: 'GET' | 'PUT', url: string, client: TestClient | Record<string, string> = owner, payload?: object) =>
    t.app.inject({ method, url: `/v2${url}`, headers: 'headers' in client ? (client as TestClient).headers : client, ...(payload ? { payload } : {}) });
  const window = () => {
    const now = t.clock.now().getTime();
    return `inicio=${new Date(now - DAY_MS).toISOString()}&fim=${new Date(now + 1000).toISOString()}`;
  };

  before(async () => {
    t = await startTestApp();
    owner = await createClient(t);
    other = await createClient(t);
    key = await evpKey(t, owner.accountId);
    plain = (await operator(t).incomingPix({ pixKey: key, amount: '100.00', description: 'Reforma da casa', payer: { name: 'Pagador', document: payerCpf } })).endToEndId;
    const charge = await t.app.inject({ method: 'PUT', url: `/cob/${txid}`, headers: owner.headers, payload: { calendario: { expiracao: 3600 }, valor: { original: '50.00' }, chave: key } });
    assert.equal(charge.statusCode, 201, charge.body);
    withTxid = (await operator(t).incomingPix({ pixKey: key, amount: '50.00', txid, payer: { name: 'Pagador', document: randomCpf() } })).endToEndId;
    // A Pix Saque: R$ 20,00 of withdrawal and nothing of purchase.
    saque = pixIdentifier('E', '12345678', t.clock.now());
    await t.db.transaction().execute((trx) =>
      receivePix(trx, {
        accountId: BigInt(owner.accountId),
        amountCentavos: 2000n,
        endToEndId: saque,
        pixKey: key,
        txid: null,
        description: 'Saque Pix',
        originalTransactionId: null,
        counterpart: { name: 'Pagador', document: randomCpf(), ispb: '12345678', bankName: null, branch: null, account: null, accountId: null },
        valueComponents: { original: '0', saque: '2000', modalidadeAgente: 'AGPSS', prestadorDoServicoDeSaque: '12345678' },
        at: t.clock.now(),
        now: t.clock.now(),
      }),
    );
  });
  after(() => t.close());

  it('GET /pix/{e2eid}: the Pix in BCB\'s shape, with the payer\'s message and its components', async () => {
    const res = await call('GET', `/pix/${plain}`);
    assertBcbAnswer('GET /pix/{e2eid}', res);
    const pix = res.json<Record<string, unknown>>();
    assert.equal(pix.endToEndId, plain);
    assert.equal(pix.valor, '100.00');
    assert.equal(pix.chave, key);
    assert.equal(pix.infoPagador, 'Reforma da casa');
    assert.deepEqual(pix.componentesValor, { original: { valor: '100.00' } });
    assert.ok(!('txid' in pix) && !('devolucoes' in pix));
    const paid = await call('GET', `/pix/${withTxid}`);
    assertBcbAnswer('GET /pix/{e2eid}', paid);
    assert.equal(paid.json<{ txid: string }>().txid, txid);
    const withdrawal = await call('GET', `/pix/${saque}`);
    assertBcbAnswer('GET /pix/{e2eid}', withdrawal);
    assert.deepEqual(withdrawal.json<{ componentesValor: unknown }>().componentesValor, {
      original: { valor: '0.00' },
      saque: { valor: '20.00', modalidadeAgente: 'AGPSS', prestadorDoServicoDeSaque: '12345678' },
    });
  });

  it('GET /pix/{e2eid}: another account\'s Pix, or none, is 404 PixNaoEncontrado', async () => {
    assertBcbAnswer('GET /pix/{e2eid}', await call('GET', `/pix/${plain}`, other));
    assertBcbProblem(await call('GET', `/pix/${plain}`, other), 404, 'PixNaoEncontrado');
    assertBcbProblem(await call('GET', '/pix/E00000000202601010000000000000000'), 404, 'PixNaoEncontrado');
  });

  it('GET /pix: the interval\'s Pix with filters and BCB\'s pagination', async () => {
    const all = await call('GET', `/pix?${window()}`);
    assertBcbAnswer('GET /pix', all);
    const body = all.json<{ pix: { endToEndId: string }[]; parametros: { paginacao: Record<string, number> } }>();
    assert.deepEqual(body.pix.map((p) => p.endToEndId), [plain, withTxid, saque]);
    assert.deepEqual(body.parametros.paginacao, { paginaAtual: 0, itensPorPagina: 100, quantidadeDePaginas: 1, quantidadeTotalDeItens: 3 });
    const ids = async (query: string) => (await call('GET', `/pix?${window()}&${query}`)).json<{ pix: { endToEndId: string }[] }>().pix.map((p) => p.endToEndId);
    assert.deepEqual(await ids(`txid=${txid}`), [withTxid]);
    assert.deepEqual(await ids('txIdPresente=true'), [withTxid]);
    assert.deepEqual(await ids('txIdPresente=false'), [plain, saque]);
    assert.deepEqual(await ids(`cpf=${payerCpf}`), [plain]);
    assert.deepEqual(await ids('paginacao.itensPorPagina=2&paginacao.paginaAtual=1'), [saque]);
    const page = await call('GET', `/pix?${window()}&paginacao.itensPorPagina=2`);
    assert.deepEqual(page.json<{ parametros: { paginacao: unknown } }>().parametros.paginacao, { paginaAtual: 0, itensPorPagina: 2, quantidadeDePaginas: 2, quantidadeTotalDeItens: 3 });
    const others = await call('GET', `/pix?${window()}`, other);
    assert.deepEqual(others.json<{ pix: unknown[] }>().pix, []);
  });

  it('GET /pix: inicio and fim required and at most 31 days apart, cpf and cnpj not together (PixConsultaInvalida)', async () => {
    const missing = assertBcbProblem(await call('GET', '/pix'), 400, 'PixConsultaInvalida');
    assert.deepEqual(missing.violacoes?.map((v) => v.propriedade).sort(), ['fim', 'inicio']);
    const now = t.clock.now().getTime();
    const long = `inicio=${new Date(now - 32 * DAY_MS).toISOString()}&fim=${new Date(now).toISOString()}`;
    assertBcbProblem(await call('GET', `/pix?${long}`), 400, 'PixConsultaInvalida');
    const reversed = `inicio=${new Date(now).toISOString()}&fim=${new Date(now - DAY_MS).toISOString()}`;
    assertBcbProblem(await call('GET', `/pix?${reversed}`), 400, 'PixConsultaInvalida');
    assertBcbProblem(await call('GET', `/pix?${window()}&cpf=${payerCpf}&cnpj=12345678000195`), 400, 'PixConsultaInvalida');
    const corrected = `inicio=${new Date(now - 31 * DAY_MS).toISOString()}&fim=${new Date(now).toISOString()}`;
    assertBcbAnswer('GET /pix', await call('GET', `/pix?${corrected}&cpf=${payerCpf}`));
  });

  it('requires pix.read to read and pix.write to refund (403 AcessoNegado)', async () => {
    const readOnly = await headersWithScope(t, owner, 'pix.read');
    const writeOnly = await headersWithScope(t, owner, 'pix.write');
    assertBcbProblem(await call('GET', `/pix/${plain}`, writeOnly), 403, 'AcessoNegado');
    assertBcbProblem(await call('GET', `/pix?${window()}`, writeOnly), 403, 'AcessoNegado');
    assertBcbProblem(await call('PUT', `/pix/${plain}/devolucao/scope1`, readOnly, { valor: '1.00' }), 403, 'AcessoNegado');
    assertBcbAnswer('PUT /pix/{e2eid}/devolucao/{id}', await call('PUT', `/pix/${plain}/devolucao/scope1`, await headersWithScope(t, owner, 'pix.write'), { valor: '1.00' }));
    assertBcbProblem(await call('GET', `/pix/${plain}/devolucao/scope1`, writeOnly), 403, 'AcessoNegado');
    assertBcbAnswer('GET /pix/{e2eid}/devolucao/{id}', await call('GET', `/pix/${plain}/devolucao/scope1`, readOnly));
  });

  it('PUT devolucao: 201 on creation and on a repeat of the same request; another request with the id is 400', async () => {
    const first = await call('PUT', `/pix/${withTxid}/devolucao/dev1`, owner, { valor: '10.00', descricao: 'Troca' });
    assertBcbAnswer('PUT /pix/{e2eid}/devolucao/{id}', first);
    assert.equal(first.statusCode, 201);
    const refund = first.json<{ id: string; rtrId: string; natureza: string; status: string }>();
    assert.equal(refund.natureza, 'ORIGINAL');
    assert.equal(refund.status, 'EM_PROCESSAMENTO');
    const again = await call('PUT', `/pix/${withTxid}/devolucao/dev1`, owner, { valor: '10.00', descricao: 'Troca' });
    assert.equal(again.statusCode, 201);
    assert.equal(again.json<{ rtrId: string }>().rtrId, refund.rtrId);
    assertBcbProblem(await call('PUT', `/pix/${withTxid}/devolucao/dev1`, owner, { valor: '11.00' }), 400, 'PixDevolucaoInvalida');
    const read = await call('GET', `/pix/${withTxid}/devolucao/dev1`);
    assertBcbAnswer('GET /pix/{e2eid}/devolucao/{id}', read);
    const pix = await call('GET', `/pix/${withTxid}`);
    assertBcbAnswer('GET /pix/{e2eid}', pix);
    assert.deepEqual(pix.json<{ devolucoes: { id: string }[] }>().devolucoes.map((d) => d.id), ['dev1']);
    const refunded = await call('GET', `/pix?${window()}&devolucaoPresente=true`);
    assert.ok(refunded.json<{ pix: { endToEndId: string }[] }>().pix.some((p) => p.endToEndId === withTxid));
  });

  it('PUT devolucao: the schema, the sum and the nature rules are 400 PixDevolucaoInvalida; corrected requests succeed', async () => {
    const invalid = assertBcbProblem(await call('PUT', `/pix/${plain}/devolucao/bad1`, owner, { valor: '1,00', natureza: 'MED_FRAUDE' }), 400, 'PixDevolucaoInvalida');
    assert.deepEqual(invalid.violacoes?.map((v) => v.propriedade).sort(), ['natureza', 'valor']);
    assertBcbProblem(await call('PUT', `/pix/${plain}/devolucao/big1`, owner, { valor: '100.00' }), 400, 'PixDevolucaoInvalida');
    assertBcbProblem(await call('PUT', `/pix/${plain}/devolucao/ret1`, owner, { valor: '1.00', natureza: 'RETIRADA' }), 400, 'PixDevolucaoInvalida');
    assert.equal((await call('PUT', `/pix/${plain}/devolucao/big1`, owner, { valor: '99.00' })).statusCode, 201);
    // A Pix Saque: RETIRADA up to the withdrawal, ORIGINAL up to the purchase (none).
    assertBcbProblem(await call('PUT', `/pix/${saque}/devolucao/orig1`, owner, { valor: '1.00' }), 400, 'PixDevolucaoInvalida');
    assertBcbProblem(await call('PUT', `/pix/${saque}/devolucao/ret2`, owner, { valor: '20.01', natureza: 'RETIRADA' }), 400, 'PixDevolucaoInvalida');
    const retirada = await call('PUT', `/pix/${saque}/devolucao/ret2`, owner, { valor: '20.00', natureza: 'RETIRADA' });
    assertBcbAnswer('PUT /pix/{e2eid}/devolucao/{id}', retirada);
    assert.equal(retirada.json<{ natureza: string }>().natureza, 'RETIRADA');
  });

  it('PUT devolucao: another account\'s Pix is 404 PixNaoEncontrado; a refund GET does not find is PixDevolucaoNaoEncontrada; the window is 90 days here', async () => {
    assertBcbProblem(await call('PUT', `/pix/${plain}/devolucao/x1`, other, { valor: '1.00' }), 404, 'PixNaoEncontrado');
    for (const [url, client] of [
      [`/pix/${withTxid}/devolucao/dev1`, other],
      [`/pix/${withTxid}/devolucao/nope`, owner],
      ['/pix/E00000000202601010000000000000000/devolucao/dev1', owner],
    ] as const) {
      const missing = await call('GET', url, client);
      assertBcbAnswer('GET /pix/{e2eid}/devolucao/{id}', missing);
      assert.equal(assertBcbProblem(missing, 404, 'PixDevolucaoNaoEncontrada').status, 404);
      assert.equal(missing.json<{ title: string }>().title, 'Devolução não encontrada.');
    }
    const old = (await operator(t).incomingPix({ pixKey: key, amount: '5.00', payer: { name: 'Pagador', document: randomCpf() } })).endToEndId;
    t.clock.advance(89.5 * DAY_MS);
    owner = { ...owner, headers: { ...owner.headers, authorization: `Bearer ${await requestToken(t, owner, owner.cert)}` } };
    const root = await t.app.inject({ method: 'PUT', url: `/pix/${old}/devolucao/late1`, headers: owner.headers, payload: { valor: '1.00' } });
    assert.equal(root.statusCode, 422, 'the root dialect keeps its 89 days');
    assert.equal((await call('PUT', `/pix/${old}/devolucao/late1`, owner, { valor: '1.00' })).statusCode, 201);
    t.clock.advance(DAY_MS);
    owner = { ...owner, headers: { ...owner.headers, authorization: `Bearer ${await requestToken(t, owner, owner.cert)}` } };
    assertBcbProblem(await call('PUT', `/pix/${old}/devolucao/late2`, owner, { valor: '1.00' }), 400, 'PixDevolucaoInvalida');
  });
});
