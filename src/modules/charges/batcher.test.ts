import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../app.ts';
import { createClient, evpKey, type TestClient } from '../../../test/factories.ts';
import { onPostgres, startTestApp, testConfig, type TestApp } from '../../../test/harness.ts';

const txid = (tag: string, i: number) => `lote${tag}${String(i).padStart(4, '0')}${'x'.repeat(20)}`.slice(0, 30);

describe('charges created together (group commit)', () => {
  let t: TestApp;
  let client: TestClient;

  before(async () => {
    t = await startTestApp();
    client = await createClient(t);
    await evpKey(t, client.accountId);
  });
  after(() => t.close());

  const put = (id: string, app = t.app) =>
    app.inject({ method: 'PUT', url: `/cob/${id}`, headers: client.headers, payload: { calendario: { expiracao: 600 }, valor: { original: '3.00' } } });
  const locationsOfAccount = async () =>
    Number((await t.db.selectFrom('locations').select((eb) => eb.fn.countAll<string>().as('n')).where('account_id', '=', BigInt(client.accountId)).executeTakeFirstOrThrow()).n);
  const chargesOfAccount = async () =>
    Number((await t.db.selectFrom('charges').select((eb) => eb.fn.countAll<string>().as('n')).where('account_id', '=', BigInt(client.accountId)).executeTakeFirstOrThrow()).n);

  it('charges that arrive together are created together, each with a location of its own', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => put(txid('a', i))));
    assert.deepEqual(answers.map((r) => r.statusCode), new Array(20).fill(201), answers.find((r) => r.statusCode !== 201)?.body);
    const bodies = answers.map((r) => r.json<{ txid: string; loc: { id: number }; calendario: { criacao: string } }>());
    assert.deepEqual(bodies.map((b) => b.txid), Array.from({ length: 20 }, (_, i) => txid('a', i)));
    assert.equal(new Set(bodies.map((b) => b.loc.id)).size, 20);
    // Several shared a commit (and so its time): fewer creation times than charges.
    assert.ok(new Set(bodies.map((b) => b.calendario.criacao)).size < 20, 'no two were created together');
    for (const b of bodies) {
      const read = await t.app.inject({ method: 'GET', url: `/v2/cob/${b.txid}`, headers: client.headers });
      assert.equal(read.json<{ loc: { id: number } }>().loc.id, b.loc.id);
    }
    assert.equal(await locationsOfAccount(), await chargesOfAccount());
  });

  it('one txid asked for several times at once: one charge, the others refused, no location left over', async () => {
    const before = await locationsOfAccount();
    const answers = await Promise.all(Array.from({ length: 8 }, () => put(txid('b', 0))));
    assert.deepEqual(answers.map((r) => r.statusCode).sort(), [201, 409, 409, 409, 409, 409, 409, 409]);
    for (const r of answers.filter((a) => a.statusCode === 409)) assert.equal(r.json<{ code: string }>().code, 'TXID_TAKEN');
    assert.equal(await locationsOfAccount(), before + 1);
    // In BCB's dialect the same refusal is its problem.
    const again = await t.app.inject({ method: 'PUT', url: `/v2/cob/${txid('b', 0)}`, headers: client.headers, payload: { calendario: { expiracao: 600 }, valor: { original: '3.00' } } });
    assert.equal(again.statusCode, 400, again.body);
  });

  it('a taken txid in a batch refuses that item only', async () => {
    const answers = await Promise.all([put(txid('a', 3)), put(txid('c', 1)), put(txid('c', 2))]);
    assert.deepEqual(answers.map((r) => r.statusCode), [409, 201, 201]);
    assert.equal(await locationsOfAccount(), await chargesOfAccount());
  });

  it('two processes taking one txid at once: one charge, the other refused (409, never 500)', { skip: !onPostgres && 'one embedded database serves one process' }, async () => {
    const other = await buildApp({ config: testConfig(), db: t.db, clock: t.clock, logLevel: false });
    try {
      for (let i = 0; i < 5; i++) {
        const answers = await Promise.all([put(txid('d', i)), put(txid('d', i), other), put(txid('e', i)), put(txid('f', i), other)]);
        assert.deepEqual(answers.map((r) => r.statusCode).sort(), [201, 201, 201, 409], answers.map((r) => r.body).join('\n'));
      }
    } finally {
      await other.close();
    }
    assert.equal(await locationsOfAccount(), await chargesOfAccount());
  });
});
