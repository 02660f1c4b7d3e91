import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { createClient, creditAccount, evpKey, externalKey, fundedClient, randomCnpj, randomCpf, requestToken, type TestClient } from '../../../test/factories.ts';
import { adminHeaders, onPostgres, startTestApp, type TestApp } from '../../../test/harness.ts';
import { assertError } from '../../../test/assertions.ts';
import { numberToCentavos } from '../../lib/money.ts';

const DAY_MS = 86_400_000;
const OTHER_ISPB = '12345678';
const E2E = /^E99999999\d{12}[A-Za-z0-9]{11}$/;
const ONE_CONNECTION = 'PGlite has a single connection: no second transaction can run beside the request';

/** Wire amounts to centavos. */
const toCentavos = (amount: number) => numberToCentavos(amount)!;


interface Transfer {
  endToEndId: string;
  eventDate: string;
  id: number;
  payment: { amount: number };
  type: string;
}

const body = (pixKey: string, amount: number, extra: Record<string, unknown> = {}) => ({ pixKey, payment: { currency: 'BRL', amount }, ...extra });

describe('POST /dict/pix', () => {
  let t: TestApp;
  let a: TestClient;
  let b: TestClient;
  /** A key at another institution, and its owner's document. */
  let dest: { key: string; document: string };

  const transfer = (headers: Record<string, string>, payload: unknown, key: string | null = randomUUID()) =>
    t.app.inject({ method: 'POST', url: '/dict/pix', headers: { ...headers, ...(key === null ? {} : { 'x-idempotency-key': key }) }, payload: payload as object });

  async function balance(client: TestClient, headers = client.headers): Promise<{ available: bigint; blocked: bigint }> {
    const res = await t.app.inject({ method: 'GET', url: '/accounts/balances', headers });
    assert.equal(res.statusCode, 200, res.body);
    const { available, blocked } = res.json().data[0].balanceAmount as { available: number; blocked: number };
    return { available: toCentavos(available), blocked: toCentavos(blocked) };
  }

  const withdrawals = (client: TestClient) =>
    t.db.selectFrom('transactions').selectAll().where('account_id', '=', BigInt(client.accountId)).where('type', '=', 'WITHDRAW').orderBy('id').execute();

  /** A key at another institution: an EVP-shaped key of OTHER_ISPB, unless given. */
  const destination = (input: { key?: string; document?: string } = {}) =>
    externalKey(t, { key: input.key ?? randomUUID(), name: 'Joana Destino', ispb: OTHER_ISPB, bankName: 'Outro Banco', ...(input.document ? { document: input.document } : {}) });
  const ownKey = (client: TestClient) => evpKey(t, client.accountId);
  const funded = (centavos: bigint) => fundedClient(t, centavos);

  /** For every ledger account, balance = credits - debits; and all balances sum to zero. */
  async function assertLedgerInvariant(): Promise<void> {
    const { rows } = await sql<{ id: bigint; balance: bigint; allow_negative: boolean; credits: bigint; debits: bigint }>`
      select la.id, la.balance, la.allow_negative,
             coalesce((select sum(p.amount_centavos) from postings p where p.credit_account_id = la.id), 0)::int8 as credits,
             coalesce((select sum(p.amount_centavos) from postings p where p.debit_account_id = la.id), 0)::int8 as debits
        from ledger_accounts la`.execute(t.db);
    let total = 0n;
    for (const row of rows) {
      assert.equal(row.balance, row.credits - row.debits, `ledger account ${row.id}`);
      if (!row.allow_negative) assert.ok(row.balance >= 0n, `ledger account ${row.id} is negative`);
      total += row.balance;
    }
    assert.equal(total, 0n);
  }

  before(async () => {
    t = await startTestApp();
    [a, b] = await Promise.all([createClient(t), createClient(t)]);
    await creditAccount(t.db, a.accountId, 1_000_000_00n);
    await creditAccount(t.db, b.accountId, 1_000_00n);
    dest = await destination();
  });
  after(() => t?.close());

  describe('success', () => {
    it('201 with exactly the transfer view; the amount moves from available to blocked', async () => {
      const before = await balance(a);
      const key = randomUUID();
      const res = await transfer(a.headers, body(dest.key, 12.34), key);
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.headers['idempotent-replayed'], undefined);
      const view = res.json<Transfer>();
      assert.deepEqual(Object.keys(view).sort(), ['endToEndId', 'eventDate', 'id', 'payment', 'type']);
      assert.deepEqual(view.payment, { amount: 12.34 });
      assert.equal(view.type, 'PENDING');
      assert.equal(typeof view.id, 'number');
      assert.ok(Number.isInteger(view.id) && view.id > 0);
      assert.equal(view.endToEndId.length, 32);
      assert.match(view.endToEndId, E2E);
      const now = t.clock.now();
      assert.equal(view.endToEndId.slice(9, 21), now.toISOString().slice(0, 16).replace(/[-T:]/g, ''));
      assert.equal(view.eventDate, now.toISOString());
      assert.deepEqual(await balance(a), { available: before.available - 1234n, blocked: before.blocked + 1234n });

      const row = (await withdrawals(a)).find((r) => r.id === BigInt(view.id));
      assert.ok(row);
      assert.equal(row.status, 'PENDING');
      assert.equal(row.amount_centavos, 1234n);
      assert.equal(row.end_to_end_id, view.endToEndId);
      assert.equal(row.external_id, key, 'externalId defaults to the idempotency key');
      assert.equal(row.idempotency_key, key);
      assert.equal(row.pix_key, dest.key);
      assert.equal(row.priority, 'NORM');
      assert.equal(row.created_at.getTime(), now.getTime());
      assert.equal(row.expires_at!.getTime() - row.created_at.getTime(), 600_000, 'expiration defaults to 600 s');
      assert.equal(row.counterpart_document, dest.document);
      assert.equal(row.counterpart_ispb, OTHER_ISPB);
      assert.equal(row.counterpart_account_id, null);
    });

    it('keeps a given externalId, expiration, description and ispbDeny', async () => {
      const externalId = `order-${randomUUID()}`;
      const res = await transfer(a.headers, body(dest.key, 1, { externalId, expiration: 10800, description: 'Aluguel', ispbDeny: ['00000000', '11111111'] }));
      assert.equal(res.statusCode, 201, res.body);
      const row = (await withdrawals(a)).find((r) => r.id === BigInt(res.json<Transfer>().id))!;
      assert.equal(row.external_id, externalId);
      assert.equal(row.expires_at!.getTime() - row.created_at.getTime(), 10_800_000);
      assert.equal(row.description, 'Aluguel');
      assert.deepEqual(row.ispb_deny, ['00000000', '11111111']);
      const minimum = await transfer(a.headers, body(dest.key, 1, { expiration: 1, ispbDeny: [] }));
      assert.equal(minimum.statusCode, 201, minimum.body);
      const short = (await withdrawals(a)).find((r) => r.id === BigInt(minimum.json<Transfer>().id))!;
      assert.equal(short.expires_at!.getTime() - short.created_at.getTime(), 1000);
    });

    it('amounts 0.01 and 1234.56 are exact on the wire, in the row and in the balance', async () => {
      for (const [amount, centavos] of [[0.01, 1n], [1234.56, 123_456n], [7, 700n]] as const) {
        const before = await balance(a);
        const res = await transfer(a.headers, body(dest.key, amount));
        assert.equal(res.statusCode, 201, res.body);
        assert.match(res.body, new RegExp(`"payment":\\{"amount":${String(amount).replace('.', '\\.')}\\}`));
        const row = (await withdrawals(a)).find((r) => r.id === BigInt(res.json<Transfer>().id))!;
        assert.equal(row.amount_centavos, centavos);
        assert.deepEqual(await balance(a), { available: before.available - centavos, blocked: before.blocked + centavos });
      }
    });

    it('e-mail keys are matched case-insensitively; keys of another account of ours are accepted', async () => {
      const email = `Joana.${randomUUID().slice(0, 8)}@Example.com`;
      await destination({ key: email });
      const res = await transfer(a.headers, body(`  ${email.toUpperCase()} `, 2));
      assert.equal(res.statusCode, 201, res.body);
      const row = (await withdrawals(a)).find((r) => r.id === BigInt(res.json<Transfer>().id))!;
      assert.equal(row.pix_key, email.toLowerCase());

      const internal = await transfer(a.headers, body(await ownKey(b), 3));
      assert.equal(internal.statusCode, 201, internal.body);
      const internalRow = (await withdrawals(a)).find((r) => r.id === BigInt(internal.json<Transfer>().id))!;
      assert.equal(internalRow.counterpart_account_id, BigInt(b.accountId));
    });
  });

  describe('400: invalid requests change nothing', () => {
    const cases: [string, (key: string) => unknown, RegExp][] = [
      ['pixKey: CPF with bad check digits', () => body('12345678900', 1), /pixKey/],
      ['pixKey: phone without +55', () => body('11987654321', 1), /pixKey/],
      ['pixKey: phone with another country code', () => body('+14155552671', 1), /pixKey/],
      ['pixKey: phone with 55 but no +', () => body('5511987654321', 1), /pixKey/],
      ['pixKey: malformed e-mail', () => body('joana@@example', 1), /pixKey/],
      ['pixKey: e-mail without domain', () => body('joana@', 1), /pixKey/],
      ['pixKey: upper-case EVP', () => body(randomUUID().toUpperCase().replace(/^[0-9]/, 'A'), 1), /pixKey/],
      ['pixKey: EVP of the wrong shape', () => body(`${randomUUID()}0`, 1), /pixKey/],
      ['pixKey: longer than 77 characters', () => body(`${'a'.repeat(70)}@example.com`, 1), /pixKey/],
      ['pixKey: empty', () => body('', 1), /pixKey/],
      ['amount 0', (k) => body(k, 0), /amount/],
      ['amount negative', (k) => body(k, -5), /amount/],
      ['amount with 3 decimals', (k) => body(k, 10.001), /amount/],
      ['amount as a string', (k) => body(k, '10.00' as unknown as number), /amount/],
      ['amount huge (1e20)', (k) => body(k, 1e20), /amount/],
      ['amount missing', (k) => ({ pixKey: k, payment: { currency: 'BRL' } }), /amount/],
      ['currency other than BRL', (k) => ({ pixKey: k, payment: { currency: 'USD', amount: 1 } }), /currency/],
      ['payment missing', (k) => ({ pixKey: k }), /payment/],
      ['pixKey missing', () => ({ payment: { currency: 'BRL', amount: 1 } }), /pixKey/],
      ['priority other than HIGH/NORM', (k) => body(k, 1, { priority: 'LOW' }), /priority/],
      ['priority HIGH without creditorDocument', (k) => body(k, 1, { priority: 'HIGH' }), /creditorDocument/],
      ['creditorDocument with bad check digits', (k) => body(k, 1, { priority: 'HIGH', creditorDocument: '12345678900' }), /creditorDocument/],
      ['creditorDocument that is no document', (k) => body(k, 1, { creditorDocument: 'abcdefghijk' }), /creditorDocument/],
      ['expiration 0', (k) => body(k, 1, { expiration: 0 }), /expiration/],
      ['expiration 10801', (k) => body(k, 1, { expiration: 10801 }), /expiration/],
      ['expiration 1.5', (k) => body(k, 1, { expiration: 1.5 }), /expiration/],
      ['ispbDeny with a 7-digit entry', (k) => body(k, 1, { ispbDeny: ['12345678', '1234567'] }), /ispbDeny/],
      ['ispbDeny with a letter', (k) => body(k, 1, { ispbDeny: ['1234567a'] }), /ispbDeny/],
      ['description over 140 characters', (k) => body(k, 1, { description: 'x'.repeat(141) }), /description/],
      ['externalId over 64 characters', (k) => body(k, 1, { externalId: 'x'.repeat(65) }), /externalId/],
      ['externalId empty', (k) => body(k, 1, { externalId: '' }), /externalId/],
    ];

    for (const [name, build, message] of cases) {
      it(name, async () => {
        const before = await balance(b);
        const count = (await withdrawals(b)).length;
        const key = randomUUID();
        assertError(await transfer(b.headers, build(dest.key), key), 400, message);
        assert.deepEqual(await balance(b), before);
        assert.equal((await withdrawals(b)).length, count);
      });
    }

    it('missing or non-UUID x-idempotency-key', async () => {
      const before = await balance(b);
      const count = (await withdrawals(b)).length;
      assertError(await transfer(b.headers, body(dest.key, 1), null), 400, /x-idempotency-key/);
      for (const key of ['', 'abc', '123', `${randomUUID()}x`, randomUUID().replaceAll('-', ''), 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz']) {
        assertError(await transfer(b.headers, body(dest.key, 1), key), 400, /x-idempotency-key/);
      }
      assert.deepEqual(await balance(b), before);
      assert.equal((await withdrawals(b)).length, count);
    });

    it('a refused request does not use up its idempotency key', async () => {
      const key = randomUUID();
      assertError(await transfer(b.headers, body(dest.key, 0), key), 400);
      const res = await transfer(b.headers, body(dest.key, 1), key);
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.headers['idempotent-replayed'], undefined);
    });
  });

  describe('422 and 409: refused by the directory, the balance or the account', () => {
    async function refused(client: TestClient, payload: unknown, status: number, message: RegExp): Promise<void> {
      const before = await balance(client);
      const count = (await withdrawals(client)).length;
      assertError(await transfer(client.headers, payload), status, message);
      assert.deepEqual(await balance(client), before);
      assert.equal((await withdrawals(client)).length, count);
    }

    it('422 for a key that is not in the directory', async () => {
      await refused(a, body(randomUUID(), 1), 422, /not found/i);
      await refused(a, body(randomCpf(), 1), 422, /not found/i);
    });

    it('422 for insufficient balance; the whole balance can be sent, not a centavo more', async () => {
      const c = await funded(10_00n);
      await refused(c, body(dest.key, 10.01), 422, /insufficient/i);
      await refused(c, body(dest.key, 999_999_999_999.99), 422, /insufficient/i);
      const all = await transfer(c.headers, body(dest.key, 10));
      assert.equal(all.statusCode, 201, all.body);
      assert.deepEqual(await balance(c), { available: 0n, blocked: 10_00n });
      await refused(c, body(dest.key, 0.01), 422, /insufficient/i);
    });

    it("422 when ispbDeny lists the key's institution", async () => {
      await refused(a, body(dest.key, 1, { ispbDeny: ['00000001', OTHER_ISPB] }), 422, /ispbDeny/);
      const ours = await ownKey(b);
      await refused(a, body(ours, 1, { ispbDeny: ['99999999'] }), 422, /ispbDeny/);
      const allowed = await transfer(a.headers, body(dest.key, 1, { ispbDeny: ['00000001'] }));
      assert.equal(allowed.statusCode, 201, allowed.body);
    });

    it("HIGH: 422 when creditorDocument is not the key owner's, 201 when it is", async () => {
      const company = await destination({ document: randomCnpj() });
      await refused(a, body(company.key, 1, { priority: 'HIGH', creditorDocument: randomCnpj() }), 422, /creditorDocument/);
      await refused(a, body(company.key, 1, { priority: 'HIGH', creditorDocument: dest.document }), 422, /creditorDocument/);
      const cnpj = company.document;
      const formatted = `${cnpj.slice(0, 2)}.${cnpj.slice(2, 5)}.${cnpj.slice(5, 8)}/${cnpj.slice(8, 12)}-${cnpj.slice(12)}`;
      for (const creditorDocument of [cnpj, formatted]) {
        const res = await transfer(a.headers, body(company.key, 1, { priority: 'HIGH', creditorDocument }));
        assert.equal(res.statusCode, 201, res.body);
        const row = (await withdrawals(a)).find((r) => r.id === BigInt(res.json<Transfer>().id))!;
        assert.equal(row.priority, 'HIGH');
      }
    });

    it("HIGH: a transfer refused for its amount or its externalId answers the same whether or not creditorDocument is the owner's", async () => {
      const company = await destination({ document: randomCnpj() });
      const poor = await funded(10_00n);
      const answer = async (client: TestClient, payload: unknown) => {
        const res = await transfer(client.headers, payload);
        return { status: res.statusCode, code: res.json<{ code: string }>().code, message: res.json<{ message: string }>().message };
      };
      const right = await answer(poor, body(company.key, 50, { priority: 'HIGH', creditorDocument: company.document }));
      const wrong = await answer(poor, body(company.key, 50, { priority: 'HIGH', creditorDocument: randomCnpj() }));
      assert.deepEqual(right, { status: 422, code: 'INSUFFICIENT_BALANCE', message: right.message });
      assert.deepEqual(wrong, right, 'a guess of the owner\'s document is neither confirmed nor refuted');

      const externalId = `invoice-${randomUUID()}`;
      assert.equal((await transfer(a.headers, body(dest.key, 1, { externalId }))).statusCode, 201);
      const takenRight = await answer(a, body(company.key, 1, { priority: 'HIGH', creditorDocument: company.document, externalId }));
      const takenWrong = await answer(a, body(company.key, 1, { priority: 'HIGH', creditorDocument: randomCnpj(), externalId }));
      assert.equal(takenRight.code, 'EXTERNAL_ID_TAKEN');
      assert.deepEqual(takenWrong, takenRight);
      // Once nothing else would refuse it, a wrong document is refused for what it is.
      assert.equal((await answer(poor, body(company.key, 5, { priority: 'HIGH', creditorDocument: randomCnpj() }))).code, 'CREDITOR_DOCUMENT_MISMATCH');
    });

    it("422 for a transfer to one of the sender's own keys", async () => {
      await refused(a, body(await ownKey(a), 1), 422, /own|paying account/i);
    });

    it('409 for an externalId already used by another transfer of the account; other accounts may use it', async () => {
      const externalId = `invoice-${randomUUID()}`;
      const first = await transfer(a.headers, body(dest.key, 1, { externalId }));
      assert.equal(first.statusCode, 201, first.body);
      await refused(a, body(dest.key, 2, { externalId }), 409, /externalId/);
      // The default externalId (an earlier transfer's idempotency key) is taken as well.
      const key = randomUUID();
      assert.equal((await transfer(a.headers, body(dest.key, 1), key)).statusCode, 201);
      await refused(a, body(dest.key, 1, { externalId: key }), 409, /externalId/);

      // Without an externalId, a key that is another transfer's externalId leaves the new one without.
      const taken = randomUUID();
      assert.equal((await transfer(a.headers, body(dest.key, 1, { externalId: taken }))).statusCode, 201);
      const plain = await transfer(a.headers, body(dest.key, 1), taken);
      assert.equal(plain.statusCode, 201, plain.body);
      const plainRow = (await withdrawals(a)).find((r) => r.id === BigInt(plain.json<Transfer>().id))!;
      assert.equal(plainRow.external_id, null);

      const other = await transfer(b.headers, body(dest.key, 1, { externalId }));
      assert.equal(other.statusCode, 201, other.body);
      const row = (await withdrawals(b)).find((r) => r.id === BigInt(other.json<Transfer>().id))!;
      assert.equal(row.external_id, externalId);
    });
  });

  describe('idempotency', () => {
    it('same key and body: the same answer, replayed, one transfer and one debit', async () => {
      const c = await funded(100_00n);
      const key = randomUUID();
      const payload = body(dest.key, 25.5, { description: 'uma vez' });
      const first = await transfer(c.headers, payload, key);
      assert.equal(first.statusCode, 201, first.body);
      const ledgerBefore = (await t.db.selectFrom('ledger_transactions').select('id').execute()).length;
      // Same body with its fields in another order, and the key in upper case.
      const reordered = { description: 'uma vez', payment: { amount: 25.5, currency: 'BRL' }, pixKey: dest.key };
      for (const [again, sameKey] of [[payload, key], [payload, key], [reordered, key.toUpperCase()]] as const) {
        const res = await transfer(c.headers, again, sameKey);
        assert.equal(res.statusCode, 201, res.body);
        assert.equal(res.headers['idempotent-replayed'], 'true');
        assert.deepEqual(res.json(), first.json());
      }
      assert.equal((await withdrawals(c)).length, 1);
      assert.deepEqual(await balance(c), { available: 74_50n, blocked: 25_50n });
      assert.equal((await t.db.selectFrom('ledger_transactions').select('id').execute()).length, ledgerBefore);
    });

    it('same key, another body: 422 and nothing new', async () => {
      const c = await funded(100_00n);
      const key = randomUUID();
      assert.equal((await transfer(c.headers, body(dest.key, 1), key)).statusCode, 201);
      for (const other of [body(dest.key, 2), body(dest.key, 1, { description: 'x' }), body(dest.key, 1, { externalId: 'y' })]) {
        assertError(await transfer(c.headers, other, key), 422, /x-idempotency-key.*different request/);
      }
      assert.equal((await withdrawals(c)).length, 1);
      assert.deepEqual(await balance(c), { available: 99_00n, blocked: 1_00n });
    });

    it('keys are scoped per account', async () => {
      const c = await funded(100_00n);
      const d = await funded(100_00n);
      const key = randomUUID();
      const payload = body(dest.key, 3);
      const first = await transfer(c.headers, payload, key);
      const second = await transfer(d.headers, payload, key);
      assert.equal(first.statusCode, 201, first.body);
      assert.equal(second.statusCode, 201, second.body);
      assert.equal(second.headers['idempotent-replayed'], undefined);
      assert.notEqual(second.json<Transfer>().id, first.json<Transfer>().id);
      assert.notEqual(second.json<Transfer>().endToEndId, first.json<Transfer>().endToEndId);
      for (const client of [c, d]) {
        const rows = await withdrawals(client);
        assert.equal(rows.length, 1);
        assert.equal(rows[0]!.external_id, key);
        assert.deepEqual(await balance(client), { available: 97_00n, blocked: 3_00n });
      }
    });

    it('a key is kept 24 hours; after that it may be used for a new transfer', async () => {
      const c = await funded(100_00n);
      const key = randomUUID();
      const payload = body(dest.key, 4);
      const first = await transfer(c.headers, payload, key);
      assert.equal(first.statusCode, 201, first.body);
      const start = t.clock.now();
      const headersNow = async () => ({ ...c.headers, authorization: `Bearer ${await requestToken(t, c, c.cert)}` });
      try {
        t.clock.advance(DAY_MS - 1);
        const replay = await transfer(await headersNow(), payload, key);
        assert.equal(replay.headers['idempotent-replayed'], 'true');
        assert.deepEqual(replay.json(), first.json());

        t.clock.advance(1);
        const headers = await headersNow();
        const fresh = await transfer(headers, payload, key);
        assert.equal(fresh.statusCode, 201, fresh.body);
        assert.equal(fresh.headers['idempotent-replayed'], undefined);
        assert.notEqual(fresh.json<Transfer>().id, first.json<Transfer>().id);
        assert.equal(fresh.json<Transfer>().eventDate, t.clock.now().toISOString());
        // The key now answers for the new transfer, even with another body.
        const again = await transfer(headers, payload, key);
        assert.deepEqual(again.json(), fresh.json());
        assertError(await transfer(headers, body(dest.key, 5), key), 422);

        const rows = await withdrawals(c);
        assert.equal(rows.length, 2);
        assert.ok(rows.every((r) => r.idempotency_key === key));
        // externalIds stay unique: the first transfer keeps the key as its externalId.
        assert.deepEqual(rows.map((r) => r.external_id), [key, null]);
        assert.deepEqual(await balance(c, headers), { available: 92_00n, blocked: 8_00n });
      } finally {
        t.clock.set(start);
      }
    });

    it('409 while another transaction holds the key; the key works once it is released', { skip: !onPostgres && ONE_CONNECTION }, async () => {
      const c = await funded(100_00n);
      const key = randomUUID();
      const holder = new pg.Client({ connectionString: t.testDb.url });
      await holder.connect();
      try {
        await holder.query('begin');
        const { rows } = await holder.query<{ locked: boolean }>(
          `select pg_try_advisory_xact_lock(hashtextextended($1::text || ':' || $2, 7262)) as locked`,
          [String(c.accountId), key],
        );
        assert.equal(rows[0]!.locked, true);
        assertError(await transfer(c.headers, body(dest.key, 1), key), 409, /still being processed/);
        // Another key of the same account, and the same key at another account, are not held.
        assert.equal((await transfer(c.headers, body(dest.key, 1))).statusCode, 201);
        assert.equal((await transfer(b.headers, body(dest.key, 1), key)).statusCode, 201);
        assert.equal((await withdrawals(c)).length, 1);
        await holder.query('rollback');
      } finally {
        await holder.end();
      }
      const res = await transfer(c.headers, body(dest.key, 1), key);
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.headers['idempotent-replayed'], undefined);
      assert.deepEqual(await balance(c), { available: 98_00n, blocked: 2_00n });
    });

    it('a finished request is replayed even while another transaction holds its key', { skip: !onPostgres && ONE_CONNECTION }, async () => {
      const c = await funded(100_00n);
      const key = randomUUID();
      const payload = body(dest.key, 1);
      const first = await transfer(c.headers, payload, key);
      assert.equal(first.statusCode, 201, first.body);
      const holder = new pg.Client({ connectionString: t.testDb.url });
      await holder.connect();
      const start = t.clock.now();
      try {
        await holder.query('begin');
        await holder.query(`select pg_try_advisory_xact_lock(hashtextextended($1::text || ':' || $2, 7262))`, [String(c.accountId), key]);
        // The holder can only be another repeat: the stored answer is final.
        const replay = await transfer(c.headers, payload, key);
        assert.equal(replay.statusCode, 201, replay.body);
        assert.equal(replay.headers['idempotent-replayed'], 'true');
        assert.deepEqual(replay.json(), first.json());
        assertError(await transfer(c.headers, body(dest.key, 2), key), 422, /different request/);
        // Once the answer has expired, the holder may be creating a new transfer with the key.
        t.clock.advance(DAY_MS);
        const headers = { ...c.headers, authorization: `Bearer ${await requestToken(t, c, c.cert)}` };
        assertError(await transfer(headers, payload, key), 409, /still being processed/);
        await holder.query('rollback');
      } finally {
        t.clock.set(start);
        await holder.end();
      }
      assert.equal((await withdrawals(c)).length, 1);
    });
  });

  describe('concurrency', { skip: !onPostgres && ONE_CONNECTION }, () => {
    it('ten concurrent requests with one key create exactly one transfer', async () => {
      const c = await funded(100_00n);
      const key = randomUUID();
      const answers = await Promise.all(Array.from({ length: 10 }, () => transfer(c.headers, body(dest.key, 9.99), key)));
      const created = answers.filter((r) => r.statusCode === 201);
      assert.ok(created.length >= 1);
      assert.equal(created.filter((r) => r.headers['idempotent-replayed'] === undefined).length, 1);
      for (const res of answers) {
        if (res.statusCode === 201) assert.deepEqual(res.json(), created[0]!.json());
        else assertError(res, 409, /still being processed/);
      }
      const rows = await withdrawals(c);
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.id, BigInt(created[0]!.json<Transfer>().id));
      assert.deepEqual(await balance(c), { available: 90_01n, blocked: 9_99n });
    });

    it('50 concurrent transfers from an account that affords 20: exactly 20 succeed', async () => {
      const amount = 12.34;
      const initial = 20n * 1234n + 1233n;
      const c = await funded(initial);
      const answers = await Promise.all(Array.from({ length: 50 }, () => transfer(c.headers, body(dest.key, amount))));
      const counts = new Map<number, number>();
      for (const res of answers) counts.set(res.statusCode, (counts.get(res.statusCode) ?? 0) + 1);
      assert.deepEqual(Object.fromEntries(counts), { 201: 20, 422: 30 });
      for (const res of answers.filter((r) => r.statusCode === 422)) assertError(res, 422, /insufficient/i);
      assert.deepEqual(await balance(c), { available: initial - 20n * 1234n, blocked: 20n * 1234n });
      assert.equal((await withdrawals(c)).length, 20);
      await assertLedgerInvariant();
    });

    it('ten concurrent transfers with one explicit externalId: one 201, the others 409', async () => {
      const c = await funded(100_00n);
      const externalId = `race-${randomUUID()}`;
      const answers = await Promise.all(Array.from({ length: 10 }, () => transfer(c.headers, body(dest.key, 1, { externalId }))));
      assert.equal(answers.filter((r) => r.statusCode === 201).length, 1);
      for (const res of answers.filter((r) => r.statusCode !== 201)) assertError(res, 409, /externalId/);
      assert.equal((await withdrawals(c)).length, 1);
      assert.deepEqual(await balance(c), { available: 99_00n, blocked: 1_00n });
    });
  });

  describe('authentication and isolation', () => {
    it('401 without a token or with a garbage one; no transfer is created', async () => {
      const count = async () => (await t.db.selectFrom('transactions').select('id').execute()).length;
      const before = await count();
      const { authorization: _, ...certOnly } = a.headers;
      for (const headers of [{}, certOnly, { ...certOnly, authorization: 'Bearer garbage' }, { ...certOnly, authorization: `Bearer ${b.token}` }]) {
        assertError(await transfer(headers, body(dest.key, 1)), 401);
        // Authentication comes before validation: an invalid body is still a 401.
        assertError(await transfer(headers, { pixKey: 'x' }, null), 401);
      }
      assert.equal(await count(), before);
    });

    it("a transfer is debited only from the token's account", async () => {
      const [beforeA, beforeB] = [await balance(a), await balance(b)];
      const res = await transfer(b.headers, body(dest.key, 1.5));
      assert.equal(res.statusCode, 201, res.body);
      assert.deepEqual(await balance(a), beforeA);
      assert.deepEqual(await balance(b), { available: beforeB.available - 150n, blocked: beforeB.blocked + 150n });
      const row = await t.db.selectFrom('transactions').select('account_id').where('id', '=', BigInt(res.json<Transfer>().id)).executeTakeFirstOrThrow();
      assert.equal(row.account_id, BigInt(b.accountId));
      const foreign = await t.app.inject({ method: 'GET', url: `/api/pix/transaction/${res.json<Transfer>().id}`, headers: a.headers });
      assertError(foreign, 404);
    });
  });

  describe('settlement', () => {
    it('a HIGH transfer to a sandbox key settles via POST /sandbox/settle: blocked 0, CONFIRMED', async () => {
      const c = await funded(50_00n);
      const res = await transfer(c.headers, body(dest.key, 20, { priority: 'HIGH', creditorDocument: dest.document }));
      assert.equal(res.statusCode, 201, res.body);
      const { id } = res.json<Transfer>();
      assert.deepEqual(await balance(c), { available: 30_00n, blocked: 20_00n });

      const settle = await t.app.inject({ method: 'POST', url: '/sandbox/settle', headers: adminHeaders });
      assert.equal(settle.statusCode, 200, settle.body);
      assert.ok(settle.json<{ settled: number }>().settled >= 1);
      assert.deepEqual(await balance(c), { available: 30_00n, blocked: 0n });

      const view = await t.app.inject({ method: 'GET', url: `/api/pix/transaction/${id}`, headers: c.headers });
      assert.equal(view.statusCode, 200, view.body);
      assert.equal(view.json<{ status: string }>().status, 'CONFIRMED');
    });

    it('a replay after settlement answers what the first request was answered', async () => {
      const c = await funded(50_00n);
      const key = randomUUID();
      const payload = body(dest.key, 7.1, { priority: 'HIGH', creditorDocument: dest.document });
      const first = await transfer(c.headers, payload, key);
      assert.equal(first.statusCode, 201, first.body);
      const settle = await t.app.inject({ method: 'POST', url: '/sandbox/settle', headers: adminHeaders });
      assert.equal(settle.statusCode, 200, settle.body);
      const row = (await withdrawals(c))[0]!;
      assert.equal(row.status, 'CONFIRMED');

      const replay = await transfer(c.headers, payload, key);
      assert.equal(replay.statusCode, 201, replay.body);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.body, first.body);
      assert.deepEqual(replay.json<Transfer>().payment, { amount: 7.1 });
      assert.equal(replay.json<Transfer>().type, 'PENDING');
    });

    it('the ledger balances after everything above', async () => {
      await assertLedgerInvariant();
    });
  });
});
