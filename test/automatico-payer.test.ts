/**
 * Pix Automático with both sides here: a gym (a company account) charges a member (a person's
 * account), and the service is both PSPs. Journey 1 (the gym's solicitation, approved through
 * the member's routes) and journey 3 (a composite code the member presents, paying its cob in the
 * same act); three monthly cycles debited on the clock, the second one without funds in the
 * morning and paid on the evening's retry; a charge of the other recurrence cancelled by the
 * member the day before. After each step: both balances, both sides' views (the member's
 * /api/automatico, the gym's /v2), both sides' notifications, and the ledger's invariants.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createClient, creditAccount, evpKey, randomCnpj, type TestClient } from './factories.ts';
import { startTestApp, type TestApp } from './harness.ts';
import { assertLedgerInvariants } from './ledger.ts';
import { Automatico, type Json } from './support/automatico.ts';
import { assertBcbAnswer, assertBcbDefinition } from './support/bcb-schemas.ts';
import { randomAlphanumeric } from '../src/lib/ids.ts';
import { addDays, saoPauloHour } from '../src/modules/recurrences/cycle.ts';

describe('Pix Automático between two accounts of this service: journeys 1 and 3, three months paid, one at night, one cancelled by the payer', () => {
  let t: TestApp;
  let gym: TestClient;
  let member: TestClient;
  let auto: Automatico;
  let ispb: string;
  let start: string;
  /** The monthly recurrence approved by journey 1, and the one approved by journey 3. */
  let r1: string;
  let r3: string;
  const paidCharges: number[] = [];
  /** The journey 1 recurrence's second month, sent in its window beside the other recurrence's charge. */
  let month2: { txid: string; id: number };

  const balance = async (client: TestClient) => (await t.app.inject({ method: 'GET', url: '/balance', headers: client.headers })).json<{ netBalance: number }>().netBalance;
  const payer = (method: 'GET' | 'POST', url: string, body?: unknown) => auto.req(method, url, body, member);
  /** The notifications an account has had, oldest first. */
  const events = async (client: TestClient) =>
    (await t.db.selectFrom('outbox').select(['event_type', 'payload']).where('account_id', '=', BigInt(client.accountId)).orderBy('id').execute()).map((r) => ({
      eventType: r.event_type,
      payload: r.payload as Json,
    }));
  const eventTypes = async (client: TestClient) => (await events(client)).map((e) => e.eventType);
  /** After each step: balances as expected, and the ledger sums to zero with nothing negative. */
  const step = async (memberReais: number, gymReais: number) => {
    assert.equal(await balance(member), memberReais, 'the member’s balance');
    assert.equal(await balance(gym), gymReais, 'the gym’s balance');
    await assertLedgerInvariants(t.db);
  };
  const at = (day: string, hour: number, minute = 0) => auto.advance({ to: new Date(saoPauloHour(day, hour).getTime() + minute * 60_000).toISOString() });
  const sendCobr = async (idRec: string, due: string, amount: string) => {
    const txid = randomAlphanumeric(32);
    const res = await auto.req('PUT', `/v2/cobr/${txid}`, auto.cobrBody({ idRec, valor: { valorRec: amount } }, due));
    assert.equal(res.statusCode, 201, res.body);
    await auto.advance({ seconds: 61 });
    const list = (await payer('GET', `/api/automatico/charges?idRec=${idRec}`)).json<{ data: Json[] }>().data;
    const mine = list.find((c) => c.txid === txid)!;
    assert.equal(mine.status, 'SCHEDULED', JSON.stringify(mine));
    return { txid, id: Number(mine.id) };
  };

  before(async () => {
    t = await startTestApp();
    ispb = t.config.pspIspb;
    gym = await createClient(t, { name: 'Academia Forte', document: randomCnpj() });
    member = await createClient(t, { name: 'Maria Souza' });
    auto = new Automatico(t, gym);
    start = auto.day(0);
    await creditAccount(t.db, member.accountId, 18_000n);
    for (const kind of ['rec', 'cobr']) {
      const res = await auto.req('PUT', `/v2/webhook${kind}`, { webhookUrl: 'https://erp.academia.example.com/pix' });
      assert.equal(res.statusCode, 200, res.body);
    }
  });
  after(() => t.close());

  it('journey 1: the gym solicits the member at this institution; it reaches the member PENDING, who approves it', async () => {
    const rec = await auto.newRec({ vinculo: { contrato: 'MATRICULA-1', objeto: 'Plano mensal', devedor: { cpf: member.document, nome: 'Maria Souza' } } });
    r1 = String(rec.idRec);
    const solicit = (destinatario: Json) =>
      auto.req('POST', '/v2/solicrec', { idRec: r1, calendario: { dataExpiracaoSolicitacao: new Date(t.controls!.clock.now().getTime() + 3 * 86_400_000).toISOString() }, destinatario });
    const unknown = await solicit({ conta: '99999999', ispbParticipante: ispb, cpf: member.document });
    assert.equal(unknown.statusCode, 400, 'no account of this institution has that conta');
    const sent = await solicit({ agencia: member.branch, conta: member.accountNumber, ispbParticipante: ispb, cpf: member.document });
    assert.equal(sent.statusCode, 201, sent.body);
    await auto.advance({ seconds: 5 });
    const solicitation = await auto.req('GET', `/v2/solicrec/${String(sent.json<Json>().idSolicRec)}`);
    assert.equal(solicitation.json<Json>().status, 'RECEBIDA', 'received by the payer’s PSP, this one');

    const pending = (await payer('GET', '/api/automatico/authorizations?status=PENDING')).json<{ data: Json[] }>().data;
    assert.deepEqual(
      pending.map((a) => [a.idRec, a.status, a.receiver, (a.amount as Json).fixed]),
      [[r1, 'PENDING', { name: 'Academia Forte', document: gym.document, ispb }, '49.90']],
    );
    const requested = (await events(member)).at(-1)!;
    assert.equal(requested.eventType, 'authorization_requested');
    assert.equal((requested.payload.data as Json).idRec, r1);

    const approved = await payer('POST', `/api/automatico/authorizations/${r1}/approve`);
    assert.equal(approved.statusCode, 200, approved.body);
    assert.deepEqual([approved.json<Json>().status, approved.json<Json>().journey], ['APPROVED', 'JORNADA_1']);
    const seen = await auto.getRec(r1);
    assert.deepEqual([seen.status, (seen.ativacao as Json).tipoJornada], ['APROVADA', 'JORNADA_1']);
    assert.equal((seen.vinculo as { devedor: Json }).devedor.cpf, member.document);
    assert.equal((await eventTypes(member)).at(-1), 'authorization_approved');
    const recCallbacks = (await events(gym)).filter((e) => e.eventType === 'rec').map((e) => (e.payload.recs as Json[])[0]!);
    for (const item of recCallbacks) assertBcbDefinition('RecNotification', item);
    assert.deepEqual(recCallbacks.map((r) => [r.idRec, r.status]), [[r1, 'APROVADA']]);
    await step(180, 0);
  });

  it("journey 3: the member presents the composite code of the first month's cob and the recurrence; the cob is paid from its account", async () => {
    const key = await evpKey(t, gym.accountId);
    const first = randomAlphanumeric(30);
    assert.equal((await auto.req('PUT', `/v2/cob/${first}`, { calendario: { expiracao: 3600 }, valor: { original: '89.90' }, chave: key })).statusCode, 201);
    const loc = await auto.req('POST', '/v2/locrec', { tipo: 'rec' });
    const made = await auto.newRec({
      vinculo: { contrato: 'PERSONAL-1', objeto: 'Personal trainer', devedor: { cpf: member.document, nome: 'Maria Souza' } },
      valor: { valorRec: '89.90' },
      politicaRetentativa: 'NAO_PERMITE',
      loc: loc.json<Json>().id,
      ativacao: { dadosJornada: { txid: first } },
    });
    r3 = String(made.idRec);
    const code = (await auto.getRec(r3)).dadosQR as Json | undefined;
    const composite = ((await auto.req('GET', `/v2/rec/${r3}?txid=${first}`)).json<Json>().dadosQR as Json).pixCopiaECola as string;
    assert.equal(code?.jornada, 'JORNADA_2');

    const res = await payer('POST', '/api/automatico/authorizations', { pixCopiaECola: composite });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual([res.json<Json>().idRec, res.json<Json>().status, res.json<Json>().journey], [r3, 'APPROVED', 'JORNADA_3']);
    const rec = await auto.getRec(r3);
    assert.deepEqual(rec.ativacao, { tipoJornada: 'JORNADA_3', dadosJornada: { txid: first } });
    const cob = (await auto.req('GET', `/v2/cob/${first}`)).json<Json>();
    assert.equal(cob.status, 'CONCLUIDA');
    const pix = (cob.pix as Json[])[0]!;
    const debit = await t.db.selectFrom('transactions').selectAll().where('account_id', '=', BigInt(member.accountId)).where('end_to_end_id', '=', String(pix.endToEndId)).executeTakeFirstOrThrow();
    assert.deepEqual([debit.type, debit.status, debit.amount_centavos, debit.counterpart_account_id], ['WITHDRAW', 'CONFIRMED', 8990n, BigInt(gym.accountId)]);
    assert.deepEqual((await eventTypes(member)).slice(-2).sort(), ['authorization_approved', 'cash_out']);
    assert.equal((await eventTypes(gym)).filter((e) => e === 'cash_in').length, 1);
    // The same code again: the recurrence is no longer CRIADA, and nothing more is paid.
    const again = await payer('POST', '/api/automatico/authorizations', { pixCopiaECola: composite });
    assert.equal(again.statusCode, 422, again.body);
    await step(90.1, 89.9);
  });

  it('month 1: the charge is scheduled by the member PSP and debited on its morning; a Pix out for the member, a Pix in for the gym', async () => {
    const due = addDays(start, 5);
    const { txid, id } = await sendCobr(r1, due, '49.90');
    assert.equal((await eventTypes(member)).at(-1), 'recurring_charge_scheduled');
    assert.equal((await auto.getCobr(txid)).status, 'ATIVA');
    await at(due, 0);
    const paid = (await payer('GET', `/api/automatico/charges/${id}`)).json<Json>();
    assert.equal(paid.status, 'PAID', JSON.stringify(paid));
    const cobr = await auto.getCobr(txid);
    assertBcbAnswer('GET /cobr/{txid}', await auto.req('GET', `/v2/cobr/${txid}`));
    assert.deepEqual([cobr.status, Automatico.attempts(cobr)], ['CONCLUIDA', [['AGND', 'PAGA']]]);
    assert.equal(((cobr.pix as Json[])[0] as Json).endToEndId, paid.endToEndId);
    assert.deepEqual((await eventTypes(member)).slice(-2).sort(), ['cash_out', 'recurring_charge_paid']);
    const told = (await events(gym)).filter((e) => e.eventType === 'cobr').map((e) => (e.payload.cobsr as Json[])[0]!);
    for (const item of told) assertBcbDefinition('CobRNotification', item);
    assert.equal(told.at(-1)?.status, 'CONCLUIDA');
    paidCharges.push(id);
    await step(40.2, 139.8);
  });

  it("the other recurrence's next charge is cancelled by the member at 23:59 the day before: nothing debited, the gym sees it CANCELADA by the payer", async () => {
    const due = addDays(start, 35);
    await at(addDays(due, -5), 10);
    const { txid, id } = await sendCobr(r3, due, '89.90');
    month2 = await sendCobr(r1, due, '49.90');
    const settles = String((await payer('GET', `/api/automatico/charges/${id}`)).json<Json>().settlementDate);
    await at(addDays(settles, -1), 23, 59);
    const res = await payer('POST', `/api/automatico/charges/${id}/cancel`);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual([res.json<Json>().status, (res.json<Json>().cancellation as Json).requestedBy], ['CANCELLED', 'USUARIO_PAGADOR']);
    const cobr = await auto.getCobr(txid);
    assert.equal(cobr.status, 'CANCELADA');
    assert.equal(((cobr.encerramento as Json).cancelamento as Json).solicitante, 'USUARIO_PAGADOR');
    assert.equal((await eventTypes(member)).at(-1), 'recurring_charge_cancelled');
    await step(40.2, 139.8);
  });

  it('month 2: without funds in the morning the attempt fails (AM04); money arrives in the day, and the evening retry pays it', async () => {
    const { txid, id } = month2;
    const settles = String((await payer('GET', `/api/automatico/charges/${id}`)).json<Json>().settlementDate);
    await at(settles, 0, 1);
    const failed = (await payer('GET', `/api/automatico/charges/${id}`)).json<Json>();
    assert.equal(failed.status, 'SCHEDULED', 'the same attempt waits for the evening');
    const last = (await events(member)).at(-1)!;
    assert.equal(last.eventType, 'recurring_charge_failed');
    assert.deepEqual(((last.payload.data as Json).failure as Json).code, 'AM04');
    assert.equal((await auto.getCobr(txid)).status, 'ATIVA');
    await step(40.2, 139.8);
    await creditAccount(t.db, member.accountId, 10_000n);
    await at(settles, 18, 1);
    const paid = (await payer('GET', `/api/automatico/charges/${id}`)).json<Json>();
    assert.equal(paid.status, 'PAID');
    const cobr = await auto.getCobr(txid);
    assert.deepEqual([cobr.status, Automatico.attempts(cobr)], ['CONCLUIDA', [['AGND', 'PAGA']]]);
    paidCharges.push(id);
    await step(90.3, 189.7);
  });

  it('month 3: paid on its morning; the member’s list shows the three months paid, and the gym received each as a Pix', async () => {
    const due = addDays(start, 65);
    await at(addDays(due, -5), 10);
    const { id } = await sendCobr(r1, due, '49.90');
    const settles = String((await payer('GET', `/api/automatico/charges/${id}`)).json<Json>().settlementDate);
    await at(settles, 8);
    paidCharges.push(id);
    const mine = (await payer('GET', `/api/automatico/charges?idRec=${r1}&status=PAID`)).json<{ data: Json[] }>().data;
    assert.deepEqual(mine.map((c) => c.id).sort(), [...paidCharges].sort());
    const received = await t.db.selectFrom('transactions').select(['end_to_end_id', 'amount_centavos']).where('account_id', '=', BigInt(gym.accountId)).where('type', '=', 'PAYMENT').execute();
    const debited = await t.db.selectFrom('transactions').select(['end_to_end_id', 'amount_centavos']).where('account_id', '=', BigInt(member.accountId)).where('type', '=', 'WITHDRAW').execute();
    assert.equal(received.length, 4, 'the cob and three months');
    assert.deepEqual(new Set(received.map((r) => r.end_to_end_id)), new Set(debited.map((d) => d.end_to_end_id)), 'each Pix in is a Pix out of the member, once');
    assert.equal((await eventTypes(member)).filter((e) => e === 'recurring_charge_paid').length, 3);
    assert.equal((await eventTypes(gym)).filter((e) => e === 'cash_in').length, 4);
    await step(40.4, 239.6);
  });
});
