import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createClient, type TestClient } from '../../../test/factories.ts';
import { startTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../../../test/harness.ts';
import { Automatico, type Json } from '../../../test/support/automatico.ts';
import { readMarker } from './changes.ts';
import { CHANGE_SOURCES } from './panels.ts';

const form = { 'content-type': 'application/x-www-form-urlencoded' };
const encode = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const csrfOf = (page: string) => /name="_csrf" value="([^"]+)"/.exec(page)![1]!;

describe("the console's Pix Automático as the payer: authorizations, the charges it pays, and another institution's receiver", () => {
  let t: TestApp;
  let member: TestClient;
  let auto: Automatico;
  let cookie: string;
  let csrf: string;
  /** The recurrences another institution's receiver asked the member for: a fixed amount, one with a minimum, one to reject. */
  let fixed: string;
  let floor: string;
  let rejected: string;
  let cancelledCharge: string;
  let lateCharge: string;

  before(async () => {
    t = await startTestApp();
    member = await createClient(t, { name: 'Maria Souza' });
    auto = new Automatico(t, member);
    const signedIn = await t.app.inject({ method: 'POST', url: '/console/sign-in', headers: form, payload: encode({ token: TEST_ADMIN_TOKEN }) });
    cookie = String(signedIn.headers['set-cookie']).split(';')[0]!;
    csrf = csrfOf((await tab()).body);
  });
  after(() => t.close());

  function tab() {
    return t.app.inject({ method: 'GET', url: `/console/accounts/${member.accountId}/automatico`, headers: { cookie } });
  }
  function act(name: string, fields: Record<string, string>): Promise<LightMyRequestResponse> {
    return t.app.inject({ method: 'POST', url: `/console/actions/${name}`, headers: { ...form, cookie, 'x-console-request': 'fetch' }, payload: encode({ _csrf: csrf, ...fields }) });
  }
  /** What the member's own API answers: the state the console's actions changed. */
  async function mine(path: string): Promise<Json> {
    const res = await auto.req('GET', `/api/automatico/${path}`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json<Json>();
  }
  const accountId = () => String(member.accountId);
  const marker = () => readMarker(t.db, CHANGE_SOURCES);

  async function ask(fields: Record<string, string>): Promise<string> {
    const base = { payerAccountId: accountId(), receiverName: '', object: '', frequency: 'MENSAL', startDate: auto.day(0), fixedAmount: '', minimumAmount: '', retryPolicy: 'NAO_PERMITE' };
    const res = await act('sandbox-recurrence', { ...base, ...fields });
    assert.equal(res.statusCode, 200, res.body);
    const idRec = /approve the recurrence (R[RN]\w{27}): its solicitation SC\w{27} is CRIADA/.exec(res.body)?.[1];
    assert.ok(idRec, res.body);
    return idRec;
  }

  it("shows the payer's part empty, with the form of another institution's receiver", async () => {
    const page = await tab();
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /As another institution&#39;s receiver \(the account pays\)/);
    assert.match(page.body, new RegExp(`data-action="sandbox-recurrence"[\\s\\S]*name="payerAccountId" value="${accountId()}"`));
    assert.match(page.body, /<section data-live id="authorizations"[\s\S]*No authorization yet/);
    assert.match(page.body, /<section data-live id="payer-charges"[\s\S]*No recurring charge to pay yet/);
  });

  it('another institution asks the account (as the network); the solicitations arrive PENDING; the holder approves, with a maximum where it may, and rejects', async () => {
    const seen = await marker();
    fixed = await ask({ receiverName: 'Streaming <b>Ltda</b>', contract: 'PLANO-1', fixedAmount: '49,90' });
    floor = await ask({ contract: 'CONTA-LUZ', object: 'Energia', minimumAmount: '20,00', retryPolicy: 'PERMITE_3R_7D' });
    rejected = await ask({ contract: 'REVISTA', fixedAmount: '9.90', frequency: 'ANUAL' });
    assert.notEqual(await marker(), seen, 'the live updates see the new recurrences');
    // The receiver's terms are its PSP's to check: both a fixed amount and a minimum is refused.
    const both = await act('sandbox-recurrence', { payerAccountId: accountId(), contract: 'X', frequency: 'MENSAL', startDate: auto.day(0), fixedAmount: '10,00', minimumAmount: '5,00', retryPolicy: 'NAO_PERMITE' });
    assert.equal(both.statusCode, 400, both.body);

    await auto.advance({ seconds: 5 });
    for (const idRec of [fixed, floor, rejected]) assert.equal((await mine(`authorizations/${idRec}`)).status, 'PENDING');
    const pending = (await tab()).body;
    for (const idRec of [fixed, floor, rejected]) {
      assert.match(pending, new RegExp(`aria-label="Approve the authorization ${idRec} as the payer"`));
      assert.match(pending, new RegExp(`aria-label="Reject the authorization ${idRec} as the payer"`));
    }
    assert.match(pending, /Streaming &lt;b&gt;Ltda&lt;\/b&gt;/, "the receiver's name is escaped");
    assert.doesNotMatch(pending, /<b>Ltda/);
    assert.match(pending, new RegExp(`id="auth-${floor}-max" name="maximumAmount"`), 'a maximum is asked where no amount is fixed');
    assert.doesNotMatch(pending, new RegExp(`id="auth-${fixed}-max"`));

    // A maximum on a fixed amount: the core's 400, shown as the console shows any refusal.
    const refused = await act('approve-authorization', { accountId: accountId(), idRec: fixed, maximumAmount: '60,00' });
    assert.equal(refused.statusCode, 400, refused.body);
    assert.equal(refused.body, 'The recurrence charges a fixed amount (49.90): the payer sets no maximum');
    assert.equal((await mine(`authorizations/${fixed}`)).status, 'PENDING');

    const approved = await act('approve-authorization', { accountId: accountId(), idRec: fixed, maximumAmount: '' });
    assert.equal(approved.statusCode, 200, approved.body);
    assert.equal(approved.body, `The authorization ${fixed} of Streaming <b>Ltda</b> is APPROVED (JORNADA_1)`);
    const withMax = await act('approve-authorization', { accountId: accountId(), idRec: floor, maximumAmount: '80,00' });
    assert.equal(withMax.statusCode, 200, withMax.body);
    assert.match(withMax.body, /is APPROVED \(JORNADA_1\), at most R\$\u00a080,00 a charge$/);
    const no = await act('reject-authorization', { accountId: accountId(), idRec: rejected });
    assert.equal(no.statusCode, 200, no.body);
    assert.match(no.body, new RegExp(`^The authorization ${rejected} of Assinaturas Sandbox Ltda is REJECTED \\(AP14: `));

    assert.equal((await mine(`authorizations/${fixed}`)).status, 'APPROVED');
    const capped = await mine(`authorizations/${floor}`);
    assert.equal(capped.status, 'APPROVED');
    assert.equal((capped.amount as Json).payerMaximum, '80.00');
    assert.equal((await mine(`authorizations/${rejected}`)).status, 'REJECTED');

    // Answered, it takes no second answer: the core's 422.
    const again = await act('approve-authorization', { accountId: accountId(), idRec: rejected });
    assert.equal(again.statusCode, 422, again.body);
    assert.match(again.body, /only a PENDING one is approved or rejected/);

    const page = (await tab()).body;
    assert.match(page, /<span class="badge authorization-approved">APPROVED<\/span>/);
    assert.match(page, /<span class="badge authorization-rejected">REJECTED<\/span>/);
    assert.match(page, /at most <data class="money" value="80.00">/);
    assert.match(page, new RegExp(`aria-label="Cancel the authorization ${fixed} as the payer"`));
    assert.match(page, new RegExp(`aria-label="Send a recurring charge of ${floor} as its receiver"`));
    assert.doesNotMatch(page, new RegExp(`aria-label="(Approve|Cancel) the authorization ${rejected} as the payer"`));
  });

  it("sends a recurring charge as the receiver; the account's PSP schedules it; the holder cancels it, and one whose day has come is too late", async () => {
    // Not the recurrence's fixed amount: refused by the same rules as a receiver's here.
    const wrong = await act('sandbox-recurring-charge', { idRec: fixed, dueDate: auto.day(5), amount: '50,00' });
    assert.equal(wrong.statusCode, 400, wrong.body);
    assert.match(wrong.body, /valor\.original must be the recurrence's fixed amount/);
    const sent = await act('sandbox-recurring-charge', { idRec: fixed, dueDate: auto.day(5), amount: '49,90', description: '' });
    assert.equal(sent.statusCode, 200, sent.body);
    cancelledCharge = /^The recurring charge (\d+) \(txid \w+\) of R\$\u00a049,90 due /.exec(sent.body)?.[1] ?? '';
    assert.ok(cancelledCharge, sent.body);
    const other = await act('sandbox-recurring-charge', { idRec: floor, dueDate: auto.day(5), amount: '50,00' });
    assert.equal(other.statusCode, 200, other.body);
    lateCharge = /^The recurring charge (\d+) /.exec(other.body)?.[1] ?? '';
    assert.ok(lateCharge, other.body);

    await auto.advance({ seconds: 120 });
    const scheduled = await mine(`charges/${cancelledCharge}`);
    assert.equal(scheduled.status, 'SCHEDULED', JSON.stringify(scheduled));
    assert.ok(scheduled.cancellableUntil);
    const page = (await tab()).body;
    assert.match(page, /<span class="badge payer-charge-scheduled">SCHEDULED<\/span>/);
    assert.match(page, new RegExp(`aria-label="Cancel the recurring charge ${cancelledCharge} as the payer"`));
    assert.match(page, /<strong>AGND<\/strong> for <time datetime="[0-9-]+">[^<]+<\/time>: <span class="badge">AGENDADA<\/span><ol class="history"><li><span class="badge">SOLICITADA<\/span>/);

    const cancelled = await act('cancel-payer-charge', { accountId: accountId(), id: cancelledCharge });
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    assert.equal(cancelled.body, `The recurring charge ${cancelledCharge} of R$\u00a049,90 due ${auto.day(5)} to Streaming <b>Ltda</b> is CANCELLED (SLBD by USUARIO_PAGADOR)`);
    assert.equal((await mine(`charges/${cancelledCharge}`)).status, 'CANCELLED');
    assert.match((await tab()).body, /<span class="badge payer-charge-cancelled">CANCELLED<\/span><br><span class="note">SLBD by USUARIO_PAGADOR<\/span>/);

    // Its day comes and the account has no money: the morning's attempt waits for the evening, past the time to cancel.
    const settles = String((await mine(`charges/${lateCharge}`)).settlementDate);
    await auto.advance({ to: new Date(`${settles}T09:00:00.000-03:00`).toISOString() });
    const waiting = await mine(`charges/${lateCharge}`);
    assert.equal(waiting.cancellableUntil, null, JSON.stringify(waiting));
    const late = await act('cancel-payer-charge', { accountId: accountId(), id: lateCharge });
    assert.equal(late.statusCode, 422, late.body);
    assert.equal(late.body, `The attempt of ${settles} could be cancelled until 23:59 of the day before it (São Paulo)`);
    assert.equal((await mine(`charges/${lateCharge}`)).status, waiting.status, 'a refused cancellation changes nothing');
    assert.doesNotMatch((await tab()).body, new RegExp(`aria-label="Cancel the recurring charge ${lateCharge} as the payer"`));
  });

  it('the holder cancels an approved authorization: CANCELLED by the payer, and its charge not yet paid with it', async () => {
    const res = await act('cancel-authorization', { accountId: accountId(), idRec: floor });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.body, `The authorization ${floor} of Assinaturas Sandbox Ltda is CANCELLED (SLDB by USUARIO_PAGADOR)`);
    assert.equal((await mine(`authorizations/${floor}`)).status, 'CANCELLED');
    assert.equal((await mine(`charges/${lateCharge}`)).status, 'CANCELLED');
    const again = await act('cancel-authorization', { accountId: accountId(), idRec: floor });
    assert.equal(again.statusCode, 422, again.body);
    const page = (await tab()).body;
    assert.match(page, /<span class="badge authorization-cancelled">CANCELLED<\/span><br><span class="note">JORNADA_1<\/span><br><span class="note">SLDB by USUARIO_PAGADOR<\/span>/);
    assert.doesNotMatch(page, new RegExp(`aria-label="Send a recurring charge of ${floor} as its receiver"`));
  });
});
