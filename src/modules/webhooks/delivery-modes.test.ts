import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { assertError } from '../../../test/assertions.ts';
import { createClient, evpKey, incomingPix, type TestClient } from '../../../test/factories.ts';
import { adminHeaders, startTestApp, type TestApp } from '../../../test/harness.ts';
import { freePort } from '../../../test/processes.ts';
import { senderFaults } from '../../app.ts';
import { destinationPolicy } from './destination.ts';
import { deliverDue } from './delivery.ts';
import { WebhookSender } from './sender.ts';

interface Arrival {
  headers: Record<string, string>;
  body: string;
}

/** The sandbox's delivery modes (webhook faults duplicate and late), as a receiver at the sandbox inbox sees them. */
describe('webhook delivery modes', () => {
  let t: TestApp;
  let publicUrl: string;
  let sender: WebhookSender;

  before(async () => {
    const port = await freePort();
    publicUrl = `http://127.0.0.1:${port}`;
    t = await startTestApp({ env: { PUBLIC_URL: publicUrl, WEBHOOK_ALLOW_PRIVATE: 'false' } });
    await t.app.listen({ port, host: '127.0.0.1' });
    sender = new WebhookSender({ policy: destinationPolicy(t.config), timeoutMs: 3000, ...senderFaults(t.controls) });
  });
  after(async () => {
    await sender.close();
    await t.close();
  });

  const setFault = (body: object) => t.app.inject({ method: 'POST', url: '/sandbox/faults', headers: adminHeaders, payload: body });
  const deliver = () => deliverDue({ db: t.db, clock: t.controls!.clock, sender });
  /** What arrived at the inbox, oldest first. */
  const arrivals = async (name: string) => {
    const res = await t.app.inject({ method: 'GET', url: `/sandbox/inbox/${name}`, headers: adminHeaders });
    assert.equal(res.statusCode, 200, res.body);
    return res.json<{ data: Arrival[] }>().data.reverse();
  };
  const amountOf = (a: Arrival) => (JSON.parse(a.body) as { data: { payment: { amount: string } } }).data.payment.amount;
  /** A client whose cash-in notifications go to the inbox `name`, and its key. */
  const subscriber = async (name: string): Promise<{ client: TestClient; key: string; inbox: string }> => {
    const client = await createClient(t);
    const inbox = `${publicUrl}/sandbox/inbox/${name}`;
    const registered = await t.app.inject({ method: 'POST', url: '/api/webhooks', headers: client.headers, payload: { url: inbox, eventType: 'cash_in' } });
    assert.equal(registered.statusCode, 201, registered.body);
    return { client, key: await evpKey(t, client.accountId), inbox };
  };
  const logs = (accountId: number) =>
    t.db.selectFrom('webhook_logs').select(['message_id', 'attempt', 'success', 'error']).where('account_id', '=', BigInt(accountId)).orderBy('id').execute();

  it('the new effects take their fields: late an optional delayMs (its longest hold), duplicate none', async () => {
    assertError(await setFault({ kind: 'webhook', effect: 'duplicate', urlPrefix: 'https://x.example/', delayMs: 5 }), 400, /takes no delayMs/, 'VALIDATION_FAILED');
    assertError(await setFault({ kind: 'webhook', effect: 'late', urlPrefix: 'https://x.example/', status: 500 }), 400, /takes no status/, 'VALIDATION_FAILED');
    assertError(await setFault({ kind: 'settlement', effect: 'duplicate', pixKey: 'a@b.c' }), 400, /reject, delay/, 'VALIDATION_FAILED');
    const late = await setFault({ kind: 'webhook', effect: 'late', urlPrefix: 'https://x.example/', count: 3 });
    assert.equal(late.statusCode, 201, late.body);
    assert.deepEqual([late.json().effect, late.json().delayMs, late.json().remaining], ['late', null, 3]);
    const duplicate = await setFault({ kind: 'webhook', effect: 'duplicate', urlPrefix: 'https://x.example/' });
    assert.equal(duplicate.statusCode, 201, duplicate.body);
    const listed = (await t.app.inject({ method: 'GET', url: '/sandbox/faults', headers: adminHeaders })).json<{ data: { effect: string }[] }>().data;
    assert.deepEqual(listed.map((f) => f.effect), ['late', 'duplicate']);
    assert.equal((await t.app.inject({ method: 'DELETE', url: '/sandbox/faults', headers: adminHeaders })).statusCode, 204);
  });

  it('duplicate: the inbox gets the notification twice, the same body and webhook-id, each validly signed; both attempts logged', async () => {
    const { client, key, inbox } = await subscriber('duas-vezes');
    const fault = (await setFault({ kind: 'webhook', effect: 'duplicate', urlPrefix: inbox, count: 1 })).json<{ id: number }>();
    await incomingPix(t, key, '3.30');
    await deliver();
    const got = await arrivals('duas-vezes');
    assert.equal(got.length, 2, 'delivered twice');
    const [first, second] = got as [Arrival, Arrival];
    assert.equal(first.body, second.body);
    assert.equal(first.headers['webhook-id'], second.headers['webhook-id']);
    const account = await t.db.selectFrom('accounts').select('webhook_secret').where('id', '=', BigInt(client.accountId)).executeTakeFirstOrThrow();
    const verifier = new Webhook(account.webhook_secret);
    for (const a of got) {
      verifier.verify(a.body, { 'webhook-id': a.headers['webhook-id']!, 'webhook-timestamp': a.headers['webhook-timestamp']!, 'webhook-signature': a.headers['webhook-signature']! });
    }
    const logged = await logs(client.accountId);
    assert.deepEqual(
      logged.map((l) => [l.message_id, l.attempt, l.success, l.error]),
      [
        [first.headers['webhook-id'], 1, true, `sent twice by sandbox fault ${fault.id}`],
        [first.headers['webhook-id'], 1, true, `duplicate sent by sandbox fault ${fault.id}`],
      ],
    );
    assert.equal(await t.db.selectFrom('webhook_deliveries').select('id').where('account_id', '=', BigInt(client.accountId)).executeTakeFirst(), undefined, 'delivered: off the queue');
    // Used up: the next one goes once.
    await incomingPix(t, key, '3.31');
    await deliver();
    assert.equal((await arrivals('duas-vezes')).length, 3);
  });

  it('late: a delivery is held (in the queue) until the next one to its URL is delivered, then goes right after it: the two arrive reversed', async () => {
    const { client, key, inbox } = await subscriber('atrasada');
    const fault = (await setFault({ kind: 'webhook', effect: 'late', urlPrefix: inbox, count: 1 })).json<{ id: number }>();
    await incomingPix(t, key, '1.01');
    await deliver();
    assert.deepEqual(await arrivals('atrasada'), [], 'held');
    const held = await t.db
      .selectFrom('webhook_deliveries')
      .select(['status', 'attempts', 'late_fault', 'late_until'])
      .where('account_id', '=', BigInt(client.accountId))
      .executeTakeFirstOrThrow();
    assert.deepEqual([held.status, held.attempts, held.late_fault], ['PENDING', 0, BigInt(fault.id)], 'pending, its claim not counted as an attempt');
    assert.ok(held.late_until!.getTime() > t.controls!.clock.now().getTime() + 50_000, 'held for up to 60 s by default');
    await incomingPix(t, key, '1.02');
    await deliver();
    await deliver();
    assert.deepEqual((await arrivals('atrasada')).map(amountOf), ['1.02', '1.01'], 'the newer first, the older right after it');
    const logged = await logs(client.accountId);
    assert.deepEqual(
      logged.map((l) => [l.attempt, l.success, l.error]),
      [
        [1, true, null],
        [1, true, `held until the next delivery to its URL was delivered by sandbox fault ${fault.id}`],
      ],
    );
  });

  it('late, until cleared: deliveries to one URL go in pairs, each pair reversed', async () => {
    const { inbox, key } = await subscriber('aos-pares');
    const fault = (await setFault({ kind: 'webhook', effect: 'late', urlPrefix: inbox })).json<{ id: number }>();
    for (const amount of ['2.01', '2.02', '2.03', '2.04']) {
      await incomingPix(t, key, amount);
      await deliver();
    }
    assert.deepEqual((await arrivals('aos-pares')).map(amountOf), ['2.02', '2.01', '2.04', '2.03']);
    await t.app.inject({ method: 'DELETE', url: `/sandbox/faults/${fault.id}`, headers: adminHeaders });
  });

  it('late, two deliveries claimed together: the older is held, the newer goes and lets it go right after', async () => {
    const { inbox, key } = await subscriber('juntas');
    await setFault({ kind: 'webhook', effect: 'late', urlPrefix: inbox, count: 1 });
    await incomingPix(t, key, '4.01');
    await incomingPix(t, key, '4.02');
    await deliver();
    await deliver();
    assert.deepEqual((await arrivals('juntas')).map(amountOf), ['4.02', '4.01']);
  });

  it('late with a longest hold: with no later delivery to its URL, it goes anyway when the hold runs out, and the log says so', async () => {
    const { client, key, inbox } = await subscriber('sozinha');
    const fault = (await setFault({ kind: 'webhook', effect: 'late', urlPrefix: inbox, delayMs: 2000, count: 1 })).json<{ id: number }>();
    await incomingPix(t, key, '5.00');
    await deliver();
    assert.deepEqual(await arrivals('sozinha'), [], 'held');
    await t.app.inject({ method: 'POST', url: '/sandbox/clock/advance', headers: adminHeaders, payload: { seconds: 3 } });
    await deliver();
    assert.deepEqual((await arrivals('sozinha')).map(amountOf), ['5.00']);
    const [log, ...rest] = await logs(client.accountId);
    assert.deepEqual(rest, []);
    assert.deepEqual([log!.success, log!.error], [true, `held until its hold ran out (no later delivery to its URL was delivered) by sandbox fault ${fault.id}`]);
  });
});
