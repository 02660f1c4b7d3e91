import { userInfo } from 'node:os';

/** Where a PostgreSQL URL points, with node-postgres's defaults for what it leaves out. */
export interface PostgresTarget {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly database: string;
}

function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'postgres';
  }
}

export function postgresTarget(url: string): PostgresTarget {
  const parsed = new URL(url);
  const user = decodeURIComponent(parsed.username) || process.env.PGUSER || osUser();
  return {
    // A socket directory given as ?host=/run/postgresql wins over the URL's host, as in libpq.
    host: parsed.searchParams.get('host') || parsed.hostname.replace(/^\[(.*)\]$/, '$1') || process.env.PGHOST || 'localhost',
    port: Number(parsed.port) || Number(process.env.PGPORT) || 5432,
    user,
    database: decodeURIComponent(parsed.pathname.slice(1)) || process.env.PGDATABASE || user,
  };
}

/** How the database is named to a person: in the banner, in start failures, in the demo files. */
export function describePostgres(url: string): string {
  const { host, port, database } = postgresTarget(url);
  return `PostgreSQL database "${database}" on ${host}:${port}`;
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
  const server = `PostgreSQL at ${target.host}:${target.port}`;
  if (code === '3D000') {
    const createdb = ['createdb', '-h', target.host, '-p', String(target.port), '-U', target.user, target.database].map(shellWord).join(' ');
    return `database "${target.database}" does not exist on ${server}: create it (${createdb}), or set DATABASE_URL to an existing database`;
  }
  if (code === '28P01' || code === '28000') {
    return `${server} refused user "${target.user}" (${message}): correct the user or password in DATABASE_URL`;
  }
  if (code === '57P03') return `${server} is not accepting connections yet (${message}): start again once it is up`;
  if (code === '53300') return `${server} has no free connection (${message}): lower DATABASE_POOL_SIZE or raise the server's max_connections`;
  const unreachable =
    (typeof code === 'string' && UNREACHABLE.has(code)) ||
    /timeout expired|connection timeout|Connection terminated unexpectedly/i.test(message);
  if (unreachable) return `cannot reach ${server} (${message}): start PostgreSQL, or correct DATABASE_URL`;
  return undefined;
}
