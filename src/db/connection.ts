import { userInfo } from 'node:os';

/** Where a PostgreSQL URL points, with node-postgres's defaults for what it leaves out. */
export interface PostgresTarget {
  /** The first host (of several, in a multi-host URL). */
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly database: string;
  /** Every host as `host:port`, comma-separated, as a person reads them. */
  readonly servers: string;
}

export interface PostgresHost {
  readonly host: string;
  readonly port: number;
}

/** libpq's target_session_attrs values that are honoured: any server, or only a read-write one. */
export type TargetSessionAttrs = 'any' | 'read-write';

/**
 * A PostgreSQL URL as libpq reads it, hosts and all: `postgres://user@h1:p1,h2:p2/db?...`.
 * node-postgres reads only one host, so a URL of several (or one asking for a read-write server)
 * is connected to host by host (db/multi-host.ts), each through `forHost`.
 */
export interface PostgresUrl {
  readonly hosts: readonly PostgresHost[];
  readonly targetSessionAttrs: TargetSessionAttrs;
  /** libpq's connect_timeout, per host, in ms; undefined when the URL gives none. */
  readonly connectTimeoutMs: number | undefined;
  /** Whether a connection must go host by host (several hosts, or a read-write server asked for). */
  readonly multiHost: boolean;
  /** The single-host URL of `hosts[index]`, with the same user, password, database and parameters, as node-postgres reads it. */
  forHost(index: number): string;
}

export class InvalidPostgresUrl extends Error {
  override name = 'InvalidPostgresUrl';
}

const URL_SHAPE = /^(postgres(?:ql)?:)\/\/([^/?#]*)([^?#]*)(\?[^#]*)?$/;
const DEFAULT_PORT = 5432;

/** One `host[:port]` of an authority's host list; an IPv6 address comes in brackets. */
function parseHost(text: string, defaultPort: number): PostgresHost {
  const match = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(text);
  if (!match) throw new InvalidPostgresUrl(`"${text}" is not a host[:port]`);
  const port = match[2] ? Number(match[2]) : defaultPort;
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new InvalidPostgresUrl(`port ${match[2]} is not a port from 1 to 65535`);
  return { host: decodeURIComponent(match[1]!.replace(/^\[(.*)\]$/, '$1')), port };
}

function targetSessionAttrs(value: string | null): TargetSessionAttrs {
  if (value === null || value === 'any') return 'any';
  if (value === 'read-write') return 'read-write';
  throw new InvalidPostgresUrl(`target_session_attrs must be any or read-write (got "${value}")`);
}

/**
 * Parses a PostgreSQL URL of one host or several (libpq's multi-host form); throws
 * InvalidPostgresUrl, saying what is wrong without repeating the URL (it may hold a password).
 */
export function parsePostgresUrl(url: string): PostgresUrl {
  const match = URL_SHAPE.exec(url);
  if (!match) throw new InvalidPostgresUrl('must be a URL (postgres: or postgresql:)');
  const [, scheme, authority = '', path = '', query = ''] = match;
  const at = authority.lastIndexOf('@');
  const userinfo = at >= 0 ? authority.slice(0, at + 1) : '';
  const params = new URLSearchParams(query.slice(1));
  const defaultPort = Number(process.env.PGPORT) || DEFAULT_PORT;
  const hosts = authority.slice(at + 1).split(',').map((text) => parseHost(text, defaultPort));
  const attrs = targetSessionAttrs(params.get('target_session_attrs'));
  const timeout = params.get('connect_timeout');
  if (timeout !== null && !/^\d+$/.test(timeout)) throw new InvalidPostgresUrl(`connect_timeout must be a whole number of seconds (got "${timeout}")`);
  params.delete('target_session_attrs');
  const rest = params.size > 0 ? `?${params.toString()}` : '';
  const authorityOf = ({ host, port }: PostgresHost) => (host === '' ? '' : `${host.includes(':') ? `[${host}]` : host}:${port}`);
  return {
    hosts,
    targetSessionAttrs: attrs,
    connectTimeoutMs: timeout === null || timeout === '0' ? undefined : Number(timeout) * 1000,
    multiHost: hosts.length > 1 || attrs === 'read-write',
    forHost: (index) => `${scheme}//${userinfo}${authorityOf(hosts[index]!)}${path}${rest}`,
  };
}

function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'postgres';
  }
}

export function postgresTarget(url: string): PostgresTarget {
  const { hosts, forHost } = parsePostgresUrl(url);
  const first = new URL(forHost(0));
  const user = decodeURIComponent(first.username) || process.env.PGUSER || osUser();
  // A socket directory given as ?host=/run/postgresql wins over the URL's host, as in libpq.
  const hostOf = (h: PostgresHost) => first.searchParams.get('host') || h.host || process.env.PGHOST || 'localhost';
  return {
    host: hostOf(hosts[0]!),
    port: hosts[0]!.port,
    user,
    database: decodeURIComponent(first.pathname.slice(1)) || process.env.PGDATABASE || user,
    servers: hosts.map((h) => `${hostOf(h)}:${h.port}`).join(','),
  };
}

/** How the database is named to a person: in the banner, in start failures, in the demo files. */
export function describePostgres(url: string): string {
  const { servers, database } = postgresTarget(url);
  return `PostgreSQL database "${database}" on ${servers}`;
}

/** Single-quotes a shell word when it needs it, so a printed command can be pasted. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:@%+=-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'ECONNRESET']);

/**
 * What to do about an error met while connecting to PostgreSQL at start, as one line naming
 * DATABASE_URL; undefined when the error is not about reaching the database.
 */
export function describeConnectionFailure(error: unknown, url: string): string | undefined {
  const code = (error as { code?: unknown }).code;
  const message = (error as Error).message ?? String(error);
  const target = postgresTarget(url);
  const server = `PostgreSQL at ${target.servers}`;
  if (code === '3D000') {
    const createdb = ['createdb', '-h', target.host, '-p', String(target.port), '-U', target.user, target.database].map(shellWord).join(' ');
    return `database "${target.database}" does not exist on ${server}: create it (${createdb}), or set DATABASE_URL to an existing database`;
  }
  if (code === '28P01' || code === '28000') {
    return `${server} refused user "${target.user}" (${message}): correct the user or password in DATABASE_URL`;
  }
  if ((error as Error).name === 'NoReadWriteServer') {
    return `${server} has no read-write server now (${message}): wait for the failover to end and start again, or correct DATABASE_URL`;
  }
  if (code === '57P03') return `${server} is not accepting connections yet (${message}): start again once it is up`;
  if (code === '53300') return `${server} has no free connection (${message}): lower DATABASE_POOL_SIZE or raise the server's max_connections`;
  const unreachable =
    (typeof code === 'string' && UNREACHABLE.has(code)) ||
    /timeout expired|connection timeout|Connection terminated unexpectedly/i.test(message);
  if (unreachable) return `cannot reach ${server} (${message}): start PostgreSQL, or correct DATABASE_URL`;
  return undefined;
}
