import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { hasError, isDynamicPix, parsePix } from 'pix-utils';
import { createClient, evpKey, randomCpf, type TestClient } from '../../../../test/factories.ts';
import { adminHeaders, startTestApp, type TestApp } from '../../../../test/harness.ts';
import { assertBcbAnswer, assertBcbDefinition } from '../../../../test/support/bcb-schemas.ts';
import { randomAlphanumeric } from '../../../lib/ids.ts';
import { numberToCentavos } from '../../../lib/money.ts';

type Json = Record<string, unknown>;
type Res = Awaited<ReturnType<TestApp['app']['inject']>>;
const txid = () => randomAlphanumeric(32);

/** A problem answer of the type named, with a violation on each property given. */
function assertProblem(res: Res, status: number, name: string, properties: string[] = []) {
  assert.equal(res.statusCode, status, res.body);
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
  const body = res.json<{ type: string; violacoes?: { propriedade?: string }[] }>();
  assert.equal(body.type, `https://pix.bcb.gov.br/api/v2/error/${name}`, res.body);
  const found = new Set((body.violacoes ?? []).map((v) => v.propriedade));
  for (const p of properties) assert.ok(found.has(p), `violation on ${p}: ${res.body}`);
}

describe('BCB /v2/cob', () => {
  let t: TestApp;
  let a: TestClient;
  let aKey: string;
  let b: TestClient;
  let bKey: string;

  before(async () => {
    t = await startTestApp();
    a = await createClient(t, { name: 'Padaria Pão Quente' });
    aKey = await evpKey(t, a.accountId);
    b = await createClient(t);
    bKey = await evpKey(t, b.accountId);
  });
  after(() => t.close());

  const req = (method: 'PUT' | 'POST' | 'PATCH' | 'GET', url: string, body?: unknown, client: TestClient = a, headers: Record<string, string> = client.headers) =>
    t.app.inject({ method, url, headers, ...(body === undefined ? {} : { payload: body as Json }) });
  const body = (extra: Json = {}, key = aKey) => ({ calendario: { expiracao: 3600 }, valor: { original: '10.00' }, chave: key, ...extra });

  async function created(extra: Json = {}, id = txid()): Promise<Json> {
    const res = await req('PUT', `/v2/cob/${id}`, body(extra));
    assert.equal(res.statusCode, 201, res.body);
    assertBcbAnswer('PUT /cob/{txid}', res);
    return res.json<Json>();
  }

  /** A token of `client` carrying only `scope`. */
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

  it('PUT creates a charge with a location and a dynamic BR Code pointing at it', async () => {
    const id = txid();
    const cob = await created({ devedor: { cpf: randomCpf(), nome: 'Maria' }, solicitacaoPagador: 'Pedido 1', infoAdicionais: [{ nome: 'a', valor: 'b' }] }, id);
    assert.equal(cob.txid, id);
    assert.equal(cob.revisao, 0);
    assert.equal(cob.status, 'ATIVA');
    const loc = cob.loc as Json;
    assert.equal(loc.tipoCob, 'cob');
    assert.equal(loc.txid, id);
    assert.equal(cob.location, loc.location);
    assert.match(String(cob.location), /^127\.0\.0\.1:\d+\/qr\/v2\/[a-z0-9]{32}$/);
    const pix = parsePix(String(cob.pixCopiaECola));
    assert.ok(!hasError(pix) && isDynamicPix(pix), String(cob.pixCopiaECola));
    assert.equal(pix.url, cob.location);
  });

  it('POST creates a charge with a txid the service draws', async () => {
    const res = await req('POST', '/v2/cob', body());
    assert.equal(res.statusCode, 201, res.body);
    assertBcbAnswer('POST /cob', res);
    assert.match(res.json<{ txid: string }>().txid, /^[a-zA-Z0-9]{26,35}$/);
  });

  it('PUT of an ATIVA cob replaces it whole (revisao + 1, the earlier revision kept); the same PUT again changes nothing', async () => {
    const id = txid();
    const first = await created({ devedor: { cpf: randomCpf(), nome: 'Maria' }, solicitacaoPagador: 'Pedido 1' }, id);
    const res = await req('PUT', `/v2/cob/${id}`, body({ valor: { original: '20.00' } }));
    assert.equal(res.statusCode, 201, res.body);
    assertBcbAnswer('PUT /cob/{txid}', res);
    const replaced = res.json<Json>();
    assert.equal(replaced.revisao, 1);
    assert.deepEqual(replaced.valor, { original: '20.00', modalidadeAlteracao: 0 });
    // Whole: what the PUT leaves out is gone; the creation, the location and its code stay.
    assert.equal(replaced.devedor, undefined);
    assert.equal(replaced.solicitacaoPagador, undefined);
    assert.deepEqual([replaced.calendario, replaced.loc, replaced.pixCopiaECola], [first.calendario, first.loc, first.pixCopiaECola]);
    const earlier = await req('GET', `/v2/cob/${id}?revisao=0`);
    assertBcbAnswer('GET /cob/{txid}', earlier);
    assert.deepEqual(earlier.json(), first);
    // A client sending its PUT again (after a timeout), with or without the loc.id it named, gets the same charge.
    for (const extra of [{}, { loc: { id: (first.loc as Json).id } }]) {
      const again = await req('PUT', `/v2/cob/${id}`, body({ valor: { original: '20.00' }, ...extra }));
      assert.equal(again.statusCode, 201, again.body);
      assertBcbAnswer('PUT /cob/{txid}', again);
      assert.deepEqual(again.json(), replaced);
    }
    assertProblem(await req('GET', `/v2/cob/${id}?revisao=2`), 400, 'CobConsultaInvalida');
  });

  it('PUT of a cob that is not ATIVA, or of a cobv, is 400 CobOperacaoInvalida; the root dialect still answers 409 for a txid taken', async () => {
    const removed = txid();
    await created({}, removed);
    assert.equal((await req('PATCH', `/v2/cob/${removed}`, { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' })).statusCode, 200);
    const refused = await req('PUT', `/v2/cob/${removed}`, body({ valor: { original: '11.00' } }));
    assertProblem(refused, 400, 'CobOperacaoInvalida');
    assertBcbAnswer('PUT /cob/{txid}', refused);
    const kept = (await req('GET', `/v2/cob/${removed}`)).json<{ revisao: number; status: string; valor: Json }>();
    assert.deepEqual([kept.revisao, kept.status, kept.valor.original], [1, 'REMOVIDA_PELO_USUARIO_RECEBEDOR', '10.00']);
    // The corrected request: another txid.
    await created({ valor: { original: '11.00' } });
    const cobv = txid();
    const due = { calendario: { dataDeVencimento: '2099-12-31' }, devedor: { cpf: randomCpf(), nome: 'Maria' }, valor: { original: '5.00' }, chave: aKey };
    assert.equal((await req('PUT', `/v2/cobv/${cobv}`, due)).statusCode, 201);
    assertProblem(await req('PUT', `/v2/cob/${cobv}`, body()), 400, 'CobOperacaoInvalida');
    const active = txid();
    await created({}, active);
    const root = await t.app.inject({ method: 'PUT', url: `/cob/${active}`, headers: a.headers, payload: { calendario: { expiracao: 60 }, valor: { original: '7.00' } } });
    assert.equal(root.statusCode, 409, root.body);
    assert.equal(root.json<{ code: string }>().code, 'TXID_TAKEN');
    assert.equal((await req('GET', `/v2/cob/${active}`)).json<Json>().revisao, 0);
  });

  it('validation: every violation of the schema at once, then the corrected request succeeds', async () => {
    const bad = { calendario: { expiracao: 0 }, valor: { original: '10' }, chave: 'x'.repeat(78), solicitacaoPagador: 'y'.repeat(141), devedor: { cpf: '1', nome: 'M' }, infoAdicionais: [{ nome: 'n' }] };
    const res = await req('PUT', `/v2/cob/${txid()}`, bad);
    assertProblem(res, 400, 'CobOperacaoInvalida', ['calendario.expiracao', 'valor.original', 'chave', 'solicitacaoPagador', 'devedor.cpf', 'infoAdicionais[0].valor']);
    assertBcbAnswer('PUT /cob/{txid}', res);
    assertProblem(await req('PUT', '/v2/cob/short', body()), 400, 'CobOperacaoInvalida', ['txid']);
    await created({ devedor: { cpf: randomCpf(), nome: 'M' }, infoAdicionais: [{ nome: 'n', valor: 'v' }] });
  });

  it('rules the core checks: zero amount, both cpf and cnpj, a key of another account', async () => {
    assertProblem(await req('PUT', `/v2/cob/${txid()}`, body({ valor: { original: '0.00' } })), 400, 'CobOperacaoInvalida');
    assertProblem(await req('PUT', `/v2/cob/${txid()}`, body({ devedor: { cpf: randomCpf(), cnpj: '11222333000181', nome: 'M' } })), 400, 'CobOperacaoInvalida');
    assertProblem(await req('PUT', `/v2/cob/${txid()}`, body({}, bKey)), 400, 'CobOperacaoInvalida');
    // 0.00 is allowed when the payer chooses the amount.
    const cob = await created({ valor: { original: '0.00', modalidadeAlteracao: 1 } });
    assert.deepEqual(cob.valor, { original: '0.00', modalidadeAlteracao: 1 });
  });

  it('valor.retirada: saque and troco as CobValor describes them', async () => {
    const saque = { valor: '5.00', modalidadeAgente: 'AGPSS', prestadorDoServicoDeSaque: '12345678' };
    const troco = { valor: '5.00', modalidadeAgente: 'AGTEC', prestadorDoServicoDeSaque: '12345678' };
    const invalid = [
      { original: '0.00', retirada: { saque: { valor: '5.00' } } },
      { original: '100.00', retirada: { saque, troco } },
      { original: '10.00', retirada: { saque } },
      { original: '0.00', retirada: { troco } },
      { original: '0.00', modalidadeAlteracao: 1, retirada: { saque: { ...saque, modalidadeAlteracao: 1 } } },
      { original: '0.01', modalidadeAlteracao: 1, retirada: { troco: { ...troco, modalidadeAlteracao: 1 } } },
      { original: '0.00', retirada: { saque: { ...saque, valor: '0.00' } } },
      { original: '10.00', retirada: { troco: { ...troco, modalidadeAgente: 'AGPSS' } } },
      { original: '0.00', retirada: {} },
    ];
    for (const valor of invalid) assertProblem(await req('PUT', `/v2/cob/${txid()}`, body({ valor })), 400, 'CobOperacaoInvalida');
    const valid = [
      { original: '0.00', retirada: { saque } },
      { original: '0.00', retirada: { saque: { ...saque, valor: '0.00', modalidadeAlteracao: 1 } } },
      { original: '10.00', retirada: { troco } },
      { original: '10.00', retirada: { troco: { ...troco, valor: '0.00', modalidadeAlteracao: 1 } } },
    ];
    for (const valor of valid) {
      const cob = await created({ valor });
      assert.deepEqual((cob.valor as Json).retirada, valor.retirada);
      assertBcbDefinition('CobCompleta', cob);
    }
  });

  it('loc.id takes an unused location of the account; others are 400', async () => {
    const loc = await req('POST', '/v2/loc', { tipoCob: 'cob' });
    assert.equal(loc.statusCode, 201, loc.body);
    const id = loc.json<{ id: number }>().id;
    const cob = await created({ loc: { id } });
    assert.equal((cob.loc as Json).id, id);
    assertProblem(await req('PUT', `/v2/cob/${txid()}`, body({ loc: { id } })), 400, 'CobOperacaoInvalida');
    const cobv = (await req('POST', '/v2/loc', { tipoCob: 'cobv' })).json<{ id: number }>().id;
    assertProblem(await req('PUT', `/v2/cob/${txid()}`, body({ loc: { id: cobv } })), 400, 'CobOperacaoInvalida');
    const others = (await req('POST', '/v2/loc', { tipoCob: 'cob' }, b)).json<{ id: number }>().id;
    assertProblem(await req('PUT', `/v2/cob/${txid()}`, body({ loc: { id: others } })), 400, 'CobOperacaoInvalida');
  });

  it('PATCH revises (revisao + 1, same pixCopiaECola); GET ?revisao=N shows earlier ones', async () => {
    const id = txid();
    const cob = await created({}, id);
    const res = await req('PATCH', `/v2/cob/${id}`, { valor: { original: '12.34' }, solicitacaoPagador: 'novo' });
    assert.equal(res.statusCode, 200, res.body);
    assertBcbAnswer('PATCH /cob/{txid}', res);
    const revised = res.json<Json>();
    assert.equal(revised.revisao, 1);
    assert.equal((revised.valor as Json).original, '12.34');
    assert.equal(revised.pixCopiaECola, cob.pixCopiaECola);
    const old = await req('GET', `/v2/cob/${id}?revisao=0`);
    assertBcbAnswer('GET /cob/{txid}', old);
    assert.equal(old.json<{ valor: Json }>().valor.original, '10.00');
    assert.equal(old.json<Json>().revisao, 0);
    const now = await req('GET', `/v2/cob/${id}?revisao=1`);
    assert.equal(now.json<Json>().revisao, 1);
    // BCB: a revision the charge never had is CobConsultaInvalida (400), which the operation's list of answers leaves out.
    const unknown = await req('GET', `/v2/cob/${id}?revisao=7`);
    assertProblem(unknown, 400, 'CobConsultaInvalida');
    assertBcbDefinition('Problema', unknown.json());
  });

  it('a PATCH that changes nothing keeps revisao, as BCB says; the revision it did not make is then 400 CobConsultaInvalida', async () => {
    const id = txid();
    const cob = await created({ solicitacaoPagador: 'Pedido 2', devedor: { cpf: randomCpf(), nome: 'Maria' } }, id);
    const same = { valor: { original: '10.00' }, chave: aKey, solicitacaoPagador: 'Pedido 2', devedor: cob.devedor, calendario: { expiracao: 3600 } };
    const res = await req('PATCH', `/v2/cob/${id}`, same);
    assert.equal(res.statusCode, 200, res.body);
    assertBcbAnswer('PATCH /cob/{txid}', res);
    assert.deepEqual(res.json(), cob);
    const none = await req('GET', `/v2/cob/${id}?revisao=1`);
    assertProblem(none, 400, 'CobConsultaInvalida');
    assertBcbDefinition('Problema', none.json());
    const current = await req('GET', `/v2/cob/${id}?revisao=0`);
    assertBcbAnswer('GET /cob/{txid}', current);
    assert.deepEqual(current.json(), cob);
  });

  it('PATCH loc moves the charge to another free location of the account (revisao kept); others are 400', async () => {
    const id = txid();
    const cob = await created({}, id);
    const own = (cob.loc as Json).id as number;
    const free = (await req('POST', '/v2/loc', { tipoCob: 'cob' })).json<{ id: number }>().id;
    const ofCobv = (await req('POST', '/v2/loc', { tipoCob: 'cobv' })).json<{ id: number }>().id;
    const ofOthers = (await req('POST', '/v2/loc', { tipoCob: 'cob' }, b)).json<{ id: number }>().id;
    const inUse = ((await created()).loc as Json).id as number;
    for (const locId of [ofCobv, ofOthers, inUse]) {
      const refused = await req('PATCH', `/v2/cob/${id}`, { loc: { id: locId } });
      assertProblem(refused, 400, 'CobOperacaoInvalida');
      assertBcbAnswer('PATCH /cob/{txid}', refused);
    }
    const res = await req('PATCH', `/v2/cob/${id}`, { loc: { id: free } });
    assert.equal(res.statusCode, 200, res.body);
    assertBcbAnswer('PATCH /cob/{txid}', res);
    const moved = res.json<Json>();
    assert.equal(moved.revisao, 0);
    assert.equal((moved.loc as Json).id, free);
    assert.notEqual(moved.location, cob.location);
    const pix = parsePix(String(moved.pixCopiaECola));
    assert.ok(!hasError(pix) && isDynamicPix(pix) && pix.url === moved.location, String(moved.pixCopiaECola));
    assert.deepEqual({ ...moved, loc: cob.loc, location: cob.location, pixCopiaECola: cob.pixCopiaECola }, cob);
    const left = await req('GET', `/v2/loc/${own}`);
    assertBcbAnswer('GET /loc/{id}', left);
    assert.equal(left.json<Json>().txid, undefined);
    assert.equal((await req('GET', `/v2/loc/${free}`)).json<Json>().txid, id);
    const served = await t.app.inject({ method: 'GET', url: `/qr/v2/${String(moved.location).split('/').at(-1)!}` });
    assert.equal(served.statusCode, 200, served.body);
    // Back, with a change of a field: that one is a revision.
    const back = await req('PATCH', `/v2/cob/${id}`, { loc: { id: own }, solicitacaoPagador: 'de volta' });
    assert.equal(back.statusCode, 200, back.body);
    assertBcbAnswer('PATCH /cob/{txid}', back);
    assert.deepEqual([back.json<Json>().revisao, (back.json<Json>().loc as Json).id], [1, own]);
  });

  it("a cob's devedor is BCB's PessoaFisica or PessoaJuridica: the e-mail of a cobv's devedor (DadosDevedor) is refused", async () => {
    const devedor = { cpf: randomCpf(), nome: 'Maria' };
    assertProblem(await req('PUT', `/v2/cob/${txid()}`, body({ devedor: { ...devedor, email: 'maria@example.com' } })), 400, 'CobOperacaoInvalida');
    const id = txid();
    await created({ devedor }, id);
    assertProblem(await req('PATCH', `/v2/cob/${id}`, { devedor: { ...devedor, email: 'maria@example.com' } }), 400, 'CobOperacaoInvalida');
    const res = await req('PATCH', `/v2/cob/${id}`, { devedor: { ...devedor, nome: 'Maria Souza' } });
    assert.equal(res.statusCode, 200, res.body);
    assertBcbAnswer('PATCH /cob/{txid}', res);
  });

  it('PATCH: removal with other changes is 400; removal alone works; then nothing more changes', async () => {
    const id = txid();
    await created({}, id);
    assertProblem(await req('PATCH', `/v2/cob/${id}`, { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR', solicitacaoPagador: 'x' }), 400, 'CobOperacaoInvalida', ['status']);
    assertProblem(await req('PATCH', `/v2/cob/${id}`, { status: 'ATIVA' }), 400, 'CobOperacaoInvalida', ['status']);
    const res = await req('PATCH', `/v2/cob/${id}`, { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json<Json>().status, 'REMOVIDA_PELO_USUARIO_RECEBEDOR');
    assertProblem(await req('PATCH', `/v2/cob/${id}`, { solicitacaoPagador: 'x' }), 400, 'CobOperacaoInvalida');
    assertProblem(await req('PATCH', `/v2/cob/${txid()}`, { solicitacaoPagador: 'x' }), 404, 'CobNaoEncontrado');
  });

  it("another account's charge is 404 CobNaoEncontrado; a token without the scope is 403 AcessoNegado", async () => {
    const id = txid();
    await created({}, id);
    const res = await req('GET', `/v2/cob/${id}`, undefined, b);
    assertProblem(res, 404, 'CobNaoEncontrado');
    assertBcbAnswer('GET /cob/{txid}', res);
    assertProblem(await req('PATCH', `/v2/cob/${id}`, { solicitacaoPagador: 'x' }, b), 404, 'CobNaoEncontrado');
    const readOnly = await scopedHeaders(a, 'cob.read');
    for (const [method, url] of [['PUT', `/v2/cob/${txid()}`], ['POST', '/v2/cob'], ['PATCH', `/v2/cob/${id}`]] as const) {
      const denied = await req(method, url, body(), a, readOnly);
      assertProblem(denied, 403, 'AcessoNegado');
    }
    const writeOnly = await scopedHeaders(a, 'cob.write');
    assertProblem(await req('GET', `/v2/cob/${id}`, undefined, a, writeOnly), 403, 'AcessoNegado');
    const denied = await req('GET', '/v2/cob?inicio=2020-01-01T00:00:00Z&fim=2020-01-02T00:00:00Z', undefined, a, writeOnly);
    assertProblem(denied, 403, 'AcessoNegado');
    assertBcbAnswer('GET /cob', denied);
    assert.equal((await req('GET', `/v2/cob/${id}`, undefined, a, readOnly)).statusCode, 200);
  });

  it('the same charge through both dialects', async () => {
    const id = txid();
    const root = await t.app.inject({ method: 'PUT', url: `/cob/${id}`, headers: a.headers, payload: { calendario: { expiracao: 60 }, valor: { original: '7.00' } } });
    assert.equal(root.statusCode, 201, root.body);
    const seen = await req('GET', `/v2/cob/${id}`);
    assertBcbAnswer('GET /cob/{txid}', seen);
    assert.equal(seen.json<{ valor: Json }>().valor.original, '7.00');
    const id2 = txid();
    await created({ valor: { original: '8.00' } }, id2);
    const back = await t.app.inject({ method: 'GET', url: `/cob/${id2}`, headers: a.headers });
    assert.equal(back.statusCode, 200, back.body);
    assert.equal(back.json<{ valor: Json }>().valor.original, '8.00');
  });

  it('a paid charge shows its Pix with infoPagador and its refunds', async () => {
    const id = txid();
    await created({}, id);
    const paid = await t.app.inject({ method: 'POST', url: `/sandbox/cob/${id}/pay`, headers: adminHeaders });
    assert.equal(paid.statusCode, 201, paid.body);
    const e2e = paid.json<{ endToEndId: string }>().endToEndId;
    const refund = await t.app.inject({ method: 'PUT', url: `/pix/${e2e}/devolucao/dev${randomUUID().slice(0, 8)}`, headers: a.headers, payload: { valor: '1.50' } });
    assert.ok([200, 201].includes(refund.statusCode), refund.body);
    const res = await req('GET', `/v2/cob/${id}`);
    assertBcbAnswer('GET /cob/{txid}', res);
    const cob = res.json<{ status: string; pix: Json[] }>();
    assert.equal(cob.status, 'CONCLUIDA');
    assert.equal(cob.pix.length, 1);
    assert.equal(cob.pix[0]!.endToEndId, e2e);
    assert.equal(cob.pix[0]!.valor, '10.00');
    assert.equal(cob.pix[0]!.txid, id);
    assert.equal(cob.pix[0]!.chave, aKey);
    const devolucoes = cob.pix[0]!.devolucoes as Json[];
    assert.equal(devolucoes.length, 1);
    assert.equal(numberToCentavos(Number(devolucoes[0]!.valor)), 150n);
  });

  it('GET /v2/cob lists immediate charges with BCB paging, filters, and query problems', async () => {
    const c = await createClient(t);
    const key = await evpKey(t, c.accountId);
    const from = new Date(t.clock.now().getTime() - 60_000).toISOString();
    const to = new Date(t.clock.now().getTime() + 60_000).toISOString();
    const list = (q: string) => req('GET', `/v2/cob?inicio=${from}&fim=${to}${q}`, undefined, c);
    const empty = await list('');
    assertBcbAnswer('GET /cob', empty);
    assert.equal(empty.json<{ parametros: { paginacao: Json } }>().parametros.paginacao.quantidadeDePaginas, 1);
    for (let i = 0; i < 3; i++) assert.equal((await req('PUT', `/v2/cob/${txid()}`, body({}, key), c)).statusCode, 201);
    const page = await list('&paginacao.itensPorPagina=2&locationPresente=true');
    assertBcbAnswer('GET /cob', page);
    const answer = page.json<{ parametros: { paginacao: Json; locationPresente: boolean }; cobs: Json[] }>();
    assert.equal(answer.cobs.length, 2);
    assert.deepEqual(answer.parametros.paginacao, { paginaAtual: 0, itensPorPagina: 2, quantidadeDePaginas: 2, quantidadeTotalDeItens: 3 });
    assert.equal((await list('&locationPresente=false')).json<{ cobs: Json[] }>().cobs.length, 0);
    assertProblem(await req('GET', `/v2/cob?inicio=${to}&fim=${from}`, undefined, c), 400, 'CobConsultaInvalida');
    assertProblem(await list('&cpf=12345678909&cnpj=11222333000181'), 400, 'CobConsultaInvalida');
    assertProblem(await list('&paginacao.paginaAtual=-1'), 400, 'CobConsultaInvalida', ['paginacao.paginaAtual']);
    assertProblem(await req('GET', '/v2/cob?inicio=ontem', undefined, c), 400, 'CobConsultaInvalida', ['inicio', 'fim']);
  });
});
