import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createClient, evpKey, operator, randomCpf, type TestClient } from '../../../test/factories.ts';
import { startTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../../../test/harness.ts';
import { formatDay, parseDay } from '../../lib/banking-days.ts';
import { lastPayableDay } from '../cobv/amount.ts';
import { cobvDueOn, saoPauloDay } from '../cobv/due.ts';

const form = { 'content-type': 'application/x-www-form-urlencoded' };
const DAY_S = 86_400;

/** "2026-12-25" as the console writes a day. */
const brazilian = (day: string) => `<time datetime="${day}">${day.slice(8, 10)}/${day.slice(5, 7)}/${day.slice(0, 4)}</time>`;

describe("the console's charges: immediate (cob) and with a due date (cobv)", () => {
  let t: TestApp;
  let client: TestClient;
  let key: string;
  let cookie: string;
  const cobvTxid = 'consolecobv00000000000000000001';
  const cobTxid = 'consolecob000000000000000000001';
  let dueDate: string;
  let pixCopiaECola: string;
  let locId: number;

  const page = async () => {
    const res = await t.app.inject({ method: 'GET', url: `/console/accounts/${client.accountId}/charges`, headers: { cookie } });
    assert.equal(res.statusCode, 200);
    return res.body;
  };
  const rowOf = (body: string, txid: string) => new RegExp(`<tr>\\s*<th scope="row"><code>${txid}</code></th>[\\s\\S]*?</tr>`).exec(body)?.[0];
  /** Business time: the test clock's. */
  const now = () => t.controls!.clock.now();
  const advanceDays = async (days: number) => {
    await t.controls!.advance({ seconds: days * DAY_S });
  };

  before(async () => {
    t = await startTestApp();
    client = await createClient(t, { name: 'Escola Vencimento' });
    key = await evpKey(t, client.accountId);
    const signIn = await t.app.inject({ method: 'POST', url: '/console/sign-in', headers: form, payload: `token=${TEST_ADMIN_TOKEN}` });
    cookie = String(signIn.headers['set-cookie']).split(';')[0]!;
    dueDate = formatDay(parseDay(saoPauloDay(now()))! + 3);
    const cobv = await t.app.inject({
      method: 'PUT',
      url: `/v2/cobv/${cobvTxid}`,
      headers: client.headers,
      payload: {
        calendario: { dataDeVencimento: dueDate, validadeAposVencimento: 5 },
        devedor: { cpf: '12345678909', nome: 'Francisco da Silva' },
        valor: { original: '1234.56', multa: { modalidade: 2, valorPerc: '2.00' }, juros: { modalidade: 2, valorPerc: '0.50' } },
        chave: key,
      },
    });
    assert.equal(cobv.statusCode, 201, cobv.body);
    ({ pixCopiaECola, loc: { id: locId } } = cobv.json<{ pixCopiaECola: string; loc: { id: number } }>());
    const cob = await t.app.inject({ method: 'PUT', url: `/cob/${cobTxid}`, headers: client.headers, payload: { calendario: { expiracao: 30 * DAY_S }, valor: { original: '10.00' }, chave: key } });
    assert.equal(cob.statusCode, 201, cob.body);
  });
  after(() => t.close());

  it('lists both kinds, newest first, each with its type, status, amount, validity, QR image and BR Code', async () => {
    const body = await page();
    assert.match(body, /Charges <span class="count">\(the newest 2 of the last 31 days\)<\/span>/);
    assert.ok(body.indexOf(cobTxid) < body.indexOf(cobvTxid), 'newest first');
    const cobv = rowOf(body, cobvTxid)!;
    assert.match(cobv, /<td><abbr title="charge with a due date">cobv<\/abbr><\/td>/);
    assert.match(cobv, /<span class="badge charge-ativa">ATIVA<\/span>/);
    assert.match(cobv, /<td class="num"><data class="money" value="1234.56">R\$\u00a01\.234,56<\/data><\/td>/, 'nothing more than the original before the due date');
    const last = lastPayableDay(dueDate, 5);
    assert.ok(cobv.includes(`<span class="note">due ${brazilian(dueDate)}, payable until ${brazilian(last)}</span>`), cobv);
    // The same image as BCB's GET /v2/loc/{id}/qrcode draws of the charge's location.
    const qr = await t.app.inject({ method: 'GET', url: `/v2/loc/${locId}/qrcode`, headers: client.headers });
    assert.equal(qr.statusCode, 200, qr.body);
    const { qrcode, imagemQrcode } = qr.json<{ qrcode: string; imagemQrcode: string }>();
    assert.equal(qrcode, pixCopiaECola);
    assert.match(imagemQrcode, /^data:image\/png;base64,/);
    assert.ok(cobv.includes(`<img class="qr" src="${imagemQrcode}" width="150" height="150" alt="QR code of charge ${cobvTxid}">`), 'the QR code of its BR Code');
    assert.ok(cobv.includes(`<code id="brcode-${cobvTxid}" class="brcode">${pixCopiaECola}</code>`));
    assert.match(cobv, new RegExp(`data-copy="brcode-${cobvTxid}">Copy<span class="visually-hidden"> the BR Code of charge ${cobvTxid}</span>`));

    const cob = rowOf(body, cobTxid)!;
    assert.match(cob, /<td><abbr title="immediate charge">cob<\/abbr><\/td>/);
    assert.match(cob, /<span class="note">expires after 2592000 s<\/span>/);
    assert.match(body, /<th scope="col">Type<\/th>/);
  });

  it("past its due date a cobv shows what it asks today (fine and interest); past its last payable day it is REMOVIDA_PELO_PSP", async () => {
    await advanceDays(4);
    const row = await t.db.selectFrom('charges').selectAll().where('txid', '=', cobvTxid).executeTakeFirstOrThrow();
    const today = cobvDueOn(row, saoPauloDay(now()));
    assert.ok(today.payable && today.multaCentavos > 0n && today.finalCentavos > 123_456n, 'late, still payable');
    const late = rowOf(await page(), cobvTxid)!;
    assert.match(late, /ATIVA/);
    const decimal = `${today.finalCentavos / 100n}.${(today.finalCentavos % 100n).toString().padStart(2, '0')}`;
    assert.match(late, new RegExp(`<br><span class="note">today: <data class="money" value="${decimal.replace('.', '\\.')}">R\\$\\u00a01\\.2\\d\\d,\\d\\d</data></span>`));

    const last = parseDay(lastPayableDay(dueDate, 5))!;
    await advanceDays(last - parseDay(saoPauloDay(now()))! + 1);
    const gone = rowOf(await page(), cobvTxid)!;
    assert.match(gone, /<span class="badge charge-removida_pelo_psp">REMOVIDA_PELO_PSP<\/span>/);
    assert.doesNotMatch(gone, /today:/, 'no longer payable: nothing asked');
  });

  it('a cobv paid shows CONCLUIDA, the Pix that paid it and what was received', async () => {
    const txid = 'consolecobv00000000000000000002';
    const due = formatDay(parseDay(saoPauloDay(now()))! + 10);
    const created = await t.app.inject({
      method: 'PUT',
      url: `/v2/cobv/${txid}`,
      headers: client.headers,
      payload: {
        calendario: { dataDeVencimento: due },
        devedor: { cpf: '12345678909', nome: 'Francisco da Silva' },
        valor: { original: '200.00', desconto: { modalidade: 1, descontoDataFixa: [{ data: due, valorPerc: '20.00' }] } },
        chave: key,
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    const paid = await operator(t).incomingPix({ pixKey: key, amount: '180.00', txid, payer: { name: 'Pagador', document: randomCpf() } });
    const row = rowOf(await page(), txid)!;
    assert.match(row, /<span class="badge charge-concluida">CONCLUIDA<\/span><br><span class="note">paid: <code>/);
    assert.ok(row.includes(paid.endToEndId));
    assert.match(row, /R\$\u00a0200,00<\/data><br><span class="note">received: <data class="money" value="180.00">R\$\u00a0180,00<\/data><\/span>/);
  });
});
