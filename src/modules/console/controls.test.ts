import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createClient } from '../../../test/factories.ts';
import { adminHeaders, startTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../../../test/harness.ts';
import { readMarker } from './changes.ts';
import { advanceInput, faultInput, saoPauloInstant, saoPauloLocal } from './control-actions.ts';
import { CHANGE_SOURCES } from './panels.ts';

const form = { 'content-type': 'application/x-www-form-urlencoded' };
const encode = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const csrfOf = (page: string) => /name="_csrf" value="([^"]+)"/.exec(page)![1]!;
const HOUR_MS = 3_600_000;

describe('the console: the test clock, faults and the inbox', () => {
  let t: TestApp;
  let cookie: string;
  let csrf: string;

  before(async () => {
    t = await startTestApp();
    const signedIn = await t.app.inject({ method: 'POST', url: '/console/sign-in', headers: form, payload: encode({ token: TEST_ADMIN_TOKEN }) });
    cookie = String(signedIn.headers['set-cookie']).split(';')[0]!;
    csrf = csrfOf((await page('/console/clock')).body);
  });
  after(() => t.close());

  function page(url: string) {
    return t.app.inject({ method: 'GET', url, headers: { cookie } });
  }
  /** An action as the page's script sends it: its answer is the sentence, or the refusal's message. */
  function act(name: string, fields: Record<string, string>): Promise<LightMyRequestResponse> {
    return t.app.inject({ method: 'POST', url: `/console/actions/${name}`, headers: { ...form, cookie, 'x-console-request': 'fetch' }, payload: encode({ _csrf: csrf, ...fields }) });
  }
  const marker = () => readMarker(t.db, CHANGE_SOURCES);

  it('the clock page shows business time in São Paulo and its offset; an advance moves it and the change marker, from the form or the API', async () => {
    const first = await page('/console/clock');
    assert.equal(first.statusCode, 200);
    assert.match(first.body, /<dd id="clock-offset">0 s<\/dd>/);
    assert.match(first.body, /<label for="to-to">To \(São Paulo date and time\)<\/label>\s*<input id="to-to" name="to" type="datetime-local"/);
    const before = await marker();
    const moved = await act('advance-clock', { by: '90', unit: 'minutes' });
    assert.equal(moved.statusCode, 200, moved.body);
    assert.match(moved.body, /^The clock moved ahead 1 h 30 min: business time is \d{2}\/\d{2}\/\d{4}, \d{2}:\d{2}:\d{2} \(1 h 30 min ahead of the real clock\)$/);
    assert.equal(t.controls!.clock.offsetMs, 90 * 60_000);
    const afterForm = await marker();
    assert.notEqual(afterForm, before, 'an advance is a change the open pages hear of');
    assert.match((await page('/console/clock')).body, /<dd id="clock-offset">1 h 30 min<\/dd>/);
    // From elsewhere: the API's route.
    await t.app.inject({ method: 'POST', url: '/sandbox/clock/advance', headers: adminHeaders, payload: { seconds: 30 } });
    assert.notEqual(await marker(), afterForm);
    // To a São Paulo date and time: three hours ahead of UTC's wall clock.
    const target = new Date(t.controls!.clock.now().getTime() + 2 * 86_400_000);
    const local = new Date(target.getTime() - 3 * HOUR_MS).toISOString().slice(0, 19);
    assert.equal((await act('advance-clock', { to: local })).statusCode, 200);
    assert.equal(Math.floor(t.controls!.clock.now().getTime() / 1000), Math.floor(target.getTime() / 1000));
  });

  it('an advance the controls refuse is refused with their message', async () => {
    const refused = [
      [{ by: 'ten', unit: 'minutes' }, 'by must be a whole number'],
      [{ by: '0', unit: 'days' }, 'seconds must be >= 1'],
      [{ by: '4000', unit: 'days' }, 'seconds must be <= 316224000'],
      [{}, 'Send seconds or to (one of them)'],
      [{ to: '2020-01-01T00:00' }, /^to \(2020-01-01T03:00:00\.000Z\) is before the test clock's time/],
      [{ to: 'amanhã' }, /^to must be a date and time/],
    ] as const;
    for (const [fields, message] of refused) {
      const res = await act('advance-clock', fields);
      assert.equal(res.statusCode, 400, JSON.stringify(fields));
      if (typeof message === 'string') assert.equal(res.body, message);
      else assert.match(res.body, message);
    }
  });

  it('faults: set from each form (fields of other effects left out), listed, cleared one by one and all at once', async () => {
    const webhook = await act('set-fault', { kind: 'webhook', urlPrefix: 'https://erp.example.com/<hooks>/', effect: 'timeout', status: '503', delayMs: '', count: '2' });
    assert.equal(webhook.statusCode, 200, webhook.body);
    assert.match(webhook.body, /^Fault \d+ set: webhook, timeout$/);
    const settlement = await act('set-fault', { kind: 'settlement', pixKey: '"bob"@example.com', effect: 'reject', reason: 'AC03', delayMs: '5000' });
    assert.equal(settlement.statusCode, 200, settlement.body);
    assert.equal((await act('set-fault', { kind: 'directory', effect: 'unavailable' })).statusCode, 200);
    const listed = (await page('/console/faults')).body;
    assert.match(listed, /Faults set now <span class="count">\(3\)<\/span>/);
    assert.ok(listed.includes('<code>https://erp.example.com/&lt;hooks&gt;/</code>') && !listed.includes('<hooks>'), 'escaped');
    assert.match(listed, /<td>timeout<\/td>\s*<td>deliveries to .*<\/td>\s*<td><span class="none">—<\/span><\/td>\s*<td>2 more<\/td>/);
    assert.match(listed, /<abbr title="the receiver&#39;s account does not exist or is invalid">AC03<\/abbr>/);
    assert.match(listed, /<td>until cleared<\/td>/);
    const [id] = /(?<=name="id" value=")\d+/.exec(listed)!;
    assert.equal((await act('clear-fault', { id })).body, `Fault ${id} cleared`);
    assert.equal((await act('clear-fault', { id })).statusCode, 404);
    assert.equal((await act('clear-faults', {})).body, '2 faults cleared');
    assert.match((await page('/console/faults')).body, /No fault is set/);
  });

  it("a fault the controls' rules refuse is refused with the API's message", async () => {
    const cases = [
      [{ kind: 'webhook', effect: 'status', urlPrefix: '', status: '503' }, 'A webhook fault with effect status needs urlPrefix'],
      [{ kind: 'webhook', effect: 'status', urlPrefix: 'https://x.example/', status: '' }, 'A webhook fault with effect status needs status'],
      [{ kind: 'webhook', effect: 'status', urlPrefix: 'https://x.example/', status: '99' }, 'status must be >= 200'],
      [{ kind: 'webhook', effect: 'delay', urlPrefix: 'ftp://x.example/', delayMs: '10' }, 'urlPrefix must match pattern "^https?://"'],
      [{ kind: 'webhook', effect: 'reject', urlPrefix: 'https://x.example/' }, "A webhook fault's effect is one of status, timeout, delay, duplicate, late"],
      [{ kind: 'settlement', effect: 'delay', pixKey: 'a@b.c', delayMs: '600001' }, 'delayMs must be <= 600000'],
      [{ kind: 'settlement', effect: 'reject', pixKey: 'a@b.c', reason: 'ac03' }, 'reason must match pattern "^[A-Z0-9]{4}$"'],
    ] as const;
    for (const [fields, message] of cases) {
      const res = await act('set-fault', fields);
      assert.equal(res.statusCode, 400, JSON.stringify(fields));
      assert.equal(res.body, message, JSON.stringify(fields));
    }
    const api = await t.app.inject({ method: 'POST', url: '/sandbox/faults', headers: adminHeaders, payload: { kind: 'webhook', effect: 'status', status: 503 } });
    assert.equal(api.json().message, 'A webhook fault with effect status needs urlPrefix', 'the same rule as the API');
    assert.deepEqual(faultInput({ kind: 'webhook', effect: 'delay', urlPrefix: 'https://x.example/', status: '503', delayMs: '250', count: '' }), {
      kind: 'webhook',
      effect: 'delay',
      urlPrefix: 'https://x.example/',
      delayMs: 250,
    });
    assert.deepEqual(advanceInput({ by: '2', unit: 'days' }), { seconds: 172_800 });
    const at = new Date('2026-11-25T13:30:15.000Z');
    assert.equal(saoPauloLocal(at), '2026-11-25T10:30:15');
    assert.equal(saoPauloInstant(saoPauloLocal(at)), at.toISOString());
  });

  it('the inbox: its URL to register, what arrived (escaped, newest first), another name, emptied', async () => {
    await createClient(t);
    const post = (name: string, body: string) =>
      t.app.inject({ method: 'POST', url: `/sandbox/inbox/${name}`, headers: { 'content-type': 'application/json', 'x-hostile': '<b>bold</b>' }, payload: body });
    const before = await marker();
    await post('mine', '{"n":1}');
    await post('mine', '{"html":"<img src=x onerror=alert(1)>"}');
    await post('other', 'plain');
    assert.notEqual(await marker(), before, 'an arrival is a change');
    const mine = (await page('/console/inbox')).body;
    assert.ok(mine.includes(`<code id="inbox-url" class="brcode">${t.config.publicUrl}/sandbox/inbox/mine</code>`));
    assert.match(mine, /data-copy="inbox-url"/);
    assert.match(mine, /the newest 2\)/);
    assert.ok(!mine.includes('<img src=x') && !mine.includes('<b>bold</b>'), 'escaped');
    assert.ok(mine.indexOf('onerror=alert(1)') < mine.indexOf('&quot;n&quot;: 1'), 'newest first, JSON indented');
    assert.match(mine, /<dt>x-hostile<\/dt><dd><code>&lt;b&gt;bold&lt;\/b&gt;<\/code><\/dd>/);
    assert.match((await page('/console/inbox?name=other')).body, /<pre class="payload">plain<\/pre>/);
    assert.equal((await page('/console/inbox?name=no%20spaces')).statusCode, 400);
    const emptied = await marker();
    assert.equal((await act('clear-inbox', { name: 'mine' })).body, 'The inbox mine was emptied (2 arrivals)');
    assert.notEqual(await marker(), emptied, 'emptying it is a change');
    assert.match((await page('/console/inbox')).body, /Nothing arrived yet/);
  });
});
