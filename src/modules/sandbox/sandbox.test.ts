import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../app.ts';
import { createClient, creditAccount, randomCnpj, randomCpf, type TestClient } from '../../../test/factories.ts';
import { adminHeaders, startTestApp, testConfig, type TestApp } from '../../../test/harness.ts';
import { assertLedgerInvariants } from '../../../test/ledger.ts';
import { masked, onlyEvent, outboxOf, receivePayload } from '../../../test/events.ts';
import type { Db } from '../../db/client.ts';
import { holderBalances } from '../ledger/service.ts';
import { SANDBOX_PAYER_BANK, SANDBOX_PAYER_ISPB } from './service.ts';
import { errorMessage } from '../../../test/assertions.ts';

const ROUTES = ['/sandbox/dict/keys', '/sandbox/pix/incoming', '/sandbox/refunds/incoming', '/sandbox/settle'] as const;

async function balances(db: Db, accountId: number) {
  const found = await holderBalances(db, BigInt(accountId));
  assert.ok(found);
  return found;
}

const transaction = (db: Db, id: number | bigint) => db.selectFrom('transactions').selectAll().where('id', '=', BigInt(id)).executeTakeFirstOrThrow();

describe('sandbox', () => {
  let t: TestApp;
  let holder: TestClient;
  let holderKey: string;

  const post = (url: string, payload?: unknown, headers: Record<string, string> = adminHeaders) =>
    t.app.inject({ method: 'POST', url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });

  /** An outside key registered through the sandbox directory. */
  async function outsideKey(extra: Record<string, unknown> = {}) {
    const key = { key: `${randomUUID()}@example.com`, name: 'Beneficiario Externo', document: randomCpf(), ispb: '87654321', ...extra };
    const res = await post('/sandbox/dict/keys', key);
    assert.equal(res.statusCode, 201, res.body);
    return key as typeof key & { key: string; document: string; ispb: string };
  }

  async function transfer(client: TestClient, body: Record<string, unknown>) {
    const res = await t.app.inject({
      method: 'POST',
      url: '/dict/pix',
      headers: { ...client.headers, 'x-idempotency-key': randomUUID() },
      payload: { payment: { currency: 'BRL', amount: 10.5 }, ...body },
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json<{ id: number; endToEndId: string }>();
  }

  before(async () => {
    t = await startTestApp();
    holder = await createClient(t, { name: 'Titular Sandbox' });
    const res = await post(`/admin/accounts/${holder.accountId}/pix-keys`, { type: 'email', key: `titular-${randomUUID()}@example.com` });
    assert.equal(res.statusCode, 201, res.body);
    holderKey = res.json<{ key: string }>().key;
  });
  after(() => t?.close());

  describe('authentication', () => {
    for (const url of ROUTES) {
      it(`POST ${url}: 401 without the admin token, with a wrong one, or with an account token`, async () => {
        for (const headers of [{}, { authorization: 'Bearer wrong-token-0123456789' }, { authorization: `Basic ${adminHeaders.authorization.slice(7)}` }, holder.headers]) {
          errorMessage(await post(url, {}, headers as Record<string, string>), 401);
        }
      });
    }
  });

  describe('POST /sandbox/dict/keys', () => {
    it('201 registers keys of every type held at another institution', async () => {
      const cpf = randomCpf();
      const cnpj = randomCnpj();
      const evp = randomUUID();
      const email = `Someone.${randomUUID()}@Example.COM`;
      const cases = [
        [{ key: cpf, name: 'Pessoa CPF', document: cpf, ispb: '11111111' }, { key: cpf, type: 'cpf', ispb: '11111111', behavior: null }],
        [{ key: cnpj, name: 'Empresa CNPJ', document: cnpj, ispb: '22222222', behavior: 'reject' }, { key: cnpj, type: 'cnpj', ispb: '22222222', behavior: 'reject' }],
        [{ key: '+5511987654321', name: 'Pessoa Fone', document: randomCpf(), ispb: '33333333' }, { key: '+5511987654321', type: 'phone', ispb: '33333333', behavior: null }],
        [{ key: evp, name: 'Pessoa EVP', document: randomCpf(), ispb: '44444444', behavior: 'timeout' }, { key: evp, type: 'evp', ispb: '44444444', behavior: 'timeout' }],
        [{ key: email, name: 'Pessoa Email', document: randomCpf(), ispb: '55555555' }, { key: email.toLowerCase(), type: 'email', ispb: '55555555', behavior: null }],
      ] as const;
      for (const [body, answer] of cases) {
        const res = await post('/sandbox/dict/keys', body);
        assert.equal(res.statusCode, 201, res.body);
        assert.deepEqual(res.json(), answer);
      }
      const stored = await t.db.selectFrom('dict_keys').selectAll().where('key', '=', email.toLowerCase()).executeTakeFirstOrThrow();
      assert.equal(stored.account_id, null);
      assert.equal(stored.owner_name, 'Pessoa Email');
      assert.equal(stored.key_type, 'EMAIL');
    });

    it('201 stores the document normalized and the optional bank data, and the key can receive transfers', async () => {
      const document = randomCnpj();
      const punctuated = `${document.slice(0, 2)}.${document.slice(2, 5)}.${document.slice(5, 8)}/${document.slice(8, 12)}-${document.slice(12)}`;
      const key = `loja-${randomUUID()}@example.com`;
      const res = await post('/sandbox/dict/keys', { key, name: 'Loja', document: punctuated, ispb: '60746948', bankName: 'Banco X', branch: '0001', accountNumber: '12345-6' });
      assert.equal(res.statusCode, 201, res.body);
      const stored = await t.db.selectFrom('dict_keys').selectAll().where('key', '=', key).executeTakeFirstOrThrow();
      assert.deepEqual(
        [stored.owner_document, stored.bank_name, stored.branch, stored.account_number, stored.behavior],
        [document, 'Banco X', '0001', '12345-6', null],
      );
      const payer = await createClient(t);
      await creditAccount(t.db, payer.accountId, 10_000n);
      const sent = await transfer(payer, { pixKey: key, priority: 'HIGH', creditorDocument: document });
      assert.equal((await transaction(t.db, sent.id)).counterpart_name, 'Loja');
    });

    it('400 for a malformed key, document, ispb, a key that is not its holder document, our own ispb, or unknown fields', async () => {
      const valid = { key: `x-${randomUUID()}@example.com`, name: 'Fulano', document: randomCpf(), ispb: '12345678' };
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ ...valid, key: 'not a key' }, /key/],
        [{ ...valid, key: 'a@b' }, /key/],
        [{ ...valid, key: '+1555123456' }, /key/],
        [{ ...valid, key: '' }, /key/],
        [{ ...valid, key: 'x'.repeat(78) }, /key/],
        [{ ...valid, document: '12345678900' }, /document/],
        [{ ...valid, document: '1234' }, /document/],
        [{ ...valid, ispb: '1234567' }, /ispb/],
        [{ ...valid, ispb: 'abcdefgh' }, /ispb/],
        [{ ...valid, ispb: 12345678 }, /ispb/],
        [{ ...valid, ispb: t.config.pspIspb }, /admin/],
        [{ ...valid, key: randomCpf() }, /document/],
        [{ ...valid, behavior: 'explode' }, /behavior/],
        [{ ...valid, name: '' }, /name/],
        [{ key: valid.key, document: valid.document, ispb: valid.ispb }, /name is required/],
        [{ ...valid, owner: 'x' }, /owner is not an allowed property/],
      ];
      for (const [body, message] of cases) {
        assert.match(errorMessage(await post('/sandbox/dict/keys', body), 400), message, JSON.stringify(body));
      }
      assert.equal(await t.db.selectFrom('dict_keys').select('key').where('key', '=', valid.key).executeTakeFirst(), undefined);
    });

    it('409 for a key already in the directory, ours or another institution\'s', async () => {
      const first = await outsideKey();
      const again = await post('/sandbox/dict/keys', { ...first, name: 'Outro Nome', ispb: '11112222' });
      assert.match(errorMessage(again, 409), /already registered/);
      const stored = await t.db.selectFrom('dict_keys').selectAll().where('key', '=', first.key).executeTakeFirstOrThrow();
      assert.equal(stored.owner_name, first.name);
      // The same e-mail in other case is the same key.
      errorMessage(await post('/sandbox/dict/keys', { ...first, key: first.key.toUpperCase() }), 409);
      errorMessage(await post('/sandbox/dict/keys', { key: holderKey, name: 'Impostor', document: randomCpf(), ispb: '12345678' }), 409);
      const ours = await t.db.selectFrom('dict_keys').selectAll().where('key', '=', holderKey).executeTakeFirstOrThrow();
      assert.equal(Number(ours.account_id), holder.accountId);
    });
  });

  describe('POST /sandbox/pix/incoming', () => {
    it('201 credits the account owning the key, with a PAYMENT row and a cash_in RECEIVE notification', async () => {
      const before = await balances(t.db, holder.accountId);
      const payerDocument = randomCpf();
      const res = await post('/sandbox/pix/incoming', { pixKey: holderKey, amount: '25.00', payer: { name: 'Pagador Externo', document: payerDocument } });
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json<{ endToEndId: string; transactionId: number }>();
      assert.deepEqual(Object.keys(body).sort(), ['endToEndId', 'transactionId']);
      assert.match(body.endToEndId, new RegExp(`^E${SANDBOX_PAYER_ISPB}\\d{12}[A-Za-z0-9]{11}$`));
      assert.ok(Number.isSafeInteger(body.transactionId));
      assert.deepEqual(await balances(t.db, holder.accountId), { available: before.available + 2500n, blocked: before.blocked });

      const row = await transaction(t.db, body.transactionId);
      assert.equal(Number(row.account_id), holder.accountId);
      assert.deepEqual(
        [row.type, row.status, row.amount_centavos, row.end_to_end_id, row.pix_key, row.txid],
        ['PAYMENT', 'CONFIRMED', 2500n, body.endToEndId, holderKey, null],
      );
      assert.deepEqual(
        [row.counterpart_name, row.counterpart_document, row.counterpart_ispb, row.counterpart_bank_name],
        ['Pagador Externo', payerDocument, SANDBOX_PAYER_ISPB, SANDBOX_PAYER_BANK],
      );
      assert.equal(row.created_at.getTime(), t.clock.now().getTime());

      assert.deepEqual(
        await onlyEvent(t.db, body.transactionId, 'cash_in', holder.accountId),
        receivePayload({ id: body.transactionId, amount: '25.00', endToEndId: body.endToEndId, debtor: { name: 'Pagador Externo', document: masked(payerDocument) } }),
      );
    });

    it('201 with the payer\'s ispb, a CNPJ payer, a key written in other case, and a description', async () => {
      const cnpj = randomCnpj();
      const res = await post('/sandbox/pix/incoming', {
        pixKey: holderKey.toUpperCase(),
        amount: '0.01',
        payer: { name: 'Empresa Pagadora', document: cnpj, ispb: '60701190' },
        description: 'obrigado',
      });
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json<{ endToEndId: string; transactionId: number }>();
      assert.ok(body.endToEndId.startsWith('E60701190'));
      const row = await transaction(t.db, body.transactionId);
      assert.deepEqual([row.pix_key, row.counterpart_ispb, row.counterpart_bank_name, row.description, row.amount_centavos], [holderKey, '60701190', null, 'obrigado', 1n]);
      const [event] = await outboxOf(t.db, body.transactionId);
      assert.deepEqual(event?.payload.data.debtorAccount, { name: 'Empresa Pagadora', document: masked(cnpj) });
      assert.deepEqual(event.payload.data.payment, { amount: '0.01', currency: 'BRL' });
    });

    it('receivedAt back-dates the receipt: created_at, processed_at and the end-to-end id carry it', async () => {
      const receivedAt = new Date(t.clock.now().getTime() - 89 * 86_400_000);
      const res = await post('/sandbox/pix/incoming', {
        pixKey: holderKey,
        amount: '7.00',
        payer: { name: 'Pagador Antigo', document: randomCpf() },
        receivedAt: receivedAt.toISOString(),
      });
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json<{ endToEndId: string; transactionId: number }>();
      const row = await transaction(t.db, body.transactionId);
      assert.equal(row.created_at.getTime(), receivedAt.getTime());
      assert.equal(row.processed_at?.getTime(), receivedAt.getTime());
      assert.equal(body.endToEndId.slice(9, 21), receivedAt.toISOString().slice(0, 16).replace(/[-T:]/g, ''));
      // Exactly now is not the future.
      const now = await post('/sandbox/pix/incoming', { pixKey: holderKey, amount: '1.00', payer: { name: 'P', document: randomCpf() }, receivedAt: t.clock.now().toISOString() });
      assert.equal(now.statusCode, 201, now.body);
    });

    it('400 for a malformed key, amount, document, ispb, receivedAt, or unknown fields; nothing is credited', async () => {
      const before = await balances(t.db, holder.accountId);
      const payer = { name: 'Pagador', document: randomCpf() };
      const valid = { pixKey: holderKey, amount: '10.00', payer };
      const future = new Date(t.clock.now().getTime() + 60_000).toISOString();
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ ...valid, pixKey: 'not a key' }, /pixKey is not a valid PIX key/],
        [{ ...valid, pixKey: '+1555123456' }, /pixKey is not a valid PIX key/],
        [{ ...valid, pixKey: '' }, /pixKey/],
        [{ ...valid, amount: '10' }, /amount/],
        [{ ...valid, amount: '10.0' }, /amount/],
        [{ ...valid, amount: '10.000' }, /amount/],
        [{ ...valid, amount: '1,00' }, /amount/],
        [{ ...valid, amount: '-1.00' }, /amount/],
        [{ ...valid, amount: ' 10.00' }, /amount/],
        [{ ...valid, amount: 10 }, /amount/],
        [{ ...valid, amount: '0.00' }, /amount/],
        [{ ...valid, amount: '00.50' }, /amount/],
        [{ ...valid, payer: { ...payer, document: '11111111111' } }, /document/],
        [{ ...valid, payer: { ...payer, document: randomCpf().replace(/.$/, (d) => String((Number(d) + 1) % 10)) } }, /document/],
        [{ ...valid, payer: { ...payer, ispb: '123' } }, /ispb/],
        [{ ...valid, payer: { name: 'Sem Documento' } }, /document is required/],
        [{ ...valid, receivedAt: future }, /receivedAt/],
        [{ ...valid, receivedAt: 'yesterday' }, /receivedAt/],
        [{ ...valid, txid: 'short' }, /txid/],
        [{ ...valid, extra: true }, /extra is not an allowed property/],
        [{ ...valid, payer: { ...payer, bank: 'x' } }, /bank is not an allowed property/],
        [{ amount: '10.00', payer }, /pixKey is required/],
      ];
      for (const [body, message] of cases) {
        assert.match(errorMessage(await post('/sandbox/pix/incoming', body), 400), message, JSON.stringify(body));
      }
      assert.deepEqual(await balances(t.db, holder.accountId), before);
    });

    it('422 for a key that is not one of ours: another institution\'s, or not in the directory at all', async () => {
      const outside = await outsideKey();
      for (const pixKey of [outside.key, `nobody-${randomUUID()}@example.com`, randomCpf(), randomUUID()]) {
        const res = await post('/sandbox/pix/incoming', { pixKey, amount: '10.00', payer: { name: 'Pagador', document: randomCpf() } });
        assert.match(errorMessage(res, 422), /key/i, pixKey);
      }
    });

    it('404 for a txid with no charge on that key', async () => {
      const res = await post('/sandbox/pix/incoming', { pixKey: holderKey, amount: '10.00', payer: { name: 'P', document: randomCpf() }, txid: 'a'.repeat(26) });
      errorMessage(res, 404);
    });
  });

  describe('POST /sandbox/refunds/incoming', () => {
    let payer: TestClient;
    let target: Awaited<ReturnType<typeof outsideKey>>;

    before(async () => {
      payer = await createClient(t, { name: 'Pagador Devolvido' });
      await creditAccount(t.db, payer.accountId, 1_000_000n);
      target = await outsideKey();
    });

    async function settledTransfer(amount = 10.5) {
      const sent = await transfer(payer, { pixKey: target.key, payment: { currency: 'BRL', amount } });
      const res = await post('/sandbox/settle');
      assert.equal(res.statusCode, 200, res.body);
      assert.equal((await transaction(t.db, sent.id)).status, 'CONFIRMED');
      return sent;
    }

    const refund = (endToEndId: string, amount: string) => post('/sandbox/refunds/incoming', { endToEndId, amount });

    it('201 for a settled transfer: a REFUND_OUT row, a credit to available and a refund_out REFUND notification', async () => {
      const sent = await settledTransfer();
      const before = await balances(t.db, payer.accountId);
      const res = await refund(sent.endToEndId, '4.00');
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json<{ endToEndId: string; transactionId: number }>();
      assert.deepEqual(Object.keys(body).sort(), ['endToEndId', 'transactionId']);
      assert.match(body.endToEndId, new RegExp(`^D${target.ispb}\\d{12}[A-Za-z0-9]{11}$`));
      assert.deepEqual(await balances(t.db, payer.accountId), { available: before.available + 400n, blocked: before.blocked });

      const row = await transaction(t.db, body.transactionId);
      assert.deepEqual(
        [Number(row.account_id), row.type, row.status, row.amount_centavos, row.end_to_end_id, Number(row.original_transaction_id)],
        [payer.accountId, 'REFUND_OUT', 'CONFIRMED', 400n, body.endToEndId, sent.id],
      );
      assert.deepEqual([row.counterpart_name, row.counterpart_document, row.counterpart_ispb], [target.name, target.document, target.ispb]);

      assert.deepEqual(await onlyEvent(t.db, body.transactionId, 'refund_out', payer.accountId), {
        type: 'REFUND',
        data: {
          id: body.transactionId,
          txId: sent.endToEndId,
          status: 'REFUNDED',
          payment: { amount: '10.50', currency: 'BRL' },
          refunds: [
            {
              status: 'LIQUIDATED',
              payment: { amount: 4, currency: 'BRL' },
              endToEndId: body.endToEndId,
              eventDate: t.clock.now().toISOString(),
              information: '',
            },
          ],
          endToEndId: sent.endToEndId,
          creditDebitType: 'CREDIT',
        },
      });
    });

    it('refunds may add up to the original amount, not one centavo more (422, nothing credited)', async () => {
      const sent = await settledTransfer();
      assert.match(errorMessage(await refund(sent.endToEndId, '10.51'), 422), /exceed/);
      assert.equal((await refund(sent.endToEndId, '6.00')).statusCode, 201);
      const before = await balances(t.db, payer.accountId);
      assert.match(errorMessage(await refund(sent.endToEndId, '4.51'), 422), /exceed/);
      assert.deepEqual(await balances(t.db, payer.accountId), before);
      assert.equal((await refund(sent.endToEndId, '4.50')).statusCode, 201);
      assert.match(errorMessage(await refund(sent.endToEndId, '0.01'), 422), /exceed/);
      const refunds = await t.db.selectFrom('transactions').select('amount_centavos').where('original_transaction_id', '=', BigInt(sent.id)).execute();
      assert.deepEqual(refunds.map((r) => r.amount_centavos).sort(), [450n, 600n]);
      assert.deepEqual(await balances(t.db, payer.accountId), { available: before.available + 450n, blocked: before.blocked });
    });

    it('concurrent refunds of one transfer never add up to more than the original', async () => {
      const sent = await settledTransfer();
      const before = await balances(t.db, payer.accountId);
      const answers = await Promise.all(Array.from({ length: 12 }, () => refund(sent.endToEndId, '2.00')));
      const statuses = answers.map((r) => r.statusCode).sort();
      assert.deepEqual(statuses, [...Array(5).fill(201), ...Array(7).fill(422)], answers.map((r) => r.body).join('\n'));
      const refunds = await t.db.selectFrom('transactions').select('amount_centavos').where('original_transaction_id', '=', BigInt(sent.id)).execute();
      assert.equal(refunds.length, 5);
      assert.deepEqual(await balances(t.db, payer.accountId), { available: before.available + 1000n, blocked: before.blocked });
    });

    it('404 for an endToEndId that is not one of our transfers', async () => {
      assert.match(errorMessage(await refund(`E${t.config.pspIspb}202611221200abcdefghijk`, '1.00'), 404), /endToEndId/);
      // A received PIX is not a transfer of ours.
      const received = await post('/sandbox/pix/incoming', { pixKey: holderKey, amount: '3.00', payer: { name: 'P', document: randomCpf() } });
      errorMessage(await refund(received.json<{ endToEndId: string }>().endToEndId, '1.00'), 404);
    });

    it('422 for a transfer that is not settled: queued, failed, or internal', async () => {
      const rejecting = await outsideKey({ behavior: 'reject' });
      const rejected = await transfer(payer, { pixKey: rejecting.key });
      const timeout = await outsideKey({ behavior: 'timeout' });
      const queued = await transfer(payer, { pixKey: timeout.key });
      assert.match(errorMessage(await refund(queued.endToEndId, '1.00'), 422), /settled/);
      await post('/sandbox/settle');
      assert.equal((await transaction(t.db, rejected.id)).status, 'ERROR');
      assert.equal((await transaction(t.db, queued.id)).status, 'PENDING');
      assert.match(errorMessage(await refund(rejected.endToEndId, '1.00'), 422), /settled/);
      assert.match(errorMessage(await refund(queued.endToEndId, '1.00'), 422), /settled/);

      const internal = await transfer(payer, { pixKey: holderKey });
      await post('/sandbox/settle');
      assert.equal((await transaction(t.db, internal.id)).status, 'CONFIRMED');
      errorMessage(await refund(internal.endToEndId, '1.00'), 422);
      // Let the timeout transfer expire, so nothing stays queued for later tests.
      t.clock.advance(600_000);
      await post('/sandbox/settle');
      t.clock.advance(-600_000);
      assert.equal((await transaction(t.db, queued.id)).status, 'ERROR');
    });

    it('400 for a malformed endToEndId, an amount not "10.00", zero, or unknown fields', async () => {
      const sent = await settledTransfer();
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ endToEndId: 'E123', amount: '1.00' }, /endToEndId/],
        [{ endToEndId: `${sent.endToEndId}x`, amount: '1.00' }, /endToEndId/],
        [{ endToEndId: sent.endToEndId, amount: '1' }, /amount/],
        [{ endToEndId: sent.endToEndId, amount: 1 }, /amount/],
        [{ endToEndId: sent.endToEndId, amount: '0.00' }, /amount/],
        [{ endToEndId: sent.endToEndId, amount: '1.00', reason: 'x' }, /reason is not an allowed property/],
        [{ amount: '1.00' }, /endToEndId is required/],
      ];
      for (const [body, message] of cases) {
        assert.match(errorMessage(await post('/sandbox/refunds/incoming', body), 400), message, JSON.stringify(body));
      }
      const refunds = await t.db.selectFrom('transactions').select('id').where('original_transaction_id', '=', BigInt(sent.id)).execute();
      assert.deepEqual(refunds, []);
    });
  });

  describe('POST /sandbox/settle', () => {
    it('200 {settled, failed}: settles every queued transfer now, leaves a key that never answers queued', async () => {
      const payer = await createClient(t);
      await creditAccount(t.db, payer.accountId, 100_000n);
      const ok = await outsideKey();
      const rejecting = await outsideKey({ behavior: 'reject' });
      const timeout = await outsideKey({ behavior: 'timeout' });
      const sent = [
        await transfer(payer, { pixKey: ok.key }),
        await transfer(payer, { pixKey: ok.key, priority: 'HIGH', creditorDocument: ok.document }),
        await transfer(payer, { pixKey: rejecting.key }),
        await transfer(payer, { pixKey: timeout.key, expiration: 60 }),
      ];
      const res = await post('/sandbox/settle');
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { settled: 2, failed: 1 });
      const statuses = await Promise.all(sent.map(async (s) => (await transaction(t.db, s.id)).status));
      assert.deepEqual(statuses, ['CONFIRMED', 'CONFIRMED', 'ERROR', 'PENDING']);
      assert.deepEqual((await post('/sandbox/settle')).json(), { settled: 0, failed: 0 });
      assert.deepEqual(await balances(t.db, payer.accountId), { available: 100_000n - 3150n, blocked: 1050n });

      t.clock.advance(60_000);
      assert.deepEqual((await post('/sandbox/settle')).json(), { settled: 0, failed: 1 });
      assert.deepEqual(await balances(t.db, payer.accountId), { available: 100_000n - 2100n, blocked: 0n });
      t.clock.advance(-60_000);
    });

    it('accepts an empty JSON body too', async () => {
      const res = await post('/sandbox/settle', {});
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { settled: 0, failed: 0 });
    });
  });

  it('in production mode every /sandbox/* route is 404, while /admin/* still answers', async () => {
    const config = testConfig({ PIX_MODE: 'production', DATABASE_URL: 'postgres://127.0.0.1/unused' });
    assert.equal(config.mode, 'production');
    const production = await buildApp({ config, db: t.db, clock: t.clock, logLevel: false });
    try {
      for (const url of ROUTES) {
        for (const headers of [adminHeaders, {}]) {
          const res = await production.inject({ method: 'POST', url, headers, payload: {} });
          errorMessage(res, 404);
        }
      }
      const admin = await production.inject({ method: 'POST', url: '/admin/accounts', headers: adminHeaders, payload: { name: 'Conta Prod', document: randomCpf() } });
      assert.equal(admin.statusCode, 201, admin.body);
    } finally {
      await production.close();
    }
  });

  it('the ledger stays consistent after all of the above', async () => {
    await assertLedgerInvariants(t.db);
  });
});
