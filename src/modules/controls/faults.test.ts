import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { assertError } from '../../../test/assertions.ts';
import { createClient, creditAccount, evpKey, externalKey, incomingPix, type TestClient } from '../../../test/factories.ts';
import { adminHeaders, startTestApp, type TestApp } from '../../../test/harness.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/webhook-receiver.ts';
import { senderFaults } from '../../app.ts';
import { settleDue } from '../settlement/service.ts';
import { deliverDue } from '../webhooks/delivery.ts';
import { WebhookSender } from '../webhooks/sender.ts';

describe('faults on demand', () => {
  let t: TestApp;
  let client: TestClient;
  let rcv: WebhookReceiver;
  let sender: WebhookSender;

  before(async () => {
    t = await startTestApp({ captureLogs: true });
    client = await createClient(t);
    await creditAccount(t.db, client.accountId, 100_000n);
    rcv = await startWebhookReceiver();
    // The worker's sender, as main.ts makes it: with the sandbox's faults.
    sender = new WebhookSender({ allowPrivate: true, caFile: rcv.caFile, timeoutMs: 400, ...senderFaults(t.controls) });
  });
  after(async () => {
    await sender.close();
    await rcv.close();
    await t.close();
  });

  const setFault = (body: object) => t.app.inject({ method: 'POST', url: '/sandbox/faults', headers: adminHeaders, payload: body });
  const faults = async () => (await t.app.inject({ method: 'GET', url: '/sandbox/faults', headers: adminHeaders })).json<{ data: { id: number }[] }>().data;
  const clearAll = () => t.app.inject({ method: 'DELETE', url: '/sandbox/faults', headers: adminHeaders });
  const transfer = async (pixKey: string) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/dict/pix',
      headers: { ...client.headers, 'x-idempotency-key': randomUUID() },
      payload: { pixKey, payment: { currency: 'BRL', amount: 2.5 } },
    });
    return res;
  };
  const settle = () => settleDue({ db: t.db, clock: t.controls!.clock, ispb: t.config.pspIspb, settlementDelayMs: 0 });

  it('each kind takes its own fields, and says which one is missing or extra', async () => {
    assertError(await setFault({ kind: 'webhook', effect: 'status', status: 503 }), 400, /needs urlPrefix/, 'VALIDATION_FAILED');
    assertError(await setFault({ kind: 'webhook', effect: 'status', urlPrefix: 'https://x.example/' }), 400, /needs status/, 'VALIDATION_FAILED');
    assertError(await setFault({ kind: 'webhook', effect: 'reject', urlPrefix: 'https://x.example/' }), 400, /status, timeout, delay/, 'VALIDATION_FAILED');
    assertError(await setFault({ kind: 'settlement', effect: 'reject', pixKey: 'a@b.c' }), 400, /needs reason/, 'VALIDATION_FAILED');
    assertError(await setFault({ kind: 'settlement', effect: 'reject', pixKey: 'a@b.c', reason: 'AC03', count: 2 }), 400, /takes no count/, 'VALIDATION_FAILED');
    assertError(await setFault({ kind: 'settlement', effect: 'reject', pixKey: 'a@b.c', reason: 'ac03' }), 400, /reason/, 'VALIDATION_FAILED');
    assertError(await setFault({ kind: 'directory', effect: 'unavailable', urlPrefix: 'https://x.example/' }), 400, /takes no urlPrefix/, 'VALIDATION_FAILED');
    assertError(await setFault({ kind: 'webhook', effect: 'timeout', urlPrefix: 'ftp://x' }), 400, /urlPrefix/, 'VALIDATION_FAILED');
    assert.deepEqual(await faults(), [], 'nothing was set');
    assertError(await t.app.inject({ method: 'DELETE', url: '/sandbox/faults/999', headers: adminHeaders }), 404, /999/, 'FAULT_NOT_FOUND');
    assert.equal((await t.app.inject({ method: 'GET', url: '/sandbox/faults' })).statusCode, 401);
  });

  it('a webhook fault for N deliveries: they get its status without reaching the receiver, the log says so, then it is gone', async () => {
    const path = `/falha/${client.accountId}`;
    await t.app.inject({ method: 'POST', url: '/api/webhooks', headers: client.headers, payload: { url: `${rcv.origin}${path}`, eventType: 'cash_in' } });
    const set = await setFault({ kind: 'webhook', effect: 'status', urlPrefix: `${rcv.origin}/falha/`, status: 503, count: 2 });
    assert.equal(set.statusCode, 201, set.body);
    const fault = set.json<{ id: number; remaining: number; kind: string; status: number }>();
    assert.deepEqual([fault.kind, fault.status, fault.remaining], ['webhook', 503, 2]);
    const key = await evpKey(t, client.accountId);
    for (let i = 0; i < 3; i++) await incomingPix(t, key, '1.00');
    await deliverDue({ db: t.db, clock: t.controls!.clock, sender });
    assert.equal(rcv.received.filter((r) => r.path === path).length, 1, 'only the third reached the receiver');
    const logs = await t.db.selectFrom('webhook_logs').select(['status_code', 'error', 'success']).where('account_id', '=', BigInt(client.accountId)).orderBy('id').execute();
    assert.deepEqual(
      logs.map((l) => [l.status_code, l.error, l.success]),
      [
        [503, `HTTP 503 (sandbox fault ${fault.id})`, false],
        [503, `HTTP 503 (sandbox fault ${fault.id})`, false],
        [200, null, true],
      ],
    );
    assert.deepEqual(await faults(), [], 'used up');
  });

  it('a webhook timeout fault fails the attempt as a timeout after the time limit; a short delay holds it, and both say so', async () => {
    const path = `/lento/${client.accountId}`;
    const url = `${rcv.origin}${path}`;
    const timeout = (await setFault({ kind: 'webhook', effect: 'timeout', urlPrefix: url, count: 1 })).json<{ id: number }>();
    const message = { url, messageId: `msg_${randomUUID().replaceAll('-', '')}`, body: '{}', headers: {}, secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] };
    const first = await sender.send(message, () => t.controls!.clock.now());
    assert.deepEqual([first.success, first.failure, first.error], [false, 'timeout', `timeout: no answer within 400 ms (sandbox fault ${timeout.id})`]);
    assert.ok(first.durationMs >= 390, `${first.durationMs} ms`);
    assert.equal(rcv.received.filter((r) => r.path === path).length, 0, 'the timed-out one never left');
    // A delay shorter than the limit: the request goes after it, and the attempt counts it.
    const delay = (await setFault({ kind: 'webhook', effect: 'delay', urlPrefix: url, delayMs: 150, count: 1 })).json<{ id: number }>();
    const second = await sender.send(message, () => t.controls!.clock.now());
    assert.deepEqual([second.success, second.statusCode, second.error], [true, 200, `delayed 150 ms by sandbox fault ${delay.id}`]);
    assert.ok(second.durationMs >= 150, `the duration counts the delay: ${second.durationMs} ms`);
    assert.equal(rcv.received.filter((r) => r.path === path).length, 1, 'the delayed one reached the receiver');
    // A delay past the limit is a timeout, and says it was the delay.
    const long = (await setFault({ kind: 'webhook', effect: 'delay', urlPrefix: url, delayMs: 1500, count: 1 })).json<{ id: number }>();
    const third = await sender.send(message, () => t.controls!.clock.now());
    assert.deepEqual([third.success, third.failure, third.error], [false, 'timeout', `timeout: no answer within 400 ms (delayed 1500 ms by sandbox fault ${long.id})`]);
    assert.ok(third.durationMs >= 390, `${third.durationMs} ms`);
    // A 2xx status from a fault is delivered, and the log says who answered.
    const ok = (await setFault({ kind: 'webhook', effect: 'status', urlPrefix: url, status: 204, count: 1 })).json<{ id: number }>();
    const fourth = await sender.send(message, () => t.controls!.clock.now());
    assert.deepEqual([fourth.success, fourth.statusCode, fourth.error], [true, 204, `HTTP 204 (sandbox fault ${ok.id})`]);
    assert.equal(rcv.received.filter((r) => r.path === path).length, 1, 'answered by the fault, not the receiver');
    // No fault left: an attempt says nothing of any.
    const fifth = await sender.send(message, () => t.controls!.clock.now());
    assert.deepEqual([fifth.success, fifth.error], [true, null]);
  });

  it('a delayed delivery is logged delivered, with the delay in its duration and the fault named (GET /api/webhooks/logs)', async () => {
    const other = await createClient(t);
    const path = `/devagar/${other.accountId}`;
    await t.app.inject({ method: 'POST', url: '/api/webhooks', headers: other.headers, payload: { url: `${rcv.origin}${path}`, eventType: 'cash_in' } });
    const fault = (await setFault({ kind: 'webhook', effect: 'delay', urlPrefix: `${rcv.origin}${path}`, delayMs: 200, count: 1 })).json<{ id: number }>();
    await incomingPix(t, await evpKey(t, other.accountId), '1.00');
    await deliverDue({ db: t.db, clock: t.controls!.clock, sender });
    assert.equal(rcv.received.filter((r) => r.path === path).length, 1);
    const res = await t.app.inject({ method: 'GET', url: '/api/webhooks/logs', headers: other.headers });
    assert.equal(res.statusCode, 200, res.body);
    const [log, ...rest] = res.json<{ data: { success: boolean; statusCode: number; durationMs: number; error: string | null }[] }>().data;
    assert.deepEqual(rest, []);
    assert.deepEqual([log!.success, log!.statusCode, log!.error], [true, 200, `delayed 200 ms by sandbox fault ${fault.id}`]);
    assert.ok(log!.durationMs >= 200, `the logged duration counts the delay: ${log!.durationMs} ms`);
  });

  it('a settlement fault rejects transfers to a key with a BCB reason code, in the transaction and its notification', async () => {
    const receiver = await externalKey(t);
    assert.equal((await setFault({ kind: 'settlement', effect: 'reject', pixKey: receiver.key, reason: 'AC03' })).statusCode, 201);
    const sent = (await transfer(receiver.key)).json<{ id: number }>();
    assert.deepEqual(await settle(), { settled: 0, failed: 1 });
    const view = await t.app.inject({ method: 'GET', url: `/api/pix/transaction/${sent.id}`, headers: client.headers });
    assert.deepEqual([view.json().status, view.json().errorReason], ['ERROR', 'Rejected by the receiving institution (AC03)']);
    const outbox = await t.db.selectFrom('outbox').select('payload').where('transaction_id', '=', BigInt(sent.id)).executeTakeFirstOrThrow();
    assert.match(JSON.stringify(outbox.payload), /Rejected by the receiving institution \(AC03\)/);
    // A new fault on the key replaces the old one.
    await setFault({ kind: 'settlement', effect: 'reject', pixKey: receiver.key, reason: 'AM04' });
    assert.equal((await faults()).length, 1);
    assert.equal((await clearAll()).statusCode, 204);
    await transfer(receiver.key);
    assert.deepEqual(await settle(), { settled: 1, failed: 0 }, 'cleared: it settles');
  });

  it('a settlement delay holds transfers to the key until the delay has passed on the test clock, and the transfer says why', async () => {
    const receiver = await externalKey(t);
    const fault = (await setFault({ kind: 'settlement', effect: 'delay', pixKey: receiver.key, delayMs: 120_000 })).json<{ id: number }>();
    const sent = (await transfer(receiver.key)).json<{ id: number }>();
    assert.deepEqual(await settle(), { settled: 0, failed: 0 });
    const view = async () => (await t.app.inject({ method: 'GET', url: `/api/pix/transaction/${sent.id}`, headers: client.headers })).json<{ status: string; errorReason: string | null; createdAt: string }>();
    const held = await view();
    const until = new Date(new Date(held.createdAt).getTime() + 120_000).toISOString();
    assert.deepEqual([held.status, held.errorReason], ['PENDING', `Settlement delayed 120000 ms by sandbox fault ${fault.id}: pending until ${until}`]);
    // Only the status view has a reason: the list views keep their fields.
    const listed = (await t.app.inject({ method: 'GET', url: `/api/pix/transactions/pix-key/${receiver.key}/${sent.id}`, headers: client.headers })).json<Record<string, unknown>>();
    assert.equal('errorReason' in listed, false);
    await t.app.inject({ method: 'POST', url: '/sandbox/clock/advance', headers: adminHeaders, payload: { seconds: 121 } });
    assert.deepEqual(await settle(), { settled: 1, failed: 0 });
    const settled = await view();
    assert.deepEqual([settled.status, settled.errorReason], ['CONFIRMED', null]);
    await clearAll();
  });

  it('a transfer no fault holds has no reason while pending', async () => {
    const receiver = await externalKey(t);
    const other = await externalKey(t);
    await setFault({ kind: 'settlement', effect: 'delay', pixKey: other.key, delayMs: 120_000 });
    const sent = (await transfer(receiver.key)).json<{ id: number }>();
    const view = (await t.app.inject({ method: 'GET', url: `/api/pix/transaction/${sent.id}`, headers: client.headers })).json<{ status: string; errorReason: string | null }>();
    assert.deepEqual([view.status, view.errorReason], ['PENDING', null]);
    await clearAll();
    await settle();
  });

  it('the directory unavailable: transfers and key look-ups are 503 with Retry-After until cleared', async () => {
    const receiver = await externalKey(t);
    const fault = (await setFault({ kind: 'directory', effect: 'unavailable' })).json<{ id: number }>();
    const refused = await transfer(receiver.key);
    assertError(refused, 503, new RegExp(`directory.*sandbox fault ${fault.id}`, 'i'), 'DIRECTORY_UNAVAILABLE');
    assert.equal(refused.headers['retry-after'], '1');
    const warned = t.logs.map((line) => JSON.parse(line) as { level: number; code?: string; context?: { sandboxFault?: number } });
    assert.ok(
      warned.some((l) => l.level === 40 && l.code === 'DIRECTORY_UNAVAILABLE' && l.context?.sandboxFault === fault.id),
      'a warning names the fault',
    );
    assertError(await t.app.inject({ method: 'GET', url: `/dict/keys/${receiver.key}`, headers: client.headers }), 503, /directory/i, 'DIRECTORY_UNAVAILABLE');
    assert.equal((await t.app.inject({ method: 'DELETE', url: `/sandbox/faults/${fault.id}`, headers: adminHeaders })).statusCode, 204);
    assert.equal((await transfer(receiver.key)).statusCode, 201);
  });
});
