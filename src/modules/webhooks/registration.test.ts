import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { assertError } from '../../../test/assertions.ts';
import { createClient, incomingPix, type TestClient } from '../../../test/factories.ts';
import { adminHeaders, startTestApp, type TestApp } from '../../../test/harness.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/webhook-receiver.ts';
import { deliverDue } from './delivery.ts';
import { WebhookSender } from './sender.ts';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('webhook registrations', () => {
  let t: TestApp;
  let rcv: WebhookReceiver;
  let a: TestClient;
  let b: TestClient;

  const call = (client: TestClient, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
    t.app.inject({ method, url, headers: client.headers, ...(payload === undefined ? {} : { payload }) });
  const register = (client: TestClient, payload: object) => call(client, 'POST', '/api/webhooks', payload);
  const list = async (client: TestClient) => {
    const res = await call(client, 'GET', '/api/webhooks');
    assert.equal(res.statusCode, 200, res.body);
    return res.json<{ accountId: number; webhooks: { id: number; type: string; url: string; headers: Record<string, string>; isActive: boolean; version: number }[]; total: number }>();
  };
  let n = 0;
  const freshUrl = () => `https://hooks-${++n}.example.com/pix`;

  before(async () => {
    rcv = await startWebhookReceiver();
    t = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_CA_FILE: rcv.caFile } });
    [a, b] = [await createClient(t, { name: 'Conta A' }), await createClient(t, { name: 'Conta B' })];
  });
  after(async () => {
    await t?.close();
    await rcv?.close();
  });

  describe('POST /api/webhooks', () => {
    it('201 {success, message, id, version}', async () => {
      const res = await register(a, { url: freshUrl(), eventType: 'refund_in', headers: [{ key: 'X-Api-Key', value: 'abc' }] });
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json();
      assert.deepEqual(Object.keys(body).sort(), ['id', 'message', 'success', 'version']);
      assert.equal(body.success, true);
      assert.equal(typeof body.message, 'string');
      assert.ok(Number.isSafeInteger(body.id) && body.id > 0);
      assert.equal(body.version, 1);
    });

    it('400 for a URL that is not HTTPS, and for an invalid event type', async () => {
      assertError(await register(a, { url: 'http://hooks.example.com/pix', eventType: 'cash_in' }), 400, /HTTPS/);
      assertError(await register(a, { url: 'hooks.example.com/pix', eventType: 'cash_in' }), 400);
      assertError(await register(a, { url: freshUrl(), eventType: 'cash_everywhere' }), 400, /eventType/);
      assertError(await register(a, { url: freshUrl() }), 400, /eventType is required/);
      assertError(await register(a, { url: freshUrl(), eventType: 'cash_in', extra: 1 }), 400, /extra is not an allowed property/);
    });

    it('400 for 6 headers (5 are fine)', async () => {
      const headers = (count: number) => Array.from({ length: count }, (_, i) => ({ key: `X-H${i}`, value: `v${i}` }));
      assertError(await register(a, { url: freshUrl(), eventType: 'cash_out', headers: headers(6) }), 400, /headers/);
      assert.equal((await register(a, { url: freshUrl(), eventType: 'cash_out', headers: headers(5) })).statusCode, 201);
    });

    it('400 for each blocked header name in any case, and for webhook-* names', async () => {
      const blocked = ['host', 'content-length', 'connection', 'transfer-encoding', 'content-type', 'user-agent'];
      const spellings = blocked.flatMap((name) => [name, name.toUpperCase(), name.replace(/(^|-)(\w)/g, (_, dash: string, c: string) => dash + c.toUpperCase())]);
      for (const key of [...spellings, 'webhook-id', 'Webhook-Signature', 'WEBHOOK-TIMESTAMP', 'webhook-anything']) {
        assertError(await register(a, { url: freshUrl(), eventType: 'cash_out', headers: [{ key, value: 'x' }] }), 400, /cannot be set|reserved/);
      }
    });

    it('400 for header names and values that HTTP cannot carry, and for a name given twice', async () => {
      for (const header of [{ key: 'X Bad', value: 'x' }, { key: 'X-Ok', value: 'line\r\nInjected: 1' }]) {
        assertError(await register(a, { url: freshUrl(), eventType: 'cash_out', headers: [header] }), 400);
      }
      const twice = [{ key: 'X-Dup', value: '1' }, { key: 'x-dup', value: '2' }];
      assertError(await register(a, { url: freshUrl(), eventType: 'cash_out', headers: twice }), 400, /twice/);
    });

    it('400 for a 4th active URL of one event type, while another event type still accepts', async () => {
      const c = await createClient(t);
      for (let i = 0; i < 3; i++) assert.equal((await register(c, { url: freshUrl(), eventType: 'med_created' })).statusCode, 201);
      assertError(await register(c, { url: freshUrl(), eventType: 'med_created' }), 400, /at most 3 active URLs/);
      assert.equal((await register(c, { url: freshUrl(), eventType: 'med_accepted' })).statusCode, 201);
      // Re-registering one of the three is an update, not a 4th.
      const first = (await list(c)).webhooks.find((w) => w.type === 'med_created');
      assert.equal((await register(c, { url: first!.url, eventType: 'med_created' })).statusCode, 201);
      assert.equal((await list(c)).total, 4);
    });

    it('re-registering a URL replaces its headers, bumps its version 1 -> 2 -> 3, keeps one row and switches it on', async () => {
      const c = await createClient(t);
      const url = freshUrl();
      const other = freshUrl();
      assert.equal((await register(c, { url: other, eventType: 'cash_in', headers: [{ key: 'X-Other', value: 'kept' }] })).statusCode, 201);
      const first = await register(c, { url, eventType: 'cash_in', headers: [{ key: 'X-One', value: '1' }] });
      const second = await register(c, { url, eventType: 'cash_in', headers: [{ key: 'X-Two', value: '2' }] });
      assert.equal(second.statusCode, 201, second.body);
      assert.deepEqual([first.json().version, second.json().version], [1, 2]);
      assert.equal(second.json().id, first.json().id);

      const patched = await call(c, 'PATCH', `/api/webhooks/${first.json().id}`, { isActive: false });
      assert.equal(patched.json().isActive, false);
      const third = await register(c, { url, eventType: 'cash_in' });
      assert.deepEqual([third.json().id, third.json().version], [first.json().id, 3]);

      const rows = (await list(c)).webhooks;
      assert.equal(rows.length, 2);
      const row = rows.find((w) => w.url === url)!;
      assert.deepEqual([row.version, row.isActive, row.headers], [3, true, {}]);
      assert.deepEqual(rows.find((w) => w.url === other)!.headers, { 'X-Other': 'kept' });
      // The same URL under another event type is another registration.
      const elsewhere = await register(c, { url, eventType: 'cash_out' });
      assert.deepEqual([elsewhere.json().version, elsewhere.json().id === first.json().id], [1, false]);
    });

    it('re-activating by re-registration counts against the limit', async () => {
      const c = await createClient(t);
      const urls = [freshUrl(), freshUrl(), freshUrl(), freshUrl()];
      const ids = [];
      for (const url of urls.slice(0, 3)) ids.push((await register(c, { url, eventType: 'cash_in' })).json().id);
      await call(c, 'PATCH', `/api/webhooks/${ids[0]}`, { isActive: false });
      assert.equal((await register(c, { url: urls[3], eventType: 'cash_in' })).statusCode, 201);
      assertError(await register(c, { url: urls[0], eventType: 'cash_in' }), 400, /at most 3 active URLs/);
    });

    it('concurrent registrations cannot pass the limit, nor make two rows of one URL', async () => {
      const c = await createClient(t);
      const results = await Promise.all(Array.from({ length: 6 }, () => register(c, { url: freshUrl(), eventType: 'cash_in' })));
      assert.deepEqual(results.map((r) => r.statusCode).sort(), [201, 201, 201, 400, 400, 400]);
      const url = freshUrl();
      const same = await Promise.all(Array.from({ length: 4 }, () => register(c, { url, eventType: 'cash_out' })));
      assert.deepEqual(same.map((r) => r.statusCode), [201, 201, 201, 201]);
      assert.deepEqual(same.map((r) => r.json().version).sort(), [1, 2, 3, 4]);
      const rows = (await list(c)).webhooks;
      assert.deepEqual([rows.filter((w) => w.type === 'cash_in' && w.isActive).length, rows.filter((w) => w.url === url).length], [3, 1]);
    });

    it('401 without a token', async () => {
      assertError(await t.app.inject({ method: 'POST', url: '/api/webhooks', payload: { url: freshUrl(), eventType: 'cash_in' } }), 401);
    });

    it('headers as the {name: value} object the listing returns: the listing round-trips, with the same rules', async () => {
      const c = await createClient(t);
      const url = freshUrl();
      const first = await register(c, { url, eventType: 'cash_in', headers: { 'X-Api-Key': 'abc', Authorization: 'Bearer t' } });
      assert.equal(first.statusCode, 201, first.body);
      const [listed] = (await list(c)).webhooks;
      assert.deepEqual(listed!.headers, { 'X-Api-Key': 'abc', Authorization: 'Bearer t' });
      const again = await register(c, { url, eventType: 'cash_in', headers: listed!.headers });
      assert.deepEqual([again.statusCode, again.json().version], [201, 2]);
      assert.deepEqual((await list(c)).webhooks[0]!.headers, listed!.headers);
      const six = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`X-H${i}`, 'v']));
      assertError(await register(c, { url, eventType: 'cash_in', headers: six }), 400);
      assertError(await register(c, { url, eventType: 'cash_in', headers: { 'Content-Type': 'text/plain' } }), 400, /reserved/, 'BLOCKED_HEADER');
      assertError(await register(c, { url, eventType: 'cash_in', headers: { 'Bad Name': 'x' } }), 400, undefined, 'INVALID_HEADER');
      assertError(await register(c, { url, eventType: 'cash_in', headers: { 'X-A': 7 } }), 400);
      const patched = await call(c, 'PATCH', `/api/webhooks/${listed!.id}`, { headers: { 'X-Other': 'y' } });
      assert.deepEqual([patched.statusCode, patched.json().headers], [200, { 'X-Other': 'y' }]);
    });

    /** Registers `count` new URLs over the event types, at most 3 active per type. */
    async function fill(c: TestClient, count: number) {
      const types = ['cash_in', 'cash_out', 'refund_in', 'refund_out', 'med_created', 'med_accepted', 'med_rejected'];
      const ids: number[] = [];
      for (let i = 0; i < count; i++) {
        const res = await register(c, { url: freshUrl(), eventType: types[i % types.length] });
        assert.equal(res.statusCode, 201, res.body);
        ids.push(res.json().id);
      }
      return ids;
    }

    it('at most 20 registrations per account, active or not: the 21st is 400 TOO_MANY_WEBHOOKS until one is deleted', async () => {
      const c = await createClient(t);
      const ids = await fill(c, 20);
      assertError(await register(c, { url: freshUrl(), eventType: 'cash_in' }), 400, /at most 20 registrations per account/, 'TOO_MANY_WEBHOOKS');
      assert.equal((await call(c, 'PATCH', `/api/webhooks/${ids[0]}`, { isActive: false })).statusCode, 200);
      assertError(await register(c, { url: freshUrl(), eventType: 'cash_in' }), 400, /20 registrations/, 'TOO_MANY_WEBHOOKS');
      // Registering a URL already registered changes it: no new registration.
      const [known] = (await list(c)).webhooks;
      assert.equal((await register(c, { url: known!.url, eventType: known!.type })).statusCode, 201);
      assert.equal((await call(c, 'DELETE', `/api/webhooks/${ids[1]}`)).statusCode, 204);
      assert.equal((await register(c, { url: freshUrl(), eventType: 'cash_out' })).statusCode, 201);
      assert.equal((await list(c)).total, 20);
      // Another account has its own 20.
      assert.equal((await register(b, { url: freshUrl(), eventType: 'refund_out' })).statusCode, 201);
    });

    it('concurrent registrations cannot pass 20 either', async () => {
      const c = await createClient(t);
      const filled = await fill(c, 17);
      // Switch one URL of each type off: refund_out onwards then have room for two more active
      // URLs each, so only the limit of 20 registrations can refuse the eight below.
      for (const id of filled.slice(0, 7)) assert.equal((await call(c, 'PATCH', `/api/webhooks/${id}`, { isActive: false })).statusCode, 200);
      const types = ['cash_in', 'cash_out', 'refund_in', 'refund_out', 'med_created', 'med_accepted', 'med_rejected'];
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => register(c, { url: freshUrl(), eventType: types[3 + (i % 4)] })));
      assert.deepEqual(results.map((r) => r.statusCode).sort(), [201, 201, 201, 400, 400, 400, 400, 400]);
      for (const r of results.filter((x) => x.statusCode === 400)) assertError(r, 400, /20 registrations/, 'TOO_MANY_WEBHOOKS');
      assert.equal((await list(c)).total, 20);
    });
  });

  describe('GET /api/webhooks', () => {
    it('200 with exactly {accountId, webhooks[{id, type, url, headers, isActive, version, createdAt, updatedAt}], total}, only the own account', async () => {
      const c = await createClient(t);
      const url = freshUrl();
      const created = await register(c, { url, eventType: 'cash_out', headers: [{ key: 'Authorization', value: 'Bearer s3cret' }, { key: 'X-Tenant', value: '7' }] });
      const res = await call(c, 'GET', '/api/webhooks');
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.deepEqual(Object.keys(body).sort(), ['accountId', 'total', 'webhooks']);
      assert.deepEqual([body.accountId, body.total, body.webhooks.length], [c.accountId, 1, 1]);
      const [w] = body.webhooks;
      assert.deepEqual(Object.keys(w).sort(), ['createdAt', 'headers', 'id', 'isActive', 'type', 'updatedAt', 'url', 'version']);
      assert.deepEqual(
        { ...w, createdAt: undefined, updatedAt: undefined },
        { id: created.json().id, type: 'cash_out', url, headers: { Authorization: 'Bearer s3cret', 'X-Tenant': '7' }, isActive: true, version: 1, createdAt: undefined, updatedAt: undefined },
      );
      assert.match(w.createdAt, ISO);
      assert.equal(w.createdAt, t.clock.now().toISOString());
      assert.match(w.updatedAt, ISO);
      assert.equal((await list(b)).webhooks.some((x) => x.id === w.id), false);
    });

    it('401 without a token', async () => {
      assertError(await t.app.inject({ method: 'GET', url: '/api/webhooks' }), 401);
    });
  });

  describe('PATCH and DELETE /api/webhooks/{id}', () => {
    it('isActive false frees a slot; true over the limit is 400', async () => {
      const c = await createClient(t);
      const ids: number[] = [];
      for (let i = 0; i < 3; i++) ids.push((await register(c, { url: freshUrl(), eventType: 'refund_out' })).json().id);
      const off = await call(c, 'PATCH', `/api/webhooks/${ids[0]}`, { isActive: false });
      assert.equal(off.statusCode, 200, off.body);
      assert.deepEqual([off.json().id, off.json().isActive, off.json().version], [ids[0], false, 1]);
      assert.equal((await register(c, { url: freshUrl(), eventType: 'refund_out' })).statusCode, 201);
      assertError(await call(c, 'PATCH', `/api/webhooks/${ids[0]}`, { isActive: true }), 400, /at most 3 active URLs/);
      // Switching an active one on again is no change, not a 4th.
      assert.equal((await call(c, 'PATCH', `/api/webhooks/${ids[1]}`, { isActive: true })).statusCode, 200);
    });

    it('headers replace the old ones and bump the version; {} is 400', async () => {
      const c = await createClient(t);
      const id = (await register(c, { url: freshUrl(), eventType: 'cash_in', headers: [{ key: 'X-Old', value: '1' }] })).json().id;
      t.clock.advance(1000);
      const res = await call(c, 'PATCH', `/api/webhooks/${id}`, { headers: [{ key: 'X-New', value: '2' }] });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.deepEqual([body.headers, body.version, body.isActive], [{ 'X-New': '2' }, 2, true]);
      assert.equal(body.updatedAt, t.clock.now().toISOString());
      assert.notEqual(body.createdAt, body.updatedAt);
      assertError(await call(c, 'PATCH', `/api/webhooks/${id}`, {}), 400);
      assertError(await call(c, 'PATCH', `/api/webhooks/${id}`, { headers: [{ key: 'Host', value: 'x' }] }), 400, /reserved/);
      assertError(await call(c, 'PATCH', `/api/webhooks/${id}`, { url: 'https://elsewhere.example.com/' }), 400);
      assertError(await call(c, 'PATCH', `/api/webhooks/abc`, { isActive: true }), 400);
    });

    it('DELETE 204, then 404; the slot is free', async () => {
      const c = await createClient(t);
      const ids: number[] = [];
      for (let i = 0; i < 3; i++) ids.push((await register(c, { url: freshUrl(), eventType: 'med_rejected' })).json().id);
      const res = await call(c, 'DELETE', `/api/webhooks/${ids[1]}`);
      assert.equal(res.statusCode, 204);
      assert.equal(res.body, '');
      assertError(await call(c, 'DELETE', `/api/webhooks/${ids[1]}`), 404);
      assertError(await call(c, 'PATCH', `/api/webhooks/${ids[1]}`, { isActive: false }), 404);
      assert.deepEqual((await list(c)).webhooks.map((w) => w.id), [ids[0], ids[2]]);
      assert.equal((await register(c, { url: freshUrl(), eventType: 'med_rejected' })).statusCode, 201);
    });

    it("404 for another account's registration, which stays untouched", async () => {
      const id = (await register(a, { url: freshUrl(), eventType: 'med_accepted' })).json().id;
      assertError(await call(b, 'PATCH', `/api/webhooks/${id}`, { isActive: false }), 404);
      assertError(await call(b, 'PATCH', `/api/webhooks/${id}`, { headers: [] }), 404);
      assertError(await call(b, 'DELETE', `/api/webhooks/${id}`), 404);
      assertError(await call(b, 'DELETE', `/api/webhooks/999999999`), 404);
      const mine = (await list(a)).webhooks.find((w) => w.id === id)!;
      assert.deepEqual([mine.isActive, mine.version], [true, 1]);
    });

    it('401 without a token', async () => {
      assertError(await t.app.inject({ method: 'PATCH', url: '/api/webhooks/1', payload: { isActive: false } }), 401);
      assertError(await t.app.inject({ method: 'DELETE', url: '/api/webhooks/1' }), 401);
    });
  });

  describe('signing secret', () => {
    /** A cash_in for `client`, delivered to the receiver; returns what the receiver got. */
    async function deliverCashIn(client: TestClient, pixKey: string) {
      const before = rcv.received.length;
      await incomingPix(t, pixKey, '3.00');
      const sender = new WebhookSender({ allowPrivate: true, caFile: rcv.caFile, timeoutMs: 3000 });
      try {
        assert.equal(await deliverDue({ db: t.db, clock: t.clock, sender }), 1);
      } finally {
        await sender.close();
      }
      const got = (await rcv.waitFor(before + 1))[before]!;
      assert.equal(got.path, `/signed/${client.accountId}`);
      return got;
    }

    it('GET returns a whsec_ secret, the same each time; another account has another', async () => {
      const first = await call(a, 'GET', '/api/webhooks/signing-secret');
      assert.equal(first.statusCode, 200);
      assert.deepEqual(Object.keys(first.json()), ['secret']);
      assert.match(first.json().secret, /^whsec_[A-Za-z0-9+/]{32}$/);
      assert.equal((await call(a, 'GET', '/api/webhooks/signing-secret')).json().secret, first.json().secret);
      assert.notEqual((await call(b, 'GET', '/api/webhooks/signing-secret')).json().secret, first.json().secret);
      assertError(await t.app.inject({ method: 'GET', url: '/api/webhooks/signing-secret' }), 401);
      assertError(await t.app.inject({ method: 'POST', url: '/api/webhooks/signing-secret/rotate' }), 401);
    });

    it('after a rotation both secrets sign for 24 hours (either verifies), then only the new one', async () => {
      const c = await createClient(t);
      const key = await t.app.inject({ method: 'POST', url: `/admin/accounts/${c.accountId}/pix-keys`, headers: adminHeaders, payload: { type: 'evp' } });
      assert.equal(key.statusCode, 201, key.body);
      const pixKey = key.json().key as string;
      assert.equal((await register(c, { url: `${rcv.origin}/signed/${c.accountId}`, eventType: 'cash_in' })).statusCode, 201);
      const oldSecret = (await call(c, 'GET', '/api/webhooks/signing-secret')).json().secret as string;

      const beforeRotation = await deliverCashIn(c, pixKey);
      assert.equal(beforeRotation.headers['webhook-signature']!.split(' ').length, 1);
      new Webhook(oldSecret).verify(beforeRotation.body, beforeRotation.headers);

      const rotated = await call(c, 'POST', '/api/webhooks/signing-secret/rotate');
      assert.equal(rotated.statusCode, 200, rotated.body);
      const newSecret = rotated.json().secret as string;
      assert.match(newSecret, /^whsec_/);
      assert.notEqual(newSecret, oldSecret);
      assert.equal((await call(c, 'GET', '/api/webhooks/signing-secret')).json().secret, newSecret);

      const during = await deliverCashIn(c, pixKey);
      const signatures = during.headers['webhook-signature']!.split(' ');
      assert.equal(signatures.length, 2);
      for (const s of signatures) assert.match(s, /^v1,[A-Za-z0-9+/]+=*$/);
      for (const secret of [oldSecret, newSecret]) assert.deepEqual(new Webhook(secret).verify(during.body, during.headers), JSON.parse(during.body));
      assert.throws(() => new Webhook(`whsec_${Buffer.alloc(24, 7).toString('base64')}`).verify(during.body, during.headers));

      t.clock.advance(24 * 3_600_000);
      const later = await deliverCashIn(c, pixKey);
      const [only, ...rest] = later.headers['webhook-signature']!.split(' ');
      assert.equal(rest.length, 0);
      // The clock is a day ahead of real time, so verify() would refuse the timestamp: sign again instead.
      const at = new Date(Number(later.headers['webhook-timestamp']) * 1000);
      assert.equal(only, new Webhook(newSecret).sign(later.headers['webhook-id']!, at, later.body));
      assert.notEqual(only, new Webhook(oldSecret).sign(later.headers['webhook-id']!, at, later.body));
      t.clock.set(new Date());
    });
  });
});
