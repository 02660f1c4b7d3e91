import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { compactVerify, createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet } from 'jose';
import { startTestApp, adminHeaders, type TestApp } from '../../../../test/harness.ts';
import { createClient, evpKey, type TestClient } from '../../../../test/factories.ts';
import { testKek } from '../../../../test/signing-keys.ts';
import { assertBcbAnswer, assertBcbDefinition } from '../../../../test/support/bcb-schemas.ts';
import { formatDay, isBankingDay, nextBankingDay, parseDay } from '../../../lib/banking-days.ts';
import { SAO_PAULO_OFFSET } from '../../../lib/dates.ts';
import { saoPauloDay } from '../../../modules/cobv/due.ts';
import { preparePayloadSigner } from '../../../modules/locations/signing/service.ts';

const TXID = 'cobvpayload00000000000000000001';

describe('BCB dialect: the cobv payload and paying a cobv', () => {
  let t: TestApp;
  let a: TestClient;
  let due: number;
  let token: string;
  let paidEndToEndId: string;
  before(async () => {
    t = await startTestApp();
    a = await createClient(t, { name: 'Escola Recebedora' });
    const chave = await evpKey(t, a.accountId);
    // A banking due date a week away whose previous day is a banking day too.
    due = nextBankingDay(parseDay(saoPauloDay(t.clock.now()))! + 7);
    while (!isBankingDay(due - 1)) due = nextBankingDay(due + 1);
    const res = await t.app.inject({
      method: 'PUT',
      url: `/v2/cobv/${TXID}`,
      headers: a.headers,
      payload: {
        calendario: { dataDeVencimento: formatDay(due), validadeAposVencimento: 10 },
        devedor: { cnpj: '12345678000195', nome: 'Empresa Devedora SA' },
        valor: {
          original: '100.00',
          multa: { modalidade: 2, valorPerc: '2.00' },
          juros: { modalidade: 1, valorPerc: '0.10' },
          desconto: { modalidade: 1, descontoDataFixa: [{ data: formatDay(due - 1), valorPerc: '5.00' }] },
        },
        chave,
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    token = /\/qr\/v2\/cobv\/([a-f0-9]{32})$/.exec(res.json<{ loc: { location: string } }>().loc.location)![1]!;
  });
  after(() => t.close());

  const payload = (query = '') => t.app.inject({ method: 'GET', url: `/qr/v2/cobv/${token}${query}` });
  async function verified(res: Awaited<ReturnType<typeof payload>>) {
    assertBcbAnswer('GET /cobv/{pixUrlAccessToken}', res);
    assert.equal(res.statusCode, 200, res.body);
    const signer = await preparePayloadSigner(t.db, { key: testKek(), source: 'KEY_ENCRYPTION_KEY' }, { publicUrl: t.config.publicUrl, now: t.clock.now() });
    const { payload: bytes, protectedHeader } = await compactVerify(res.body, createLocalJWKSet(signer.jwkSet as JSONWebKeySet), { algorithms: ['PS256'] });
    assert.equal(protectedHeader.jku, signer.jku);
    assert.ok(decodeProtectedHeader(res.body).x5t);
    const body = JSON.parse(Buffer.from(bytes).toString('utf8')) as { valor: Record<string, string>; calendario: { apresentacao: string }; status: string };
    assertBcbDefinition('CobVPayload', body);
    assert.equal(body.calendario.apresentacao, t.clock.now().toISOString());
    return body;
  }

  it('serves a JWS over CobVPayload with the amounts of DPP: a discount before the due date, a fine and interest after it', async () => {
    assert.deepEqual((await verified(await payload())).valor, { original: '100.00', desconto: '5.00', final: '95.00' });
    assert.deepEqual((await verified(await payload(`?DPP=${formatDay(due)}&codMun=3550308`))).valor, { original: '100.00', final: '100.00' });
    assert.deepEqual((await verified(await payload(`?DPP=${formatDay(due + 3)}`))).valor, { original: '100.00', multa: '2.00', juros: '0.30', final: '102.30' });
  });

  it('refuses a DPP in the past or after the last payable day, and an unknown location', async () => {
    for (const dpp of [formatDay(parseDay(saoPauloDay(t.clock.now()))! - 1), formatDay(due + 40), '2026-02-30']) {
      const res = await payload(`?DPP=${dpp}`);
      assertBcbAnswer('GET /cobv/{pixUrlAccessToken}', res);
      assert.equal(res.statusCode, 400, dpp);
    }
    const unknown = await t.app.inject({ method: 'GET', url: `/qr/v2/cobv/${'0'.repeat(32)}` });
    assertBcbAnswer('GET /cobv/{pixUrlAccessToken}', unknown);
    assert.equal(unknown.json<{ type: string }>().type, 'https://pix.bcb.gov.br/api/v2/error/CobPayloadNaoEncontrado');
  });

  it('paid after its due date, it credits original + multa + juros and records the components', async () => {
    t.clock.set(`${formatDay(due + 4)}T12:00:00.000${SAO_PAULO_OFFSET}`);
    const paid = await t.app.inject({ method: 'POST', url: `/sandbox/cob/${TXID}/pay`, headers: adminHeaders, payload: {} });
    assert.equal(paid.statusCode, 201, paid.body);
    paidEndToEndId = paid.json<{ endToEndId: string }>().endToEndId;
    const row = await t.db.selectFrom('transactions').select(['amount_centavos', 'value_components']).where('end_to_end_id', '=', paidEndToEndId).executeTakeFirstOrThrow();
    assert.equal(row.amount_centavos, 10240n);
    assert.deepEqual(row.value_components, { original: '10000', multa: '200', juros: '40' });
    const shown = await payload();
    assert.equal(shown.statusCode, 200);
  });

  it("GET /cobv/{txid} shows the Pix that paid it as a cob's: its componentesValor (multa, juros), chave and devolucoes", async () => {
    const headers = { ...a.headers, authorization: `Bearer ${await freshToken()}` };
    const refund = await t.app.inject({ method: 'PUT', url: `/v2/pix/${paidEndToEndId}/devolucao/dev1`, headers, payload: { valor: '30.00', descricao: 'Parte da multa e dos juros' } });
    assertBcbAnswer('PUT /pix/{e2eid}/devolucao/{id}', refund);
    assert.equal(refund.statusCode, 201, refund.body);
    const devolucao = refund.json<Record<string, unknown>>();
    const res = await t.app.inject({ method: 'GET', url: `/v2/cobv/${TXID}`, headers });
    assertBcbAnswer('GET /cobv/{txid}', res);
    const cobv = res.json<{ status: string; chave: string; pix: Record<string, unknown>[] }>();
    assert.equal(cobv.status, 'CONCLUIDA');
    assert.equal(cobv.pix.length, 1);
    const [pix] = cobv.pix;
    assert.equal(pix!.endToEndId, paidEndToEndId);
    assert.equal(pix!.txid, TXID);
    assert.equal(pix!.valor, '102.40');
    assert.equal(pix!.chave, cobv.chave);
    assert.deepEqual(pix!.componentesValor, { original: { valor: '100.00' }, multa: { valor: '2.00' }, juros: { valor: '0.40' } });
    assert.deepEqual(pix!.devolucoes, [devolucao]);
    // The Pix as GET /pix/{e2eid} shows it is the same.
    const received = await t.app.inject({ method: 'GET', url: `/v2/pix/${paidEndToEndId}`, headers });
    assert.deepEqual(received.json(), pix);
    // And the list shows it too.
    const day = 86_400_000;
    const list = await t.app.inject({
      method: 'GET',
      url: `/v2/cobv?inicio=${new Date(t.clock.now().getTime() - 30 * day).toISOString()}&fim=${t.clock.now().toISOString()}&status=CONCLUIDA`,
      headers,
    });
    assertBcbAnswer('GET /cobv', list);
    assert.deepEqual(list.json<{ cobs: { txid: string; pix: unknown[] }[] }>().cobs.find((c) => c.txid === TXID)?.pix, [pix]);
  });

  it('refuses a payment after its validity: the charge reads REMOVIDA_PELO_PSP and its location is not found', async () => {
    const txid = 'cobvexpired0000000000000000001';
    const day = saoPauloDay(t.clock.now());
    const res = await t.app.inject({
      method: 'PUT', url: `/v2/cobv/${txid}`, headers: { ...a.headers, authorization: `Bearer ${await freshToken()}` },
      payload: { calendario: { dataDeVencimento: day, validadeAposVencimento: 0 }, devedor: { cpf: '12345678909', nome: 'Devedor' }, valor: { original: '10.00' }, chave: (await evpKey(t, a.accountId)) },
    });
    assert.equal(res.statusCode, 201, res.body);
    const location = res.json<{ loc: { location: string } }>().loc.location;
    t.clock.set(`${formatDay(nextBankingDay(parseDay(day)!) + 1)}T12:00:00.000${SAO_PAULO_OFFSET}`);
    const refused = await t.app.inject({ method: 'POST', url: `/sandbox/cob/${txid}/pay`, headers: adminHeaders, payload: {} });
    assert.equal(refused.statusCode, 422, refused.body);
    assert.equal(refused.json<{ code: string }>().code, 'CHARGE_NOT_ACTIVE');
    const gone = await t.app.inject({ method: 'GET', url: location.slice(location.indexOf('/qr/')) });
    assert.equal(gone.statusCode, 404);
  });

  async function freshToken(): Promise<string> {
    const res = await t.app.inject({
      method: 'POST', url: '/oauth/token',
      headers: { 'x-ssl-client-cert': a.cert.header, 'content-type': 'application/x-www-form-urlencoded' },
      payload: `grant_type=client_credentials&client_id=${a.clientId}&client_secret=${a.clientSecret}`,
    });
    return res.json<{ access_token: string }>().access_token;
  }
});
