/**
 * The console in a real browser: signing in, the balance in R$, a Pix arriving (from the
 * console's form and from outside the page) seen live, a charge paid through its BR Code (and its
 * code refused once paid), a charge paid from its row, a webhook registered at the inbox and its
 * delivery's signature, a MED opened and accepted. Each journey ends with a screenshot under test-results/console/.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { DEMO_CPF, DEMO_NAME } from '../../src/modules/admin/demo.ts';
import { createClient, incomingPix, operator, type TestClient } from '../factories.ts';
import { adminHeaders, type TestApp } from '../harness.ts';
import { accessibilityProblems, hasText, launchBrowser, plain, startListening, WatchedPage } from './browser.ts';
import { senderFaults } from '../../src/app.ts';
import { deliverDue } from '../../src/modules/webhooks/delivery.ts';
import { destinationPolicy } from '../../src/modules/webhooks/destination.ts';
import { WebhookSender } from '../../src/modules/webhooks/sender.ts';

describe('the console, in a browser', () => {
  let t: TestApp;
  let origin: string;
  let browser: Browser;
  let demo: TestClient;
  let accountPath: string;

  before(async () => {
    ({ t, origin } = await startListening());
    browser = await launchBrowser();
    // Like the demo account: a CPF key and R$ 1000.00 received as a Pix from the sandbox.
    demo = await createClient(t, { name: DEMO_NAME, document: DEMO_CPF });
    await operator(t).registerPixKey(demo.accountId, { type: 'cpf', key: DEMO_CPF });
    await operator(t).incomingPix({ pixKey: DEMO_CPF, amount: '1000.00', payer: { name: 'Sandbox', document: '11222333000181' } });
    accountPath = `/console/accounts/${demo.accountId}`;
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  const balance = (w: WatchedPage) => w.page.locator('#balance-available');
  const balanceIs = (w: WatchedPage, text: string) => hasText(w.page, '#balance-available', text);

  it('1. signs in with the admin token, and refuses a wrong one', async () => {
    const w = await WatchedPage.open(browser, origin);
    await w.page.goto(`${origin}/console`);
    assert.equal(new URL(w.page.url()).pathname, '/console/sign-in');
    w.expect(401, '/console/sign-in');
    await w.page.getByLabel('Admin token').fill('not-the-admin-token-at-all');
    await w.page.getByRole('button', { name: 'Sign in' }).click();
    await w.page.getByRole('alert').waitFor();
    assert.equal(plain(await w.page.getByRole('alert').textContent()), 'That is not the admin token of this service.');
    const cookies = await w.context.cookies();
    assert.deepEqual(cookies, [], 'no cookie for a wrong token');
    await w.signIn();
    await w.page.getByRole('heading', { level: 1, name: 'Accounts' }).waitFor();
    const [cookie] = await w.context.cookies();
    assert.ok(cookie && cookie.httpOnly && cookie.sameSite === 'Strict' && cookie.path === '/console');
    assert.ok(!cookie.value.includes(adminHeaders.authorization.slice(7)), 'the cookie does not hold the token');
    await w.screenshot('sign-in');
    await w.close();
  });

  it("2. shows the demo-like account's balance in R$", async () => {
    const w = await WatchedPage.open(browser, origin);
    await w.signIn();
    const row = w.page.getByRole('row').filter({ has: w.page.getByRole('rowheader', { name: DEMO_NAME }) });
    assert.match(plain(await row.innerText()), /R\$ 1\.000,00 R\$ 0,00/);
    await row.getByRole('link', { name: DEMO_NAME }).click();
    await w.page.waitForURL(`${origin}${accountPath}`);
    assert.equal(plain(await balance(w).textContent()), 'R$ 1.000,00');
    assert.equal(plain(await w.page.locator('#balance-blocked').textContent()), 'R$ 0,00');
    // From the keyboard: the first Tab reaches the skip link, with a visible focus ring.
    await w.page.keyboard.press('Tab');
    assert.equal(await w.page.evaluate('document.activeElement.textContent'), 'Skip to the content');
    assert.notEqual(await w.page.evaluate('getComputedStyle(document.activeElement).outlineStyle'), 'none');
    for (const path of [accountPath, `${accountPath}/charges`, `${accountPath}/meds`, `${accountPath}/webhooks`, '/console/network', '/console']) {
      if (path !== accountPath) await w.page.goto(`${origin}${path}`);
      assert.deepEqual(await accessibilityProblems(w.page), [], path);
    }
    await w.page.goto(`${origin}${accountPath}`);
    await w.screenshot('balance');
    await w.close();
  });

  it('3. a Pix from the network, from the form and from outside the page, updates the balance and the list live', async () => {
    const w = await WatchedPage.open(browser, origin);
    await w.signIn(accountPath);
    await w.live();
    await w.page.evaluate('window.notReloaded = true');
    const before = plain(await balance(w).textContent());
    assert.equal(before, 'R$ 1.000,00');

    const form = w.page.getByRole('group', { name: 'Incoming Pix' });
    await form.getByLabel('Amount (R$)').fill('150,25');
    await form.getByLabel('Description (optional)').fill('from the form');
    await form.getByRole('button', { name: 'Receive the Pix' }).click();
    await w.page.locator('#status.ok').waitFor();
    assert.match(plain(await w.page.locator('#status').textContent()), /^A Pix of R\$ 150,25 arrived at \d{11} \(endToEndId E\w+\)$/);
    await balanceIs(w, 'R$ 1.150,25');

    // From outside the page: the operator API, as another program would call it.
    const { endToEndId } = await incomingPix(t, DEMO_CPF, '49.75', { name: 'Maria Fora' });
    await balanceIs(w, 'R$ 1.200,00');
    const row = w.page.getByRole('row').filter({ hasText: endToEndId });
    await row.waitFor();
    assert.match(plain(await row.innerText()), /Pix in Confirmado \+ R\$ 49,75 Maria Fora/);
    assert.match(plain(await w.page.locator('#live-state').textContent()), /balances, transactions updated/);
    assert.equal(await w.page.evaluate('window.notReloaded'), true, 'the page was not reloaded');
    await w.screenshot('incoming-pix');
    await w.close();
  });

  it('4. creates a charge, pays its BR Code through the payer, and sees it CONCLUIDA', async () => {
    const w = await WatchedPage.open(browser, origin);
    await w.signIn(`${accountPath}/charges`);
    await w.live();
    const create = w.page.getByRole('group', { name: 'Create a charge' });
    await create.getByLabel('Amount (R$)').fill('25,00');
    await create.getByLabel('Message to the payer (optional)').fill('Padaria <Pão> & "Café"');
    await create.getByRole('button', { name: 'Create the charge' }).click();
    await w.page.locator('#status.ok').waitFor();
    const txid = /^Charge (\w+) of R\$ 25,00 created$/.exec(plain(await w.page.locator('#status').textContent()))?.[1];
    assert.ok(txid, 'the status names the charge');
    assert.equal(await create.getByLabel('Amount (R$)').inputValue(), '', 'the form is cleared for the next one');
    const row = w.page.getByRole('row').filter({ has: w.page.getByRole('rowheader', { name: txid }) });
    await row.waitFor();
    assert.match(plain(await row.innerText()), /ATIVA Simulate a payment R\$ 25,00/);
    assert.match((await row.getByRole('img', { name: `QR code of charge ${txid}` }).getAttribute('src')) ?? '', /^data:image\/png;base64,[A-Za-z0-9+/]+=*$/);
    const brCode = plain(await row.locator('code.brcode').textContent());
    assert.match(brCode, /^000201.*6304[0-9A-F]{4}$/);

    const pay = w.page.getByRole('group', { name: 'Pay a BR Code' });
    await pay.getByLabel('BR Code (Pix copia e cola)').fill(brCode);
    await pay.getByRole('button', { name: 'Pay' }).click();
    await w.page.locator('#status.ok').filter({ hasText: `The charge ${txid} was paid: R$ 25,00` }).waitFor();
    await row.getByText('CONCLUIDA').waitFor();
    assert.match(plain(await row.innerText()), /CONCLUIDA paid: E\w+/);
    await balanceIs(w, 'R$ 1.225,00');
    // The same code again: the charge is paid, so nothing is, and the page says why.
    w.expect(422, '/console/actions/pay-brcode');
    await pay.getByLabel('BR Code (Pix copia e cola)').fill(brCode);
    await pay.getByRole('button', { name: 'Pay' }).click();
    await w.page.locator('#status.error').filter({ hasText: `txid ${txid} is a charge of the key's account that is CONCLUIDA (already paid)` }).waitFor();
    await balanceIs(w, 'R$ 1.225,00');
    await w.screenshot('charge-paid');
    await w.close();
  });

  it("5. simulates a payment from a charge's row, registers a webhook at the inbox, and sees its delivery signed", async () => {
    const w = await WatchedPage.open(browser, origin);
    await w.signIn(`${accountPath}/charges`);
    await w.live();
    const create = w.page.getByRole('group', { name: 'Create a charge' });
    await create.getByLabel('Amount (R$)').fill('7,00');
    await create.getByRole('button', { name: 'Create the charge' }).click();
    await w.page.locator('#status.ok').filter({ hasText: 'R$ 7,00 created' }).waitFor();
    const txid = /^Charge (\w+) of/.exec(plain(await w.page.locator('#status').textContent()))![1]!;
    const row = w.page.getByRole('row').filter({ has: w.page.getByRole('rowheader', { name: txid }) });
    await row.getByRole('button', { name: `Simulate a payment of charge ${txid}` }).click();
    await w.page.locator('#status.ok').filter({ hasText: `The charge ${txid} was paid: R$ 7,00` }).waitFor();
    await row.getByText('CONCLUIDA').waitFor();

    // The received Pix's timeline names the charge it paid.
    await w.page.getByRole('navigation', { name: 'Account' }).getByRole('link', { name: 'Overview' }).click();
    await w.page.waitForURL(`${origin}${accountPath}`);
    await w.page.getByText(`Paid the charge ${txid} (cob)`).first().waitFor({ state: 'attached' });

    await w.page.getByRole('navigation', { name: 'Account' }).getByRole('link', { name: 'Webhooks' }).click();
    await w.page.waitForURL(`${origin}${accountPath}/webhooks`);
    await w.live();
    const register = w.page.getByRole('group', { name: 'Register a webhook by event' });
    assert.match(await register.getByLabel('URL').inputValue(), /\/sandbox\/inbox\/account-\d+$/, "the account's inbox is offered");
    await register.getByLabel('Event').selectOption('cash_in');
    await register.getByRole('button', { name: 'Register the webhook' }).click();
    await w.page.locator('#status.ok').filter({ hasText: 'Webhook registered: cash_in' }).waitFor();
    await operator(t).incomingPix({ pixKey: DEMO_CPF, amount: '2.00', payer: { name: 'Cliente', document: '52998224725' } });
    await deliverDue({ db: t.db, clock: t.controls!.clock, sender: new WebhookSender({ policy: destinationPolicy(t.config), ...senderFaults(t.controls) }) });
    await w.page.getByText('Signature valid: it verifies with the account\'s signing secret.').first().waitFor({ state: 'attached' });
    await w.screenshot('day-one');
    await w.close();
  });

  it('6. opens a MED against a received Pix and accepts it', async () => {
    const { endToEndId, transactionId } = await incomingPix(t, DEMO_CPF, '80.00', { name: 'Golpista' });
    const w = await WatchedPage.open(browser, origin);
    await w.signIn(accountPath);
    await w.live();
    await w.page.getByText(`Timeline and actions of transaction ${transactionId}`).click();
    const details = w.page.locator(`#tx-${transactionId}`);
    await details.getByRole('button', { name: 'Open a MED' }).click();
    await w.page.locator('#status.ok').waitFor();
    const medId = /^MED (\d+) opened against (\w+)$/.exec(plain(await w.page.locator('#status').textContent()));
    assert.equal(medId?.[2], endToEndId);
    await hasText(w.page, '#balance-blocked', 'R$ 80,00');
    await w.page.locator(`#tx-${transactionId}`).getByText(`MED ${medId![1]} opened (FRAUD)`).waitFor();

    await w.page.getByRole('navigation', { name: 'Account' }).getByRole('link', { name: 'MEDs' }).click();
    await w.page.waitForURL(`${origin}${accountPath}/meds`);
    await w.live();
    const row = w.page.getByRole('row').filter({ has: w.page.getByRole('rowheader', { name: medId![1] }) });
    assert.match(plain(await row.innerText()), new RegExp(`${endToEndId} R\\$ 80,00 FRAUD OPEN`));
    await row.getByRole('button', { name: `Accept MED ${medId![1]}` }).click();
    await w.page.locator('#status.ok').filter({ hasText: `MED ${medId![1]} ACCEPTED` }).waitFor();
    await row.getByText('ACCEPTED').waitFor();
    assert.match(plain(await row.innerText()), /ACCEPTED refund MED-\d+: EM_PROCESSAMENTO/);
    await w.screenshot('med-accepted');
    await w.close();
  });
});
