/**
 * Creates that race: the same resource created by several requests at once, as a retrying
 * client or two instances of one integration send them. Each answers as a repeat of the request
 * answers when sent alone afterwards (the resource replaced, replayed or refused in the dialect's
 * error shape), never 500, and one resource exists after. On PostgreSQL the requests run in
 * parallel on a pool of connections; on PGlite they interleave in one session.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { createClient, creditAccount, evpKey, externalKey, incomingPix, randomCnpj, type TestClient } from './factories.ts';
import { onPostgres, startTestApp, type TestApp } from './harness.ts';

const PARALLEL = 6;
const fresh = (prefix: string, length = 32) => `${prefix}${randomBytes(24).toString('hex')}`.slice(0, length);
const dayFromNow = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
const DEVEDOR = { cpf: '12345678909', nome: 'Francisco da Silva' };

type Method = 'PUT' | 'POST';

describe(`creates that race (${PARALLEL} at once, ${onPostgres ? 'PostgreSQL' : 'PGlite'})`, { timeout: 120_000 }, () => {
  let t: TestApp;
  let a: TestClient;
  let key: string;

  before(async () => {
    t = await startTestApp();
    a = await createClient(t);
    key = await evpKey(t, a.accountId);
    await creditAccount(t.db, a.accountId, 1_000_000n);
  });
  after(() => t.close());

  const send = (method: Method, url: string, payload: object, headers: Record<string, string> = {}) =>
    t.app.inject({ method, url, headers: { ...a.headers, ...headers }, payload });

  /**
   * The request sent PARALLEL times at once, then once more alone. Every answer is below 500,
   * one is the creation's status and the others the status of the repeat sent alone; the
   * answers, for what else the caller checks.
   */
  async function race(method: Method, url: string, payload: object, created: number, headers: Record<string, string> = {}) {
    const answers = await Promise.all(Array.from({ length: PARALLEL }, () => send(method, url, payload, headers)));
    const repeat = await send(method, url, payload, headers);
    for (const res of [...answers, repeat]) assert.ok(res.statusCode < 500, `${method} ${url}: ${res.statusCode} ${res.body}`);
    const statuses = answers.map((r) => r.statusCode);
    assert.ok(statuses.includes(created), `one of the racing requests created it (${statuses.join(', ')})`);
    for (const status of statuses) assert.ok(status === created || status === repeat.statusCode, `${status} is the creation's or the repeat's (${repeat.statusCode}): ${statuses.join(', ')}`);
    return { answers, repeat };
  }

  const count = async (query: ReturnType<typeof sql<{ n: string | number }>>) => Number((await query.execute(t.db)).rows[0]!.n);

  it('PUT /cob/{txid}: one charge; the others are 409, as a repeat is', async () => {
    const txid = fresh('race');
    const { repeat } = await race('PUT', `/cob/${txid}`, { calendario: { expiracao: 3600 }, valor: { original: '10.00' } }, 201);
    assert.equal(repeat.statusCode, 409);
    assert.equal(await count(sql`select count(*) as n from charges where account_id = ${a.accountId} and txid = ${txid}`), 1);
  });

  it('PUT /v2/cob/{txid}: one charge, each answer the charge at revisao 0', async () => {
    const txid = fresh('race');
    const { answers } = await race('PUT', `/v2/cob/${txid}`, { calendario: { expiracao: 3600 }, valor: { original: '10.00' }, chave: key }, 201);
    for (const res of answers) assert.equal(res.json<{ revisao: number }>().revisao, 0);
    assert.equal(await count(sql`select count(*) as n from charges where account_id = ${a.accountId} and txid = ${txid}`), 1);
  });

  it('PUT /v2/cobv/{txid}: one charge, each answer the charge (a repeat replaces it with itself)', async () => {
    const txid = fresh('race');
    const body = { calendario: { dataDeVencimento: dayFromNow(10) }, devedor: DEVEDOR, valor: { original: '10.00' }, chave: key };
    const { answers } = await race('PUT', `/v2/cobv/${txid}`, body, 201);
    for (const res of answers) assert.equal(res.json<{ txid: string; revisao: number }>().revisao, 0, res.body);
    assert.equal(await count(sql`select count(*) as n from charges where account_id = ${a.accountId} and txid = ${txid}`), 1);
  });

  it('PUT /v2/lotecobv/{id}: one batch and its charges, every request accepted (202)', async () => {
    const id = String(1 + (randomBytes(4).readUInt32BE() % 1e9));
    const txids = [fresh('lote'), fresh('lote')];
    const cobsv = txids.map((txid) => ({ calendario: { dataDeVencimento: dayFromNow(10) }, devedor: DEVEDOR, valor: { original: '10.00' }, chave: key, txid }));
    await race('PUT', `/v2/lotecobv/${id}`, { descricao: 'Lote', cobsv }, 202);
    const batch = await t.app.inject({ method: 'GET', url: `/v2/lotecobv/${id}`, headers: a.headers });
    assert.deepEqual(
      batch.json<{ cobsv: { txid: string; status: string }[] }>().cobsv.map((c) => [c.txid, c.status]),
      txids.map((txid) => [txid, 'CRIADA']),
    );
    assert.equal(await count(sql`select count(*) as n from charges where account_id = ${a.accountId} and txid in (${sql.join(txids)})`), 2);
  });

  it('two new batches naming one txid: one creates the charge, the other is refused', async () => {
    const txid = fresh('both');
    const cobsv = [{ calendario: { dataDeVencimento: dayFromNow(10) }, devedor: DEVEDOR, valor: { original: '10.00' }, chave: key, txid }];
    const ids = Array.from({ length: PARALLEL }, () => String(1 + (randomBytes(4).readUInt32BE() % 1e9)));
    const answers = await Promise.all(ids.map((id) => send('PUT', `/v2/lotecobv/${id}`, { descricao: 'Lote', cobsv })));
    const statuses = answers.map((r) => r.statusCode).sort();
    assert.deepEqual(statuses, [202, ...Array<number>(PARALLEL - 1).fill(400)], answers.map((r) => r.body).join('\n'));
    for (const res of answers.filter((r) => r.statusCode === 400)) assert.match(res.json<{ type: string }>().type, /LoteCobVOperacaoInvalida$/);
    assert.equal(await count(sql`select count(*) as n from cobv_batch_items where account_id = ${a.accountId} and txid = ${txid}`), 1);
  });

  it('PUT /v2/cob of several txids with one loc: one links it, the others are refused', async () => {
    const loc = (await send('POST', '/v2/loc', { tipoCob: 'cob' })).json<{ id: number }>().id;
    const answers = await Promise.all(
      Array.from({ length: PARALLEL }, () => send('PUT', `/v2/cob/${fresh('loc')}`, { calendario: { expiracao: 3600 }, valor: { original: '10.00' }, chave: key, loc: { id: loc } })),
    );
    assert.deepEqual(answers.map((r) => r.statusCode).sort(), [201, ...Array<number>(PARALLEL - 1).fill(400)], answers.map((r) => r.body).join('\n'));
    assert.equal(await count(sql`select count(*) as n from charges where loc_id = ${loc}`), 1);
  });

  it('POST /v2/rec of several recurrences with one loc, and PATCH moving several onto another: one takes each, the others are refused', async () => {
    const company = await createClient(t, { name: 'Academia', document: randomCnpj() });
    const asCompany = (method: 'POST' | 'PATCH', url: string, payload: object) => t.app.inject({ method, url, headers: company.headers, payload });
    const newLoc = async () => (await asCompany('POST', '/v2/locrec', { tipo: 'rec' })).json<{ id: number }>().id;
    const rec = (loc?: number) => ({
      vinculo: { contrato: fresh('c', 12), devedor: DEVEDOR },
      calendario: { dataInicial: dayFromNow(5), periodicidade: 'MENSAL' },
      politicaRetentativa: 'NAO_PERMITE',
      ...(loc === undefined ? {} : { loc }),
    });
    const loc = await newLoc();
    const created = await Promise.all(Array.from({ length: PARALLEL }, () => asCompany('POST', '/v2/rec', rec(loc))));
    assert.deepEqual(created.map((r) => r.statusCode).sort(), [201, ...Array<number>(PARALLEL - 1).fill(400)], created.map((r) => r.body).join('\n'));
    assert.equal(await count(sql`select count(*) as n from recurrences where loc_id = ${loc}`), 1);

    const free = await Promise.all(Array.from({ length: PARALLEL }, async () => (await asCompany('POST', '/v2/rec', rec())).json<{ idRec: string }>().idRec));
    const other = await newLoc();
    const moved = await Promise.all(free.map((idRec) => asCompany('PATCH', `/v2/rec/${idRec}`, { loc: other })));
    assert.deepEqual(moved.map((r) => r.statusCode).sort(), [200, ...Array<number>(PARALLEL - 1).fill(400)], moved.map((r) => r.body).join('\n'));
    assert.equal(await count(sql`select count(*) as n from recurrences where loc_id = ${other}`), 1);
  });

  it('PUT /v2/webhook/{chave}: one webhook for the key', async () => {
    await race('PUT', `/v2/webhook/${key}`, { webhookUrl: 'https://127.0.0.1:8443/bcb' }, 200);
    assert.equal(await count(sql`select count(*) as n from pix_key_webhooks where account_id = ${a.accountId} and chave = ${key}`), 1);
  });

  it('POST /api/webhooks: one registration, updated by each repeat', async () => {
    const url = `https://127.0.0.1:8443/${fresh('seed', 12)}`;
    const { answers } = await race('POST', '/api/webhooks', { url, eventType: 'cash_in' }, 201);
    const ids = new Set(answers.map((r) => r.json<{ id: number }>().id));
    assert.equal(ids.size, 1);
    const list = await t.app.inject({ method: 'GET', url: '/api/webhooks', headers: a.headers });
    assert.equal(list.json<{ webhooks: { url: string }[] }>().webhooks.filter((w) => w.url === url).length, 1);
  });

  it('PUT /pix/{e2eid}/devolucao/{id} in both dialects: one refund each', async () => {
    const paid = await incomingPix(t, key, '50.00');
    const seed = fresh('dev', 20);
    await race('PUT', `/pix/${paid.endToEndId}/devolucao/${seed}`, { valor: '1.00' }, 201);
    const bcb = fresh('dev', 20);
    const { answers } = await race('PUT', `/v2/pix/${paid.endToEndId}/devolucao/${bcb}`, { valor: '1.00' }, 201);
    assert.equal(new Set(answers.map((r) => r.json<{ rtrId: string }>().rtrId)).size, 1);
    assert.equal(await count(sql`select count(*) as n from refunds where refund_id in (${seed}, ${bcb})`), 2);
  });

  it('refunds of one Pix with different ids, more than it received: never more than it received', async () => {
    const paid = await incomingPix(t, key, '50.00');
    const answers = await Promise.all(Array.from({ length: PARALLEL }, () => send('PUT', `/v2/pix/${paid.endToEndId}/devolucao/${fresh('sum', 20)}`, { valor: '10.00' })));
    assert.deepEqual(answers.map((r) => r.statusCode).sort(), [201, 201, 201, 201, 201, 400], answers.map((r) => r.body).join('\n'));
  });

  it('POST /dict/pix with one idempotency key: one transfer, the same answer to each', async () => {
    const bob = await externalKey(t);
    const before = await t.app.inject({ method: 'GET', url: '/balance', headers: a.headers });
    const { answers, repeat } = await race('POST', '/dict/pix', { pixKey: bob.key, payment: { currency: 'BRL', amount: 1.5 } }, 201, { 'x-idempotency-key': randomUUID() });
    assert.equal(new Set([...answers, repeat].map((r: LightMyRequestResponse) => r.json<{ id: number }>().id)).size, 1);
    const after = await t.app.inject({ method: 'GET', url: '/balance', headers: a.headers });
    assert.equal(before.json<{ netBalance: number }>().netBalance - after.json<{ netBalance: number }>().netBalance, 1.5);
  });
});
