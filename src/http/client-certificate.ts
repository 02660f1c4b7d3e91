import { isIP } from 'node:net';
import { TLSSocket } from 'node:tls';
import type { FastifyRequest } from 'fastify';
import ipaddr from 'ipaddr.js';
import { fromX509, parsePemCertificate, type ParsedCertificate } from '../lib/certificate.ts';
import { LongKeyLru } from '../lib/lru.ts';

export const CERT_HEADER = 'x-ssl-client-cert';

export type PresentedCertificate =
  | { readonly kind: 'absent'; readonly reason: string }
  | { readonly kind: 'malformed'; readonly reason: string }
  | { readonly kind: 'untrusted'; readonly reason: string }
  | { readonly kind: 'present'; readonly certificate: ParsedCertificate };

/** '::ffff:127.0.0.1' and '127.0.0.1' are the same peer. */
export function normalizeAddress(address: string | undefined): string {
  if (!address) return '';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

/**
 * The client certificate of a request. With mutual TLS terminated here, the socket's peer
 * certificate is the proof. Behind a TLS terminator, the URL-encoded PEM in X-SSL-Client-Cert
 * is believed only when the request comes from a trusted proxy: a header from anyone else
 * proves nothing about possession of the private key.
 */
export interface CertificateTrust {
  readonly trustedProxies: readonly string[];
  /** With TLS_CLIENT_CA_FILE the TLS layer validates chains; otherwise the fingerprint is the trust. */
  readonly requireClientCa: boolean;
}

export function presentedCertificate(request: FastifyRequest, trust: CertificateTrust): PresentedCertificate {
  const socket = request.raw.socket;
  if (socket instanceof TLSSocket) {
    const peer = socket.getPeerX509Certificate();
    if (peer) {
      if (trust.requireClientCa && !socket.authorized) {
        return { kind: 'untrusted', reason: `client certificate not trusted: ${String(socket.authorizationError)}` };
      }
      return { kind: 'present', certificate: fromX509(peer) };
    }
    // We terminate TLS ourselves: the peer is the client, never a proxy, so a header is no proof.
    return { kind: 'absent', reason: 'A client certificate is required in the TLS handshake' };
  }
  const raw = request.headers[CERT_HEADER];
  if (raw === undefined || raw === '') return { kind: 'absent', reason: 'X-SSL-Client-Cert header is required' };
  if (Array.isArray(raw)) return { kind: 'malformed', reason: 'X-SSL-Client-Cert header must appear once' };
  const peerAddress = normalizeAddress(socket.remoteAddress);
  if (!trust.trustedProxies.includes(peerAddress)) {
    return { kind: 'absent', reason: 'X-SSL-Client-Cert is only accepted from a trusted proxy' };
  }
  return parseCertificateHeader(raw);
}

/** Parsed headers: a client sends the same certificate with every request. */
const parsedHeaders = new LongKeyLru<PresentedCertificate>(1_000);

/**
 * The address of the client a request comes from. A trusted proxy's X-Forwarded-For is read
 * from its right end, past every trusted hop, so a client cannot choose its own address by
 * putting one at the left; a request that did not come through a trusted proxy is its peer.
 */
export function clientAddress(request: FastifyRequest, trust: Pick<CertificateTrust, 'trustedProxies'>): string {
  const peer = normalizeAddress(request.raw.socket.remoteAddress);
  const forwarded = request.headers['x-forwarded-for'];
  if (request.raw.socket instanceof TLSSocket || !trust.trustedProxies.includes(peer) || forwarded === undefined) return peer;
  const hops = (Array.isArray(forwarded) ? forwarded.join(',') : forwarded).split(',').map((h) => normalizeAddress(h.trim()));
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    if (isIP(hop) === 0) return peer;
    if (!trust.trustedProxies.includes(hop)) return hop;
  }
  return peer;
}

/**
 * What limits on failed attempts count per source: an IPv4 address itself, and for IPv6 the
 * address's /64, a subscriber's own network, in which a host takes any address it likes (2^64
 * of them: counting full addresses would count nothing).
 */
export function failureSource(address: string): string {
  const bare = address.split('%')[0]!;
  if (!ipaddr.isValid(bare)) return address;
  const parsed = ipaddr.process(bare);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const prefix = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return `${prefix.join(':')}::/64`;
}

/** The source a request's failed attempts count against (token requests, the admin token). */
export function requestSource(request: FastifyRequest, trust: Pick<CertificateTrust, 'trustedProxies'>): string {
  return failureSource(clientAddress(request, trust));
}

/** The header carries a URL-encoded PEM (as nginx's $ssl_client_escaped_cert). */
export function parseCertificateHeader(raw: string): PresentedCertificate {
  let parsed = parsedHeaders.get(raw);
  if (!parsed) {
    parsed = parseHeaderText(raw);
    parsedHeaders.set(raw, parsed);
  }
  return parsed;
}

function parseHeaderText(raw: string): PresentedCertificate {
  if (!raw.includes('%')) {
    return { kind: 'malformed', reason: 'X-SSL-Client-Cert must be a URL-encoded PEM certificate' };
  }
  let pem: string;
  try {
    pem = decodeURIComponent(raw);
  } catch {
    return { kind: 'malformed', reason: 'X-SSL-Client-Cert is not valid URL encoding' };
  }
  const certificate = parsePemCertificate(pem);
  if (!certificate) return { kind: 'malformed', reason: 'X-SSL-Client-Cert is not a PEM X.509 certificate' };
  return { kind: 'present', certificate };
}
