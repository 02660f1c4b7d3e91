import assert from 'node:assert/strict';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../app.ts';
import { openDatabase } from '../../db/client.ts';
import { ManualClock } from '../../lib/clock.ts';
import { createClient, evpKey, incomingPix } from '../../../test/factories.ts';
import { adminHeaders, onPostgres, startTestApp, TEST_ADMIN_TOKEN, testConfig, type TestApp } from '../../../test/harness.ts';
import { ChangeFeed, readMarker, type ChangeListener } from './changes.ts';
import { CHANGE_SOURCES } from './panels.ts';

/** A listener that records what it is told, and can wait for the next change. */
function recorder() {
  const changes: string[] = [];
  let wake: (() => void) | undefined;
  const listener: ChangeListener = {
    change: (marker) => {
      changes.push(marker);
      wake?.();
    },
    ping: () => undefined,
  };
  const next = (count: number) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no change ${count} within 5 s (got ${changes.length})`)), 5000);
      const check = () => {
        if (changes.length >= count) {
          clearTimeout(timer);
          resolve();
        }
      };
      wake = check;
      check();
    });
  return { changes, listener, next };
}

describe('the change feed', () => {
  let t: TestApp;
  let key: string;
  before(async () => {
    t = await startTestApp();
    key = await evpKey(t, (await createClient(t)).accountId);
  });
  after(() => t.close());

  it('reads nothing until a listener comes, and stops when the last one leaves', async () => {
    const feed = new ChangeFeed(t.db, CHANGE_SOURCES, { intervalMs: 10 });
    assert.equal(feed.polling, false);
    const a = recorder();
    const b = recorder();
    const stopA = feed.subscribe(a.listener);
    const stopB = feed.subscribe(b.listener);
    assert.equal(feed.polling, true);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await incomingPix(t, key, '1.00');
    await Promise.all([a.next(1), b.next(1)]);
    stopA();
    assert.equal(feed.polling, true);
    stopB();
    assert.equal(feed.polling, false);
    assert.equal(feed.listeners, 0);
    feed.close();
  });

  it('tells a listener of a change made since the page it shows was drawn', async () => {
    const feed = new ChangeFeed(t.db, CHANGE_SOURCES, { intervalMs: 10 });
    const drawn = await feed.current();
    await incomingPix(t, key, '2.00');
    const r = recorder();
    const stop = feed.subscribe(r.listener, drawn);
    await r.next(1);
    assert.notEqual(r.changes[0], drawn);
    assert.equal(r.changes[0], await readMarker(t.db, CHANGE_SOURCES));
    stop();
    feed.close();
  });

  it('sees what another process on the database does', { skip: !onPostgres && 'PGlite is one process' }, async () => {
    const other = await openDatabase({ url: t.testDb.url! });
    const second = await buildApp({ config: testConfig(), db: other.db, clock: new ManualClock(new Date()), logLevel: false });
    const feed = new ChangeFeed(t.db, CHANGE_SOURCES, { intervalMs: 10 });
    const r = recorder();
    const stop = feed.subscribe(r.listener, await feed.current());
    try {
      const res = await second.inject({ method: 'POST', url: '/sandbox/pix/incoming', headers: adminHeaders, payload: { pixKey: key, amount: '3.00', payer: { name: 'Outro', document: '52998224725' } } });
      assert.equal(res.statusCode, 201, res.body);
      await r.next(1);
    } finally {
      stop();
      feed.close();
      await second.close();
      await other.close();
    }
  });
});

describe('GET /console/events over HTTP', () => {
  it('streams a change made through the API, and ends when the service closes', async () => {
    const t = await startTestApp();
    const key = await evpKey(t, (await createClient(t)).accountId);
    const signIn = await t.app.inject({
      method: 'POST',
      url: '/console/sign-in',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `token=${TEST_ADMIN_TOKEN}`,
    });
    const cookie = String(signIn.headers['set-cookie']).split(';')[0]!;
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    let text = '';
    const ended = new Promise<number | undefined>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/console/events', headers: { cookie } }, (res) => {
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve(res.statusCode));
        assert.equal(res.headers['content-type'], 'text/event-stream; charset=utf-8');
      });
      req.on('error', reject);
      req.end();
    });
    const until = async (pattern: RegExp) => {
      for (let i = 0; i < 100 && !pattern.test(text); i++) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.match(text, pattern);
    };
    try {
      await until(/^retry: 2000\n\n/);
      // The first read of the feed sets what the stream started from.
      await new Promise((resolve) => setTimeout(resolve, 1200));
      await incomingPix(t, key, '5.00');
      // The marker is what the page sends back as `since`: the route's own pattern takes it.
      await until(/event: change\ndata: [0-9A-Za-z.-]+\n\n/);
    } finally {
      // Closed whatever the assertions said: a stream left open would keep the test process alive.
      await t.close();
    }
    assert.equal(await ended, 200);
  });
});
