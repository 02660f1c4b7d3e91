import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { apiClient, createClient, evpKey, incomingPix, randomCpf, type TestClient } from '../../../test/factories.ts';
import { startTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../../../test/harness.ts';
import { holderBalances } from '../ledger/repo.ts';

const form = { 'content-type': 'application/x-www-form-urlencoded' };
const encode = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const csrfOf = (page: string) => /name="_csrf" value="([^"]+)"/.exec(page)![1]!;

/**
 * The console's forms that move money or change a dispute, each sent as the page's script sends
 * it, and each checked by what it did: balances, the transaction's or refund's status, the MED's.
 */
describe("the console's actions: transfers, refunds, settlement, MEDs and keys elsewhere", () => {
  let t: TestApp;
  let client: TestClient;
  let key: string;
  let cookie: string;
  let csrf: string;
  /** A key at another institution, registered through the console. */
  const outside = `loja.fora.${Date.now()}@example.com`;
  let transferE2e: string;

  before(async () => {
    t = await startTestApp();
    client = await createClient(t, { name: 'Mercado Console' });
    key = await evpKey(t, client.accountId);
    const signedIn = await t.app.inject({ method: 'POST', url: '/console/sign-in', headers: form, payload: encode({ token: TEST_ADMIN_TOKEN }) });
    cookie = String(signedIn.headers['set-cookie']).split(';')[0]!;
    csrf = csrfOf((await page('/console/network')).body);
  });
  after(() => t.close());

  function page(url: string) {
    return t.app.inject({ method: 'GET', url, headers: { cookie } });
  }
  /** An action as the page's script sends it: its answer is the sentence, or the refusal's message. */
  function act(name: string, fields: Record<string, string>): Promise<LightMyRequestResponse> {
    return t.app.inject({ method: 'POST', url: `/console/actions/${name}`, headers: { ...form, cookie, 'x-console-request': 'fetch' }, payload: encode({ _csrf: csrf, ...fields }) });
  }
  const accountId = () => String(client.accountId);
  const balances = async () => (await holderBalances(t.db, BigInt(client.accountId)))!;
  const transaction = (endToEndId: string) =>
    t.db.selectFrom('transactions').select(['id', 'type', 'status', 'amount_centavos', 'original_transaction_id']).where('end_to_end_id', '=', endToEndId).executeTakeFirstOrThrow();
  /** The balances the account's page shows, as Brazil writes them. */
  async function shownBalances() {
    const body = (await page(`/console/accounts/${client.accountId}`)).body;
    const shown = (id: string) => new RegExp(`<dd id="${id}"><data class="money" value="([\\d.]+)">([^<]+)</data></dd>`).exec(body)!.slice(1);
    return { available: shown('balance-available'), blocked: shown('balance-blocked') };
  }

  it('registers a key at another institution (as the network): the directory answers it; the same key again, or one of this institution, is refused', async () => {
    const document = randomCpf();
    const res = await act('external-key', { key: outside, name: 'Loja Fora', document, ispb: '12345678', bankName: 'Banco Fora', behavior: '' });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.body, `Key ${outside} (email) registered at institution 12345678`);
    const found = await apiClient(t).account(client.headers).lookupKey(outside);
    assert.deepEqual({ owner: found.owner.name, ispb: found.institution.ispb, bank: found.institution.name }, { owner: 'Loja Fora', ispb: '12345678', bank: 'Banco Fora' });
    const again = await act('external-key', { key: outside, name: 'Outra', document, ispb: '12345678' });
    assert.equal(again.statusCode, 409);
    assert.equal(again.body, 'This key is already registered in the directory');
    const own = await act('external-key', { key: `own.${outside}`, name: 'Outra', document, ispb: t.config.pspIspb });
    assert.equal(own.statusCode, 400);
    assert.match(own.body, /^keys of this institution are registered through/);
  });

  it('sends a transfer (as the holder): the money leaves at once and the transfer waits; settle now (as the network) confirms it', async () => {
    await incomingPix(t, key, '1000.00');
    const before = await balances();
    const res = await act('transfer', { accountId: accountId(), pixKey: outside, amount: '150,25', description: 'Fornecedor', priority: 'NORM' });
    assert.equal(res.statusCode, 200, res.body);
    const match = new RegExp(`^Transfer of R\\$\\u00a0150,25 to ${outside.replaceAll('.', '\\.')} accepted: \\w+ \\(endToEndId (E\\w{31})\\)$`).exec(res.body);
    assert.ok(match, res.body);
    transferE2e = match[1]!;
    const sent = await transaction(transferE2e);
    assert.deepEqual([sent.type, sent.status, sent.amount_centavos], ['WITHDRAW', 'PENDING', 15_025n]);
    assert.equal((await balances()).available, before.available - 15_025n);
    assert.deepEqual((await shownBalances()).available, ['849.75', 'R$\u00a0849,75']);

    const settled = await act('settle', {});
    assert.equal(settled.statusCode, 200, settled.body);
    assert.equal(settled.body, 'Settlement round: 1 settled, 0 failed');
    assert.equal((await transaction(transferE2e)).status, 'CONFIRMED');
    assert.equal((await balances()).available, before.available - 15_025n, 'settling moves no more money');
    assert.equal((await act('settle', {})).body, 'Settlement round: 0 settled, 0 failed', 'nothing left to settle');

    const refused = await act('transfer', { accountId: accountId(), pixKey: outside, amount: '100000,00' });
    assert.equal(refused.statusCode, 422, refused.body);
    assert.equal((await balances()).available, before.available - 15_025n, 'a refused transfer moves nothing');
  });

  it('a refund of that transfer arriving (as the network) credits the account; more than was sent is refused', async () => {
    const before = await balances();
    const res = await act('incoming-refund', { endToEndId: transferE2e, amount: '50,25' });
    assert.equal(res.statusCode, 200, res.body);
    const rtrId = new RegExp(`^A refund of R\\$\\u00a050,25 arrived for ${transferE2e} \\(rtrId (D\\w{31})\\)$`).exec(res.body)?.[1];
    assert.ok(rtrId, res.body);
    const refund = await transaction(rtrId);
    const original = await transaction(transferE2e);
    assert.deepEqual([refund.type, refund.status, refund.amount_centavos, refund.original_transaction_id], ['REFUND_OUT', 'CONFIRMED', 5_025n, original.id]);
    assert.equal((await balances()).available, before.available + 5_025n);
    const tooMuch = await act('incoming-refund', { endToEndId: transferE2e, amount: '100,01' });
    assert.equal(tooMuch.statusCode, 422);
    assert.equal(tooMuch.body, 'The refunds would exceed the amount of the original transfer');
    assert.equal((await balances()).available, before.available + 5_025n);
  });

  it('refunds a received Pix (as the holder): EM_PROCESSAMENTO and the money leaves; settle now makes it DEVOLVIDO', async () => {
    const received = await incomingPix(t, key, '80.00', { name: 'Cliente Devolução' });
    const before = await balances();
    const res = await act('refund', { accountId: accountId(), endToEndId: received.endToEndId, amount: '30.00', description: 'Troca' });
    assert.equal(res.statusCode, 200, res.body);
    const [, id, rtrId] = /^Refund (console\w{20}) of R\$\u00a030,00 requested: EM_PROCESSAMENTO \(rtrId (D\w{31})\)$/.exec(res.body) ?? [];
    assert.ok(id && rtrId, res.body);
    const account = apiClient(t).account(client.headers);
    assert.equal((await account.getRefund(received.endToEndId, id)).status, 'EM_PROCESSAMENTO');
    assert.equal((await balances()).available, before.available - 3_000n);
    const tooMuch = await act('refund', { accountId: accountId(), endToEndId: received.endToEndId, amount: '50,01' });
    assert.equal(tooMuch.statusCode, 400);
    assert.equal(tooMuch.body, 'valor exceeds the amount still refundable of this PIX (50.00)');

    assert.equal((await act('settle', {})).body, 'Settlement round: 1 settled, 0 failed');
    const settled = await account.getRefund(received.endToEndId, id);
    assert.equal(settled.status, 'DEVOLVIDO');
    assert.equal(settled.rtrId, rtrId);
    assert.equal((await transaction(rtrId)).status, 'CONFIRMED');
    assert.equal((await balances()).available, before.available - 3_000n);
  });

  it('rejects a MED (as the network): the blocked amount is available again, the MED REJECTED and shown so', async () => {
    const received = await incomingPix(t, key, '60.00', { name: 'Golpista' });
    const before = await balances();
    const opened = await act('open-med', { endToEndId: received.endToEndId, reason: 'FRAUD', details: 'Pedido do pagador' });
    assert.equal(opened.statusCode, 200, opened.body);
    const medId = new RegExp(`^MED (\\d+) opened against ${received.endToEndId}$`).exec(opened.body)?.[1];
    assert.ok(medId, opened.body);
    assert.deepEqual(await balances(), { available: before.available - 6_000n, blocked: before.blocked + 6_000n });
    assert.deepEqual((await shownBalances()).blocked, ['60.00', 'R$\u00a060,00']);

    const rejected = await act('close-med', { medId, decision: 'reject' });
    assert.equal(rejected.statusCode, 200, rejected.body);
    assert.equal(rejected.body, `MED ${medId} REJECTED`);
    assert.deepEqual(await balances(), before);
    const med = await t.db.selectFrom('meds').select(['status', 'refund_id']).where('id', '=', BigInt(medId)).executeTakeFirstOrThrow();
    assert.deepEqual(med, { status: 'REJECTED', refund_id: null });
    const meds = (await page(`/console/accounts/${client.accountId}/meds`)).body;
    const row = new RegExp(`<tr>\\s*<th scope="row">${medId}</th>[\\s\\S]*?</tr>`).exec(meds)![0];
    assert.match(row, /<span class="badge med-rejected">REJECTED<\/span>/);
    assert.doesNotMatch(row, /name="decision"/, 'a closed MED offers no decision');
    const again = await act('close-med', { medId, decision: 'accept' });
    assert.equal(again.statusCode, 409);
    assert.equal(again.body, 'This MED is already REJECTED');
    assert.deepEqual(await balances(), before);
  });
});
