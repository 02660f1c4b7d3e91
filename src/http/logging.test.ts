import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { lazyChildLogger, loggerOptions, maskUrl } from './logging.ts';

function capture(level: string) {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const parent = pino(loggerOptions(level), stream);
  let children = 0;
  const child = parent.child.bind(parent);
  parent.child = ((...args: Parameters<typeof child>) => {
    children++;
    return child(...args);
  }) as typeof parent.child;
  return { parent: parent as unknown as FastifyBaseLogger, lines, children: () => children };
}

describe('the request logger', () => {
  it('makes its pino child only for a message at an enabled level, once, bound and redacted', () => {
    const { parent, lines, children } = capture('warn');
    const log = lazyChildLogger(parent, { reqId: 'req-1' }, {});
    log.info({ document: '52998224725' }, 'below the level');
    log.debug('below the level');
    assert.equal(children(), 0);
    assert.equal(lines.length, 0);
    assert.equal(log.level, 'warn');

    log.warn({ context: { document: '52998224725' } }, 'first');
    log.error('second');
    assert.equal(children(), 1);
    const written = lines.map((l) => JSON.parse(l) as { reqId: string; msg: string; context?: { document: string } });
    assert.deepEqual(
      written.map((l) => [l.reqId, l.msg]),
      [
        ['req-1', 'first'],
        ['req-1', 'second'],
      ],
    );
    assert.equal(written[0]!.context!.document, '[REDACTED]');
  });

  it("makes the child at once for a route's own level", () => {
    const { parent, lines, children } = capture('warn');
    const log = lazyChildLogger(parent, { reqId: 'req-2' }, { level: 'debug' });
    assert.equal(children(), 1);
    log.debug('shown');
    assert.equal((JSON.parse(lines[0]!) as { msg: string }).msg, 'shown');
  });
});

describe('URLs in the log', () => {
  it('mask every kind of key and document, however it is written', () => {
    const cases: [string, string][] = [
      ['/api/pix/transactions/pix-key/52998224725', '52998224725'],
      ['/api/pix/transactions/pix-key/529.982.247-25', '529.982.247-25'],
      ['/api/pix/transactions/pix-key/11.222.333%2F0001-81', '11.222.333%2F0001-81'],
      ['/api/pix/transactions/pix-key/11.222.333/0001-81', '11.222.333/0001-81'],
      ['/api/pix/transactions/pix-key/12.ABC.345%2F01DE-35', '12.ABC.345%2F01DE-35'],
      ['/api/pix/transactions/pix-key/1b4e28ba-2fa1-11d2-883f-0016d3cca427/x', '1b4e28ba-2fa1-11d2-883f-0016d3cca427'],
      ['/api/pix/transactions/pix-key/%2B5511987654321', '5511987654321'],
      ['/api/pix/transactions/pix-key/ana%40example.com', 'ana%40example.com'],
      ['/dict/keys/ana@example.com', 'ana@example.com'],
    ];
    for (const [url, secret] of cases) {
      const masked = maskUrl(url);
      assert.ok(!masked.includes(secret), `${url} -> ${masked}`);
      assert.ok(masked.startsWith(url.slice(0, url.indexOf(secret))), `the rest of ${url} is kept: ${masked}`);
    }
    assert.equal(maskUrl('/api/transactions?page=2&size=20'), '/api/transactions?page=2&size=20');
  });
});
