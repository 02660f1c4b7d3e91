import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createClient, randomCnpj, type TestClient } from '../../../../test/factories.ts';
import { startTestApp, type TestApp } from '../../../../test/harness.ts';
import { Automatico, type Json } from '../../../../test/support/automatico.ts';
import { assertBcbAnswer, assertBcbProblem } from '../../../../test/support/bcb-schemas.ts';
import { randomAlphanumeric } from '../../../lib/ids.ts';
import { SANDBOX_PAYER_ISPB } from '../../../modules/sandbox/service.ts';

describe('BCB /v2/solicrec and /v2/cobr (Pix Automático, the receiver), on the test clock', () => {
  let t: TestApp;
  let a: TestClient;
  let b: TestClient;
  let auto: Automatico;

  before(async () => {
    t = await startTestApp();
    a = await createClient(t, { name: 'Academia Forte', document: randomCnpj() });
    b = await createClient(t, { name: 'Outra Empresa', document: randomCnpj() });
    auto = new Automatico(t, a);
  });
  after(() => t.close());

  it('a solicitation goes CRIADA, ENVIADA, RECEBIDA, then ACEITA as the network acts; the recurrence is APROVADA by JORNADA_1 with its payer', async () => {
    const rec = await auto.newRec();
    const made = await auto.solicit(rec);
    assert.equal(made.status, 'CRIADA');
    assert.match(String(made.idSolicRec), new RegExp(`^SC${t.config.pspIspb}\\d{8}[a-zA-Z0-9]{11}$`));
    assert.equal((made.recPayload as Json).idRec, rec.idRec);
    const id = String(made.idSolicRec);
    const read = async () => {
      const res = await auto.req('GET', `/v2/solicrec/${id}`);
      assert.equal(res.statusCode, 200, res.body);
      assertBcbAnswer('GET /solicrec/{idSolicRec}', res);
      return res.json<Json>();
    };
    await auto.next('solicitation-sent');
    assert.equal((await read()).status, 'ENVIADA');
    await auto.next('solicitation-received');
    assert.equal((await read()).status, 'RECEBIDA');
    await auto.next('solicitation-answered');
    const answered = await read();
    assert.deepEqual((answered.atualizacao as Json[]).map((u) => u.status), ['CRIADA', 'ENVIADA', 'RECEBIDA', 'ACEITA']);
    const approved = await auto.getRec(String(rec.idRec));
    assert.equal(approved.status, 'APROVADA');
    assert.deepEqual(approved.ativacao, { tipoJornada: 'JORNADA_1' });
    assert.deepEqual(approved.pagador, { cpf: (rec.vinculo as { devedor: Json }).devedor.cpf, ispbParticipante: SANDBOX_PAYER_ISPB });
    // Another account's, and one that does not exist.
    assertBcbProblem(await auto.req('GET', `/v2/solicrec/${id}`, undefined, b), 404, 'SolicRecNaoEncontrada');
    assertBcbProblem(await auto.req('PATCH', `/v2/solicrec/${id}`, { status: 'CANCELADA' }, b), 404, 'SolicRecNaoEncontrada');
  });

  it('a solicitation is refused for a recurrence not CRIADA, an expiry past or beyond 30 days, a second one under way; it is cancelled while under way', async () => {
    const rec = await auto.newRec();
    const now = t.controls!.clock.now().getTime();
    const at = (ms: number) => ({ calendario: { dataExpiracaoSolicitacao: new Date(now + ms).toISOString() } });
    const refused = assertBcbProblem(await auto.req('POST', '/v2/solicrec', { idRec: rec.idRec, ...at(-1000), destinatario: { conta: '1', ispbParticipante: SANDBOX_PAYER_ISPB, cpf: '12345678900' } }), 400, 'SolicRecOperacaoInvalida');
    assert.deepEqual((refused.violacoes as Json[]).map((v) => v.propriedade).sort(), ['calendario.dataExpiracaoSolicitacao', 'destinatario.cpf']);
    assertBcbProblem(await auto.req('POST', '/v2/solicrec', { idRec: rec.idRec, ...at(31 * 86_400_000), destinatario: { conta: '1', ispbParticipante: SANDBOX_PAYER_ISPB, cpf: (rec.vinculo as { devedor: Json }).devedor.cpf } }), 400, 'SolicRecOperacaoInvalida');
    const first = await auto.solicit(rec);
    const twice = assertBcbProblem(await auto.req('POST', '/v2/solicrec', { idRec: rec.idRec, ...at(86_400_000), destinatario: { conta: '1', ispbParticipante: SANDBOX_PAYER_ISPB, cpf: (rec.vinculo as { devedor: Json }).devedor.cpf } }), 400, 'SolicRecOperacaoInvalida');
    assert.match(String(twice.detail), /em andamento/);
    const cancelled = await auto.req('PATCH', `/v2/solicrec/${String(first.idSolicRec)}`, { status: 'CANCELADA' });
    assert.equal(cancelled.statusCode, 201, cancelled.body);
    assertBcbAnswer('PATCH /solicrec/{idSolicRec}', cancelled);
    assert.equal(cancelled.json<Json>().status, 'CANCELADA');
    assertBcbProblem(await auto.req('PATCH', `/v2/solicrec/${String(first.idSolicRec)}`, { status: 'CANCELADA' }), 400, 'SolicRecOperacaoInvalida');
    assert.equal((await auto.getRec(String(rec.idRec))).status, 'CRIADA', 'the recurrence stays CRIADA');
    // A fault: the sandbox's payer rejects the next solicitation (AP14): the recurrence is REJEITADA.
    await auto.fault({ effect: 'reject', stage: 'solicitation', reason: 'AP14', count: 1 });
    const again = await auto.solicit(rec);
    await auto.advance({ seconds: 200 });
    assert.equal((await auto.req('GET', `/v2/solicrec/${String(again.idSolicRec)}`)).json<Json>().status, 'REJEITADA');
    const rejected = await auto.getRec(String(rec.idRec));
    assert.equal(rejected.status, 'REJEITADA');
    assert.deepEqual((rejected.encerramento as Json).rejeicao, { codigo: 'AP14', descricao: 'O usuário pagador rejeitou a solicitação de confirmação da recorrência' });
    assertBcbProblem(await auto.req('POST', '/v2/solicrec', { idRec: rec.idRec, ...at(86_400_000), destinatario: { conta: '1', ispbParticipante: SANDBOX_PAYER_ISPB, cpf: (rec.vinculo as { devedor: Json }).devedor.cpf } }), 400, 'SolicRecOperacaoInvalida');
  });

  it('a cobr: created for an APROVADA recurrence within D-10..D-2, answered by the payer PSP, paid in the morning slot as a received Pix', async () => {
    const rec = await auto.approvedRec();
    const due = auto.day(5);
    const txid = randomAlphanumeric(32);
    const created = await auto.req('PUT', `/v2/cobr/${txid}`, auto.cobrBody(rec, due, { infoAdicional: 'Mensalidade', devedor: { email: 'fulano@example.com', cidade: 'Recife', uf: 'PE' } }));
    assert.equal(created.statusCode, 201, created.body);
    assertBcbAnswer('PUT /cobr/{txid}', created);
    const made = created.json<Json>();
    assert.equal(made.status, 'CRIADA');
    assert.deepEqual(made.calendario, { criacao: auto.day(0), dataDeVencimento: due });
    assert.deepEqual(made.recebedor, { cnpj: a.document, nome: 'Academia Forte', agencia: a.branch, conta: a.accountNumber, tipoConta: 'CORRENTE' });

    await auto.next('charge-answered');
    const scheduled = await auto.getCobr(txid);
    assert.equal(scheduled.status, 'ATIVA');
    assert.deepEqual(Automatico.attempts(scheduled), [['AGND', 'AGENDADA']]);
    const settled = await auto.next('settlement-slot');
    assert.equal((settled.event as Json).at, new Date(`${due}T03:00:00.000Z`).toISOString(), "the morning's slot opens at 00:00 in São Paulo");
    const res = await auto.req('GET', `/v2/cobr/${txid}`);
    assertBcbAnswer('GET /cobr/{txid}', res);
    const paid = res.json<Json>();
    assert.equal(paid.status, 'CONCLUIDA');
    assert.deepEqual(Automatico.attempts(paid), [['AGND', 'PAGA']]);
    const tentativa = (paid.tentativas as Json[])[0]!;
    assert.deepEqual((tentativa.atualizacao as Json[]).map((u) => u.status), ['SOLICITADA', 'AGENDADA', 'PAGA']);
    const pix = (paid.pix as Json[])[0]!;
    assert.equal(pix.endToEndId, tentativa.endToEndId);
    assert.equal(pix.txid, txid);
    assert.equal(pix.valor, '49.90');
    // A received Pix like any other: GET /v2/pix and the account's balance.
    const received = await auto.req('GET', `/v2/pix/${String(pix.endToEndId)}`);
    assert.equal(received.statusCode, 200, received.body);
    assert.equal(received.json<Json>().txid, txid);
    const balance = await t.app.inject({ method: 'GET', url: '/balance', headers: a.headers });
    assert.equal(balance.json<Json>().netBalance, 49.9);
  });

  it('cobr is refused outside its window, off its recurrence, twice in a cycle, for another account or amount; every field at fault named', async () => {
    const rec = await auto.approvedRec();
    const windowed = async (due: string) => auto.req('PUT', `/v2/cobr/${randomAlphanumeric(32)}`, auto.cobrBody(rec, due));
    assertBcbProblem(await windowed(auto.day(11)), 400, 'CobROperacaoInvalida');
    assertBcbProblem(await windowed(auto.day(1)), 400, 'CobROperacaoInvalida');
    const wrong = assertBcbProblem(
      await auto.req('PUT', `/v2/cobr/${randomAlphanumeric(32)}`, { ...auto.cobrBody(rec, auto.day(1)), valor: { original: '10.00' }, recebedor: { conta: b.accountNumber, tipoConta: 'CORRENTE' } }),
      400,
      'CobROperacaoInvalida',
    );
    assert.deepEqual((wrong.violacoes as Json[]).map((v) => v.propriedade).sort(), ['calendario.dataDeVencimento', 'recebedor.conta', 'valor.original']);
    const first = await auto.newCobr(rec, auto.day(10));
    const second = assertBcbProblem(await windowed(auto.day(9)), 400, 'CobROperacaoInvalida');
    assert.match(String(second.detail), /ciclo/);
    const created = await auto.req('POST', '/v2/cobr', auto.cobrBody(await auto.approvedRec(), auto.day(2)));
    assert.equal(created.statusCode, 201, created.body);
    assertBcbAnswer('POST /cobr', created);
    assert.match(String(created.json<Json>().txid), /^[a-zA-Z0-9]{32}$/);
    assertBcbProblem(await auto.req('PUT', `/v2/cobr/${String(first.txid)}`, auto.cobrBody(rec, auto.day(10))), 400, 'CobROperacaoInvalida');
    const pending = await auto.newRec();
    assertBcbProblem(await auto.req('PUT', `/v2/cobr/${randomAlphanumeric(32)}`, auto.cobrBody(pending, auto.day(5))), 400, 'CobROperacaoInvalida');
    assertBcbProblem(await auto.req('GET', `/v2/cobr/${String(first.txid)}`, undefined, b), 404, 'CobRNaoEncontrado');
  });

  it("the receiver cancels a cobr before its first attempt's day, not on it; a cancelled recurrence cancels its charges (CCLD)", async (ctx) => {
    // An app of its own: the clock and the faults are the whole sandbox's.
    const own = await startTestApp();
    ctx.after(() => own.close());
    const auto = new Automatico(own, await createClient(own, { name: 'Escola', document: randomCnpj() }));
    const rec = await auto.approvedRec();
    const cobr = await auto.newCobr(rec, auto.day(3));
    const patched = await auto.req('PATCH', `/v2/cobr/${String(cobr.txid)}`, { status: 'CANCELADA' });
    assert.equal(patched.statusCode, 200, patched.body);
    assertBcbAnswer('PATCH /cobr/{txid}', patched);
    const cancelled = patched.json<Json>();
    assert.equal(cancelled.status, 'CANCELADA');
    assert.deepEqual((cancelled.encerramento as Json).cancelamento, { solicitante: 'USUARIO_RECEBEDOR', codigo: 'SLCR', descricao: 'Cancelamento de agendamento solicitado pelo usuário recebedor' });
    assert.deepEqual(Automatico.attempts(await auto.getCobr(String(cobr.txid))), [['AGND', 'CANCELADA']]);
    assertBcbProblem(await auto.req('PATCH', `/v2/cobr/${String(cobr.txid)}`, { status: 'CANCELADA' }), 400, 'CobROperacaoInvalida');

    // On the day of its first attempt it is too late, even with the attempt not yet paid (no
    // funds in the morning, AM04: the evening's retry pays it).
    const late = await auto.newCobr(rec, auto.day(2));
    await auto.fault({ effect: 'reject', stage: 'attempt', reason: 'AM04', count: 1 });
    await auto.advance({ to: new Date(`${auto.day(2)}T12:00:00.000Z`).toISOString() });
    assert.deepEqual(Automatico.attempts(await auto.getCobr(String(late.txid))), [['AGND', 'AGENDADA']]);
    const tooLate = assertBcbProblem(await auto.req('PATCH', `/v2/cobr/${String(late.txid)}`, { status: 'CANCELADA' }), 400, 'CobROperacaoInvalida');
    assert.match(String(tooLate.detail), /primeira tentativa/);
    await auto.next('intraday-retry');
    assert.equal((await auto.getCobr(String(late.txid))).status, 'CONCLUIDA');

    const other = await auto.approvedRec();
    const open = await auto.newCobr(other, auto.day(4));
    assert.equal((await auto.req('PATCH', `/v2/rec/${String(other.idRec)}`, { status: 'CANCELADA' })).statusCode, 200);
    const gone = await auto.getCobr(String(open.txid));
    assert.equal(gone.status, 'CANCELADA');
    assert.equal(((gone.encerramento as Json).cancelamento as Json).codigo, 'CCLD');
  });

  it('GET /cobr lists the interval newest first, by idRec and status, with BCB paging', async () => {
    const c = await createClient(t, { name: 'Clube', document: randomCnpj() });
    const from = new Date(t.controls!.clock.now().getTime() - 1000).toISOString();
    const recOne = await auto.approvedRec({}, c);
    const recTwo = await auto.approvedRec({}, c);
    const one = await auto.newCobr(recOne, auto.day(5), {}, c);
    const two = await auto.newCobr(recTwo, auto.day(6), {}, c);
    await auto.req('PATCH', `/v2/cobr/${String(two.txid)}`, { status: 'CANCELADA' }, c);
    const to = new Date(t.controls!.clock.now().getTime() + 1000).toISOString();
    const list = async (extra = '') => {
      const res = await auto.req('GET', `/v2/cobr?inicio=${from}&fim=${to}${extra}`, undefined, c);
      assert.equal(res.statusCode, 200, res.body);
      assertBcbAnswer('GET /cobr', res);
      return res.json<{ parametros: Json; cobsr: Json[] }>();
    };
    assert.deepEqual((await list()).cobsr.map((r) => r.txid), [two.txid, one.txid]);
    assert.deepEqual((await list(`&idRec=${String(recOne.idRec)}`)).cobsr.map((r) => r.txid), [one.txid]);
    assert.deepEqual((await list('&status=CANCELADA')).cobsr.map((r) => r.txid), [two.txid]);
    assert.deepEqual((await list('&paginacao.itensPorPagina=1')).parametros.paginacao, { paginaAtual: 0, itensPorPagina: 1, quantidadeDePaginas: 2, quantidadeTotalDeItens: 2 });
    assertBcbProblem(await auto.req('GET', `/v2/cobr?inicio=${to}&fim=${from}`, undefined, c), 400, 'CobRConsultaInvalida');
  });
});
