import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { compactVerify, decodeProtectedHeader, importJWK, type JWK } from 'jose';
import { createClient, evpKey, randomCnpj, randomCpf, type TestClient } from '../../../../test/factories.ts';
import { adminHeaders, startTestApp, type TestApp } from '../../../../test/harness.ts';
import { freePort } from '../../../../test/processes.ts';
import { assertBcbAnswer, assertBcbDefinition, assertBcbProblem } from '../../../../test/support/bcb-schemas.ts';
import { crc16Ccitt } from '../../../lib/brcode.ts';
import { randomAlphanumeric } from '../../../lib/ids.ts';

type Json = Record<string, unknown>;


const DAY = 86_400_000;

describe('BCB /v2/rec (Pix Automático, the receiver)', () => {
  let t: TestApp;
  let a: TestClient;
  let b: TestClient;
  let aKey: string;

  before(async () => {
    // Listening on the port PUBLIC_URL names: the sandbox payer fetches a code's locations from it.
    const port = await freePort();
    t = await startTestApp({ env: { PUBLIC_URL: `http://127.0.0.1:${port}` } });
    await t.app.listen({ port, host: '127.0.0.1' });
    a = await createClient(t, { name: 'Academia Forte', document: randomCnpj() });
    b = await createClient(t, { name: 'Outra Empresa', document: randomCnpj() });
    aKey = await evpKey(t, a.accountId);
  });
  after(() => t.close());

  const day = (offsetDays: number) => new Date(t.clock.now().getTime() - 3 * 3_600_000 + offsetDays * DAY).toISOString().slice(0, 10);
  const req = (method: 'POST' | 'GET' | 'PATCH' | 'PUT' | 'DELETE', url: string, body?: unknown, client: TestClient = a) =>
    t.app.inject({ method, url, headers: client.headers, ...(body === undefined ? {} : { payload: body as Json }) });
  const body = (extra: Json = {}, cpf = randomCpf()): Json => ({
    vinculo: { objeto: 'Plano mensal', contrato: `C${randomAlphanumeric(8)}`, devedor: { cpf, nome: 'Fulano de Tal' } },
    calendario: { dataInicial: day(10), periodicidade: 'MENSAL' },
    valor: { valorRec: '99.90' },
    politicaRetentativa: 'NAO_PERMITE',
    ...extra,
  });

  async function newRec(extra: Json = {}, client: TestClient = a): Promise<Json> {
    const res = await req('POST', '/v2/rec', body(extra), client);
    assert.equal(res.statusCode, 201, res.body);
    assertBcbAnswer('POST /rec', res);
    return res.json<Json>();
  }
  async function newLocRec(client: TestClient = a): Promise<{ id: number; location: string }> {
    const res = await req('POST', '/v2/locrec', { tipo: 'rec' }, client);
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  }
  async function getRec(idRec: string, query = ''): Promise<Json> {
    const res = await req('GET', `/v2/rec/${idRec}${query}`);
    assert.equal(res.statusCode, 200, res.body);
    assertBcbAnswer('GET /rec/{idRec}', res);
    return res.json<Json>();
  }

  it("POST makes a CRIADA recurrence of the account's company, its idRec by BCB's rule; with loc, the location shows it", async () => {
    const made = await newRec();
    assert.match(String(made.idRec), new RegExp(`^RN${t.config.pspIspb}${day(0).replaceAll('-', '')}[a-zA-Z0-9]{11}$`));
    assert.equal(made.status, 'CRIADA');
    assert.deepEqual(made.recebedor, { cnpj: a.document, nome: 'Academia Forte' });
    assert.deepEqual(made.atualizacao, [{ status: 'CRIADA', data: t.clock.now().toISOString() }]);
    assert.deepEqual(made.ativacao, { tipoJornada: 'AGUARDANDO_DEFINICAO' });
    assert.deepEqual(made.valor, { valorRec: '99.90' });
    assert.equal(made.loc, undefined);

    const retries = await newRec({ politicaRetentativa: 'PERMITE_3R_7D', valor: { valorMinimoRecebedor: '50.00' }, recebedor: { convenio: 'Plano A' } });
    assert.match(String(retries.idRec), /^RR/);
    assert.deepEqual(retries.valor, { valorMinimoRecebedor: '50.00' });
    assert.equal((retries.recebedor as Json).convenio, 'Plano A');

    const loc = await newLocRec();
    const located = await newRec({ loc: loc.id });
    assert.deepEqual((located.loc as Json).idRec, located.idRec);
    assert.equal((located.loc as Json).location, loc.location);
    const locrec = await req('GET', `/v2/locrec/${loc.id}`);
    assert.equal(locrec.json<Json>().idRec, located.idRec);
    // A location serves one recurrence; another account's is not this account's.
    const taken = assertBcbProblem(await req('POST', '/v2/rec', body({ loc: loc.id })), 400, 'RecOperacaoInvalida');
    assert.deepEqual((taken.violacoes as Json[]).map((v) => v.propriedade), ['loc']);
    assertBcbProblem(await req('POST', '/v2/rec', body({ loc: (await newLocRec(b)).id })), 400, 'RecOperacaoInvalida');
  });

  it("refuses what BCB lists, every field at once: a past first day, an end before it, a fixed amount with a minimum, a devedor's bad CPF", async () => {
    const res = await req('POST', '/v2/rec', {
      ...body({}, '12345678900'),
      calendario: { dataInicial: day(-1), dataFinal: day(-2), periodicidade: 'MENSAL' },
      valor: { valorRec: '10.00', valorMinimoRecebedor: '5.00' },
    });
    const problem = assertBcbProblem(res, 400, 'RecOperacaoInvalida');
    assertBcbAnswer('POST /rec', res);
    assert.deepEqual((problem.violacoes as Json[]).map((v) => v.propriedade).sort(), ['calendario.dataFinal', 'calendario.dataInicial', 'valor.valorMinimoRecebedor', 'vinculo.devedor.cpf']);
    // Schema rules: an unknown periodicidade, a contrato too long, no devedor.
    const schema = assertBcbProblem(await req('POST', '/v2/rec', { ...body(), calendario: { dataInicial: day(3), periodicidade: 'DIARIA' } }), 400, 'RecOperacaoInvalida');
    assert.ok((schema.violacoes as Json[]).some((v) => v.propriedade === 'calendario.periodicidade'), JSON.stringify(schema));
    assertBcbProblem(await req('POST', '/v2/rec', { ...body(), vinculo: { contrato: 'x'.repeat(36), devedor: { cpf: randomCpf(), nome: 'A' } } }), 400, 'RecOperacaoInvalida');
    // A person's account does not charge recurrences: the receiver is a company.
    const person = await createClient(t);
    const refused = assertBcbProblem(await req('POST', '/v2/rec', body(), person), 400, 'RecOperacaoInvalida');
    assert.match(String(refused.detail), /pessoa jurídica/);
  });

  it("GET /rec/{idRec}: dadosQR is the recurrence's code (journey 2), or with a cob's txid the composite of journey 3, with a cobv's that of journey 4", async () => {
    const plain = await newRec();
    assert.equal((await getRec(String(plain.idRec))).dadosQR, undefined, 'no location, no code');

    const loc = await newLocRec();
    const rec = await newRec({ loc: loc.id });
    const two = (await getRec(String(rec.idRec))).dadosQR as Json;
    assert.equal(two.jornada, 'JORNADA_2');
    const code = String(two.pixCopiaECola);
    assert.ok(code.includes(`80${String(18 + 4 + loc.location.length).padStart(2, '0')}0014br.gov.bcb.pix25${String(loc.location.length).padStart(2, '0')}${loc.location}`), code);
    assert.equal(code.slice(-4), crc16Ccitt(code.slice(0, -4)));

    const cobTxid = randomAlphanumeric(30);
    const cob = await req('PUT', `/v2/cob/${cobTxid}`, { calendario: { expiracao: 3600 }, valor: { original: '99.90' }, chave: aKey });
    assert.equal(cob.statusCode, 201, cob.body);
    const three = (await getRec(String(rec.idRec), `?txid=${cobTxid}`)).dadosQR as Json;
    assert.equal(three.jornada, 'JORNADA_3');
    assert.ok(String(three.pixCopiaECola).startsWith('000201010212'));
    assert.ok(String(three.pixCopiaECola).includes(cob.json<Json>().location as string));
    assert.ok(String(three.pixCopiaECola).includes(loc.location));

    const cobvTxid = randomAlphanumeric(30);
    const cobv = await req('PUT', `/v2/cobv/${cobvTxid}`, {
      calendario: { dataDeVencimento: day(20) },
      devedor: { cpf: randomCpf(), nome: 'Fulano de Tal' },
      valor: { original: '99.90' },
      chave: aKey,
    });
    assert.equal(cobv.statusCode, 201, cobv.body);
    assert.equal(((await getRec(String(rec.idRec), `?txid=${cobvTxid}`)).dadosQR as Json).jornada, 'JORNADA_4');

    // A txid of no charge, and a cob other than the one the recurrence names for journey 3.
    assertBcbProblem(await req('GET', `/v2/rec/${String(rec.idRec)}?txid=${randomAlphanumeric(30)}`), 400, 'RecConsultaInvalida');
    const named = await newRec({ loc: (await newLocRec()).id, ativacao: { dadosJornada: { txid: randomAlphanumeric(30) } } });
    assertBcbProblem(await req('GET', `/v2/rec/${String(named.idRec)}?txid=${cobTxid}`), 400, 'RecConsultaInvalida');
    assertBcbProblem(await req('GET', `/v2/rec/${String(named.idRec)}?txid=${cobvTxid}`), 400, 'RecConsultaInvalida');
    // Another account's recurrence, and one that does not exist.
    assertBcbProblem(await req('GET', `/v2/rec/${String(rec.idRec)}`, undefined, b), 404, 'RecNaoEncontrada');
    assertBcbProblem(await req('GET', '/v2/rec/RN12345678202611280000000000a'), 404, 'RecNaoEncontrada');
  });

  it('PATCH renames the devedor, moves it to another location and first day while CRIADA, and cancels it; then it takes nothing more', async () => {
    const first = await newLocRec();
    const rec = await newRec({ loc: first.id });
    const id = String(rec.idRec);
    const second = await newLocRec();
    const revised = await req('PATCH', `/v2/rec/${id}`, { vinculo: { devedor: { nome: 'Beltrano' } }, loc: second.id, calendario: { dataInicial: day(12) } });
    assert.equal(revised.statusCode, 200, revised.body);
    assertBcbAnswer('PATCH /rec/{idRec}', revised);
    const after = revised.json<Json>();
    assert.equal((after.vinculo as { devedor: Json }).devedor.nome, 'Beltrano');
    assert.equal((after.loc as Json).id, second.id);
    assert.equal((after.calendario as Json).dataInicial, day(12));
    assert.equal((await req('GET', `/v2/locrec/${first.id}`)).json<Json>().idRec, undefined, 'the first location is free again');
    assertBcbProblem(await req('PATCH', `/v2/rec/${id}`, { calendario: { dataInicial: day(-5) } }), 400, 'RecOperacaoInvalida');
    assertBcbProblem(await req('PATCH', `/v2/rec/${id}`, {}), 400, 'RecOperacaoInvalida');

    const cancelled = await req('PATCH', `/v2/rec/${id}`, { status: 'CANCELADA' });
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    const ended = cancelled.json<Json>();
    assert.equal(ended.status, 'CANCELADA');
    assert.deepEqual(ended.encerramento, { cancelamento: { solicitante: 'USUARIO_RECEBEDOR', codigo: 'SLCR', descricao: 'Cancelamento solicitado pelo usuário recebedor' } });
    assert.deepEqual((ended.atualizacao as Json[]).map((u) => u.status), ['CRIADA', 'CANCELADA']);
    for (const patch of [{ status: 'CANCELADA' }, { vinculo: { devedor: { nome: 'Outro' } } }]) assertBcbProblem(await req('PATCH', `/v2/rec/${id}`, patch), 400, 'RecOperacaoInvalida');
    assertBcbProblem(await req('PATCH', `/v2/rec/${id}`, { status: 'CANCELADA' }, b), 404, 'RecNaoEncontrada');
  });

  it('GET /rec lists the interval newest first, by devedor, status, location and convênio, with BCB paging; bad queries are RecConsultaInvalida', async () => {
    const c = await createClient(t, { name: 'Clube', document: randomCnpj() });
    const from = new Date(t.clock.now().getTime() - 1000).toISOString();
    const cpf = randomCpf();
    const one = (await req('POST', '/v2/rec', body({ recebedor: { convenio: 'Ouro' } }, cpf), c)).json<Json>();
    const two = (await req('POST', '/v2/rec', body({ loc: (await newLocRec(c)).id }), c)).json<Json>();
    await req('PATCH', `/v2/rec/${String(two.idRec)}`, { status: 'CANCELADA' }, c);
    const to = new Date(t.clock.now().getTime() + 1000).toISOString();
    const list = async (extra = '') => {
      const res = await req('GET', `/v2/rec?inicio=${from}&fim=${to}${extra}`, undefined, c);
      assert.equal(res.statusCode, 200, res.body);
      assertBcbAnswer('GET /rec', res);
      return res.json<{ parametros: Json; recs: Json[] }>();
    };
    assert.deepEqual((await list()).recs.map((r) => r.idRec), [two.idRec, one.idRec]);
    assert.deepEqual((await list(`&cpf=${cpf}`)).recs.map((r) => r.idRec), [one.idRec]);
    assert.deepEqual((await list('&status=CANCELADA')).recs.map((r) => r.idRec), [two.idRec]);
    assert.deepEqual((await list('&locationPresente=false')).recs.map((r) => r.idRec), [one.idRec]);
    const ouro = await list('&convenio=Ouro&paginacao.itensPorPagina=1');
    assert.deepEqual(ouro.recs.map((r) => r.idRec), [one.idRec]);
    assert.deepEqual(ouro.parametros.recebedor, { convenio: 'Ouro' });
    assert.deepEqual(ouro.parametros.paginacao, { paginaAtual: 0, itensPorPagina: 1, quantidadeDePaginas: 1, quantidadeTotalDeItens: 1 });
    assert.equal((await req('GET', `/v2/rec?inicio=${from}&fim=${to}`, undefined, b)).json<{ recs: Json[] }>().recs.length, 0);
    assertBcbProblem(await req('GET', `/v2/rec?inicio=${to}&fim=${from}`, undefined, c), 400, 'RecConsultaInvalida');
    assertBcbProblem(await req('GET', `/v2/rec?inicio=${from}&fim=${to}&cpf=${cpf}&cnpj=${randomCnpj()}`, undefined, c), 400, 'RecConsultaInvalida');
    assertBcbProblem(await req('GET', `/v2/rec?inicio=${from}&fim=${to}&status=PAGA`, undefined, c), 400, 'RecConsultaInvalida');
  });

  it("the sandbox payer approves by journeys 2, 3 and 4: a recurrence's code alone, a composite code of a cob paid in the act, of a cobv", async () => {
    const pay = (pixCopiaECola: string, extra: Json = {}, document = randomCpf()) =>
      t.app.inject({ method: 'POST', url: '/sandbox/payer/pay', headers: adminHeaders, payload: { pixCopiaECola, payer: { name: 'Fulano de Tal', document }, ...extra } });
    // Journey 2: nothing is paid; the recurrence is APROVADA with its payer, and takes no second approval.
    const two = await newRec({ loc: (await newLocRec()).id });
    const alone = String(((await getRec(String(two.idRec))).dadosQR as Json).pixCopiaECola);
    const payer = randomCpf();
    const approved = await pay(alone, {}, payer);
    assert.equal(approved.statusCode, 201, approved.body);
    assert.deepEqual(approved.json(), { endToEndId: null, transactionId: null, amount: null, txid: null, recurrence: { idRec: two.idRec, status: 'APROVADA', tipoJornada: 'JORNADA_2' } });
    const afterTwo = await getRec(String(two.idRec));
    assert.equal(afterTwo.status, 'APROVADA');
    assert.deepEqual(afterTwo.ativacao, { tipoJornada: 'JORNADA_2' });
    assert.deepEqual(afterTwo.pagador, { cpf: payer, nome: 'Fulano de Tal', ispbParticipante: '12345678', codMun: '3550308' });
    assert.deepEqual((afterTwo.atualizacao as Json[]).map((u) => u.status), ['CRIADA', 'APROVADA']);
    const again = await pay(alone);
    assert.equal(again.statusCode, 422, again.body);
    assert.equal(again.json<Json>().code, 'RECURRENCE_NOT_APPROVABLE');

    // Journey 3: the cob is paid, and the recurrence approved naming it.
    const three = await newRec({ loc: (await newLocRec()).id });
    const txid = randomAlphanumeric(30);
    assert.equal((await req('PUT', `/v2/cob/${txid}`, { calendario: { expiracao: 3600 }, valor: { original: '99.90' }, chave: aKey })).statusCode, 201);
    const composite = String(((await getRec(String(three.idRec), `?txid=${txid}`)).dadosQR as Json).pixCopiaECola);
    const paid = await pay(composite);
    assert.equal(paid.statusCode, 201, paid.body);
    assert.equal(paid.json<Json>().txid, txid);
    assert.deepEqual(paid.json<Json>().recurrence, { idRec: three.idRec, status: 'APROVADA', tipoJornada: 'JORNADA_3' });
    assert.equal((await req('GET', `/v2/cob/${txid}`)).json<Json>().status, 'CONCLUIDA');
    assert.deepEqual((await getRec(String(three.idRec))).ativacao, { tipoJornada: 'JORNADA_3', dadosJornada: { txid } });

    // Journey 4: a cobv's composite code, paid, the recurrence approved after it; and one paid declining it.
    const cobvOf = async () => {
      const id = randomAlphanumeric(30);
      const res = await req('PUT', `/v2/cobv/${id}`, { calendario: { dataDeVencimento: day(20) }, devedor: { cpf: randomCpf(), nome: 'Fulano de Tal' }, valor: { original: '99.90' }, chave: aKey });
      assert.equal(res.statusCode, 201, res.body);
      return id;
    };
    const four = await newRec({ loc: (await newLocRec()).id });
    const cobv = await cobvOf();
    const fourCode = String(((await getRec(String(four.idRec), `?txid=${cobv}`)).dadosQR as Json).pixCopiaECola);
    const fourPaid = await pay(fourCode, { recurrence: { decision: 'approve' } });
    assert.equal(fourPaid.statusCode, 201, fourPaid.body);
    assert.deepEqual(fourPaid.json<Json>().recurrence, { idRec: four.idRec, status: 'APROVADA', tipoJornada: 'JORNADA_4' });
    assert.deepEqual((await getRec(String(four.idRec))).ativacao, { tipoJornada: 'JORNADA_4' });
    const declined = await newRec({ loc: (await newLocRec()).id });
    const declinedCobv = await cobvOf();
    const declinedCode = String(((await getRec(String(declined.idRec), `?txid=${declinedCobv}`)).dadosQR as Json).pixCopiaECola);
    const onlyPaid = await pay(declinedCode, { recurrence: { decision: 'decline' } });
    assert.equal(onlyPaid.statusCode, 201, onlyPaid.body);
    assert.equal(onlyPaid.json<Json>().recurrence, undefined);
    assert.equal((await getRec(String(declined.idRec))).status, 'CRIADA');

    // A recurrence's own code cannot be "declined": it carries no payment.
    const nothing = await pay(String(((await getRec(String(declined.idRec))).dadosQR as Json).pixCopiaECola), { recurrence: { decision: 'decline' } });
    assert.equal(nothing.statusCode, 422, nothing.body);
    assert.equal(nothing.json<Json>().code, 'BRCODE_NOT_PAYABLE');
  });

  it("the payer's maximum: only where the recurrence fixes no amount, and not under its floor; a payer of this institution approves elsewhere", async () => {
    const pay = (pixCopiaECola: string, extra: Json) =>
      t.app.inject({ method: 'POST', url: '/sandbox/payer/pay', headers: adminHeaders, payload: { pixCopiaECola, payer: { name: 'Fulano de Tal', document: randomCpf() }, ...extra } });
    const codeOf = async (rec: Json) => String(((await getRec(String(rec.idRec))).dadosQR as Json).pixCopiaECola);
    const fixed = await newRec({ loc: (await newLocRec()).id });
    const refusedFixed = await pay(await codeOf(fixed), { recurrence: { valorMaximo: '150.00' } });
    assert.equal(refusedFixed.json<Json>().code, 'RECURRENCE_NOT_APPROVABLE', refusedFixed.body);
    const floor = await newRec({ loc: (await newLocRec()).id, valor: { valorMinimoRecebedor: '50.00' } });
    const under = await pay(await codeOf(floor), { recurrence: { valorMaximo: '49.99' } });
    assert.equal(under.json<Json>().code, 'RECURRENCE_NOT_APPROVABLE', under.body);
    const own = await pay(await codeOf(floor), { payer: { name: 'Cliente', document: randomCpf(), ispb: t.config.pspIspb } });
    assert.equal(own.json<Json>().code, 'RECURRENCE_NOT_APPROVABLE', own.body);
    assert.equal((await getRec(String(floor.idRec))).status, 'CRIADA', 'nothing approved');
    const ok = await pay(await codeOf(floor), { recurrence: { valorMaximo: '80.00' } });
    assert.equal(ok.statusCode, 201, ok.body);
    const row = await t.db.selectFrom('recurrences').select('valor_maximo_pagador_centavos').where('id_rec', '=', String(floor.idRec)).executeTakeFirstOrThrow();
    assert.equal(row.valor_maximo_pagador_centavos, 8000n);
  });

  it('its location serves the RecPayload as a JWS the JWK Set verifies; an ended recurrence is 400, a free location 404', async () => {
    const loc = await newLocRec();
    const rec = await newRec({ loc: loc.id, vinculo: { contrato: 'CTR-2026-001', devedor: { cpf: randomCpf(), nome: 'Fulano de Tal' } } });
    const token = loc.location.split('/').at(-1)!;
    const res = await t.app.inject({ method: 'GET', url: `/qr/v2/rec/${token}` });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /^application\/jose/);
    const header = decodeProtectedHeader(res.body);
    const jwks = (await t.app.inject({ method: 'GET', url: '/qr/jwks' })).json<{ keys: JWK[] }>();
    const jwk = jwks.keys.find((k) => k.kid === header.kid)!;
    const { payload } = await compactVerify(res.body, await importJWK(jwk, header.alg));
    const recPayload = JSON.parse(new TextDecoder().decode(payload)) as Json;
    assertBcbDefinition('RecPayload', recPayload);
    assert.equal(recPayload.idRec, rec.idRec);
    assert.deepEqual(recPayload.recebedor, { cnpj: a.document, nome: 'Academia Forte', ispbParticipante: t.config.pspIspb });
    assert.equal((recPayload.vinculo as Json).contrato, 'CTR-2026-001');

    assert.equal((await req('DELETE', `/v2/locrec/${loc.id}/idRec`)).statusCode, 200);
    assertBcbProblem(await t.app.inject({ method: 'GET', url: `/qr/v2/rec/${token}` }), 404, 'RecPayloadNaoEncontrado');
    assert.equal((await getRec(String(rec.idRec))).loc, undefined, 'unlinked: the recurrence shows no location');
    await req('PATCH', `/v2/rec/${String(rec.idRec)}`, { loc: loc.id });
    await req('PATCH', `/v2/rec/${String(rec.idRec)}`, { status: 'CANCELADA' });
    assertBcbProblem(await t.app.inject({ method: 'GET', url: `/qr/v2/rec/${token}` }), 400, 'RecPayloadOperacaoInvalida');
    assertBcbProblem(await t.app.inject({ method: 'GET', url: '/qr/v2/rec/nao-existe' }), 404, 'RecPayloadNaoEncontrado');
  });
});
