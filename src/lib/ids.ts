import { randomBytes, randomFillSync, randomUUID } from 'node:crypto';
import { assert } from './assert.ts';

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Bytes below this are kept: 4 × 62, so `byte % 62` is uniform. */
const ALNUM_LIMIT = 4 * ALNUM.length;

/** CSPRNG bytes drawn 4 KiB at a time, as Node's randomInt and randomUUID do: a call to the
 * CSPRNG per identifier showed in the transfer path's profile (docs/decisions/0024-request-path-costs.md). */
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

function randomByte(): number {
  if (poolAt === pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  return pool[poolAt++]!;
}

/** Random alphanumerics from the CSPRNG, without modulo bias (bytes past 4 × 62 are drawn again). */
export function randomAlphanumeric(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < ALNUM_LIMIT) out += ALNUM[byte % ALNUM.length];
  }
  return out;
}

let stampMinute = Number.NaN;
let stamp = '';

/** `yyyyMMddHHmm` in UTC (formatted once a minute: every transfer needs one). */
function minuteStamp(at: Date): string {
  const minute = Math.floor(at.getTime() / 60_000);
  if (minute !== stampMinute) {
    stamp = at.toISOString().slice(0, 16).replace(/[-T:]/g, '');
    stampMinute = minute;
  }
  return stamp;
}

/**
 * A BCB-shaped Pix identifier of 32 characters: prefix (`E` end-to-end, `D` refund), the ISPB
 * (8 digits, or since API Pix 2.9 capital letters and digits), `yyyyMMddHHmm` in UTC and 11
 * random alphanumerics.
 */
export function pixIdentifier(prefix: 'E' | 'D', ispb: string, at: Date): string {
  // The ISPB is not always our own (an incoming PIX carries the payer's), and years past 9999
  // print as "+010000-...": either would otherwise yield an id of the wrong shape, silently.
  assert(/^[0-9A-Z]{8}$/.test(ispb), `ISPB must be 8 digits or capital letters (got ${JSON.stringify(ispb)})`);
  const stamp = minuteStamp(at);
  assert(/^\d{12}$/.test(stamp), `date out of range for a Pix identifier: ${stamp}`);
  return `${prefix}${ispb}${stamp}${randomAlphanumeric(11)}`;
}

export const PIX_IDENTIFIER = /^[a-zA-Z0-9]{32}$/;

export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export { randomUUID };
