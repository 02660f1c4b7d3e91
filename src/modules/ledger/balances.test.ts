import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createClient, creditAccount, linkCertificate, type TestClient } from '../../../test/factories.ts';
import { startTestApp, type TestApp } from '../../../test/harness.ts';
import { issueCertificate } from '../../lib/certificate-authority.ts';
import { AppError } from '../../http/errors.ts';
import { centavosToNumber, numberToCentavos } from '../../lib/money.ts';
import { holderLedgerAccountIds, post, type Posting } from './service.ts';
import { errorMessage } from '../../../test/assertions.ts';

const ROUTES = ['/accounts/balances', '/balance'] as const;

/** Both views of one account's balance, as plain numbers. */
interface Seen {
  available: number;
  blocked: number;
}


/** Wire amounts to centavos and back (balances of holders are never negative). */
const toCentavos = (amount: number) => numberToCentavos(amount)!;
const toAmount = centavosToNumber;

const b64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;

describe('balances', () => {
  let t: TestApp;
  let a: TestClient;
  let b: TestClient;
  let c: TestClient;

  const get = (url: string, headers: Record<string, string>) => t.app.inject({ method: 'GET', url, headers });

  /** Reads both views, checks they agree, and returns what they say. */
  async function seen(client: TestClient): Promise<Seen> {
    const [central, standard] = await Promise.all(ROUTES.map((url) => get(url, client.headers)));
    assert.equal(central!.statusCode, 200, central!.body);
    assert.equal(standard!.statusCode, 200, standard!.body);
    const { available, blocked, overdraft } = central!.json().data[0].balanceAmount;
    assert.equal(overdraft, 0);
    const s = standard!.json();
    assert.equal(s.netBalance, available);
    assert.equal(s.blockedBalance, blocked);
    assert.equal(s.grossBalance, toAmount(toCentavos(available) + toCentavos(blocked)));
    return { available, blocked };
  }

  async function postings(client: TestClient, build: (ids: { available: bigint; blocked: bigint }) => Posting[]): Promise<void> {
    await t.db.transaction().execute(async (trx) => {
      const ids = await holderLedgerAccountIds(trx, BigInt(client.accountId));
      await post(trx, 'test_move', null, build(ids), t.clock.now());
    });
  }

  before(async () => {
    t = await startTestApp();
    [a, b, c] = await Promise.all([createClient(t), createClient(t), createClient(t)]);
    await creditAccount(t.db, a.accountId, 123_450n);
    await creditAccount(t.db, b.accountId, 1n);
  });
  after(() => t?.close());

  it('GET /accounts/balances answers the central-bank view with one item', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/accounts/balances', headers: a.headers });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(Object.keys(body), ['data']);
    assert.equal(body.data.length, 1);
    assert.deepEqual(Object.keys(body.data[0]).sort(), ['balanceAmount', 'eventDate']);
    assert.deepEqual(body.data[0].balanceAmount, { available: 1234.5, blocked: 0, overdraft: 0 });
    assert.equal(body.data[0].eventDate, t.clock.now().toISOString());
  });

  it('GET /balance answers the standard view', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/balance', headers: b.headers });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { grossBalance: 0.01, blockedBalance: 0, netBalance: 0.01, consultedAt: t.clock.now().toISOString() });
  });

  it('each account sees only its own balance', async () => {
    assert.deepEqual(await seen(a), { available: 1234.5, blocked: 0 });
    assert.deepEqual(await seen(b), { available: 0.01, blocked: 0 });
    assert.deepEqual(await seen(c), { available: 0, blocked: 0 });
  });

  for (const url of ROUTES) {
    describe(`GET ${url} authentication`, () => {
      it('401 without a token, even with a linked certificate', async () => {
        for (const headers of [{}, { 'x-ssl-client-cert': a.cert.header }] as Record<string, string>[]) {
          assert.match(errorMessage(await get(url, headers), 401), /token/i);
        }
      });

      it('401 for a garbage token or another scheme', async () => {
        for (const authorization of ['Bearer garbage', 'Bearer a.b.c', `Bearer ${'x'.repeat(300)}`, 'Bearer ', 'Bearer !!!', `Basic ${a.token}`, a.token]) {
          errorMessage(await get(url, { authorization, 'x-ssl-client-cert': a.cert.header }), 401);
        }
      });

      it('401 for a tampered token: claims changed, signature altered, or unsigned', async () => {
        const [header, payload, signature] = a.token.split('.') as [string, string, string];
        const claims = decode(payload);
        const forged = [
          `${header}.${b64url({ ...claims, sub: String(b.accountId) })}.${signature}`,
          `${header}.${b64url({ ...claims, exp: (claims.exp as number) + 86_400 })}.${signature}`,
          `${header}.${payload}.${signature.slice(0, -4)}${signature.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`,
          `${header}.${payload}.${b.token.split('.')[2]}`,
          `${b64url({ ...decode(header), alg: 'none' })}.${b64url({ ...claims, sub: String(b.accountId) })}.`,
          `${header}.${payload}`,
        ];
        for (const token of forged) {
          errorMessage(await get(url, { authorization: `Bearer ${token}`, 'x-ssl-client-cert': b.cert.header }), 401);
          errorMessage(await get(url, { authorization: `Bearer ${token}`, 'x-ssl-client-cert': a.cert.header }), 401);
        }
      });

      it('401 once the token has expired (1800 s), not before', async () => {
        const start = t.clock.now();
        try {
          t.clock.advance(1799_000);
          assert.equal((await get(url, a.headers)).statusCode, 200);
          t.clock.advance(2_000);
          assert.match(errorMessage(await get(url, a.headers), 401), /expired/i);
        } finally {
          t.clock.set(start);
        }
        assert.equal((await get(url, a.headers)).statusCode, 200);
      });

      it('401 when the certificate header is not the one the token is bound to', async () => {
        const second = await linkCertificate(t, a.accountId);
        const unlinked = await issueCertificate({ commonName: 'never-linked' });
        for (const header of [second.header, b.cert.header, encodeURIComponent(unlinked.certPem)]) {
          assert.match(errorMessage(await get(url, { authorization: a.headers.authorization!, 'x-ssl-client-cert': header }), 401), /certificate/i);
        }
        // b's token with b's own certificate still works, and shows b's money only.
        assert.equal((await get(url, b.headers)).statusCode, 200);
      });

      it('400 when the certificate header is not a URL-encoded PEM certificate', async () => {
        for (const header of [a.cert.certPem.split('\n')[1]!, encodeURIComponent('not a certificate')]) {
          errorMessage(await get(url, { authorization: a.headers.authorization!, 'x-ssl-client-cert': header }), 400);
        }
      });
    });
  }

  it('blocked amounts show as blocked, and gross = available + blocked', async () => {
    await creditAccount(t.db, c.accountId, 100_000_099n);
    assert.deepEqual(await seen(c), { available: 1000000.99, blocked: 0 });
    await postings(c, (ids) => [{ debitAccountId: ids.available, creditAccountId: ids.blocked, amountCentavos: 123_450n }]);
    assert.deepEqual(await seen(c), { available: 998766.49, blocked: 1234.5 });
    const standard = (await get('/balance', c.headers)).json();
    assert.deepEqual(
      { gross: standard.grossBalance, blocked: standard.blockedBalance, net: standard.netBalance },
      { gross: 1000000.99, blocked: 1234.5, net: 998766.49 },
    );
    const central = (await get('/accounts/balances', c.headers)).json();
    assert.deepEqual(central.data[0].balanceAmount, { available: 998766.49, blocked: 1234.5, overdraft: 0 });
    // Released back: blocked returns to available.
    await postings(c, (ids) => [{ debitAccountId: ids.blocked, creditAccountId: ids.available, amountCentavos: 450n }]);
    assert.deepEqual(await seen(c), { available: 998770.99, blocked: 1230 });
    // The other accounts did not move.
    assert.deepEqual(await seen(a), { available: 1234.5, blocked: 0 });
  });

  it('amounts are exact JSON numbers with at most 2 decimals', async () => {
    const d = await createClient(t);
    let total = 0n;
    for (const [centavos, text] of [
      [1n, '0.01'],
      [10n, '0.1'],
      [99n, '0.99'],
      [100n, '1'],
      [123_450n, '1234.5'],
      [100_000_099n, '1000000.99'],
      [99_999_999_999_999n, '999999999999.99'],
    ] as const) {
      await creditAccount(t.db, d.accountId, centavos - total);
      total = centavos;
      const standard = await get('/balance', d.headers);
      assert.match(standard.body, new RegExp(`"grossBalance":${text.replace('.', '\\.')},"blockedBalance":0,"netBalance":${text.replace('.', '\\.')},`));
      assert.equal(standard.json().netBalance, Number(text));
      const central = await get('/accounts/balances', d.headers);
      assert.match(central.body, new RegExp(`"available":${text.replace('.', '\\.')},"blocked":0,"overdraft":0`));
    }
  });

  it('a posting that would overdraw is a 422 AppError and changes nothing', async () => {
    const before = await seen(c);
    const ledgerBefore = await t.db.selectFrom('ledger_transactions').select('id').execute();
    const refused = (e: unknown) => e instanceof AppError && e.statusCode === 422 && e.code === 'INSUFFICIENT_BALANCE';
    const availableCentavos = toCentavos(before.available);
    const blockedCentavos = toCentavos(before.blocked);

    await assert.rejects(
      postings(c, (ids) => [{ debitAccountId: ids.available, creditAccountId: ids.blocked, amountCentavos: availableCentavos + 1n }]),
      refused,
    );
    await assert.rejects(
      postings(c, (ids) => [{ debitAccountId: ids.blocked, creditAccountId: ids.available, amountCentavos: blockedCentavos + 1n }]),
      refused,
    );
    // A set whose first posting fits and whose second does not is refused whole.
    await assert.rejects(
      postings(c, (ids) => [
        { debitAccountId: ids.available, creditAccountId: ids.blocked, amountCentavos: 100n },
        { debitAccountId: ids.available, creditAccountId: ids.blocked, amountCentavos: availableCentavos },
      ]),
      refused,
    );
    assert.deepEqual(await seen(c), before);
    assert.equal((await t.db.selectFrom('ledger_transactions').select('id').execute()).length, ledgerBefore.length);

    // Exactly the whole available balance is allowed, leaving zero.
    await postings(c, (ids) => [{ debitAccountId: ids.available, creditAccountId: ids.blocked, amountCentavos: availableCentavos }]);
    assert.deepEqual(await seen(c), { available: 0, blocked: toAmount(availableCentavos + blockedCentavos) });
  });
});
