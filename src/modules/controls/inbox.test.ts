import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertError } from '../../../test/assertions.ts';
import { createClient, evpKey, incomingPix, operator, randomCpf, type TestClient } from '../../../test/factories.ts';
import { adminHeaders, startTestApp, type TestApp } from '../../../test/harness.ts';
import { freePort } from '../../../test/processes.ts';
import { senderFaults } from '../../app.ts';
import { destinationPolicy } from '../webhooks/destination.ts';
import { deliverDue } from '../webhooks/delivery.ts';
import { WebhookSender } from '../webhooks/sender.ts';
import { INBOX_ARRIVALS_PER_MINUTE, INBOX_BOUNDS } from './inbox-routes.ts';

interface Arrival {
  id: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  status: number;
}

describe('the webhook inbox', () => {
  let t: TestApp;
  let client: TestClient;
  let publicUrl: string;
  let sender: WebhookSender;

  before(async () => {
    // A real listener at PUBLIC_URL: webhooks reach the inbox over HTTP, as a developer's would.
    const port = await freePort();
    publicUrl = `http://127.0.0.1:${port}`;
    t = await startTestApp({ env: { PUBLIC_URL: publicUrl, WEBHOOK_ALLOW_PRIVATE: 'false' } });
    await t.app.listen({ port, host: '127.0.0.1' });
    client = await createClient(t);
    sender = new WebhookSender({ policy: destinationPolicy(t.config), timeoutMs: 3000, ...senderFaults(t.controls) });
  });
  after(async () => {
    await sender.close();
    await t.close();
  });

  const list = async (name: string) => {
    const res = await t.app.inject({ method: 'GET', url: `/sandbox/inbox/${name}`, headers: adminHeaders });
    assert.equal(res.statusCode, 200, res.body);
    return res.json<{ data: Arrival[] }>().data;
  };

  it('records anything posted to it, with no token, and lists it newest first for the operator', async () => {
    const text = await fetch(`${publicUrl}/sandbox/inbox/qualquer`, { method: 'POST', headers: { 'content-type': 'text/plain', 'x-mine': 'a' }, body: 'olá\u0000mundo' });
    assert.equal(text.status, 200);
    const json = await fetch(`${publicUrl}/sandbox/inbox/qualquer`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"not":"validated"' });
    assert.equal(json.status, 200);
    const arrivals = await list('qualquer');
    assert.deepEqual(
      arrivals.map((a) => [a.method, a.body, a.status, a.headers['content-type']]),
      [
        ['POST', '{"not":"validated"', 200, 'application/json'],
        ['POST', 'olá\uFFFDmundo', 200, 'text/plain'],
      ],
    );
    assert.equal(arrivals[1]!.headers['x-mine'], 'a');
    assert.deepEqual(await list('outra'), [], 'inboxes are apart');
    assert.equal((await t.app.inject({ method: 'GET', url: '/sandbox/inbox/qualquer' })).statusCode, 401, 'reading takes the admin token');
    assertError(await t.app.inject({ method: 'POST', url: '/sandbox/inbox/n%C3%A3o', payload: 'x', headers: { 'content-type': 'text/plain' } }), 400, /name/, 'VALIDATION_FAILED');
    assert.equal((await t.app.inject({ method: 'DELETE', url: '/sandbox/inbox/qualquer', headers: adminHeaders })).statusCode, 204);
    assert.deepEqual(await list('qualquer'), []);
  });

  it('a webhook may point at it over plain HTTP (the one exception), and its deliveries arrive signed', async () => {
    const inbox = `${publicUrl}/sandbox/inbox/minha`;
    const registered = await t.app.inject({ method: 'POST', url: '/api/webhooks', headers: client.headers, payload: { url: inbox, eventType: 'cash_in' } });
    assert.equal(registered.statusCode, 201, registered.body);
    // Any other plain HTTP destination stays refused.
    assertError(
      await t.app.inject({ method: 'POST', url: '/api/webhooks', headers: client.headers, payload: { url: `${publicUrl}/sandbox/outra/minha`, eventType: 'cash_in' } }),
      400,
      /HTTPS/,
    );
    await incomingPix(t, await evpKey(t, client.accountId), '4.20');
    await deliverDue({ db: t.db, clock: t.controls!.clock, sender });
    const [arrival] = await list('minha');
    assert.ok(arrival, 'delivered');
    assert.equal(arrival.status, 200);
    assert.match(arrival.headers['webhook-signature']!, /^v1,/);
    assert.deepEqual(JSON.parse(arrival.body).data.payment, { amount: '4.20', currency: 'BRL' });
  });

  it("a key's webhook (/v2) may point at it: its callbacks arrive at the sub-path /pix, shown with each arrival", async () => {
    const key = await evpKey(t, client.accountId);
    const webhookUrl = `${publicUrl}/sandbox/inbox/v2hook`;
    const put = await t.app.inject({ method: 'PUT', url: `/v2/webhook/${key}`, headers: client.headers, payload: { webhookUrl } });
    assert.equal(put.statusCode, 200, put.body);
    const cob = await t.app.inject({ method: 'POST', url: '/v2/cob', headers: client.headers, payload: { calendario: { expiracao: 3600 }, valor: { original: '6.10' }, chave: key } });
    const { txid } = cob.json<{ txid: string }>();
    await operator(t).incomingPix({ pixKey: key, amount: '6.10', txid, payer: { name: 'Pagador', document: randomCpf() } });
    await deliverDue({ db: t.db, clock: t.controls!.clock, sender });
    const arrivals = await list('v2hook');
    const callback = arrivals.find((a) => a.path === '/pix');
    assert.ok(callback, `a callback at /pix: ${JSON.stringify(arrivals.map((a) => a.path))}`);
    assert.equal(callback.status, 200);
    assert.equal(JSON.parse(callback.body).pix[0].txid, txid);
    // A sub-path of its own makes the callbacks' a second one, which no inbox takes: refused now, saying why.
    const deep = await t.app.inject({ method: 'PUT', url: `/v2/webhook/${key}`, headers: client.headers, payload: { webhookUrl: `${webhookUrl}/mais` } });
    assert.equal(deep.statusCode, 400, deep.body);
    const problem = deep.json<{ detail: string; violacoes: { propriedade: string }[] }>();
    assert.match(problem.detail, /seus callbacks vão para .*\/sandbox\/inbox\/v2hook\/mais\/pix, onde não podem ser entregues/);
    assert.deepEqual(problem.violacoes.map((v) => v.propriedade), ['webhookUrl']);
    assert.equal((await t.app.inject({ method: 'POST', url: '/sandbox/inbox/v2hook/a/b', payload: 'x', headers: { 'content-type': 'text/plain' } })).statusCode, 404);
  });

  it('a fault on the inbox URL is answered by the inbox itself, which records what it answered; the retry then lands', async () => {
    const inbox = `${publicUrl}/sandbox/inbox/falha`;
    await t.app.inject({ method: 'POST', url: '/api/webhooks', headers: client.headers, payload: { url: inbox, eventType: 'cash_in' } });
    const fault = await t.app.inject({ method: 'POST', url: '/sandbox/faults', headers: adminHeaders, payload: { kind: 'webhook', effect: 'status', urlPrefix: inbox, status: 500, count: 1 } });
    assert.equal(fault.statusCode, 201, fault.body);
    const { id } = fault.json<{ id: number }>();
    await incomingPix(t, await evpKey(t, client.accountId), '1.10');
    await deliverDue({ db: t.db, clock: t.controls!.clock, sender });
    assert.deepEqual((await list('falha')).map((a) => a.status), [500]);
    await t.app.inject({ method: 'POST', url: '/sandbox/clock/advance', headers: adminHeaders, payload: { seconds: 3600 } });
    await deliverDue({ db: t.db, clock: t.controls!.clock, sender });
    assert.deepEqual((await list('falha')).map((a) => a.status), [200, 500], 'the retry got 200');
    // The delivery log names the fault the inbox answered with; the retry, which met none, nothing.
    const logs = await t.db.selectFrom('webhook_logs').select(['status_code', 'success', 'error']).where('url', '=', inbox).orderBy('id').execute();
    assert.deepEqual(
      logs.map((l) => [l.status_code, l.success, l.error]),
      [
        [500, false, `HTTP 500 (sandbox fault ${id}, at the inbox)`],
        [200, true, null],
      ],
    );
  });

  it('a delay on the inbox URL holds the answer: the delivery log counts it and names the fault', async () => {
    const inbox = `${publicUrl}/sandbox/inbox/lenta`;
    const fault = await t.app.inject({ method: 'POST', url: '/sandbox/faults', headers: adminHeaders, payload: { kind: 'webhook', effect: 'delay', urlPrefix: inbox, delayMs: 300, count: 1 } });
    assert.equal(fault.statusCode, 201, fault.body);
    const { id } = fault.json<{ id: number }>();
    const message = { url: inbox, messageId: 'msg_inbox_delay', body: '{}', headers: {}, secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] };
    const attempt = await sender.send(message, () => t.controls!.clock.now());
    assert.deepEqual([attempt.success, attempt.statusCode, attempt.error], [true, 200, `delayed 300 ms by sandbox fault ${id}, at the inbox`]);
    assert.ok(attempt.durationMs >= 300, `${attempt.durationMs} ms`);
    assert.deepEqual((await list('lenta')).map((a) => a.status), [200]);
    const again = await sender.send(message, () => t.controls!.clock.now());
    assert.deepEqual([again.success, again.error], [true, null], 'used up: nothing to name');
  });

  describe('bounds', () => {
    const post = (name: string, body: string, remoteAddress = '127.0.0.1') =>
      t.app.inject({ method: 'POST', url: `/sandbox/inbox/${name}`, headers: { 'content-type': 'text/plain' }, payload: body, remoteAddress });

    it(`an inbox keeps its newest ${INBOX_BOUNDS.arrivals} arrivals within ${INBOX_BOUNDS.bytes} bytes of bodies: the oldest go first`, async () => {
      const big = 60 * 1024;
      for (let i = 0; i < 20; i++) assert.equal((await post('grande', `${String(i).padStart(2, '0')}${'x'.repeat(big - 2)}`)).statusCode, 200);
      const kept = await list('grande');
      const fits = Math.floor(INBOX_BOUNDS.bytes / big);
      assert.deepEqual(kept.map((a) => a.body.slice(0, 2)), Array.from({ length: fits }, (_, i) => String(19 - i).padStart(2, '0')));
      for (let i = 0; i < INBOX_BOUNDS.arrivals + 5; i++) await post('muitas', String(i));
      const many = await list('muitas');
      assert.equal(many.length, INBOX_BOUNDS.arrivals);
      assert.equal(many.at(-1)!.body, '5', 'the five oldest went');
    });

    it(`${INBOX_BOUNDS.names} inboxes at most: a new one empties the inbox written to longest ago`, async () => {
      await t.db.deleteFrom('sandbox_inbox').execute();
      const names = Array.from({ length: INBOX_BOUNDS.names + 1 }, (_, i) => `caixa${i}`);
      for (const name of names) assert.equal((await post(name, name)).statusCode, 200);
      assert.deepEqual(await list(names[0]!), [], 'the oldest inbox was emptied');
      assert.deepEqual((await list(names[1]!)).map((a) => a.body), [names[1]]);
      assert.deepEqual((await list(names.at(-1)!)).map((a) => a.body), [names.at(-1)]);
      const total = await t.db.selectFrom('sandbox_inbox').select((eb) => eb.fn.count<number>('name').distinct().as('n')).executeTakeFirstOrThrow();
      assert.ok(Number(total.n) <= INBOX_BOUNDS.names, `${total.n} inboxes`);
    });

    it(`${INBOX_ARRIVALS_PER_MINUTE} arrivals a minute from one address, then 429; the machine's own addresses are not counted`, async () => {
      for (let i = 0; i < INBOX_ARRIVALS_PER_MINUTE; i++) assert.equal((await post('remota', 'x', '192.0.2.7')).statusCode, 200, `arrival ${i + 1}`);
      const refused = await post('remota', 'x', '192.0.2.7');
      assertError(refused, 429, /600 arrivals a minute/, 'RATE_LIMITED');
      assert.match(String(refused.headers['retry-after']), /^[1-9]\d*$/);
      assert.equal((await post('remota', 'x', '192.0.2.8')).statusCode, 200, 'another address');
      assert.equal((await post('remota', 'x', '127.0.0.1')).statusCode, 200, 'the machine itself');
      t.clock.advance(60_000);
      assert.equal((await post('remota', 'x', '192.0.2.7')).statusCode, 200, 'a minute later');
    });
  });
});
