import assert from 'node:assert/strict';
import { randomBytes, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createClient, evpKey, randomCpf, type TestClient } from '../../../test/factories.ts';
import { adminHeaders, startTestApp, type TestApp } from '../../../test/harness.ts';
import { freePort } from '../../../test/processes.ts';
import { assertBcbAnswer } from '../../../test/support/bcb-schemas.ts';
import { formatDay, parseDay } from '../../lib/banking-days.ts';
import { buildBrCode, crc16Ccitt, parseAnyBrCode } from '../../lib/brcode.ts';
import { generateRoot, issueSigningCertificate } from '../locations/signing/pki.ts';
import { saoPauloDay } from '../cobv/due.ts';

/**
 * The payer against this service's own locations and views, over real HTTP: the app listens on
 * the port PUBLIC_URL names, so a code's location is fetched from the routes that serve it in
 * production, and what the payer paid is read back through /v2 and the seed's views.
 */
type Json = Record<string, unknown>;
const DAY_MS = 86_400_000;
const AGENT = { prestadorDoServicoDeSaque: '12345678' };

async function listeningApp(env: Record<string, string> = {}): Promise<TestApp> {
  const port = await freePort();
  const t = await startTestApp({ env: { PUBLIC_URL: `http://127.0.0.1:${port}`, ...env } });
  await t.app.listen({ port, host: '127.0.0.1' });
  return t;
}

function helpers(t: TestApp, holder: () => TestClient) {
  return {
    v2: (method: 'GET' | 'PUT' | 'PATCH', path: string, payload?: object) =>
      t.app.inject({ method, url: `/v2${path}`, headers: holder().headers, ...(payload ? { payload } : {}) }),
    pay: (body: Json) =>
      t.app.inject({ method: 'POST', url: '/sandbox/payer/pay', headers: adminHeaders, payload: { payer: { name: 'Paula Pagadora', document: randomCpf() }, ...body } }),
  };
}

/** A 422 with this code whose message matches. */
function assertRefused(res: { statusCode: number; body: string; json<T>(): T }, code: string, message?: RegExp): void {
  assert.equal(res.statusCode, 422, res.body);
  const body = res.json<{ code: string; message: string }>();
  assert.equal(body.code, code, res.body);
  if (message) assert.match(body.message, message);
}

const newTxid = () => `pay${randomBytes(14).toString('hex')}`;

describe("The payer against the service's own locations and views", () => {
  let t: TestApp;
  let holder: TestClient;
  let key: string;
  let v2: ReturnType<typeof helpers>['v2'];
  let pay: ReturnType<typeof helpers>['pay'];

  before(async () => {
    t = await listeningApp();
    holder = await createClient(t, { name: 'Loja Recebedora' });
    key = await evpKey(t, holder.accountId);
    ({ v2, pay } = helpers(t, () => holder));
  });
  after(() => t?.close());

  /** A cob created at PUT /v2/cob/{txid}: its txid and pixCopiaECola. */
  /** The holder's available balance, as GET /balance says it. */
  const balanceOf = async () => (await t.app.inject({ method: 'GET', url: '/balance', headers: holder.headers })).json<{ netBalance: number }>().netBalance;

  async function cob(valor: Json, calendario: Json = {}): Promise<{ txid: string; code: string }> {
    const txid = newTxid();
    const res = await v2('PUT', `/cob/${txid}`, { calendario, valor, chave: key });
    assert.equal(res.statusCode, 201, res.body);
    return { txid, code: res.json<{ pixCopiaECola: string }>().pixCopiaECola };
  }

  /** A cobv created at PUT /v2/cobv/{txid}, due `dueIn` days from today. */
  async function cobv(valor: Json, dueIn: number, validadeAposVencimento = 30): Promise<{ txid: string; code: string }> {
    const txid = newTxid();
    const dataDeVencimento = formatDay(parseDay(saoPauloDay(t.clock.now()))! + dueIn);
    const res = await v2('PUT', `/cobv/${txid}`, {
      calendario: { dataDeVencimento, validadeAposVencimento },
      devedor: { cpf: '12345678909', nome: 'Francisco da Silva' },
      valor,
      chave: key,
    });
    assert.equal(res.statusCode, 201, res.body);
    return { txid, code: res.json<{ pixCopiaECola: string }>().pixCopiaECola };
  }

  const pixOf = async (endToEndId: string) => {
    const res = await v2('GET', `/pix/${endToEndId}`);
    assertBcbAnswer('GET /pix/{e2eid}', res);
    return res.json<Json>();
  };
  const paid = (res: { statusCode: number; body: string; json<T>(): T }) => {
    assert.equal(res.statusCode, 201, res.body);
    return res.json<{ endToEndId: string; transactionId: number; amount: string; txid: string | null }>();
  };

  describe('static codes', () => {
    it('201: a txid that names no charge of the account is carried by the Pix, shown by /v2/pix and the seed views', async () => {
      const code = buildBrCode({ key, amountCentavos: 1500n, merchantName: 'Loja', merchantCity: 'SAO PAULO', txid: 'PEDIDO123' });
      const payment = paid(await pay({ pixCopiaECola: code }));
      assert.deepEqual([payment.amount, payment.txid], ['15.00', 'PEDIDO123']);
      const pix = await pixOf(payment.endToEndId);
      assert.deepEqual([pix.txid, pix.valor, pix.chave], ['PEDIDO123', '15.00', key]);
      const window = `inicio=${new Date(t.clock.now().getTime() - DAY_MS).toISOString()}&fim=${new Date(t.clock.now().getTime() + 1000).toISOString()}`;
      const listed = await v2('GET', `/pix?${window}&txIdPresente=true`);
      assertBcbAnswer('GET /pix', listed);
      assert.ok(listed.json<{ pix: { endToEndId: string; txid: string }[] }>().pix.some((p) => p.endToEndId === payment.endToEndId && p.txid === 'PEDIDO123'));
      const seed = await t.app.inject({ method: 'GET', url: `/api/pix/transaction/${payment.transactionId}`, headers: holder.headers });
      assert.equal(seed.statusCode, 200, seed.body);
      assert.equal(seed.json<{ externalId: string }>().externalId, 'PEDIDO123', 'the seed view shows a received Pix\'s txid as its externalId');
    });

    it('201: a code without a txid (***) is a Pix without one', async () => {
      const code = buildBrCode({ key, amountCentavos: 250n, merchantName: 'Loja', merchantCity: 'SAO PAULO' });
      assert.match(code, /0503\*\*\*/);
      const payment = paid(await pay({ pixCopiaECola: code }));
      assert.equal(payment.txid, null);
      assert.ok(!('txid' in (await pixOf(payment.endToEndId))));
    });

    it("201: the txid of an ATIVA charge pays it; once it is paid, the same code is refused (CHARGE_NOT_ACTIVE), nothing credited", async () => {
      const { txid } = await cob({ original: '7.00' });
      const code = buildBrCode({ key, amountCentavos: 700n, merchantName: 'Loja', merchantCity: 'SAO PAULO', txid });
      const first = paid(await pay({ pixCopiaECola: code }));
      const charge = (await v2('GET', `/cob/${txid}`)).json<{ status: string; pix: { endToEndId: string }[] }>();
      assert.deepEqual([charge.status, charge.pix.map((p) => p.endToEndId)], ['CONCLUIDA', [first.endToEndId]]);
      const before = await balanceOf();
      assertRefused(await pay({ pixCopiaECola: code }), 'CHARGE_NOT_ACTIVE', new RegExp(`txid ${txid} is a charge of the key's account that is CONCLUIDA \\(already paid\\)`));
      assert.equal(await balanceOf(), before, 'nothing credited');
    });

    it("422: the static code of a charge that expired or was removed is refused with the reason; the charge stays as it was", async () => {
      const expiring = await cob({ original: '3.00' }, { expiracao: 60 });
      const code = (txid: string, centavos: bigint) => buildBrCode({ key, amountCentavos: centavos, merchantName: 'Loja', merchantCity: 'SAO PAULO', txid });
      await t.app.inject({ method: 'POST', url: '/sandbox/clock/advance', headers: adminHeaders, payload: { seconds: 61 } });
      const before = await balanceOf();
      assertRefused(await pay({ pixCopiaECola: code(expiring.txid, 300n) }), 'CHARGE_EXPIRED', /expired at/);
      const removed = await cob({ original: '4.00' });
      assert.equal((await v2('PATCH', `/cob/${removed.txid}`, { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' })).statusCode, 200);
      assertRefused(await pay({ pixCopiaECola: code(removed.txid, 400n) }), 'CHARGE_NOT_ACTIVE', /REMOVIDA_PELO_USUARIO_RECEBEDOR \(removed by the receiver\)/);
      assert.equal(await balanceOf(), before, 'nothing credited');
      const statuses = await Promise.all([expiring.txid, removed.txid].map(async (txid) => (await v2('GET', `/cob/${txid}`)).json<{ status: string }>().status));
      assert.deepEqual(statuses, ['REMOVIDA_PELO_PSP', 'REMOVIDA_PELO_USUARIO_RECEBEDOR']);
      // The tests after this one read business time as the real one.
      await t.app.inject({ method: 'POST', url: '/sandbox/clock/reset', headers: adminHeaders });
    });

    it('422 BRCODE_INVALID: a txid that is not 1 to 35 characters of [a-zA-Z0-9]', async () => {
      const good = buildBrCode({ key, amountCentavos: 100n, merchantName: 'Loja', merchantCity: 'SAO PAULO', txid: 'PEDIDO123' });
      const body = good.slice(0, -4).replace('0509PEDIDO123', '0509PEDIDO-12');
      assertRefused(await pay({ pixCopiaECola: body + crc16Ccitt(body) }), 'BRCODE_INVALID', /txid/);
    });
  });

  describe('Pix Saque and Pix Troco (valor.retirada)', () => {
    const saque = (over: Json = {}) => ({ original: '0.00', retirada: { saque: { valor: '50.00', modalidadeAgente: 'AGPSS', ...AGENT, ...over } } });
    const troco = (over: Json = {}) => ({ original: '10.00', retirada: { troco: { valor: '5.00', modalidadeAgente: 'AGTEC', ...AGENT, ...over } } });

    it("201: a saque pays its withdrawal; the Pix shows it in componentesValor and is refunded as RETIRADA", async () => {
      const { txid, code } = await cob(saque());
      assertRefused(await pay({ pixCopiaECola: code, amount: '49.00' }), 'AMOUNT_NOT_ALLOWED', /50\.00/);
      const payment = paid(await pay({ pixCopiaECola: code }));
      assert.deepEqual([payment.amount, payment.txid], ['50.00', txid]);
      const pix = await pixOf(payment.endToEndId);
      assert.equal(pix.valor, '50.00');
      assert.deepEqual((pix.componentesValor as Json).saque, { valor: '50.00', modalidadeAgente: 'AGPSS', ...AGENT });
      assert.equal((await v2('GET', `/cob/${txid}`)).json<{ status: string }>().status, 'CONCLUIDA');
      const refund = await v2('PUT', `/pix/${payment.endToEndId}/devolucao/saque1`, { valor: '50.00', natureza: 'RETIRADA' });
      assertBcbAnswer('PUT /pix/{e2eid}/devolucao/{id}', refund);
      assert.equal(refund.statusCode, 201, refund.body);
      assert.equal(refund.json<{ natureza: string }>().natureza, 'RETIRADA');
    });

    it('201: a saque whose modalidadeAlteracao is 1 pays the withdrawal the payer chooses (AMOUNT_REQUIRED without one)', async () => {
      const { code } = await cob(saque({ valor: '0.00', modalidadeAlteracao: 1 }));
      assertRefused(await pay({ pixCopiaECola: code }), 'AMOUNT_REQUIRED');
      const payment = paid(await pay({ pixCopiaECola: code, amount: '30.00' }));
      assert.equal(payment.amount, '30.00');
      assert.deepEqual(((await pixOf(payment.endToEndId)).componentesValor as Json).saque, { valor: '30.00', modalidadeAgente: 'AGPSS', ...AGENT });
    });

    it('201: a troco pays the purchase plus the change; RETIRADA refunds up to the change, ORIGINAL up to the purchase', async () => {
      const { code } = await cob(troco());
      assertRefused(await pay({ pixCopiaECola: code, amount: '10.00' }), 'AMOUNT_NOT_ALLOWED', /15\.00/);
      const payment = paid(await pay({ pixCopiaECola: code }));
      assert.equal(payment.amount, '15.00');
      const pix = await pixOf(payment.endToEndId);
      assert.equal(pix.valor, '15.00');
      assert.deepEqual(pix.componentesValor, { original: { valor: '10.00' }, troco: { valor: '5.00', modalidadeAgente: 'AGTEC', ...AGENT } });
      const tooMuch = await v2('PUT', `/pix/${payment.endToEndId}/devolucao/troco1`, { valor: '5.01', natureza: 'RETIRADA' });
      assert.equal(tooMuch.statusCode, 400, tooMuch.body);
      assert.equal((await v2('PUT', `/pix/${payment.endToEndId}/devolucao/troco2`, { valor: '5.00', natureza: 'RETIRADA' })).statusCode, 201);
      assert.equal((await v2('PUT', `/pix/${payment.endToEndId}/devolucao/troco3`, { valor: '10.00', natureza: 'ORIGINAL' })).statusCode, 201);
    });

    it('201: a troco whose modalidadeAlteracao is 1 takes the change the payer chooses, never less than the purchase', async () => {
      const { code } = await cob(troco({ valor: '0.00', modalidadeAlteracao: 1 }));
      assertRefused(await pay({ pixCopiaECola: code, amount: '9.99' }), 'AMOUNT_NOT_ALLOWED', /10\.00/);
      const payment = paid(await pay({ pixCopiaECola: code, amount: '30.00' }));
      assert.equal(payment.amount, '30.00');
      assert.deepEqual((await pixOf(payment.endToEndId)).componentesValor, { original: { valor: '10.00' }, troco: { valor: '20.00', modalidadeAgente: 'AGTEC', ...AGENT } });
    });

    it('400 PixDevolucaoInvalida: natureza RETIRADA of an ordinary Pix', async () => {
      const { code } = await cob({ original: '12.00' });
      const payment = paid(await pay({ pixCopiaECola: code }));
      const refused = await v2('PUT', `/pix/${payment.endToEndId}/devolucao/plain1`, { valor: '1.00', natureza: 'RETIRADA' });
      assertBcbAnswer('PUT /pix/{e2eid}/devolucao/{id}', refused);
      assert.equal(refused.statusCode, 400, refused.body);
      assert.equal(refused.json<{ type: string }>().type, 'https://pix.bcb.gov.br/api/v2/error/PixDevolucaoInvalida');
    });
  });

  describe('cob and cobv whose location no longer serves a payable charge', () => {
    it('201: a cobv of this service is paid its valor.final', async () => {
      const { txid, code } = await cobv({ original: '80.00' }, 10);
      const payment = paid(await pay({ pixCopiaECola: code }));
      assert.deepEqual([payment.amount, payment.txid], ['80.00', txid]);
    });

    it('422 CHARGE_NOT_ACTIVE: a cobv removed by its receiver (its location answers 404 CobPayloadNaoEncontrado)', async () => {
      const { txid, code } = await cobv({ original: '80.00' }, 10);
      assert.equal((await v2('PATCH', `/cobv/${txid}`, { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' })).statusCode, 200);
      assertRefused(await pay({ pixCopiaECola: code }), 'CHARGE_NOT_ACTIVE', /REMOVIDA_PELO_USUARIO_RECEBEDOR/);
    });

    it('422 CHARGE_EXPIRED: a cob past its expiracao (its location serves it REMOVIDA_PELO_PSP)', async () => {
      const { code } = await cob({ original: '3.00' }, { expiracao: 60 });
      t.clock.advance(61_000);
      assertRefused(await pay({ pixCopiaECola: code }), 'CHARGE_EXPIRED', /expired at/);
    });

    it('paidAt: a cobv is priced for the day it was paid, and refused as it was then; past its validity it is CHARGE_EXPIRED', async () => {
      const createdAt = t.clock.now();
      const late = await cobv({ original: '100.00', multa: { modalidade: 1, valorPerc: '2.00' } }, 0);
      const expiring = await cobv({ original: '100.00' }, 0, 0);
      t.clock.advance(10 * DAY_MS);
      // Today the location asks the fine (and the interest) on top.
      const location = parseAnyBrCode(late.code);
      assert.equal(location.kind, 'dynamic');
      const served = await t.app.inject({ method: 'GET', url: `/${location.location.split('/').slice(1).join('/')}` });
      assert.equal(served.statusCode, 200, served.body);
      const payload = JSON.parse(Buffer.from(served.body.split('.')[1]!, 'base64url').toString('utf8')) as { valor: { final: string } };
      assert.ok(Number(payload.valor.final) > 100, payload.valor.final);
      // Before the charge existed: refused as the core would have refused it then.
      assertRefused(await pay({ pixCopiaECola: late.code, paidAt: new Date(createdAt.getTime() - DAY_MS).toISOString() }), 'CHARGE_NOT_ACTIVE', /did not exist yet/);
      // Paid on the day it was created (its due date), back-dated: no fine, whatever today's payload says.
      const onTime = paid(await pay({ pixCopiaECola: late.code, paidAt: new Date(createdAt.getTime() + 1000).toISOString() }));
      assert.deepEqual([onTime.amount, onTime.txid], ['100.00', late.txid]);
      // Past dataDeVencimento + validadeAposVencimento: the location answers 404.
      assertRefused(await pay({ pixCopiaECola: expiring.code }), 'CHARGE_EXPIRED', /could be paid until/);
    });
  });
});

describe('The payer trusts the root of QR_SIGNING_CHAIN_FILE', () => {
  const dir = mkdtempSync(join(tmpdir(), 'payer-signing-'));
  let t: TestApp;

  before(async () => {
    const now = new Date();
    const root = await generateRoot(now);
    const leaf = await issueSigningCertificate(root, '127.0.0.1', now);
    const pem = (der: Buffer) => new X509Certificate(der).toString();
    writeFileSync(join(dir, 'key.pem'), leaf.privateKeyPem);
    writeFileSync(join(dir, 'chain.pem'), pem(leaf.certificateDer) + pem(root.certificateDer));
    t = await listeningApp({ QR_SIGNING_KEY_FILE: join(dir, 'key.pem'), QR_SIGNING_CHAIN_FILE: join(dir, 'chain.pem') });
  });
  after(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('201: a cob of this service, signed with the key of the files, is paid', async () => {
    const holder = await createClient(t);
    const key = await evpKey(t, holder.accountId);
    const { v2, pay } = helpers(t, () => holder);
    const created = await v2('PUT', `/cob/${newTxid()}`, { calendario: {}, valor: { original: '4.00' }, chave: key });
    assert.equal(created.statusCode, 201, created.body);
    const res = await pay({ pixCopiaECola: created.json<{ pixCopiaECola: string }>().pixCopiaECola });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json<{ amount: string }>().amount, '4.00');
  });
});
