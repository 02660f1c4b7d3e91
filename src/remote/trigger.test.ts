/**
 * `pix-api trigger`, against a sandbox listening on a real port: each event, made through the
 * sandbox's routes and the account's own, reaches the account's webhook at the sandbox's inbox
 * exactly once, with its documented payload type.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { deliverDue } from '../modules/webhooks/delivery.ts';
import { senderFaults } from '../app.ts';
import { destinationPolicy } from '../modules/webhooks/destination.ts';
import { WebhookSender } from '../modules/webhooks/sender.ts';
import { createClient, creditAccount, evpKey, type TestClient } from '../../test/factories.ts';
import { adminHeaders, startTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../../test/harness.ts';
import { freePort } from '../../test/processes.ts';
import { RemoteError } from './connection.ts';
import { EVENTS, runTrigger } from './trigger.ts';

const EVENT_TYPES = ['cash_in', 'cash_out', 'refund_in', 'refund_out', 'med_created', 'med_accepted', 'med_rejected', 'authorization_requested', 'recurring_charge_scheduled', 'recurring_charge_paid', 'recurring_charge_failed'] as const;
type EventType = (typeof EVENT_TYPES)[number];

describe('pix-api trigger', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pix-trigger-'));
  let t: TestApp;
  let origin: string;
  let holder: TestClient;
  let key: string;
  let sender: WebhookSender;

  const inboxName = (type: EventType) => `trig-${type.replace(/_/g, '-')}`;
  const inbox = async (type: EventType): Promise<{ body: string }[]> => {
    const res = await fetch(`${origin}/sandbox/inbox/${inboxName(type)}`, { headers: adminHeaders });
    assert.equal(res.status, 200);
    return ((await res.json()) as { data: { body: string }[] }).data;
  };
  const counts = async () => Object.fromEntries(await Promise.all(EVENT_TYPES.map(async (type) => [type, (await inbox(type)).length] as const))) as Record<EventType, number>;
  const deliver = async () => {
    while ((await deliverDue({ db: t.db, clock: t.controls!.clock, sender })) > 0);
  };
  const trigger = async (...args: string[]): Promise<string[]> => {
    const lines: string[] = [];
    await runTrigger([...args, '--url', origin, '--dir', dir], (line) => lines.push(line));
    return lines;
  };

  /** Runs a trigger and checks that each event type got exactly the deliveries expected, with their payload types. */
  async function triggers(args: string[], expected: Partial<Record<EventType, string>>): Promise<string[]> {
    const before = await counts();
    const lines = await trigger(...args);
    await deliver();
    const now = await counts();
    for (const type of EVENT_TYPES) {
      const want = expected[type] === undefined ? 0 : 1;
      assert.equal(now[type] - before[type], want, `${args[0]}: deliveries of ${type} (${lines.join(' | ')})`);
      if (want) {
        const newest = JSON.parse((await inbox(type))[0]!.body) as { type: string; data: Record<string, unknown> };
        assert.equal(newest.type, expected[type], `${args[0]}: the ${type} payload's type`);
      }
    }
    return lines;
  }

  const cancelRecurrence = async (lines: string[]) => {
    const idRec = /recurrence (R\w+)/.exec(lines.join('\n'))![1]!;
    const res = await fetch(`${origin}/sandbox/automatico/recurrences/${idRec}/cancel`, { method: 'POST', headers: adminHeaders });
    assert.equal(res.status, 200, await res.text());
    await deliver();
  };

  before(async () => {
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    t = await startTestApp({ env: { PUBLIC_URL: origin } });
    await t.app.listen({ port, host: '127.0.0.1' });
    // The worker's sender: the same destination rules, and the service's own inbox over plain HTTP.
    sender = new WebhookSender({ policy: destinationPolicy(t.config), timeoutMs: 5000, ...senderFaults(t.controls) });
    holder = await createClient(t, { name: 'Loja Gatilho' });
    key = await evpKey(t, holder.accountId);
    await creditAccount(t.db, holder.accountId, 100_000n);
    // The demo's files for this account, as `serve` writes them.
    writeFileSync(join(dir, 'token-request.json'), JSON.stringify({ clientId: holder.clientId, clientSecret: holder.clientSecret }));
    writeFileSync(join(dir, 'client.crt.urlencoded'), holder.cert.header);
    writeFileSync(join(dir, 'admin-token'), TEST_ADMIN_TOKEN);
    writeFileSync(join(dir, 'credentials.json'), JSON.stringify({ accountId: holder.accountId, clientId: holder.clientId, pixKeys: [{ key, type: 'evp' }] }));
    for (const eventType of EVENT_TYPES) {
      const res = await fetch(`${origin}/api/webhooks`, {
        method: 'POST',
        headers: { ...holder.headers, 'content-type': 'application/json' },
        body: JSON.stringify({ url: `${origin}/sandbox/inbox/${inboxName(eventType)}`, eventType }),
      });
      assert.equal(res.status, 201, await res.text());
    }
  });
  after(async () => {
    await sender?.close();
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('--list names every event with a line of what it does', async () => {
    const lines = (await trigger('--list')).join('\n').split('\n');
    assert.equal(lines.length, Object.keys(EVENTS).length);
    for (const name of ['pix.received', 'transfer.settled', 'transfer.rejected', 'refund.devolvido', 'med.opened', 'cob.paid']) {
      assert.ok(lines.some((line) => new RegExp(`^${name.replace(/\./g, '\\.')}\\s{2,}\\S`).test(line)), `${name} in --list`);
    }
  });

  it('an unknown event is refused, naming --list', async () => {
    await assert.rejects(trigger('pix.nope'), (error: unknown) => error instanceof RemoteError && /unknown event "pix\.nope"/.test(error.message) && /--list/.test(error.message));
  });

  it('pix.received: one cash_in, RECEIVE, at the account\'s key', async () => {
    const lines = await triggers(['pix.received', '--amount', '12.34'], { cash_in: 'RECEIVE' });
    assert.match(lines.join('\n'), new RegExp(`^pix\\.received: PIX of R\\$ 12\\.34 received at key ${key}, endToEndId E\\w+, transaction \\d+$`));
    const body = JSON.parse((await inbox('cash_in'))[0]!.body) as { data: { payment: { amount: unknown } } };
    assert.equal(Number(body.data.payment.amount), 12.34);
  });

  it('pix.received.txid and cob.paid: one cash_in each, naming the txid', async () => {
    for (const event of ['pix.received.txid', 'cob.paid']) {
      const lines = await triggers([event], { cash_in: 'RECEIVE' });
      const txid = /(?:txid|cob) (trig\w+)/.exec(lines.join('\n'))?.[1];
      assert.ok(txid, lines.join('\n'));
      const body = JSON.parse((await inbox('cash_in'))[0]!.body) as { data: { txId: unknown } };
      assert.equal(body.data.txId, txid);
    }
  });

  it('transfer.settled: one cash_out, TRANSFER', async () => {
    const lines = await triggers(['transfer.settled', '--amount', '3.00'], { cash_out: 'TRANSFER' });
    assert.match(lines[0]!, /^transfer\.settled: transfer of R\$ 3\.00 to \S+ \w+, endToEndId E\w+, transaction \d+$/);
  });

  it('transfer.rejected --reason AM04: one cash_out naming the reason, and the fault is cleared after', async () => {
    const lines = await triggers(['transfer.rejected', '--reason', 'AM04'], { cash_out: 'TRANSFER' });
    assert.match(lines[0]!, /ERROR \(Rejected by the receiving institution \(AM04\)\)/);
    assert.match((await inbox('cash_out'))[0]!.body, /AM04/);
    const faults = (await (await fetch(`${origin}/sandbox/faults`, { headers: adminHeaders })).json()) as { data: unknown[] };
    assert.deepEqual(faults.data, []);
  });

  it('refund.received: the transfer, then one refund_out', async () => {
    await triggers(['refund.received'], { cash_out: 'TRANSFER', refund_out: 'REFUND' });
  });

  it('refund.devolvido and refund.nao_realizado: the PIX, then one refund_in each', async () => {
    assert.match((await triggers(['refund.devolvido'], { cash_in: 'RECEIVE', refund_in: 'REFUND' })).join('\n'), /: DEVOLVIDO, rtrId D\w+/);
    assert.match((await triggers(['refund.nao_realizado'], { cash_in: 'RECEIVE', refund_in: 'REFUND' })).join('\n'), /: NAO_REALIZADO \(/);
  });

  it('med.opened, med.accepted, med.rejected: one delivery of each MED event', async () => {
    assert.match((await triggers(['med.opened'], { cash_in: 'RECEIVE', med_created: 'MED' })).join('\n'), /med\.opened: MED \d+ \(FRAUD\)/);
    await triggers(['med.accepted'], { cash_in: 'RECEIVE', med_created: 'MED', med_accepted: 'MED', refund_in: 'REFUND' });
    await triggers(['med.rejected'], { cash_in: 'RECEIVE', med_created: 'MED', med_rejected: 'MED' });
  });

  it('cobv.paid_late: one cash_in of more than the original, the test clock left 7 days on, as it says', async () => {
    const lines = await triggers(['cobv.paid_late', '--amount', '100.00'], { cash_in: 'RECEIVE' });
    assert.match(lines[0]!, /^cobv\.paid_late: cobv trig\w+ of R\$ 100\.00 due \d{4}-\d{2}-\d{2} paid 7 days late with R\$ 1\d\d\.\d\d, endToEndId E\w+, transaction \d+$/);
    const body = JSON.parse((await inbox('cash_in'))[0]!.body) as { data: { payment: { amount: unknown } } };
    assert.ok(Number(body.data.payment.amount) > 100, JSON.stringify(body));
    assert.match(lines[1]!, /^the test clock is now \S+ \(offset 604800 s\)/);
    const clock = (await (await fetch(`${origin}/sandbox/clock`, { headers: adminHeaders })).json()) as { offsetSeconds: number };
    assert.equal(clock.offsetSeconds, 7 * 86_400);
  });

  it('automatico.authorization_requested: one authorization_requested once the solicitation is sent (the worker, a second later)', async () => {
    const before = await counts();
    const lines = await trigger('automatico.authorization_requested', '--amount', '49.90');
    const idRec = /recurrence (R\w+)/.exec(lines.join('\n'))?.[1];
    assert.ok(idRec, lines.join('\n'));
    // No worker runs here: the test clock moves past the moment the solicitation is sent.
    const moved = await fetch(`${origin}/sandbox/clock/advance`, { method: 'POST', headers: { ...adminHeaders, 'content-type': 'application/json' }, body: JSON.stringify({ seconds: 5 }) });
    assert.equal(moved.status, 200, await moved.text());
    await deliver();
    const now = await counts();
    assert.equal(now.authorization_requested - before.authorization_requested, 1);
    const body = JSON.parse((await inbox('authorization_requested'))[0]!.body) as { type: string; data: { idRec: unknown } };
    assert.deepEqual([body.type, body.data.idRec], ['AUTHORIZATION', idRec]);
  });

  it('automatico.charge_scheduled, charge_paid, charge_failed: the recurrence asked, then one delivery of each charge event', async () => {
    const asked = { authorization_requested: 'AUTHORIZATION', recurring_charge_scheduled: 'RECURRING_CHARGE' } as const;
    const scheduled = await triggers(['automatico.charge_scheduled', '--amount', '29.90'], asked);
    assert.match(scheduled.at(-1)!, /^automatico\.charge_scheduled: charge \d+ \(txid \w+\) of R\$ 29\.90 due /);
    // Its charge would be debited when the next trigger moves the clock: the receiver cancels the recurrence.
    await cancelRecurrence(scheduled);
    const paid = await triggers(['automatico.charge_paid', '--amount', '19.90'], { ...asked, recurring_charge_paid: 'RECURRING_CHARGE', cash_out: 'TRANSFER' });
    assert.match(paid.at(-1)!, /^automatico\.charge_paid: charge \d+ PAID, endToEndId E\w+, transaction \d+/);
    const failed = await triggers(['automatico.charge_failed'], { ...asked, recurring_charge_failed: 'RECURRING_CHARGE' });
    assert.match(failed.at(-1)!, /^automatico\.charge_failed: charge \d+ of R\$ [\d.]+ \(more than the R\$ [\d.]+ available\) /);
    assert.match((await inbox('recurring_charge_failed'))[0]!.body, /AM04/);
    await cancelRecurrence(failed);
  });

  it("an account's own act without its credentials fails clearly; the sandbox's alone still works", async () => {
    const only = ['--url', origin, '--admin-token', TEST_ADMIN_TOKEN, '--account', String(holder.accountId), '--dir', join(dir, 'none'), '--key', key];
    await assert.rejects(runTrigger(['transfer.settled', ...only], () => {}), (error: unknown) => error instanceof RemoteError && /needs its credentials/.test(error.message));
    const lines: string[] = [];
    await runTrigger(['pix.received', ...only], (line) => lines.push(line));
    assert.match(lines[0]!, /^pix\.received: /);
    await deliver();
  });
});
