import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { assertError } from '../../../test/assertions.ts';
import { createClient, creditAccount, evpKey, externalKey, incomingPix, type TestClient } from '../../../test/factories.ts';
import { adminHeaders, startTestApp, type TestApp } from '../../../test/harness.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/webhook-receiver.ts';
import { settleDue } from '../settlement/service.ts';
import { deliverDue } from '../webhooks/delivery.ts';
import { WebhookSender } from '../webhooks/sender.ts';
import { Webhook } from 'standardwebhooks';
import { runOperatorCommand } from '../../cli.ts';
import { SandboxControls } from './service.ts';

const DAY = 86_400;

describe('the test clock', () => {
  let t: TestApp;
  let client: TestClient;
  let rcv: WebhookReceiver;
  let sender: WebhookSender;

  before(async () => {
    // NORM transfers settle a minute after they arrive: a delay the clock can jump.
    t = await startTestApp({ env: { SETTLEMENT_DELAY_MS: '60000' } });
    client = await createClient(t);
    await creditAccount(t.db, client.accountId, 100_000n);
    await evpKey(t, client.accountId);
    rcv = await startWebhookReceiver();
    sender = new WebhookSender({ allowPrivate: true, caFile: rcv.caFile, timeoutMs: 3000 });
  });
  after(async () => {
    await sender.close();
    await rcv.close();
    await t.close();
  });

  const clock = () => t.controls!.clock;
  const advance = (body: object) => t.app.inject({ method: 'POST', url: '/sandbox/clock/advance', headers: adminHeaders, payload: body });
  const settle = () => settleDue({ db: t.db, clock: clock(), ispb: t.config.pspIspb, settlementDelayMs: t.config.settlementDelayMs });

  it('GET shows business time and its offset; advance by seconds or to a time, never back', async () => {
    const start = await t.app.inject({ method: 'GET', url: '/sandbox/clock', headers: adminHeaders });
    assert.equal(start.statusCode, 200, start.body);
    assert.deepEqual(start.json(), { now: t.clock.now().toISOString(), offsetSeconds: 0 });

    const moved = await advance({ seconds: 3600 });
    assert.equal(moved.statusCode, 200, moved.body);
    assert.deepEqual(moved.json(), { now: new Date(t.clock.now().getTime() + 3_600_000).toISOString(), offsetSeconds: 3600, steps: 0 });

    const target = new Date(t.clock.now().getTime() + 2 * 3_600_000);
    const to = await advance({ to: target.toISOString() });
    assert.deepEqual(to.json(), { now: target.toISOString(), offsetSeconds: 7200, steps: 0 });

    assertError(await advance({ to: t.clock.now().toISOString() }), 400, /only moves forward/, 'CLOCK_BACKWARDS');
    assertError(await advance({}), 400, /seconds or to/, 'VALIDATION_FAILED');
    assertError(await advance({ seconds: 60, to: target.toISOString() }), 400, /seconds or to/, 'VALIDATION_FAILED');
    assertError(await advance({ seconds: -5 }), 400, /seconds/, 'VALIDATION_FAILED');
    assert.equal((await t.app.inject({ method: 'GET', url: '/sandbox/clock' })).statusCode, 401);
    // Nothing moved by the refusals; real time did not move at all.
    assert.equal(clock().offsetMs, 7_200_000);
  });

  it('tokens stay on real time: a token lives its 30 minutes of real time, whatever the test clock says', async () => {
    await advance({ seconds: 2 * DAY });
    const res = await t.app.inject({ method: 'GET', url: '/balance', headers: client.headers });
    assert.equal(res.statusCode, 200, res.body);
  });

  it('charge expiry: a cob past its expiracao reads REMOVIDA_PELO_PSP once the clock passes it', async () => {
    const txid = `relogio${randomUUID().replaceAll('-', '')}`.slice(0, 30);
    const created = await t.app.inject({ method: 'PUT', url: `/cob/${txid}`, headers: client.headers, payload: { calendario: { expiracao: 3600 }, valor: { original: '10.00' } } });
    assert.equal(created.statusCode, 201, created.body);
    const status = async () => (await t.app.inject({ method: 'GET', url: `/cob/${txid}`, headers: client.headers })).json<{ status: string }>().status;
    assert.equal(await status(), 'ATIVA');
    await advance({ seconds: 3599 });
    assert.equal(await status(), 'ATIVA');
    await advance({ seconds: 1 });
    assert.equal(await status(), 'REMOVIDA_PELO_PSP');
  });

  it('settlement delay and transfer expiration: what fell due while the clock jumped settles (or fails) at the next round', async () => {
    const receiver = await externalKey(t);
    const stuck = await externalKey(t, { behavior: 'timeout' });
    const send = async (pixKey: string, extra: object = {}) => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/dict/pix',
        headers: { ...client.headers, 'x-idempotency-key': randomUUID() },
        payload: { pixKey, payment: { currency: 'BRL', amount: 1.5 }, ...extra },
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json<{ id: number }>().id;
    };
    const normal = await send(receiver.key);
    const expiring = await send(stuck.key, { expiration: 600 });
    const status = async (id: number) => (await t.db.selectFrom('transactions').select(['status', 'error_reason']).where('id', '=', BigInt(id)).executeTakeFirstOrThrow());
    assert.deepEqual(await settle(), { settled: 0, failed: 0 }, 'nothing is due yet');
    await advance({ seconds: 61 });
    assert.deepEqual(await settle(), { settled: 1, failed: 0 }, 'the NORM delay passed on the test clock');
    assert.equal((await status(normal)).status, 'CONFIRMED');
    assert.equal((await status(expiring)).status, 'PENDING');
    await advance({ seconds: 600 });
    assert.deepEqual(await settle(), { settled: 0, failed: 1 });
    assert.deepEqual(await status(expiring), { status: 'ERROR', error_reason: 'Expired before settlement: the receiving institution did not confirm in time' });
  });

  it('refund window: a received Pix can be refunded on its 89th day, not after (and BCB dialect after its 90th)', async () => {
    const key = await evpKey(t, client.accountId);
    const pix = await incomingPix(t, key, '20.00');
    const refund = (id: string, url = `/pix/${pix.endToEndId}/devolucao/${id}`) =>
      t.app.inject({ method: 'PUT', url, headers: client.headers, payload: { valor: '1.00' } });
    await advance({ seconds: 89 * DAY - 60 });
    assert.equal((await refund('janela1')).statusCode, 201);
    await advance({ seconds: 120 });
    assertError(await refund('janela2'), 422, /89 days/);
    assert.equal((await refund('janela3', `/v2/pix/${pix.endToEndId}/devolucao/janela3`)).statusCode, 201, 'BCB: 90 days');
    await advance({ seconds: DAY });
    const late = await refund('janela4', `/v2/pix/${pix.endToEndId}/devolucao/janela4`);
    assert.equal(late.statusCode, 400, late.body);
  });

  it('webhook retries: a failed delivery is tried again when its retry falls due on the test clock', async () => {
    const path = `/relogio/${client.accountId}`;
    const registered = await t.app.inject({ method: 'POST', url: '/api/webhooks', headers: client.headers, payload: { url: `${rcv.origin}${path}`, eventType: 'cash_in' } });
    assert.equal(registered.statusCode, 201, registered.body);
    let status = 503;
    rcv.respond = (r) => (r.path === path ? status : 200);
    await incomingPix(t, await evpKey(t, client.accountId), '3.00');
    const deliver = () => deliverDue({ db: t.db, clock: clock(), sender });
    const arrived = () => rcv.received.filter((r) => r.path === path).length;
    await deliver();
    assert.equal(arrived(), 1, 'the first attempt failed');
    status = 200;
    await deliver();
    assert.equal(arrived(), 1, 'its retry is not due yet');
    await advance({ seconds: 60 });
    await deliver();
    assert.equal(arrived(), 2, 'the retry went once the clock passed it');
    rcv.respond = () => 200;
  });

  it('webhook signatures are on real time: Standard Webhooks verifies them two days ahead; the payload keeps business time', async () => {
    await advance({ seconds: 2 * DAY });
    const path = `/assinatura/${client.accountId}`;
    const registered = await t.app.inject({ method: 'POST', url: '/api/webhooks', headers: client.headers, payload: { url: `${rcv.origin}${path}`, eventType: 'cash_in' } });
    assert.equal(registered.statusCode, 201, registered.body);
    const secret = (await t.app.inject({ method: 'GET', url: '/api/webhooks/signing-secret', headers: client.headers })).json<{ secret: string }>().secret;
    await incomingPix(t, await evpKey(t, client.accountId), '4.00');
    await deliverDue({ db: t.db, clock: clock(), sender });
    const [got] = rcv.received.filter((r) => r.path === path);
    assert.ok(got, 'delivered');
    // The library's own check: the timestamp within 5 minutes of this machine's time.
    const payload = new Webhook(secret).verify(got.body, got.headers as Record<string, string>) as { data: Record<string, unknown> };
    assert.ok(Math.abs(Number(got.headers['webhook-timestamp']) * 1000 - Date.now()) < 60_000, 'signed at the real time');
    // The payload is business time's: the end-to-end id names the test clock's day (yyyyMMdd), two days ahead.
    const businessDay = clock().now().toISOString().slice(0, 10).replaceAll('-', '');
    assert.equal(String(payload.data.endToEndId).slice(9, 17), businessDay);
    assert.notEqual(businessDay, new Date().toISOString().slice(0, 10).replaceAll('-', ''));
  });

  it('reset puts business time back at the real time, in every process (API, CLI); the clock goes on from there', async () => {
    assert.ok(clock().offsetMs > 0);
    const other = new SandboxControls(t.db, t.clock, { publicUrl: t.config.publicUrl });
    await other.refresh();
    assert.equal(other.clock.offsetMs, clock().offsetMs);
    const reset = await t.app.inject({ method: 'POST', url: '/sandbox/clock/reset', headers: adminHeaders });
    assert.equal(reset.statusCode, 200, reset.body);
    assert.deepEqual(reset.json(), { now: t.clock.now().toISOString(), offsetSeconds: 0 });
    await other.refresh();
    assert.equal(other.clock.offsetMs, 0, 'another process takes the reset at its next read');
    await advance({ seconds: 60 });
    await other.refresh();
    assert.equal(other.clock.offsetMs, 60_000, 'and moves on with the clock after it');
    const printed = JSON.parse(await runOperatorCommand(t.db, t.config, ['clock', 'reset'])) as { offsetSeconds: number };
    assert.equal(printed.offsetSeconds, 0);
    await t.controls!.refresh();
    assert.equal(clock().offsetMs, 0, 'the CLI resets it for the service too');
  });

  it('every process reads the same offset from the database', async () => {
    const before = clock().offsetMs;
    // Another process moved the clock: this one sees it at its next read of the shared row.
    await t.db.updateTable('sandbox_state').set({ clock_offset_ms: BigInt(before + 5000) }).execute();
    await t.controls!.refresh();
    assert.equal(clock().offsetMs, before + 5000);
    const view = (await t.app.inject({ method: 'GET', url: '/sandbox/clock', headers: adminHeaders })).json<{ offsetSeconds: number }>();
    assert.equal(view.offsetSeconds, Math.floor((before + 5000) / 1000));
  });
});

describe('the test clock in production mode', () => {
  it('has no route and no offset', async () => {
    const t = await startTestApp({ env: { PIX_MODE: 'production', DATABASE_URL: 'postgres://unused/db' } });
    try {
      assert.equal(t.controls, undefined);
      for (const [method, url] of [['GET', '/sandbox/clock'], ['POST', '/sandbox/clock/advance'], ['GET', '/sandbox/faults'], ['POST', '/sandbox/inbox/mine']] as const) {
        assert.equal((await t.app.inject({ method, url, headers: adminHeaders, payload: {} })).statusCode, 404, url);
      }
    } finally {
      await t.close();
    }
  });
});
