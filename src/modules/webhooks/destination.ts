/**
 * Where webhooks may go. Destinations are HTTPS URLs on port 443 or a port the operator lists
 * (WEBHOOK_ALLOWED_PORTS), on public addresses: private, loopback, link-local (cloud metadata
 * at 169.254.169.254), carrier-grade NAT, unique-local, multicast and reserved ranges are
 * refused, at registration and again when connecting, since a name can resolve elsewhere later
 * (DNS rebinding). IP literals in any spelling are normalised by the WHATWG URL parser first
 * ("https://2130706433/" and "https://0x7f.1/" are 127.0.0.1), and IPv4-mapped IPv6 addresses
 * are judged as the IPv4 address they carry. The operator can allow private destinations
 * (WEBHOOK_ALLOW_PRIVATE, on by default in sandbox mode, where the developer's receiver runs
 * beside the service); in sandbox mode such destinations may use any port. Every refusal names
 * the setting that changes it.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Why a destination could not be reached: what the account reads, never lower-level text. */
export type FailureClass =
  | 'invalid destination'
  | 'non-public address'
  | 'port not allowed'
  | 'DNS failure'
  | 'connection refused'
  | 'connection failed'
  | 'TLS failure'
  | 'timeout'
  /** A private destination's refusal, time-out or TLS failure, told apart for nobody (they would map local services). */
  | 'unreachable';

/** The failures a private destination's answer would tell apart: reported as 'unreachable'. */
const LOCAL_FAILURES: ReadonlySet<FailureClass> = new Set(['connection refused', 'connection failed', 'TLS failure', 'timeout']);

/**
 * Whether `hostname` is, or resolves to, an address that is not public (loopback, private,
 * link-local...). Asked only of a failed attempt; a name that does not resolve is not private.
 */
export async function isNonPublicHost(hostname: string): Promise<boolean> {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (isIP(bare) !== 0) return !isPublicAddress(bare);
  try {
    const found = await dnsLookupAll(bare);
    return found.some((entry) => !isPublicAddress(entry.address));
  } catch {
    return false;
  }
}

const dnsLookupAll = (host: string) =>
  new Promise<LookupAddress[]>((resolve, reject) => dnsLookup(host, { all: true }, (error, found) => (error ? reject(error) : resolve(found))));

/**
 * The failure a caller is told of an attempt at `url`: at a private address, a refused
 * connection, a time-out and a TLS failure are one class, so that a sandbox's webhooks, resends
 * and payer cannot be used to map the services of its network.
 */
export async function toldFailure(url: string, failure: FailureClass): Promise<FailureClass> {
  if (!LOCAL_FAILURES.has(failure) || !URL.canParse(url)) return failure;
  return (await isNonPublicHost(new URL(url).hostname)) ? 'unreachable' : failure;
}

export class DestinationError extends Error {
  override readonly name = 'DestinationError';
  readonly failure: FailureClass;
  constructor(failure: FailureClass, message: string) {
    super(message);
    this.failure = failure;
  }
}

/** What the operator allows: from WEBHOOK_ALLOW_PRIVATE, WEBHOOK_ALLOWED_PORTS and PIX_MODE. */
export interface DestinationPolicy {
  readonly allowPrivate: boolean;
  /** Ports besides 443 that destinations may use. */
  readonly allowedPorts: readonly number[];
  /** Sandbox mode: loopback and private destinations (when allowed) may use any port. */
  readonly anyPortWhenPrivate: boolean;
  /**
   * Sandbox mode: `{PUBLIC_URL}/sandbox/inbox/`, the service's own webhook inbox, which a webhook
   * may name even over plain HTTP (the one exception to the rules above).
   */
  readonly ownInbox?: string | undefined;
}

export const INBOX_PATH = '/sandbox/inbox';
/** Where a developer's listener (`pix-api listen`) takes deliveries: `{PUBLIC_URL}/sandbox/listen/{id}`. */
export const LISTEN_PATH = '/sandbox/listen';
/** An inbox's name, and one segment of sub-path under it (BCB's callbacks add `/pix`, `/rec`, `/cobr`). */
const INBOX_TARGET = /^[A-Za-z0-9_-]{1,64}(\/[A-Za-z0-9_-]{1,64})?$/;

/** The address of the service's own inbox `name`, under PUBLIC_URL. */
export const inboxUrl = (publicUrl: string, name: string) => `${publicUrl}${INBOX_PATH}/${name}`;

/**
 * True for a URL of the service's own webhook inbox or of a listener of its own (or a sub-path
 * of one), when the policy has them.
 */
export function isOwnInbox(policy: Pick<DestinationPolicy, 'ownInbox'>, raw: string): boolean {
  const prefix = policy.ownInbox;
  if (prefix === undefined) return false;
  if (raw.startsWith(prefix)) return INBOX_TARGET.test(raw.slice(prefix.length));
  const listen = `${prefix.slice(0, prefix.length - INBOX_PATH.length - 1)}${LISTEN_PATH}/`;
  return raw.startsWith(listen) && INBOX_TARGET.test(raw.slice(listen.length));
}

/** Production's rules: public addresses on port 443 only. */
export const STRICT_POLICY: DestinationPolicy = Object.freeze({ allowPrivate: false, allowedPorts: [], anyPortWhenPrivate: false });
/** A sandbox's defaults: a receiver on this machine, on any port. */
export const SANDBOX_POLICY: DestinationPolicy = Object.freeze({ allowPrivate: true, allowedPorts: [], anyPortWhenPrivate: true });

export const MAX_URL_LENGTH = 2048;
export const DEFAULT_PORT = 443;

export const NON_PUBLIC_MESSAGE =
  'non-public address: the destination is in a private, loopback, link-local or reserved range (the operator allows those with WEBHOOK_ALLOW_PRIVATE)';

export function portMessage(port: number): string {
  return `port not allowed: ${port} (destinations use port ${DEFAULT_PORT} or a port the operator lists in WEBHOOK_ALLOWED_PORTS)`;
}

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

export function destinationPort(url: URL): number {
  return url.port === '' ? DEFAULT_PORT : Number(url.port);
}

function portAllowed(policy: DestinationPolicy, port: number): boolean {
  return port === DEFAULT_PORT || policy.allowedPorts.includes(port);
}

/** What a port the list does not name requires of the addresses: none may be public. */
function privateOnly(policy: DestinationPolicy, port: number): boolean {
  return !portAllowed(policy, port);
}

/**
 * Parses and checks a destination URL without resolving it: HTTPS, no credentials, a host,
 * at most 2048 characters, and, when the host is an IP literal, a public one (or a private one
 * where allowed) on an allowed port. A name on a port outside the list is judged when it
 * resolves (checkResolvedDestination, and guardedLookup when connecting).
 */
export function parseDestination(raw: string, policy: DestinationPolicy): URL {
  const invalid = (why: string) => new DestinationError('invalid destination', why);
  if (raw.length > MAX_URL_LENGTH) throw invalid(`url must be at most ${MAX_URL_LENGTH} characters`);
  if (isOwnInbox(policy, raw)) return new URL(raw);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('url must be an absolute HTTPS URL');
  }
  if (url.protocol !== 'https:') throw invalid('url must use HTTPS');
  if (url.username !== '' || url.password !== '') throw invalid('url must not carry credentials');
  const host = bareHost(url);
  if (host === '') throw invalid('url must name a host');
  if (isIP(host) !== 0) {
    const isPublic = isPublicAddress(host);
    if (!isPublic && !policy.allowPrivate) throw new DestinationError('non-public address', NON_PUBLIC_MESSAGE);
    const port = destinationPort(url);
    if (!portAllowed(policy, port) && (isPublic || !policy.anyPortWhenPrivate)) throw new DestinationError('port not allowed', portMessage(port));
  }
  return url;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for sockets to `port` that refuses names resolving to any address the policy does
 * not allow. Every address the name has must pass (an attacker's name could otherwise list a
 * public address next to 127.0.0.1 and let the connection pick either); on a port outside the
 * list, every address must be private, and private ones allowed on any port.
 */
export function guardedLookup(policy: DestinationPolicy, port = DEFAULT_PORT) {
  const needPrivate = privateOnly(policy, port);
  return (hostname: string, options: { all?: boolean; family?: number | string }, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true } as { all: true }, (error, addresses) => {
      if (error || addresses.length === 0) {
        return callback(Object.assign(new DestinationError('DNS failure', 'DNS failure: the host name does not resolve'), { code: 'ENOTFOUND' }), []);
      }
      const refusal = judge(policy, port, needPrivate, addresses);
      if (refusal) return callback(Object.assign(refusal, { code: 'EADDRNOTALLOWED' }), []);
      if (options.all) return callback(null, addresses);
      const first = addresses[0]!;
      return callback(null, first.address, first.family);
    });
  };
}

function judge(policy: DestinationPolicy, port: number, needPrivate: boolean, addresses: readonly LookupAddress[]): DestinationError | undefined {
  const anyPublic = addresses.some((a) => isPublicAddress(a.address));
  const anyPrivate = addresses.some((a) => !isPublicAddress(a.address));
  if (anyPrivate && !policy.allowPrivate) return new DestinationError('non-public address', NON_PUBLIC_MESSAGE);
  if (needPrivate && (anyPublic || !policy.anyPortWhenPrivate)) return new DestinationError('port not allowed', portMessage(port));
  return undefined;
}

/** Resolves a destination's name now (registration), by the rules a connection will follow. */
export async function checkResolvedDestination(url: URL, policy: DestinationPolicy): Promise<void> {
  const host = bareHost(url);
  const port = destinationPort(url);
  // An IP literal was judged whole by parseDestination; a name needs no look-up when any
  // address would do; the service's own inbox is where it says it is.
  if (isIP(host) !== 0 || (policy.allowPrivate && !privateOnly(policy, port)) || isOwnInbox(policy, url.href)) return;
  await new Promise<void>((resolve, reject) => {
    guardedLookup(policy, port)(host, { all: true }, (error) => (error ? reject(error) : resolve()));
  });
}

/** The destination's origin (scheme, host and port): the unit of fairness in delivery. */
export function destinationOrigin(url: string): string {
  return new URL(url).origin;
}

/** The policy the configuration sets (config.ts). */
export function destinationPolicy(config: {
  mode: 'sandbox' | 'production';
  webhookAllowPrivate: boolean;
  webhookAllowedPorts: readonly number[];
  publicUrl: string;
}): DestinationPolicy {
  return Object.freeze({
    allowPrivate: config.webhookAllowPrivate,
    allowedPorts: config.webhookAllowedPorts.filter((p) => p !== DEFAULT_PORT),
    anyPortWhenPrivate: config.mode === 'sandbox',
    ownInbox: config.mode === 'sandbox' ? inboxUrl(config.publicUrl, '') : undefined,
  });
}
