/**
 * timestamptz as PostgreSQL sends it in text ('2026-11-22 21:45:10.123456+00', an offset of
 * hours and optional minutes and seconds), read without regular expressions: node-postgres's
 * parser (postgres-date) took 8% of the service's time on a page of transactions, three
 * timestamps a row. Anything else (infinity, BC, years outside 100-9999, a layout it does not
 * know) goes to `fallback`. Like postgres-date, digits below the millisecond are dropped.
 * Why, and what was measured: docs/decisions/0024-request-path-costs.md.
 */
export function timestamptzParser<T>(fallback: (text: string) => T): (text: string) => Date | T {
  return (text) => parseCommon(text) ?? fallback(text);
}

const DASH = 45;
const COLON = 58;
const SPACE = 32;
const DOT = 46;
const PLUS = 43;

/** The digits of text[from, from + count) as a number, NaN if one is not a digit. */
function digits(text: string, from: number, count: number): number {
  let value = 0;
  for (let i = from; i < from + count; i++) {
    const d = text.charCodeAt(i) - 48;
    if (!(d >= 0 && d <= 9)) return Number.NaN;
    value = value * 10 + d;
  }
  return value;
}

function parseCommon(text: string): Date | null {
  const n = text.length;
  if (n < 22 || text.charCodeAt(4) !== DASH || text.charCodeAt(7) !== DASH || text.charCodeAt(10) !== SPACE) return null;
  if (text.charCodeAt(13) !== COLON || text.charCodeAt(16) !== COLON) return null;
  const year = digits(text, 0, 4);
  if (!(year >= 100)) return null; // Date.UTC reads 0-99 as 1900-1999
  let i = 19;
  let ms = 0;
  if (text.charCodeAt(i) === DOT) {
    const start = ++i;
    while (i < n && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) i++;
    if (i === start) return null;
    const kept = Math.min(3, i - start);
    ms = digits(text, start, kept) * 10 ** (3 - kept);
  }
  const sign = text.charCodeAt(i);
  if (sign !== PLUS && sign !== DASH) return null;
  // +HH, +HH:MM or +HH:MM:SS, and nothing after.
  const rest = n - i - 1;
  if (rest !== 2 && rest !== 5 && rest !== 8) return null;
  if (rest >= 5 && text.charCodeAt(i + 3) !== COLON) return null;
  if (rest === 8 && text.charCodeAt(i + 6) !== COLON) return null;
  const offsetSeconds =
    digits(text, i + 1, 2) * 3600 + (rest >= 5 ? digits(text, i + 4, 2) * 60 : 0) + (rest === 8 ? digits(text, i + 7, 2) : 0);
  const utc = Date.UTC(year, digits(text, 5, 2) - 1, digits(text, 8, 2), digits(text, 11, 2), digits(text, 14, 2), digits(text, 17, 2), ms);
  const at = utc - (sign === PLUS ? 1 : -1) * offsetSeconds * 1000;
  return Number.isNaN(at) ? null : new Date(at);
}
