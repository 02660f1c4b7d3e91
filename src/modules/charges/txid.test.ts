/**
 * A txid is unique per account, not across the service (decisions.md, Charges): another account's
 * charges are invisible and never collide, in creation, reads, revisions and payments.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertError, errorMessage } from '../../../test/assertions.ts';
import { createClient, evpKey, randomCpf, type TestClient } from '../../../test/factories.ts';
import { adminHeaders, onPostgres, startTestApp, type TestApp } from '../../../test/harness.ts';
import { randomAlphanumeric } from '../../lib/ids.ts';
import { createCharge } from './service.ts';

type Json = Record<string, unknown>;
interface Charge {
  txid: string;
  status: string;
  revisao: number;
  chave: string;
  valor: { original: string };
  loc: { id: number };
}

const txid = () => randomAlphanumeric(32);
const BODY = { calendario: { expiracao: 3600 }, valor: { original: '10.00' } };

describe('txids unique per account', () => {
  let t: TestApp;
  let a: TestClient & { key: string };
  let b: TestClient & { key: string };

  const put = (id: string, client: TestClient, body: Json = BODY) => t.app.inject({ method: 'PUT', url: `/cob/${id}`, headers: client.headers, payload: body });
  const read = async (id: string, client: TestClient): Promise<Charge> => {
    const res = await t.app.inject({ method: 'GET', url: `/cob/${id}`, headers: client.headers });
    assert.equal(res.statusCode, 200, res.body);
    return res.json<Charge>();
  };
  const pay = (id: string, body?: Json) =>
    t.app.inject({ method: 'POST', url: `/sandbox/cob/${id}/pay`, headers: adminHeaders, ...(body === undefined ? {} : { payload: body }) });
  const balance = async (client: TestClient) => {
    const res = await t.app.inject({ method: 'GET', url: '/balance', headers: client.headers });
    assert.equal(res.statusCode, 200, res.body);
    return res.json<{ netBalance: number }>().netBalance;
  };
  /** One txid held by both accounts: A's for 10.00, B's for 20.00. */
  async function shared(): Promise<string> {
    const id = txid();
    assert.equal((await put(id, a)).statusCode, 201);
    assert.equal((await put(id, b, { ...BODY, valor: { original: '20.00' } })).statusCode, 201);
    return id;
  }

  before(async () => {
    t = await startTestApp();
    const withKey = async () => {
      const client = await createClient(t);
      return { ...client, key: await evpKey(t, client.accountId) };
    };
    a = await withKey();
    b = await withKey();
  });
  after(() => t?.close());

  it("PUT /cob/{txid}: another account's txid is no conflict; each account reads, revises and cancels its own", async () => {
    const id = await shared();
    const [ofA, ofB] = [await read(id, a), await read(id, b)];
    assert.deepEqual([ofA.valor.original, ofA.chave, ofB.valor.original, ofB.chave], ['10.00', a.key, '20.00', b.key]);
    assert.notEqual(ofA.loc.id, ofB.loc.id);
    // Each account's own repeat is still 409.
    errorMessage(await put(id, a), 409, 'TXID_TAKEN');
    errorMessage(await put(id, b), 409, 'TXID_TAKEN');

    const revised = await t.app.inject({ method: 'PATCH', url: `/cob/${id}`, headers: b.headers, payload: { valor: { original: '21.00' } } });
    assert.equal(revised.statusCode, 200, revised.body);
    assert.deepEqual([(await read(id, a)).revisao, (await read(id, b)).revisao], [0, 1]);
    const cancelled = await t.app.inject({ method: 'PATCH', url: `/cob/${id}`, headers: a.headers, payload: { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' } });
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    assert.deepEqual([(await read(id, a)).status, (await read(id, b)).status], ['REMOVIDA_PELO_USUARIO_RECEBEDOR', 'ATIVA']);
    const qr = await t.app.inject({ method: 'GET', url: `/cob/${id}/qrcode?format=svg`, headers: b.headers });
    assert.equal(qr.statusCode, 200);
  });

  it('POST /sandbox/cob/{txid}/pay: 409 TXID_AMBIGUOUS when two accounts hold it and none is named; accountId names one', async () => {
    const id = await shared();
    const before = [await balance(a), await balance(b)];
    errorMessage(await pay(id), 409, 'TXID_AMBIGUOUS');
    errorMessage(await pay(id, { payer: { name: 'Pagador', document: randomCpf() } }), 409, 'TXID_AMBIGUOUS');
    assert.deepEqual([(await read(id, a)).status, (await read(id, b)).status], ['ATIVA', 'ATIVA']);

    const paid = await pay(id, { accountId: b.accountId });
    assert.equal(paid.statusCode, 201, paid.body);
    assert.deepEqual([(await read(id, a)).status, (await read(id, b)).status], ['ATIVA', 'CONCLUIDA']);
    assert.deepEqual([await balance(a), await balance(b)], [before[0], before[1]! + 20]);
    // Still two holders: naming none is still ambiguous, even though one of them is paid.
    errorMessage(await pay(id), 409, 'TXID_AMBIGUOUS');
    assert.equal((await pay(id, { accountId: a.accountId })).statusCode, 201);
    assert.equal(await balance(a), before[0]! + 10);
    assertError(await pay(id, { accountId: b.accountId }), 422);
  });

  it('POST /sandbox/cob/{txid}/pay: one holder is paid without accountId; an account without that txid is 404', async () => {
    const only = txid();
    assert.equal((await put(only, a)).statusCode, 201);
    errorMessage(await pay(only, { accountId: b.accountId }), 404, 'CHARGE_NOT_FOUND');
    errorMessage(await pay(only, { accountId: 999_999 }), 404, 'CHARGE_NOT_FOUND');
    for (const accountId of [0, -1, 'x', 1.5]) assertError(await pay(only, { accountId }), 400);
    assert.equal((await read(only, a)).status, 'ATIVA');
    assert.equal((await pay(only)).statusCode, 201);
    assert.equal((await read(only, a)).status, 'CONCLUIDA');
  });

  it("POST /sandbox/pix/incoming with txid pays the charge of the key's account, never the other one", async () => {
    const id = await shared();
    const incoming = (pixKey: string, amount: string) =>
      t.app.inject({ method: 'POST', url: '/sandbox/pix/incoming', headers: adminHeaders, payload: { pixKey, amount, payer: { name: 'Externo', document: randomCpf() }, txid: id } });
    // A's charge is 10.00: 20.00 sent to A's key is a wrong amount for A's charge, not a payment of B's.
    errorMessage(await incoming(a.key, '20.00'), 422, 'WRONG_AMOUNT');
    const toB = await incoming(b.key, '20.00');
    assert.equal(toB.statusCode, 201, toB.body);
    assert.deepEqual([(await read(id, a)).status, (await read(id, b)).status], ['ATIVA', 'CONCLUIDA']);
    const row = await t.db.selectFrom('transactions').select(['account_id', 'txid']).where('id', '=', BigInt(toB.json<{ transactionId: number }>().transactionId)).executeTakeFirstOrThrow();
    assert.deepEqual([Number(row.account_id), row.txid], [b.accountId, id]);
    assert.equal((await incoming(a.key, '10.00')).statusCode, 201);
    assert.equal((await read(id, a)).status, 'CONCLUIDA');
  });

  it("POST /cob: a drawn txid the account holds is drawn again; one another account holds is kept", async () => {
    const taken = txid();
    assert.equal((await put(taken, a)).statusCode, 201);
    const fresh = txid();
    const draws = [taken, fresh];
    const deps = { db: t.db, clock: t.clock, ispb: t.config.pspIspb, publicUrl: t.config.publicUrl, newTxid: () => draws.shift()! };
    const retried = await createCharge(deps, BigInt(a.accountId), BODY);
    assert.equal(retried.txid, fresh);
    assert.equal(draws.length, 0);

    draws.push(taken);
    const kept = await createCharge(deps, BigInt(b.accountId), BODY);
    assert.equal(kept.txid, taken);
    assert.equal(draws.length, 0);
    assert.equal((await read(taken, b)).chave, b.key);

    // Three draws all taken by the account: 409 rather than a loop.
    draws.push(taken, taken, taken);
    await assert.rejects(createCharge(deps, BigInt(a.accountId), BODY), { statusCode: 409, code: 'TXID_TAKEN' });
  });

  it('PUT /cob/{txid} of one txid by many accounts at once: every one is created (PostgreSQL)', { skip: !onPostgres && 'needs concurrent connections' }, async () => {
    const clients = [a, b, ...(await Promise.all([1, 2, 3].map(async () => {
      const client = await createClient(t);
      await evpKey(t, client.accountId);
      return client;
    })))];
    const id = txid();
    const answers = await Promise.all(clients.flatMap((client) => [put(id, client), put(id, client)]));
    const statuses = answers.map((r) => r.statusCode).sort();
    assert.deepEqual(statuses, [...Array(5).fill(201), ...Array(5).fill(409)]);
    for (const client of clients) assert.equal((await read(id, client)).status, 'ATIVA');
  });
});
