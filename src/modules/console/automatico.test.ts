import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createClient, randomCnpj, type TestClient } from '../../../test/factories.ts';
import { startTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../../../test/harness.ts';
import { freePort } from '../../../test/processes.ts';
import { Automatico, type Json } from '../../../test/support/automatico.ts';
import { readMarker } from './changes.ts';
import { CHANGE_SOURCES } from './panels.ts';

const form = { 'content-type': 'application/x-www-form-urlencoded' };
const encode = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const csrfOf = (page: string) => /name="_csrf" value="([^"]+)"/.exec(page)![1]!;

describe("the console's Pix Automático: recurrences, solicitations and recurring charges, and the payer's bank", () => {
  let t: TestApp;
  let a: TestClient;
  let auto: Automatico;
  let cookie: string;
  let csrf: string;

  before(async () => {
    // The sandbox payer fetches a code's location from PUBLIC_URL: the app listens there.
    const port = await freePort();
    t = await startTestApp({ env: { PUBLIC_URL: `http://127.0.0.1:${port}` } });
    await t.app.listen({ port, host: '127.0.0.1' });
    a = await createClient(t, { name: 'Academia Forte', document: randomCnpj() });
    auto = new Automatico(t, a);
    const signedIn = await t.app.inject({ method: 'POST', url: '/console/sign-in', headers: form, payload: encode({ token: TEST_ADMIN_TOKEN }) });
    cookie = String(signedIn.headers['set-cookie']).split(';')[0]!;
    csrf = csrfOf((await tab()).body);
  });
  after(() => t.close());

  function tab() {
    return t.app.inject({ method: 'GET', url: `/console/accounts/${a.accountId}/automatico`, headers: { cookie } });
  }
  function act(name: string, fields: Record<string, string>): Promise<LightMyRequestResponse> {
    return t.app.inject({ method: 'POST', url: `/console/actions/${name}`, headers: { ...form, cookie, 'x-console-request': 'fetch' }, payload: encode({ _csrf: csrf, ...fields }) });
  }
  const marker = () => readMarker(t.db, CHANGE_SOURCES);

  it("shows a recurrence with its code, and approves it as the payer's bank would (journey 2); the change marker moves", async () => {
    const loc = (await auto.req('POST', '/v2/locrec', { tipo: 'rec' })).json<{ id: number }>();
    const rec = await auto.newRec({ loc: loc.id });
    const before = await tab();
    assert.equal(before.statusCode, 200);
    assert.match(before.body, new RegExp(`<code>${String(rec.idRec)}</code>`));
    const code = /name="pixCopiaECola" value="(000201[^"]+)"/.exec(before.body)?.[1];
    assert.ok(code, 'the approve button carries the recurrence\'s code');
    const seen = await marker();
    const approved = await act('pay-brcode', { pixCopiaECola: code, payerName: 'Maria Souza', payerDocument: '52998224725' });
    assert.equal(approved.statusCode, 200, approved.body);
    assert.match(approved.body, /APROVADA \(JORNADA_2\)/);
    assert.notEqual(await marker(), seen);
    assert.match((await tab()).body, /JORNADA_2/);
  });

  it('moves the clock to the next event, and answers a solicitation RECEBIDA as the payer: rejected, and the recurrence with it', async () => {
    const rec = await auto.newRec();
    const solicitation = await auto.solicit(rec);
    const id = String(solicitation.idSolicRec);
    assert.match((await act('advance-next-event', {})).body, /sends the solicitation/);
    assert.match((await act('advance-next-event', {})).body, /receives the solicitation/);
    const page = (await tab()).body;
    assert.match(page, new RegExp(`aria-label="Reject the solicitation ${id} as the payer"`));
    const rejected = await act('answer-solicitation', { idSolicRec: id, decision: 'reject' });
    assert.equal(rejected.statusCode, 200, rejected.body);
    assert.match(rejected.body, /REJEITADA/);
    assert.equal((await auto.getRec(String(rec.idRec))).status, 'REJEITADA');
    // Answered, it takes no second answer.
    const again = await act('answer-solicitation', { idSolicRec: id, decision: 'accept' });
    assert.equal(again.statusCode, 422, again.body);
  });

  it("fails the payer bank's next settlement for lack of funds from the form; the charge's attempts and their histories show it", async () => {
    const rec = await auto.approvedRec();
    const cobr = await auto.newCobr(rec, auto.day(3));
    const fault = await act('set-fault', { kind: 'automatico', effect: 'reject', stage: 'attempt', reason: 'AM04', count: '1' });
    assert.equal(fault.statusCode, 200, fault.body);
    await auto.advance({ to: new Date(`${auto.day(3)}T12:00:00.000-03:00`).toISOString() });
    const morning = (await tab()).body;
    assert.match(morning, new RegExp(`<code>${String(cobr.txid)}</code>`));
    assert.match(morning, /<strong>AGND<\/strong>/);
    await act('advance-next-event', {});
    const paid = await auto.getCobr(String(cobr.txid));
    assert.equal(paid.status, 'CONCLUIDA');
    assert.deepEqual(((paid.tentativas as Json[])[0]!.atualizacao as Json[]).map((u) => u.status), ['SOLICITADA', 'AGENDADA', 'PAGA']);
    assert.match((await tab()).body, /paid: <code>E12345678/);
  });
});
