import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import pg from 'pg';
import { timestamptzParser } from './timestamptz.ts';

const TIMESTAMPTZ_OID = 1184;
const postgresDate = pg.types.getTypeParser(TIMESTAMPTZ_OID, 'text') as (text: string) => unknown;
const parse = timestamptzParser(postgresDate);

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** The text PostgreSQL sends for `instantMs` (plus `micros` below the millisecond) in a session at UTC offset `offsetSeconds`. */
function asPostgresSends(instantMs: number, micros: number, offsetSeconds: number): string {
  const local = new Date(instantMs + offsetSeconds * 1000);
  const fraction = (local.getUTCMilliseconds() * 1000 + micros).toString().padStart(6, '0').replace(/0+$/, '');
  const abs = Math.abs(offsetSeconds);
  const [h, m, s] = [Math.floor(abs / 3600), Math.floor((abs % 3600) / 60), abs % 60];
  const offset = `${offsetSeconds < 0 ? '-' : '+'}${pad(h)}${m || s ? `:${pad(m)}` : ''}${s ? `:${pad(s)}` : ''}`;
  return (
    `${pad(local.getUTCFullYear(), 4)}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())} ` +
    `${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())}${fraction ? `.${fraction}` : ''}${offset}`
  );
}

describe('timestamptz parsing', () => {
  it('reads the instant PostgreSQL meant, to the millisecond, at any offset, and agrees with postgres-date', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(100, 1, 1), max: Date.UTC(9999, 11, 30) }),
        fc.integer({ min: 0, max: 999 }),
        fc.oneof(fc.integer({ min: -15 * 3600, max: 15 * 3600 }), fc.constantFrom(0, -3 * 3600, 5 * 3600 + 30 * 60)),
        (instantMs, micros, offsetSeconds) => {
          const text = asPostgresSends(instantMs, micros, offsetSeconds);
          const parsed = parse(text);
          assert.ok(parsed instanceof Date, text);
          assert.equal(parsed.getTime(), instantMs, text);
          assert.equal(parsed.getTime(), (postgresDate(text) as Date).getTime(), text);
        },
      ),
      { numRuns: 5_000 },
    );
  });

  it('leaves what it does not know to postgres-date', () => {
    for (const text of ['infinity', '-infinity', '0044-03-15 12:00:00+00 BC', '0099-06-01 00:00:00+00', '12345-01-01 00:00:00+00', '2026-11-22 21:45:10.+00']) {
      assert.deepEqual(parse(text), postgresDate(text), text);
    }
  });
});
