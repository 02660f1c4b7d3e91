import type { Server, Socket } from 'node:net';
import { failureSource, normalizeAddress } from './client-certificate.ts';

/**
 * What a listener allows a connection: the time its request may take to arrive, headers and body
 * together (a client that sends a byte every few seconds is cut when it is up), and how many
 * connections one source may hold at once on the public listener.
 */
export interface ConnectionLimits {
  /** A request whose headers and body have not all arrived by then is answered 408 and closed. */
  readonly requestTimeoutMs: number;
  /** Open connections per source (an IPv4 address, an IPv6 /64); 0: no limit. */
  readonly maxConnectionsPerSource: number;
  /** Sources exempt from that limit: the trusted proxies, which carry many clients each. */
  readonly exempt: readonly string[];
}

/**
 * How often the server looks for requests that outlasted their time; the shorter of a second
 * and a quarter of the time itself, so that a slow request is cut close to its limit.
 */
export const checkingIntervalMs = (requestTimeoutMs: number) => Math.max(50, Math.min(1000, Math.floor(requestTimeoutMs / 4)));

/** The options of Fastify and of Node's server that bound the time a request takes to arrive. */
export function requestTimeouts(limits: Pick<ConnectionLimits, 'requestTimeoutMs'>) {
  return { requestTimeout: limits.requestTimeoutMs, server: { connectionsCheckingInterval: checkingIntervalMs(limits.requestTimeoutMs) } };
}

/**
 * Bounds the time of headers (the same as the whole request's: Node's own default is 60 s for
 * headers alone) once the server exists.
 */
export function boundHeaders(server: { headersTimeout: number }, limits: Pick<ConnectionLimits, 'requestTimeoutMs'>): void {
  server.headersTimeout = limits.requestTimeoutMs;
}

/**
 * Counts each source's open connections on `server` and closes at once a connection that would
 * exceed the limit, before a byte of it is read (and before a TLS handshake is paid for).
 * `refused` is told of each one, with its source.
 */
export function limitConnectionsPerSource(server: Server, limits: ConnectionLimits, refused: (source: string) => void): void {
  if (limits.maxConnectionsPerSource <= 0) return;
  const exempt = new Set(limits.exempt.map((address) => normalizeAddress(address)));
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = normalizeAddress(socket.remoteAddress);
    if (exempt.has(address)) return;
    const source = failureSource(address);
    const count = open.get(source) ?? 0;
    if (count >= limits.maxConnectionsPerSource) {
      socket.destroy();
      refused(source);
      return;
    }
    open.set(source, count + 1);
    socket.once('close', () => {
      const left = (open.get(source) ?? 1) - 1;
      if (left <= 0) open.delete(source);
      else open.set(source, left);
    });
  });
}
