/**
 * Where webhooks may go. Destinations are HTTPS URLs on public addresses: private, loopback,
 * link-local (cloud metadata at 169.254.169.254), carrier-grade NAT, unique-local, multicast
 * and reserved ranges are refused, at registration and again when connecting, since a name can
 * resolve elsewhere later (DNS rebinding). IP literals in any spelling are normalised by the
 * WHATWG URL parser first ("https://2130706433/" and "https://0x7f.1/" are 127.0.0.1), and
 * IPv4-mapped IPv6 addresses are judged as the IPv4 address they carry. The operator can allow
 * private destinations (WEBHOOK_ALLOW_PRIVATE, for a sandbox on one machine).
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export class DestinationError extends Error {
  override readonly name = 'DestinationError';
}

export const MAX_URL_LENGTH = 2048;

/** IPv6 global unicast: outside it, ipaddr.js still calls e.g. ::7f00:1 (IPv4-compatible) "unicast". */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/** True when `address` is a public unicast address (the only kind webhooks may reach). */
export function isPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (!ipaddr.isValid(bare)) return false;
  const parsed = ipaddr.process(bare);
  if (parsed.range() !== 'unicast') return false;
  return parsed.kind() === 'ipv4' || parsed.match(GLOBAL_UNICAST_V6);
}

/** The host of a URL without IPv6 brackets. */
function bareHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/**
 * Parses and checks a destination URL without resolving it: HTTPS, no credentials, a host,
 * at most 2048 characters, and, when the host is an IP literal, a public one.
 */
export function parseDestination(raw: string, allowPrivate: boolean): URL {
  if (raw.length > MAX_URL_LENGTH) throw new DestinationError(`url must be at most ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DestinationError('url must be an absolute HTTPS URL');
  }
  if (url.protocol !== 'https:') throw new DestinationError('url must use HTTPS');
  if (url.username !== '' || url.password !== '') throw new DestinationError('url must not carry credentials');
  const host = bareHost(url);
  if (host === '') throw new DestinationError('url must name a host');
  if (!allowPrivate && isIP(host) !== 0 && !isPublicAddress(host)) {
    throw new DestinationError(`url points to a non-public address (${host}): private, loopback, link-local and reserved ranges are refused`);
  }
  return url;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for sockets that refuses names resolving to any non-public address. Every address
 * the name has must be public (an attacker's name could otherwise list a public address next to
 * 127.0.0.1 and let the connection pick either).
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: { all?: boolean; family?: number | string }, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true } as { all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const refused = allowPrivate ? undefined : addresses.find((a) => !isPublicAddress(a.address));
      if (refused) {
        const blocked = Object.assign(new DestinationError(`${hostname} resolves to a non-public address (${refused.address})`), {
          code: 'EADDRNOTPUBLIC',
        });
        return callback(blocked, []);
      }
      if (addresses.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      if (options.all) return callback(null, addresses);
      const first = addresses[0]!;
      return callback(null, first.address, first.family);
    });
  };
}

/** Resolves a destination's name now (registration): every address must be public. */
export async function checkResolvedDestination(url: URL, allowPrivate: boolean): Promise<void> {
  const host = bareHost(url);
  if (allowPrivate || isIP(host) !== 0) return;
  await new Promise<void>((resolve, reject) => {
    guardedLookup(false)(host, { all: true }, (error) => {
      if (!error) return resolve();
      reject(error instanceof DestinationError ? error : new DestinationError(`url host ${host} cannot be resolved`));
    });
  });
}
