import { TLSSocket } from 'node:tls';
import type { FastifyRequest } from 'fastify';
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
