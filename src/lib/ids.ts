import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import { assert } from './assert.ts';

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Random alphanumerics from the CSPRNG, without modulo bias. */
export function randomAlphanumeric(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALNUM[randomInt(ALNUM.length)];
  return out;
}

/** `yyyyMMddHHmm` in UTC. */
function minuteStamp(at: Date): string {
  return at.toISOString().slice(0, 16).replace(/[-T:]/g, '');
}

/**
 * A BCB-shaped Pix identifier of 32 characters: prefix (`E` end-to-end, `D` refund), the ISPB
 * (8 digits), `yyyyMMddHHmm` in UTC and 11 random alphanumerics.
 */
export function pixIdentifier(prefix: 'E' | 'D', ispb: string, at: Date): string {
  // The ISPB is not always our own (an incoming PIX carries the payer's), and years past 9999
  // print as "+010000-...": either would otherwise yield an id of the wrong shape, silently.
  assert(/^\d{8}$/.test(ispb), `ISPB must be 8 digits (got ${JSON.stringify(ispb)})`);
  const stamp = minuteStamp(at);
  assert(/^\d{12}$/.test(stamp), `date out of range for a Pix identifier: ${stamp}`);
  return `${prefix}${ispb}${stamp}${randomAlphanumeric(11)}`;
}

export const PIX_IDENTIFIER = /^[a-zA-Z0-9]{32}$/;

export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export { randomUUID };
