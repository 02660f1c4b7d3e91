/**
 * The console's test clock, faults and inbox in a real browser, with a worker delivering webhooks
 * on business time as the service's does: a webhook fault seen failing and then retried once the
 * clock moves, a charge expiring as the clock passes its expiry, a delivery landing in the inbox.
 * Each journey ends with a screenshot under test-results/console/.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { senderFaults } from '../../src/app.ts';
import { duration, timeText } from '../../src/modules/console/views/format.ts';
import { destinationPolicy } from '../../src/modules/webhooks/destination.ts';
import { WebhookSender } from '../../src/modules/webhooks/sender.ts';
import { Worker, type WorkerOptions } from '../../src/worker/worker.ts';
import { createClient, evpKey, incomingPix, type TestClient } from '../factories.ts';
import { adminHeaders, type TestApp } from '../harness.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../webhook-receiver.ts';
import { accessibilityProblems, hasText, launchBrowser, plain, startListening, WatchedPage } from './browser.ts';

describe('the console: the test clock, faults and the inbox, in a browser', () => {
  let t: TestApp;
  let origin: string;
  let browser: Browser;
  let rcv: WebhookReceiver;
  let worker: Worker;
  const workerProblems: string[] = [];

  before(async () => {
    ({ t, origin } = await startListening());
    browser = await launchBrowser();
    rcv = await startWebhookReceiver();
    // The worker as main.ts makes it in sandbox mode: business time from the test clock, the sandbox's faults at its sender.
    const log = { info: () => undefined, warn: (...args: unknown[]) => workerProblems.push(String(args.at(-1))), error: (...args: unknown[]) => workerProblems.push(String(args.at(-1))) };
    worker = new Worker({
      db: t.db,
      clock: t.controls!.clock,
      ispb: t.config.pspIspb,
      settlementDelayMs: 1000,
      log: log as unknown as WorkerOptions['log'],
      webhookSender: new WebhookSender({ policy: destinationPolicy(t.config), caFile: rcv.caFile, ...senderFaults(t.controls) }),
    });
    worker.start();
  });
  after(async () => {
    await worker?.stop();
    await rcv?.close();
    await browser?.close();
    await t?.close();
    assert.deepEqual(workerProblems, []);
  });

  /** An account with an EVP key and a cash_in webhook to `url`. */
  async function accountWithWebhook(url: string): Promise<{ client: TestClient; key: string; path: string }> {
    const client = await createClient(t);
    const key = await evpKey(t, client.accountId);
    const registered = await t.app.inject({ method: 'POST', url: '/api/webhooks', headers: client.headers, payload: { url, eventType: 'cash_in' } });
    assert.equal(registered.statusCode, 201, registered.body);
    return { client, key, path: `/console/accounts/${client.accountId}` };
  }

  const statusText = async (w: WatchedPage) => plain(await w.page.locator('#status').textContent());

  it('1. set a webhook fault and see the failed delivery and its retry', async () => {
    const { key, path } = await accountWithWebhook(`${rcv.origin}/pix/one`);
    const w = await WatchedPage.open(browser, origin);
    await w.signIn('/console/faults');
    await w.live();
    const form = w.page.getByRole('group', { name: 'Webhook deliveries fail' });
    await form.getByLabel('URL prefix').fill(`${rcv.origin}/pix/`);
    await form.getByLabel('Deliveries are').selectOption('status');
    assert.equal(await form.getByLabel('Status (when answered with a status)').inputValue(), '503');
    await form.getByLabel('For the next N deliveries (empty: until cleared)').fill('1');
    // From the keyboard: Enter in the last field sends the form.
    await w.page.keyboard.press('Enter');
    await w.page.locator('#status.ok').filter({ hasText: 'set: webhook, status' }).waitFor();
    const faultId = /^Fault (\d+) set: webhook, status$/.exec(await statusText(w))![1]!;
    const faultRow = w.page.getByRole('row').filter({ has: w.page.getByRole('rowheader', { name: faultId, exact: true }) });
    assert.match(plain(await faultRow.innerText()), /webhook status deliveries to https:\/\/localhost:\d+\/pix\/… HTTP 503 1 more/);
    assert.deepEqual(await accessibilityProblems(w.page), [], '/console/faults');
    await w.screenshot('faults');

    await w.page.goto(`${origin}${path}/webhooks`);
    await w.live();
    await w.page.evaluate('window.notReloaded = true');
    // A Pix arrives from outside the page; the worker delivers its webhook and meets the fault.
    await incomingPix(t, key, '12.34');
    const deliveries = w.page.locator('#webhook-deliveries');
    await deliveries.getByText(`HTTP 503 (sandbox fault ${faultId})`).waitFor();
    const failed = deliveries.getByRole('row').filter({ hasText: `sandbox fault ${faultId}` });
    assert.match(plain(await failed.innerText()), new RegExp(`cash_in .*/pix/one 1 answered HTTP 503 HTTP 503 \\(sandbox fault ${faultId}\\)`));
    assert.equal(rcv.received.length, 0, 'the fault kept it from the receiver');

    // The retry is due 5 s later on business time: the clock moves a minute, from this page.
    const clock = w.page.getByRole('group', { name: 'The test clock' });
    await clock.getByLabel('Advance by').fill('1');
    await clock.getByLabel('Unit').selectOption('minutes');
    await clock.getByRole('button', { name: 'Advance' }).click();
    await w.page.locator('#status.ok').filter({ hasText: 'The clock moved ahead 1 min' }).waitFor();
    const retried = deliveries.getByRole('row').filter({ hasText: 'delivered' });
    await retried.waitFor();
    assert.match(plain(await retried.innerText()), /cash_in .*\/pix\/one 2 delivered/);
    await rcv.waitFor(1);
    assert.equal(await w.page.evaluate('window.notReloaded'), true, 'the page was not reloaded');
    assert.deepEqual(await accessibilityProblems(w.page), [], `${path}/webhooks`);
    await w.screenshot('webhook-fault-retry');
    await w.close();
  });

  it('2. advance the clock and see a charge expire', async () => {
    const client = await createClient(t);
    await evpKey(t, client.accountId);
    const path = `/console/accounts/${client.accountId}/charges`;
    const w = await WatchedPage.open(browser, origin);
    await w.signIn(path);
    await w.live();
    await w.page.evaluate('window.notReloaded = true');
    const create = w.page.getByRole('group', { name: 'Create a charge' });
    const charge = async (amount: string, seconds: string) => {
      await create.getByLabel('Amount (R$)').fill(amount.replace('.', ''));
      await create.getByLabel('Expires after (seconds)').fill(seconds);
      await create.getByRole('button', { name: 'Create the charge' }).click();
      await w.page.locator('#status.ok').filter({ hasText: new RegExp(`of R\\$\\s${amount.replace('.', '\\.')} created$`) }).waitFor();
      const txid = /^Charge (\w+) of R\$ [\d,.]+ created$/.exec(await statusText(w))![1]!;
      const row = w.page.getByRole('row').filter({ has: w.page.getByRole('rowheader', { name: txid }) });
      await row.getByText('ATIVA').waitFor();
      return row;
    };
    const short = await charge('15,00', '60');
    const longer = await charge('1.234,56', '600');
    assert.match(plain(await longer.innerText()), /ATIVA Simulate a payment R\$ 1\.234,56 .* expires after 600 s/);

    const clock = w.page.getByRole('group', { name: 'The test clock' });
    await clock.getByLabel('Advance by').fill('2');
    await clock.getByRole('button', { name: 'Advance' }).click();
    await w.page.locator('#status.ok').filter({ hasText: 'The clock moved ahead 2 min' }).waitFor();
    await short.getByText('REMOVIDA_PELO_PSP').waitFor();
    assert.match(plain(await longer.innerText()), /ATIVA/);
    const clockNow = t.controls!.clock;
    await hasText(w.page, '#clock-line', `Business time: ${timeText(clockNow.now())}, ${duration(clockNow.offsetMs)} ahead of the real clock.`);

    // From elsewhere: the API moves the clock past the other one's expiry, and the open page follows.
    const res = await t.app.inject({ method: 'POST', url: '/sandbox/clock/advance', headers: adminHeaders, payload: { seconds: 600 } });
    assert.equal(res.statusCode, 200, res.body);
    await longer.getByText('REMOVIDA_PELO_PSP').waitFor();
    assert.equal(await w.page.evaluate('window.notReloaded'), true, 'the page was not reloaded');

    await w.page.goto(`${origin}/console/clock`);
    assert.match(plain(await w.page.locator('#clock-offset').textContent()), /^\d+ min( \d+ s)?$|^\d+ h/);
    assert.deepEqual(await accessibilityProblems(w.page), [], '/console/clock');
    await w.screenshot('clock');
    await w.page.goto(`${origin}${path}`);
    await w.screenshot('charge-expired');
    await w.close();
  });

  it('3. a delivery lands in the inbox, shown live with its headers and body, and the inbox is emptied', async () => {
    const { key } = await accountWithWebhook(`${origin}/sandbox/inbox/journey`);
    const w = await WatchedPage.open(browser, origin);
    await w.signIn('/console/inbox');
    await w.page.getByLabel('Inbox name').fill('journey');
    await w.page.getByRole('button', { name: 'Show it' }).click();
    await w.page.waitForURL(`${origin}/console/inbox?name=journey`);
    await w.live();
    assert.equal(plain(await w.page.locator('#inbox-url').textContent()), `${origin}/sandbox/inbox/journey`);
    await w.page.getByRole('button', { name: 'Copy the URL of the inbox journey' }).click();
    await w.page.locator('#status.ok').filter({ hasText: /The inbox URL (was copied|is selected)/ }).waitFor();

    await incomingPix(t, key, '7.00');
    const row = w.page.locator('#inbox').getByRole('row').filter({ hasText: 'POST' });
    await row.waitFor();
    assert.match(plain(await row.innerText()), /^\d+ \d{2}\/\d{2}\/\d{4}, \d{2}:\d{2}:\d{2} POST 200/);
    await row.getByText('Headers and body').click();
    assert.match(plain(await row.locator('dl.headers').innerText()), /webhook-signature v1,/);
    assert.match(plain(await row.locator('pre.payload').innerText()), /"amount": "7.00"/);
    assert.deepEqual(await accessibilityProblems(w.page), [], '/console/inbox');
    await w.screenshot('inbox');

    await w.page.getByRole('button', { name: 'Empty the inbox journey' }).click();
    await w.page.locator('#status.ok').filter({ hasText: 'The inbox journey was emptied (1 arrival)' }).waitFor();
    await w.page.locator('#inbox').getByText('Nothing arrived yet.').waitFor();
    await w.close();
  });
});
