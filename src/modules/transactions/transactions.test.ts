import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { ListMetadata } from '../../../scripts/lib/api-types.ts';
import { createClient, creditAccount, type TestClient } from '../../../test/factories.ts';
import { adminHeaders, startTestApp, type TestApp } from '../../../test/harness.ts';
import type { TransactionStatus, TransactionType } from './repo.ts';
import { errorMessage } from '../../../test/assertions.ts';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const PAYER = { name: 'João Pagador', document: '12345678909' };
const PAYER_MASKED = '***.456.789-**';
const SHOP = { name: 'Loja Externa Ltda', document: '12345678000195', ispb: '87654321', bankName: 'Banco Externo', branch: '0001', accountNumber: '123456-7' };
const SHOP_MASKED = '12.345.678/****-**';
const LIST_KEYS = ['transactionId', 'externalId', 'status', 'operationType', 'movementType', 'originalAmount', 'feeAmount', 'finalAmount', 'endToEndId', 'createdAt', 'processedAt', 'counterpart'];

interface ListItem {
  transactionId: string;
  externalId: string | null;
  status: string;
  operationType: string;
  movementType: string;
  originalAmount: number;
  feeAmount: number;
  finalAmount: number;
  endToEndId: string | null;
  createdAt: string;
  processedAt: string | null;
  counterpart: { name: string | null; document: string | null; bank: Record<string, string | null> };
}
interface ListBody {
  data: ListItem[];
  metadata: ListMetadata;
}
interface Movement {
  endToEndId: string;
  transactionId: number;
}
interface Sent {
  id: number;
  endToEndId: string;
  idempotencyKey: string;
}

const iso = (ms: number) => new Date(ms).toISOString();
const addDays = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
/** The calendar day in São Paulo (UTC-03:00 all year) of an instant. */
const saoPauloDay = (ms: number) => new Date(ms - 3 * HOUR_MS).toISOString().slice(0, 10);
interface MovementView {
  id: number | bigint;
  externalId?: string;
  status?: string;
  operationType: string;
  movementType: string;
  amount: number;
  endToEndId: string | null;
  createdAt: number;
  processedAt: number | null;
  counterpart: ListItem['counterpart'];
}
/** The list item of one movement, confirmed unless said otherwise; with no fee, its original and final amounts are one. */
const listView = (m: MovementView): ListItem => ({
  transactionId: String(m.id),
  externalId: m.externalId ?? null,
  status: m.status ?? 'Confirmado',
  operationType: m.operationType,
  movementType: m.movementType,
  originalAmount: m.amount,
  feeAmount: 0,
  finalAmount: m.amount,
  endToEndId: m.endToEndId,
  createdAt: iso(m.createdAt),
  processedAt: m.processedAt === null ? null : iso(m.processedAt),
  counterpart: m.counterpart,
});
const ids = (body: ListBody) => body.data.map((item) => item.transactionId);


describe('transactions', () => {
  let t: TestApp;
  let shopKey: string;
  let rejectKey: string;

  const get = (url: string, headers: Record<string, string>) => t.app.inject({ method: 'GET', url, headers });

  async function ok<T>(url: string, client: TestClient): Promise<T> {
    const res = await get(url, client.headers);
    assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
    return res.json<T>();
  }
  const list = (client: TestClient, query = '') => ok<ListBody>(`/api/transactions${query ? `?${query}` : ''}`, client);
  const byKey = (client: TestClient, key: string, query = '') =>
    ok<ListBody>(`/api/pix/transactions/pix-key/${encodeURIComponent(key)}${query ? `?${query}` : ''}`, client);
  async function status400(client: TestClient, url: string): Promise<string> {
    const res = await get(url, client.headers);
    assert.equal(res.statusCode, 400, `${url}: ${res.body}`);
    return errorMessage(res, 400);
  }

  async function admin<T>(url: string, payload: object, status = 201): Promise<T> {
    const res = await t.app.inject({ method: 'POST', url, headers: adminHeaders, payload });
    assert.equal(res.statusCode, status, `${url}: ${res.body}`);
    return res.json<T>();
  }
  const ownKey = async (client: TestClient) => (await admin<{ key: string }>(`/admin/accounts/${client.accountId}/pix-keys`, { type: 'evp' })).key;
  const receive = (pixKey: string, amount: string, receivedAt?: number, payer = PAYER) =>
    admin<Movement>('/sandbox/pix/incoming', { pixKey, amount, payer, ...(receivedAt !== undefined ? { receivedAt: iso(receivedAt) } : {}) });
  const refundBack = (endToEndId: string, amount: string) => admin<Movement>('/sandbox/refunds/incoming', { endToEndId, amount });
  const settle = () => admin<{ settled: number; failed: number }>('/sandbox/settle', {}, 200);

  async function transfer(client: TestClient, pixKey: string, amount: number, externalId?: string): Promise<Sent> {
    const idempotencyKey = randomUUID();
    const res = await t.app.inject({
      method: 'POST',
      url: '/dict/pix',
      headers: { ...client.headers, 'x-idempotency-key': idempotencyKey },
      payload: { pixKey, payment: { currency: 'BRL', amount }, ...(externalId ? { externalId } : {}) },
    });
    assert.equal(res.statusCode, 201, res.body);
    const { id, endToEndId } = res.json<{ id: number; endToEndId: string }>();
    return { id, endToEndId, idempotencyKey };
  }

  interface RowSpec {
    createdAt: number;
    type?: TransactionType;
    status?: TransactionStatus;
    pixKey?: string;
    amountCentavos?: bigint;
  }
  /** Rows straight into the table, for volumes the API would take long to build. */
  async function insertRows(client: TestClient, rows: RowSpec[]): Promise<string[]> {
    const inserted = await t.db
      .insertInto('transactions')
      .values(
        rows.map((r) => ({
          account_id: BigInt(client.accountId),
          type: r.type ?? 'PAYMENT',
          status: r.status ?? 'CONFIRMED',
          amount_centavos: r.amountCentavos ?? 1000n,
          pix_key: r.pixKey ?? null,
          created_at: new Date(r.createdAt),
          updated_at: new Date(r.createdAt),
          processed_at: r.status === 'PENDING' ? null : new Date(r.createdAt),
        })),
      )
      .returning('id')
      .execute();
    return inserted.map((r) => r.id.toString());
  }

  before(async () => {
    t = await startTestApp();
    shopKey = `loja-${randomUUID().slice(0, 8)}@example.com`;
    rejectKey = `recusa-${randomUUID().slice(0, 8)}@example.com`;
    await admin('/sandbox/dict/keys', { key: shopKey, ...SHOP });
    await admin('/sandbox/dict/keys', { key: rejectKey, name: 'Recusa SA', document: '11222333000181', ispb: '11111111', behavior: 'reject' });
  });
  after(() => t?.close());

  describe('GET /api/transactions', () => {
    let a: TestClient;
    const e: Record<string, ListItem> = {};

    // One of each kind and state, a second apart, with their expected list views.
    before(async () => {
      a = await createClient(t);
      const key = await ownKey(a);
      const start = t.clock.now().getTime();
      const shopCounterpart = {
        name: SHOP.name,
        document: SHOP_MASKED,
        bank: { bankISPB: SHOP.ispb, bankName: SHOP.bankName, bankCode: null, accountBranch: SHOP.branch, accountNumber: SHOP.accountNumber },
      };
      const payerCounterpart = { name: PAYER.name, document: PAYER_MASKED };
      const pay = await receive(key, '10.00', start - 2 * HOUR_MS);
      e.pay = listView({
        id: pay.transactionId, operationType: 'Pix in', movementType: 'CREDIT', amount: 10, endToEndId: pay.endToEndId, createdAt: start - 2 * HOUR_MS, processedAt: start - 2 * HOUR_MS,
        counterpart: { ...payerCounterpart, bank: { bankISPB: '12345678', bankName: 'Sandbox Payer Bank', bankCode: null, accountBranch: null, accountNumber: null } },
      });
      // No refund endpoint exists yet: a REFUND_IN row with every counterpart field filled.
      const [refundInId] = await t.db
        .insertInto('transactions')
        .values({
          account_id: BigInt(a.accountId),
          type: 'REFUND_IN',
          status: 'CONFIRMED',
          amount_centavos: 500n,
          external_id: 'devolucao-1',
          end_to_end_id: `D12345678${saoPauloDay(start).replaceAll('-', '')}0000ABCDEFGHIJK`,
          counterpart_name: PAYER.name,
          counterpart_document: PAYER.document,
          counterpart_ispb: '00000000',
          counterpart_bank_name: 'Banco do Brasil',
          counterpart_bank_code: '001',
          counterpart_branch: '1234',
          counterpart_account: '99999-9',
          created_at: new Date(start - HOUR_MS),
          updated_at: new Date(start - HOUR_MS),
          processed_at: new Date(start - HOUR_MS),
        })
        .returning(['id', 'end_to_end_id'])
        .execute();
      e.refundIn = listView({
        id: refundInId!.id, externalId: 'devolucao-1', operationType: 'Refund in', movementType: 'DEBIT', amount: 5, endToEndId: refundInId!.end_to_end_id, createdAt: start - HOUR_MS, processedAt: start - HOUR_MS,
        counterpart: { ...payerCounterpart, bank: { bankISPB: '00000000', bankName: 'Banco do Brasil', bankCode: '001', accountBranch: '1234', accountNumber: '99999-9' } },
      });
      await creditAccount(t.db, a.accountId, 100_000n);
      const out = { operationType: 'Pix out', movementType: 'DEBIT' };
      t.clock.advance(1000);
      const w1 = await transfer(a, shopKey, 25.5, 'order-0001');
      t.clock.advance(1000);
      const failed = await transfer(a, rejectKey, 3, 'order-0002');
      t.clock.advance(1000);
      assert.deepEqual(await settle(), { settled: 1, failed: 1 });
      e.w1 = listView({ ...out, id: w1.id, externalId: 'order-0001', amount: 25.5, endToEndId: w1.endToEndId, createdAt: start + 1000, processedAt: start + 3000, counterpart: shopCounterpart });
      e.failed = listView({
        ...out, id: failed.id, externalId: 'order-0002', status: 'Error', amount: 3, endToEndId: failed.endToEndId, createdAt: start + 2000, processedAt: start + 3000,
        counterpart: { name: 'Recusa SA', document: '11.222.333/****-**', bank: { bankISPB: '11111111', bankName: null, bankCode: null, accountBranch: null, accountNumber: null } },
      });
      t.clock.advance(1000);
      const back = await refundBack(w1.endToEndId, '1.00');
      e.refundOut = listView({
        id: back.transactionId, operationType: 'Refund out', movementType: 'CREDIT', amount: 1, endToEndId: back.endToEndId, createdAt: start + 4000, processedAt: start + 4000, counterpart: shopCounterpart,
      });
      t.clock.advance(1000);
      const w2 = await transfer(a, shopKey, 0.01, 'order-0003');
      e.w2 = listView({ ...out, id: w2.id, externalId: 'order-0003', status: 'Pendente', amount: 0.01, endToEndId: w2.endToEndId, createdAt: start + 5000, processedAt: null, counterpart: shopCounterpart });
    });

    it('answers every kind in the list view, newest first, with the default metadata', async () => {
      const body = await list(a);
      assert.deepEqual(Object.keys(body), ['data', 'metadata']);
      assert.deepEqual(body.data, [e.w2, e.refundOut, e.failed, e.w1, e.refundIn, e.pay]);
      assert.deepEqual(body.metadata, { page: 1, size: 20, total: 6, totalPages: 1, hasNext: false, hasPrevious: false });
      for (const item of body.data) {
        assert.deepEqual(Object.keys(item), LIST_KEYS);
        assert.deepEqual(Object.keys(item.counterpart), ['name', 'document', 'bank']);
        assert.deepEqual(Object.keys(item.counterpart.bank), ['bankISPB', 'bankName', 'bankCode', 'accountBranch', 'accountNumber']);
        assert.equal(typeof item.transactionId, 'string');
        assert.match(item.createdAt, RFC3339_MS);
        if (item.processedAt !== null) assert.match(item.processedAt, RFC3339_MS);
      }
    });

    it('writes amounts as JSON numbers with at most 2 decimals', async () => {
      const raw = (await get('/api/transactions', a.headers)).body;
      assert.match(raw, /"originalAmount":25\.5,"feeAmount":0,"finalAmount":25\.5,/);
      assert.match(raw, /"originalAmount":0\.01,"feeAmount":0,"finalAmount":0\.01,/);
      assert.match(raw, /"originalAmount":10,"feeAmount":0,"finalAmount":10,/);
    });

    it('filters by status, type, externalId and endToEndId, alone or together', async () => {
      const cases: [string, ListItem[]][] = [
        ['status=PENDING', [e.w2!]],
        ['status=CONFIRMED', [e.refundOut!, e.w1!, e.refundIn!, e.pay!]],
        ['status=ERROR', [e.failed!]],
        ['type=PAYMENT', [e.pay!]],
        ['type=WITHDRAW', [e.w2!, e.failed!, e.w1!]],
        ['type=REFUND_IN', [e.refundIn!]],
        ['type=REFUND_OUT', [e.refundOut!]],
        ['type=WITHDRAW&status=CONFIRMED', [e.w1!]],
        ['externalId=order-0001', [e.w1!]],
        ['externalId=order-9999', []],
        [`endToEndId=${e.pay!.endToEndId}`, [e.pay!]],
        [`endToEndId=${e.refundOut!.endToEndId}&type=REFUND_OUT`, [e.refundOut!]],
        [`endToEndId=${e.pay!.endToEndId}&type=WITHDRAW`, []],
        // The labels the list prints name the same filters.
        ['status=Pendente', [e.w2!]],
        ['status=Confirmado', [e.refundOut!, e.w1!, e.refundIn!, e.pay!]],
        ['status=Error', [e.failed!]],
        ['type=Pix%20in', [e.pay!]],
        ['type=Pix+out', [e.w2!, e.failed!, e.w1!]],
        ['type=Refund%20in&status=Confirmado', [e.refundIn!]],
        ['type=Refund%20out', [e.refundOut!]],
      ];
      for (const [query, expected] of cases) {
        const body = await list(a, query);
        assert.deepEqual(body.data, expected, query);
        assert.equal(body.metadata.total, expected.length, query);
      }
    });

    it('400 for an unknown status or type, or an unknown query parameter', async () => {
      for (const query of ['status=DONE', 'status=confirmado', 'status=Confirmed', 'type=TRANSFER', 'type=pix%20in', 'type=Pix', 'foo=bar', 'pixKey=x', 'sort=asc']) {
        await status400(a, `/api/transactions?${query}`);
      }
    });

    it('shows nothing of another account', async () => {
      const other = await createClient(t);
      assert.deepEqual(await list(other), { data: [], metadata: { page: 1, size: 20, total: 0, totalPages: 0, hasNext: false, hasPrevious: false } });
      assert.deepEqual((await list(other, 'externalId=order-0001')).data, []);
      assert.deepEqual((await list(other, `endToEndId=${e.w1!.endToEndId}`)).data, []);
    });
  });

  describe('GET /api/transactions ordering, intervals and pagination', () => {
    it('orders newest first and breaks ties by id, newest id first', async () => {
      const b = await createClient(t);
      const key = await ownKey(b);
      const at = t.clock.now().getTime() - HOUR_MS;
      const made: string[] = [];
      for (const offset of [0, 1000, 0, -1000, 0]) made.push(String((await receive(key, '1.00', at + offset)).transactionId));
      assert.deepEqual(ids(await list(b)), [made[1], made[4], made[2], made[0], made[3]]);
    });

    it('defaults to the last 31 days', async () => {
      const c = await createClient(t);
      const key = await ownKey(c);
      const now = t.clock.now().getTime();
      const [d32, d30, inside, outside] = await Promise.all([
        receive(key, '1.00', now - 32 * DAY_MS),
        receive(key, '1.00', now - 30 * DAY_MS),
        receive(key, '1.00', now - 31 * DAY_MS + 60_000),
        receive(key, '1.00', now - 31 * DAY_MS - 60_000),
      ]);
      assert.deepEqual(ids(await list(c)), [d30!.transactionId, inside!.transactionId].map(String));
      // Asked for explicitly, the older ones are there.
      const older = await list(c, `startDate=${saoPauloDay(now - 33 * DAY_MS)}&endDate=${saoPauloDay(now - 5 * DAY_MS)}`);
      assert.deepEqual(ids(older), [d30, inside, outside, d32].map((m) => String(m!.transactionId)));
    });

    describe('dates are São Paulo days, the end date inclusive', () => {
      let d: TestClient;
      let day: string;
      const r: Record<string, string> = {};

      before(async () => {
        d = await createClient(t);
        const key = await ownKey(d);
        day = saoPauloDay(t.clock.now().getTime() - 10 * DAY_MS);
        const next = addDays(day, 1);
        const at = (text: string) => Date.parse(text);
        // 23:30 on `day` in São Paulo is 02:30Z on the next UTC day.
        r.lateNight = String((await receive(key, '1.00', at(`${next}T02:30:00.000Z`))).transactionId);
        r.midnight = String((await receive(key, '1.00', at(`${day}T03:00:00.000Z`))).transactionId);
        r.dayBefore = String((await receive(key, '1.00', at(`${day}T02:59:59.999Z`))).transactionId);
        r.dayAfter = String((await receive(key, '1.00', at(`${next}T03:00:00.000Z`))).transactionId);
      });

      it('a date names the whole São Paulo day', async () => {
        assert.deepEqual(ids(await list(d, `startDate=${day}&endDate=${day}`)), [r.lateNight, r.midnight]);
        assert.deepEqual(ids(await list(d, `startDate=${addDays(day, -1)}&endDate=${day}`)), [r.lateNight, r.midnight, r.dayBefore]);
        assert.deepEqual(ids(await list(d, `startDate=${addDays(day, 1)}&endDate=${addDays(day, 1)}`)), [r.dayAfter]);
        assert.deepEqual(ids(await list(d, `startDate=${addDays(day, -1)}&endDate=${addDays(day, -1)}`)), [r.dayBefore]);
      });

      it('timestamps are instants, both ends inclusive, in any offset', async () => {
        const next = addDays(day, 1);
        assert.deepEqual(ids(await list(d, `startDate=${day}T03:00:00.000Z&endDate=${next}T02:30:00.000Z`)), [r.lateNight, r.midnight]);
        assert.deepEqual(ids(await list(d, `startDate=${day}T03:00:00.001Z&endDate=${next}T02:29:59.999Z`)), []);
        assert.deepEqual(ids(await list(d, `startDate=${day}T00:00:00-03:00&endDate=${day}T23:59:59.999-03:00`)), [r.lateNight, r.midnight]);
        assert.deepEqual(ids(await list(d, `startDate=${encodeURIComponent(`${day}T00:00+00:00`)}&endDate=${day}`)), [r.lateNight, r.midnight, r.dayBefore]);
      });

      it('a start timestamp inside the end date is a valid interval', async () => {
        assert.deepEqual(ids(await list(d, `startDate=${day}T12:00:00-03:00&endDate=${day}`)), [r.lateNight]);
      });

      it('the interval is at most 31 days; the end is not before the start', async () => {
        assert.equal((await list(d, `startDate=${addDays(day, -31)}&endDate=${day}`)).metadata.total, 3);
        assert.equal((await list(d, `startDate=${addDays(day, -31)}T03:00:00.000Z&endDate=${day}T03:00:00.000Z`)).metadata.total, 2);
        for (const query of [
          `startDate=${addDays(day, -32)}&endDate=${day}`,
          `startDate=${addDays(day, -31)}T03:00:00.000Z&endDate=${day}T03:00:00.001Z`,
          `startDate=${saoPauloDay(t.clock.now().getTime() - 40 * DAY_MS)}`,
        ]) {
          assert.match(await status400(d, `/api/transactions?${query}`), /31 days/, query);
        }
        for (const query of [`startDate=${day}&endDate=${addDays(day, -1)}`, `startDate=${day}T03:00:00.001Z&endDate=${day}T03:00:00.000Z`]) {
          assert.match(await status400(d, `/api/transactions?${query}`), /before/, query);
        }
      });

      it('400 for dates that are not real or not dates', async () => {
        for (const value of ['2026-02-30', '2025-02-29', '2026-13-01', '2026-04-31', 'yesterday', '2026-1-1', '20260101', '22/11/2026', '', '2026-02-30T10:00:00Z', '2026-04-31T00:00:00-03:00', '2026-01-01T24:00:00Z', '2026-01-01T10:00:00+25:00', '2026-01-01 10:00:00Z']) {
          for (const field of ['startDate', 'endDate']) {
            assert.match(await status400(d, `/api/transactions?${field}=${encodeURIComponent(value)}`), new RegExp(field), `${field}=${value}`);
          }
        }
      });
    });

    describe('pagination', () => {
      let p: TestClient;
      let all: string[];

      before(async () => {
        p = await createClient(t);
        const now = t.clock.now().getTime();
        await insertRows(p, Array.from({ length: 45 }, (_, i) => ({ createdAt: now - (i % 40) * 60_000 })));
        all = ids(await list(p, 'size=100'));
      });

      it('pages of the default size 20 cover the list once, in order', async () => {
        assert.equal(all.length, 45);
        const pages = await Promise.all([1, 2, 3].map((page) => list(p, `page=${page}`)));
        assert.deepEqual(
          pages.map((body) => body.metadata),
          [
            { page: 1, size: 20, total: 45, totalPages: 3, hasNext: true, hasPrevious: false },
            { page: 2, size: 20, total: 45, totalPages: 3, hasNext: true, hasPrevious: true },
            { page: 3, size: 20, total: 45, totalPages: 3, hasNext: false, hasPrevious: true },
          ],
        );
        assert.deepEqual(
          pages.map((body) => body.data.length),
          [20, 20, 5],
        );
        assert.deepEqual(pages.flatMap(ids), all);
        const times = pages.flatMap((body) => body.data.map((item) => item.createdAt));
        assert.deepEqual(times, [...times].sort().reverse());
      });

      it('a page past the end is empty with correct metadata', async () => {
        assert.deepEqual(await list(p, 'page=4'), { data: [], metadata: { page: 4, size: 20, total: 45, totalPages: 3, hasNext: false, hasPrevious: true } });
        assert.deepEqual(await list(p, 'page=99&size=100'), { data: [], metadata: { page: 99, size: 100, total: 45, totalPages: 1, hasNext: false, hasPrevious: true } });
      });

      it('size up to 100', async () => {
        assert.deepEqual((await list(p, 'size=100')).metadata, { page: 1, size: 100, total: 45, totalPages: 1, hasNext: false, hasPrevious: false });
        const sevens = await list(p, 'size=7&page=7');
        assert.deepEqual(sevens.metadata, { page: 7, size: 7, total: 45, totalPages: 7, hasNext: false, hasPrevious: true });
        assert.deepEqual(ids(sevens), all.slice(42));
      });

      it('400 for a size over 100, a size or page of 0, or not integers', async () => {
        for (const query of ['size=101', 'size=0', 'size=-1', 'page=0', 'page=-1', 'size=abc', 'page=1.5', 'size=1&size=2']) {
          const message = await status400(p, `/api/transactions?${query}`);
          assert.match(message, /size|page/, query);
        }
      });
    });
  });

  describe('GET /api/pix/transaction/{id}', () => {
    let f: TestClient;
    let g: TestClient;
    let pending: Sent;
    let noExternal: Sent;
    let payment: Movement;
    let paymentAt: number;
    let foreign: { payment: Movement; transfer: Sent };

    before(async () => {
      [f, g] = await Promise.all([createClient(t), createClient(t)]);
      const [fKey, gKey] = await Promise.all([ownKey(f), ownKey(g)]);
      paymentAt = t.clock.now().getTime() - HOUR_MS;
      payment = await receive(fKey, '10.00', paymentAt);
      await Promise.all([creditAccount(t.db, f.accountId, 10_000n), creditAccount(t.db, g.accountId, 10_000n)]);
      pending = await transfer(f, shopKey, 10, 'invoice-77');
      noExternal = await transfer(f, shopKey, 12.34);
      foreign = { payment: await receive(gKey, '10.00'), transfer: await transfer(g, shopKey, 1, 'g-invoice-1') };
    });

    const one = (client: TestClient, identifier: string) => get(`/api/pix/transaction/${encodeURIComponent(identifier)}`, client.headers);

    it('answers the status view of a pending transfer, by numeric id, externalId and endToEndId', async () => {
      const now = t.clock.now().toISOString();
      const expected = {
        id: String(pending.id),
        externalId: 'invoice-77',
        type: 'WITHDRAW',
        status: 'PENDING',
        originalAmount: '10.00',
        feeAmount: '0.00',
        finalAmount: '10.00',
        e2eId: pending.endToEndId,
        counterpartName: SHOP.name,
        counterpartDocument: SHOP_MASKED,
        counterpartAccountBankCode: null,
        counterpartAccountBranch: SHOP.branch,
        counterpartAccountNumber: SHOP.accountNumber,
        counterpartAccountIspb: SHOP.ispb,
        counterpartAccountBankName: SHOP.bankName,
        createdAt: now,
        updatedAt: now,
        processedAt: null,
        errorReason: null,
      };
      for (const identifier of [String(pending.id), 'invoice-77', pending.endToEndId]) {
        const res = await one(f, identifier);
        assert.equal(res.statusCode, 200, res.body);
        assert.deepEqual(Object.keys(res.json()), Object.keys(expected));
        assert.deepEqual(res.json(), expected, identifier);
      }
    });

    it('a transfer without externalId is found by its idempotency key', async () => {
      const res = await one(f, noExternal.idempotencyKey);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().id, String(noExternal.id));
      assert.equal(res.json().externalId, noExternal.idempotencyKey);
      assert.equal(res.json().originalAmount, '12.34');
    });

    it('a received PIX: masked CPF, no externalId, processed when received', async () => {
      const res = await one(f, payment.endToEndId);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), {
        id: String(payment.transactionId),
        externalId: null,
        type: 'PAYMENT',
        status: 'CONFIRMED',
        originalAmount: '10.00',
        feeAmount: '0.00',
        finalAmount: '10.00',
        e2eId: payment.endToEndId,
        counterpartName: PAYER.name,
        counterpartDocument: PAYER_MASKED,
        counterpartAccountBankCode: null,
        counterpartAccountBranch: null,
        counterpartAccountNumber: null,
        counterpartAccountIspb: '12345678',
        counterpartAccountBankName: 'Sandbox Payer Bank',
        createdAt: iso(paymentAt),
        updatedAt: t.clock.now().toISOString(),
        processedAt: iso(paymentAt),
        errorReason: null,
      });
      assert.deepEqual((await one(f, String(payment.transactionId))).json(), res.json());
    });

    it('404 for another account’s transaction by each identifier, and for unknown ones', async () => {
      for (const identifier of [
        String(foreign.payment.transactionId),
        foreign.payment.endToEndId,
        String(foreign.transfer.id),
        'g-invoice-1',
        foreign.transfer.endToEndId,
        foreign.transfer.idempotencyKey,
        '999999999',
        '0',
        'no-such-reference',
        `E${'1'.repeat(31)}`,
      ]) {
        assert.match(errorMessage(await one(f, identifier), 404), /not found/i, identifier);
      }
      // The owner sees them.
      assert.equal((await one(g, 'g-invoice-1')).statusCode, 200);
    });

    it('after settlement: CONFIRMED, processedAt and updatedAt move', async () => {
      t.clock.advance(5000);
      await settle();
      const settledAt = t.clock.now().toISOString();
      const body = (await one(f, 'invoice-77')).json();
      assert.equal(body.status, 'CONFIRMED');
      assert.equal(body.processedAt, settledAt);
      assert.equal(body.updatedAt, settledAt);
      assert.equal(body.createdAt, iso(t.clock.now().getTime() - 5000));
    });

    it('an internal transfer: each side sees its own row under the shared endToEndId', async () => {
      const gKey = await ownKey(g);
      const sent = await transfer(f, gKey, 2.5, 'to-g');
      await settle();
      const mine = (await one(f, sent.endToEndId)).json();
      const theirs = (await one(g, sent.endToEndId)).json();
      assert.deepEqual([mine.id, mine.type, mine.status], [String(sent.id), 'WITHDRAW', 'CONFIRMED']);
      assert.equal(theirs.type, 'PAYMENT');
      assert.notEqual(theirs.id, mine.id);
      assert.equal(theirs.e2eId, sent.endToEndId);
      errorMessage(await one(g, String(sent.id)), 404);
      errorMessage(await one(f, theirs.id), 404);
    });
  });

  describe('GET /api/pix/transactions/pix-key/{pixKey}', () => {
    let h: TestClient;
    let i: TestClient;
    let k1: string;
    let k2: string;
    let kI: string;
    const m: Record<string, string> = {};

    before(async () => {
      [h, i] = await Promise.all([createClient(t), createClient(t)]);
      [k1, k2, kI] = await Promise.all([ownKey(h), ownKey(h), ownKey(i)]);
      const now = t.clock.now().getTime();
      const p1 = await receive(k1, '10.00', now - 3 * HOUR_MS);
      const p2 = await receive(k1, '20.00', now - 2 * HOUR_MS);
      const p3 = await receive(k2, '30.00', now - HOUR_MS);
      const old = await receive(k1, '40.00', now - 30 * DAY_MS - 12 * HOUR_MS);
      await Promise.all([creditAccount(t.db, h.accountId, 10_000n), creditAccount(t.db, i.accountId, 10_000n)]);
      t.clock.advance(1000);
      const sent = await transfer(h, shopKey, 5, 'h-order-1');
      t.clock.advance(1000);
      await settle();
      t.clock.advance(1000);
      const back = await refundBack(sent.endToEndId, '1.00');
      const sentI = await transfer(i, shopKey, 7, 'i-order-1');
      const pI = await receive(kI, '1.00');
      Object.assign(m, {
        p1: String(p1.transactionId),
        p1e2e: p1.endToEndId,
        p2: String(p2.transactionId),
        p3: String(p3.transactionId),
        old: String(old.transactionId),
        sent: String(sent.id),
        back: String(back.transactionId),
        backE2e: back.endToEndId,
        sentI: String(sentI.id),
        pI: String(pI.transactionId),
        pIe2e: pI.endToEndId,
      });
    });

    it('lists PIX received on the key and transfers to it, in the list view, last 30 days by default', async () => {
      const body = await byKey(h, k1);
      assert.deepEqual(ids(body), [m.p2, m.p1]);
      assert.deepEqual(body.metadata, { page: 1, size: 20, total: 2, totalPages: 1, hasNext: false, hasPrevious: false });
      assert.deepEqual(body.data[0], (await list(h, `endToEndId=${body.data[0]!.endToEndId}`)).data[0]);
      assert.deepEqual(ids(await byKey(h, k2)), [m.p3]);
      assert.deepEqual(ids(await byKey(h, shopKey)), [m.back, m.sent]);
      // 30.5 days old: outside the 30-day default here, inside the 31-day default of the account list.
      assert.ok(ids(await list(h)).includes(m.old!));
      const start = iso(t.clock.now().getTime() - 31 * DAY_MS);
      assert.deepEqual(ids(await byKey(h, k1, `startDate=${start}`)), [m.p2, m.p1, m.old]);
    });

    it('filters by status and type', async () => {
      assert.deepEqual(ids(await byKey(h, shopKey, 'type=REFUND_OUT')), [m.back]);
      assert.deepEqual(ids(await byKey(h, shopKey, 'type=WITHDRAW&status=CONFIRMED')), [m.sent]);
      assert.deepEqual(ids(await byKey(h, shopKey, 'type=PAYMENT')), []);
      assert.deepEqual(ids(await byKey(i, shopKey, 'status=PENDING')), [m.sentI]);
    });

    it('is scoped to the caller’s account', async () => {
      assert.deepEqual(ids(await byKey(i, shopKey)), [m.sentI]);
      assert.deepEqual(await byKey(i, k1), { data: [], metadata: { page: 1, size: 20, total: 0, totalPages: 0, hasNext: false, hasPrevious: false } });
      assert.deepEqual(ids(await byKey(h, kI)), []);
    });

    it('400 for a malformed key, a size over 1000, parameters it does not take, and bad intervals', async () => {
      for (const key of ['not-a-key', '12345678900', '+5511', 'ABCDEFAB-1234-1234-1234-ABCDEFABCDEF', 'a@b', '123.456.789-09']) {
        assert.match(await status400(h, `/api/pix/transactions/pix-key/${encodeURIComponent(key)}`), /pixKey/, key);
      }
      assert.equal((await byKey(h, k1, 'size=1000')).metadata.size, 1000);
      for (const query of ['size=1001', 'size=0', 'page=0', 'externalId=h-order-1', 'endToEndId=x', 'foo=1', 'status=DONE', 'startDate=2026-02-30']) {
        await status400(h, `/api/pix/transactions/pix-key/${k1}?${query}`);
      }
      const day = saoPauloDay(t.clock.now().getTime());
      assert.match(await status400(h, `/api/pix/transactions/pix-key/${k1}?startDate=${addDays(day, -32)}&endDate=${day}`), /31 days/);
    });

    describe('GET /api/pix/transactions/pix-key/{pixKey}/{identifier}', () => {
      const oneByKey = (client: TestClient, key: string, identifier: string) =>
        get(`/api/pix/transactions/pix-key/${encodeURIComponent(key)}/${encodeURIComponent(identifier)}`, client.headers);

      it('answers one list-view object, not wrapped, by endToEndId, externalId or numeric id', async () => {
        const cases: [string, string, string][] = [
          [k1, m.p1e2e!, m.p1!],
          [k1, m.p1!, m.p1!],
          [shopKey, 'h-order-1', m.sent!],
          [shopKey, m.sent!, m.sent!],
          [shopKey, m.back!, m.back!],
          [shopKey, m.backE2e!, m.back!],
        ];
        for (const [key, identifier, id] of cases) {
          const res = await oneByKey(h, key, identifier);
          assert.equal(res.statusCode, 200, `${identifier}: ${res.body}`);
          const body = res.json<ListItem>();
          assert.deepEqual(Object.keys(body), LIST_KEYS);
          assert.equal(body.transactionId, id);
          assert.deepEqual(body, (await list(h, `endToEndId=${body.endToEndId}`)).data[0]);
        }
      });

      it('404 when the identifier is under another key or another account, or unknown', async () => {
        const cases: [TestClient, string, string][] = [
          [h, k2, m.p1e2e!],
          [h, k2, m.p1!],
          [h, k1, 'h-order-1'],
          [h, k1, m.sent!],
          [h, shopKey, 'i-order-1'],
          [h, shopKey, m.sentI!],
          [h, kI, m.pI!],
          [h, kI, m.pIe2e!],
          [i, k1, m.p1e2e!],
          [i, k1, m.p1!],
          [i, shopKey, 'h-order-1'],
          [h, k1, '999999999'],
          [h, k1, `E${'9'.repeat(31)}`],
        ];
        for (const [client, key, identifier] of cases) {
          assert.match(errorMessage(await oneByKey(client, key, identifier), 404), /not found/i, `${key} ${identifier}`);
        }
      });

      it('400 for a malformed key', async () => {
        for (const key of ['not-a-key', '12345678900']) await status400(h, `/api/pix/transactions/pix-key/${key}/${m.p1}`);
      });
    });
  });

  describe('GET /api/pix/transactions/pix-key/{pixKey} answers at most 1000 results', () => {
    let j: TestClient;
    let key: string;
    let newest: string[];

    before(async () => {
      j = await createClient(t);
      key = await ownKey(j);
      const now = t.clock.now().getTime();
      newest = await insertRows(
        j,
        Array.from({ length: 1005 }, (_, n) => ({ createdAt: now - n * 60_000, pixKey: key, type: n % 2 ? 'PAYMENT' : 'WITHDRAW' })),
      );
    });

    it('size 1000: the newest 1000, and page 2 is empty', async () => {
      const first = await byKey(j, key, 'size=1000');
      assert.deepEqual(first.metadata, { page: 1, size: 1000, total: 1000, totalPages: 1, hasNext: false, hasPrevious: false });
      assert.deepEqual(ids(first), newest.slice(0, 1000));
      assert.deepEqual(await byKey(j, key, 'size=1000&page=2'), {
        data: [],
        metadata: { page: 2, size: 1000, total: 1000, totalPages: 1, hasNext: false, hasPrevious: true },
      });
    });

    it('smaller pages stop at the 1000th result', async () => {
      const second = await byKey(j, key, 'size=600&page=2');
      assert.deepEqual(second.metadata, { page: 2, size: 600, total: 1000, totalPages: 2, hasNext: false, hasPrevious: true });
      assert.deepEqual(ids(second), newest.slice(600, 1000));
      const last = await byKey(j, key, 'page=50');
      assert.deepEqual(last.metadata, { page: 50, size: 20, total: 1000, totalPages: 50, hasNext: false, hasPrevious: true });
      assert.deepEqual(ids(last), newest.slice(980, 1000));
      assert.deepEqual((await byKey(j, key, 'page=51')).data, []);
      const third = await byKey(j, key, 'size=300&page=4');
      assert.deepEqual(ids(third), newest.slice(900, 1000));
      assert.equal(third.metadata.totalPages, 4);
    });

    it('the cap counts after filters; the account list has no cap', async () => {
      assert.equal((await byKey(j, key, 'type=PAYMENT&size=1000')).metadata.total, 502);
      assert.equal((await list(j, 'size=100')).metadata.total, 1005);
    });
  });

  describe('authentication', () => {
    for (const url of ['/api/transactions', '/api/pix/transaction/1', `/api/pix/transactions/pix-key/${randomUUID()}`, `/api/pix/transactions/pix-key/${randomUUID()}/1`]) {
      it(`GET ${url.replace(/[0-9a-f-]{36}/, '{pixKey}')}: 401 without a valid token`, async () => {
        for (const headers of [{}, { authorization: 'Bearer garbage' }, { authorization: 'Basic abc' }] as Record<string, string>[]) {
          assert.match(errorMessage(await get(url, headers), 401), /token|authorization/i);
        }
      });
    }
  });
});
