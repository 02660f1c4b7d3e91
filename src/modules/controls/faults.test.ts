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
    t = await startTestApp();
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

  it('a webhook timeout fault fails the attempt as a timeout after the time limit; a short delay only holds it', async () => {
    const path = `/lento/${client.accountId}`;
    const url = `${rcv.origin}${path}`;
    const timeout = (await setFault({ kind: 'webhook', effect: 'timeout', urlPrefix: url, count: 1 })).json<{ id: number }>();
    const message = { url, messageId: `msg_${randomUUID().replaceAll('-', '')}`, body: '{}', headers: {}, secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] };
    const first = await sender.send(message, () => t.controls!.clock.now());
    assert.deepEqual([first.success, first.failure, first.error], [false, 'timeout', `timeout: no answer within 400 ms (sandbox fault ${timeout.id})`]);
    assert.ok(first.durationMs >= 390, `${first.durationMs} ms`);
    await setFault({ kind: 'webhook', effect: 'delay', urlPrefix: url, delayMs: 150, count: 1 });
    const second = await sender.send(message, () => t.controls!.clock.now());
    assert.deepEqual([second.success, second.statusCode], [true, 200]);
    assert.ok(second.durationMs >= 0 && rcv.received.filter((r) => r.path === path).length === 1, 'the delayed one reached the receiver');
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

  it('a settlement delay holds transfers to the key until the delay has passed on the test clock', async () => {
    const receiver = await externalKey(t);
    await setFault({ kind: 'settlement', effect: 'delay', pixKey: receiver.key, delayMs: 120_000 });
    await transfer(receiver.key);
    assert.deepEqual(await settle(), { settled: 0, failed: 0 });
    await t.app.inject({ method: 'POST', url: '/sandbox/clock/advance', headers: adminHeaders, payload: { seconds: 121 } });
    assert.deepEqual(await settle(), { settled: 1, failed: 0 });
    await clearAll();
  });

  it('the directory unavailable: transfers and key look-ups are 503 with Retry-After until cleared', async () => {
    const receiver = await externalKey(t);
    const fault = (await setFault({ kind: 'directory', effect: 'unavailable' })).json<{ id: number }>();
    const refused = await transfer(receiver.key);
    assertError(refused, 503, /directory/i, 'DIRECTORY_UNAVAILABLE');
    assert.equal(refused.headers['retry-after'], '1');
    assertError(await t.app.inject({ method: 'GET', url: `/dict/keys/${receiver.key}`, headers: client.headers }), 503, /directory/i, 'DIRECTORY_UNAVAILABLE');
    assert.equal((await t.app.inject({ method: 'DELETE', url: `/sandbox/faults/${fault.id}`, headers: adminHeaders })).statusCode, 204);
    assert.equal((await transfer(receiver.key)).statusCode, 201);
  });
});
