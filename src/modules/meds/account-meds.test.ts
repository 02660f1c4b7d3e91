import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertError } from '../../../test/assertions.ts';
import { createClient, evpKey, requestToken, type TestClient } from '../../../test/factories.ts';
import { adminHeaders, startTestApp, type TestApp } from '../../../test/harness.ts';

interface MedView {
  id: number;
  endToEndId: string;
  transactionId: number;
  amount: string;
  status: string;
  reason: string;
  refund: { id: string; rtrId: string; natureza: string; status: string } | null;
}
interface Page {
  data: MedView[];
  metadata: { page: number; size: number; total: number; totalPages: number; hasNext: boolean; hasPrevious: boolean };
}

const DAY_MS = 86_400_000;

describe('the account holder reads its MEDs (GET /api/meds, /api/meds/{id})', () => {
  let t: TestApp;
  let holder: TestClient;
  let other: TestClient;
  let key: string;
  const meds: number[] = [];

  async function sandbox<T>(url: string, payload: object, status = 201): Promise<T> {
    const res = await t.app.inject({ method: 'POST', url, headers: adminHeaders, payload });
    assert.equal(res.statusCode, status, `${url}: ${res.body}`);
    return res.json<T>();
  }
  const get = (url: string, client: TestClient = holder) => t.app.inject({ method: 'GET', url, headers: client.headers });

  before(async () => {
    t = await startTestApp();
    holder = await createClient(t);
    other = await createClient(t);
    key = await evpKey(t, holder.accountId);
    for (const amount of ['10.00', '20.00', '30.00']) {
      const pix = await sandbox<{ endToEndId: string }>('/sandbox/pix/incoming', { pixKey: key, amount, payer: { name: 'Pagador', document: '12345678909' } });
      meds.push((await sandbox<{ medId: number }>('/sandbox/med', { endToEndId: pix.endToEndId, reason: 'FRAUD' })).medId);
      t.clock.advance(1000);
    }
    await sandbox(`/sandbox/med/${meds[0]}/accept`, {}, 200);
    await sandbox(`/sandbox/med/${meds[1]}/reject`, {}, 200);
  });
  after(() => t.close());

  it('lists them newest first, with the refund an accepted one made', async () => {
    const res = await get('/api/meds');
    assert.equal(res.statusCode, 200, res.body);
    const page = res.json<Page>();
    assert.deepEqual(page.data.map((m) => m.id), [...meds].reverse());
    assert.deepEqual(page.data.map((m) => m.status), ['OPEN', 'REJECTED', 'ACCEPTED']);
    assert.deepEqual(page.data.map((m) => m.amount), ['30.00', '20.00', '10.00']);
    const accepted = page.data[2]!;
    assert.equal(accepted.refund?.id, `MED-${meds[0]}`);
    assert.equal(accepted.refund?.natureza, 'MED_FRAUDE');
    assert.match(accepted.refund!.rtrId, /^D\d{8}/);
    assert.equal(page.data[0]!.refund, null);
    assert.deepEqual(page.metadata, { page: 1, size: 20, total: 3, totalPages: 1, hasNext: false, hasPrevious: false });
  });

  it('filters by status and pages', async () => {
    const open = (await get('/api/meds?status=OPEN')).json<Page>();
    assert.deepEqual(open.data.map((m) => m.id), [meds[2]]);
    const second = (await get('/api/meds?size=2&page=2')).json<Page>();
    assert.deepEqual(second.data.map((m) => m.id), [meds[0]]);
    assert.deepEqual(second.metadata, { page: 2, size: 2, total: 3, totalPages: 2, hasNext: false, hasPrevious: true });
  });

  it('reads one by id, the same view as the list', async () => {
    const res = await get(`/api/meds/${meds[0]}`);
    assert.equal(res.statusCode, 200, res.body);
    const listed = (await get('/api/meds')).json<Page>().data.find((m) => m.id === meds[0]);
    assert.deepEqual(res.json(), listed);
  });

  it("another account's MED is 404, and it lists none of them", async () => {
    assertError(await get(`/api/meds/${meds[0]}`, other), 404, /MED not found/, 'MED_NOT_FOUND');
    assertError(await get('/api/meds/999999', holder), 404, undefined, 'MED_NOT_FOUND');
    const page = (await get('/api/meds', other)).json<Page>();
    assert.deepEqual([page.data.length, page.metadata.total], [0, 0]);
  });

  it('keeps to an interval of at most 31 days, the last 31 by default', async () => {
    const now = t.clock.now().getTime();
    const iso = (ms: number) => new Date(ms).toISOString();
    assert.equal((await get(`/api/meds?startDate=${iso(now - 40 * DAY_MS)}&endDate=${iso(now - 10 * DAY_MS)}`)).json<Page>().metadata.total, 0);
    assert.equal((await get(`/api/meds?startDate=${iso(now - DAY_MS)}&endDate=${iso(now + DAY_MS)}`)).json<Page>().metadata.total, 3);
    assertError(await get('/api/meds?startDate=2026-01-01&endDate=2026-03-01'), 400, /31 days/, 'INTERVAL_TOO_LONG');
    assertError(await get('/api/meds?status=CLOSED'), 400, undefined, 'VALIDATION_FAILED');
    assertError(await get('/api/meds/abc'), 400, undefined, 'VALIDATION_FAILED');
    // 32 days later the default window no longer holds them (a new token: the old one expired).
    t.clock.advance(32 * DAY_MS);
    const later = { ...holder, headers: { ...holder.headers, authorization: `Bearer ${await requestToken(t, holder, holder.cert)}` } };
    assert.equal((await get('/api/meds', later)).json<Page>().metadata.total, 0);
  });
});
