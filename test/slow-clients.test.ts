/**
 * Clients that hold connections: requests that trickle in (headers or body a byte at a time) are
 * cut when REQUEST_TIMEOUT_MS is up, and one source holds at most MAX_CONNECTIONS_PER_SOURCE
 * connections on the public listener; other clients are served all the while. Real sockets on
 * loopback: the slow sources connect from 127.0.0.2, the others from 127.0.0.3 (any 127/8
 * address is the machine's own), neither a trusted proxy.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './harness.ts';

const REQUEST_TIMEOUT_MS = 1_000;
const PER_SOURCE = 4;
/** Far beyond the time limit: a connection still open then was not cut. */
const CUT_WITHIN_MS = 15_000;

interface Held {
  socket: Socket;
  /** Everything the server sent. */
  received: () => string;
  /** Resolves with the milliseconds the connection lived, when the server closes it. */
  closed: Promise<number>;
  stop: () => void;
}

/** A connection from `localAddress` that sends `head` and then one byte of `trickle` every 200 ms. */
function hold(port: number, localAddress: string, head: string, trickle = 'x'.repeat(1000)): Promise<Held> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    let data = '';
    let timer: NodeJS.Timeout | undefined;
    const closed = new Promise<number>((done) => socket.once('close', () => done(performance.now() - started)));
    socket.on('data', (chunk) => (data += chunk.toString()));
    socket.on('error', () => undefined);
    socket.once('connect', () => {
      socket.write(head);
      let i = 0;
      timer = setInterval(() => {
        if (socket.destroyed || i >= trickle.length) return clearInterval(timer);
        socket.write(trickle[i++]!);
      }, 200);
      resolve({ socket, received: () => data, closed, stop: () => (clearInterval(timer), socket.destroy()) });
    });
    socket.once('error', reject);
  });
}

/** A whole request from `localAddress`, answered: its status line. */
function ask(port: number, localAddress: string, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString()));
    socket.once('connect', () => socket.write(`GET ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n`));
    socket.once('close', () => resolve(data.split('\r\n')[0] ?? ''));
    socket.once('error', reject);
  });
}

const SLOW_BODY = 'POST /oauth/token HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: 1000\r\n\r\n';
const SLOW_HEADERS = 'POST /oauth/token HTTP/1.1\r\nhost: 127.0.0.1\r\n';

for (const mode of ['sandbox', 'production'] as const) {
  describe(`slow clients (${mode} mode, real sockets)`, { timeout: 120_000 }, () => {
    let t: TestApp;
    let port: number;

    before(async () => {
      // Production's configuration names a PostgreSQL; the harness opens the test database itself.
      const production: Record<string, string> = mode === 'production' ? { DATABASE_URL: 'postgres://127.0.0.1/unused' } : {};
      t = await startTestApp({ env: { PIX_MODE: mode, ...production, REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS), MAX_CONNECTIONS_PER_SOURCE: String(PER_SOURCE) } });
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      port = (t.app.server.address() as { port: number }).port;
    });
    after(() => t.close());

    it('cuts a body or headers that trickle in once REQUEST_TIMEOUT_MS is up, serving other clients meanwhile', async () => {
      const slow = await Promise.all([hold(port, '127.0.0.2', SLOW_BODY), hold(port, '127.0.0.2', SLOW_BODY), hold(port, '127.0.0.2', SLOW_HEADERS, 'x-a: b\r\n'.repeat(100))]);
      try {
        // While they trickle, another client is answered.
        assert.match(await ask(port, '127.0.0.3', '/health'), /^HTTP\/1\.1 200/);
        const lived = await Promise.race([Promise.all(slow.map((s) => s.closed)), new Promise<null>((r) => setTimeout(() => r(null), CUT_WITHIN_MS))]);
        assert.ok(lived, `every slow connection was cut within ${CUT_WITHIN_MS} ms`);
        for (const ms of lived) assert.ok(ms >= REQUEST_TIMEOUT_MS * 0.9, `not before its time (${Math.round(ms)} ms)`);
        for (const s of slow) assert.match(s.received(), /^HTTP\/1\.1 408/, 'answered 408 Request Timeout');
      } finally {
        for (const s of slow) s.stop();
      }
    });

    it(`closes a source's connection beyond ${PER_SOURCE} on arrival; other sources still connect`, async () => {
      const held = await Promise.all(Array.from({ length: PER_SOURCE }, () => hold(port, '127.0.0.2', SLOW_BODY)));
      try {
        const extra = await hold(port, '127.0.0.2', SLOW_BODY);
        const lived = await Promise.race([extra.closed, new Promise<null>((r) => setTimeout(() => r(null), REQUEST_TIMEOUT_MS / 2))]);
        assert.ok(lived !== null, 'the connection beyond the limit is closed before its request could time out');
        assert.equal(extra.received(), '', 'closed before a byte is answered');
        assert.match(await ask(port, '127.0.0.3', '/health'), /^HTTP\/1\.1 200/, 'another source is served');
      } finally {
        for (const s of held) s.stop();
      }
      // Once its connections are gone, the source connects again.
      await Promise.all(held.map((s) => s.closed));
      assert.match(await ask(port, '127.0.0.2', '/health'), /^HTTP\/1\.1 200/);
      const metrics = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${t.config.adminToken}` } });
      assert.match(metrics.body, /^pix_connections_refused_total [1-9]/m);
    });
  });
}
