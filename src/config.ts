import { readFileSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { InvalidPostgresUrl, parsePostgresUrl } from './db/connection.ts';
import { randomToken } from './lib/ids.ts';
import { signingFilesProblem } from './modules/locations/signing/files.ts';

/** The environment, parsed once into a typed, frozen object (operations-and-sandbox.md). */
export interface Config {
  readonly port: number;
  readonly host: string;
  /**
   * The operator listener (/admin/*, /metrics), apart from the public one; undefined
   * puts them on the main listener (the sandbox's default). Production always has one.
   */
  readonly admin: { readonly port: number; readonly host: string } | undefined;
  /**
   * A `worker` process's listener for /metrics and the probes: the operator listener's address,
   * only when ADMIN_PORT is set (a worker beside a `serve` on the defaults binds nothing).
   */
  readonly workerAdmin: { readonly port: number; readonly host: string } | undefined;
  readonly databaseUrl: string | undefined;
  /** PostgreSQL connections of the API in each process (the worker has a few of its own). */
  readonly databasePoolSize: number;
  /** How long a request may wait for one of them before it is answered 503. */
  readonly databaseQueueTimeoutMs: number;
  /** PostgreSQL connections of the account lists in each process, apart from the others. */
  readonly databaseListPoolSize: number;
  /** A list statement running longer is cancelled (503 LIST_TIMEOUT). */
  readonly databaseListStatementTimeoutMs: number;
  /** Lists of one account running at once in each process. */
  readonly listConcurrencyPerAccount: number;
  /** How long a list beyond them waits before it is answered 429. */
  readonly listQueueTimeoutMs: number;
  readonly dataDir: string;
  readonly redisUrl: string | undefined;
  readonly mode: 'sandbox' | 'production';
  readonly adminToken: string;
  /** True when ADMIN_TOKEN is not set (sandbox): the one kept under DATA_DIR is used, and printed. */
  readonly adminTokenGenerated: boolean;
  readonly pspIspb: string;
  /** Webhook destinations on private and loopback addresses (default: true in sandbox mode). */
  readonly webhookAllowPrivate: boolean;
  /** Ports besides 443 that webhook destinations may use. */
  readonly webhookAllowedPorts: readonly number[];
  readonly webhookCaFile: string | undefined;
  /**
   * The client certificate BCB's callbacks present (mutual TLS): WEBHOOK_CLIENT_CERT_FILE and
   * WEBHOOK_CLIENT_KEY_FILE. Unset: the sandbox generates one under DATA_DIR; production sends
   * them without one.
   */
  readonly webhookClient: { readonly certFile: string; readonly keyFile: string } | undefined;
  readonly settlementDelayMs: number;
  /**
   * How Pix Automático's D-10..D-2 window counts days (AUTOMATICO_WINDOW_DAYS): calendar days,
   * the regulation's reading and the default, or business days, as some PSPs count them.
   */
  readonly automaticoWindowDays: 'calendar' | 'business';
  readonly trustedProxies: readonly string[];
  /** How long a request may take to arrive, headers and body together (then 408, closed). */
  readonly requestTimeoutMs: number;
  /** Connections one source may hold at once on the public listener (trusted proxies aside); 0: no limit. */
  readonly maxConnectionsPerSource: number;
  readonly tls: { readonly certFile: string; readonly keyFile: string; readonly clientCaFile: string | undefined } | undefined;
  /**
   * KEY_ENCRYPTION_KEY (32 bytes), which seals private signing keys at rest. Unset only in
   * sandbox mode, where it is generated under DATA_DIR when first needed (key-encryption.ts).
   */
  readonly keyEncryptionKey: Buffer | undefined;
  /** Directory look-ups on an account's behalf: its token bucket and what a look-up costs. */
  readonly directoryLimits: DirectoryLimits;
  /**
   * PUBLIC_URL: the scheme, host and port under which payers reach this service. Payload
   * locations (`{host}/qr/v2/...`) and the JWK Set's address are built from it.
   */
  readonly publicUrl: string;
  /** QR_SIGNING_KEY_FILE and QR_SIGNING_CHAIN_FILE: production's payload-signing key and chain (else the sandbox's own CA). */
  readonly qrSigning: { readonly keyFile: string; readonly chainFile: string } | undefined;
}

export interface DirectoryBucket {
  readonly capacity: number;
  readonly refillPerMinute: number;
}

export interface DirectoryLimits {
  /** Natural persons (CPF holders). */
  readonly cpf: DirectoryBucket;
  /** Legal entities (CNPJ holders). */
  readonly cnpj: DirectoryBucket;
  /** Tokens a look-up takes first. */
  readonly lookupCost: number;
  /** Tokens in all of a look-up whose key is not in the directory, or whose owner is not the creditorDocument given. */
  readonly missCost: number;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

function fail(variable: string, problem: string): never {
  throw new ConfigError(`${variable} ${problem}`);
}

/** Quotes a raw value for a message; JSON escapes keep a value with a newline on one line. */
const quote = (raw: string): string => JSON.stringify(raw);

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    fail(name, `must be an integer from ${min} to ${max} (got ${quote(raw)})`);
  }
  return Number(raw);
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  return fail(name, `must be true or false (got ${quote(raw)})`);
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    return fail(name, `must be a URL (${protocols.join(' or ')})`);
  }
  if (!protocols.includes(parsed.protocol)) fail(name, `must use ${protocols.join(' or ')}`);
  return raw;
}

/**
 * A PostgreSQL URL of one host, or of several as libpq writes them
 * (`postgres://u@h1:p1,h2:p2/db?target_session_attrs=read-write`, db/connection.ts).
 */
function postgresUrl(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!/^postgres(ql)?:/.test(raw)) return url(env, name, ['postgres:', 'postgresql:']);
  try {
    parsePostgresUrl(raw);
  } catch (error) {
    if (error instanceof InvalidPostgresUrl) fail(name, error.message);
    throw error;
  }
  return raw;
}

/** A directory passes an existence check but fails later, far from the variable's name. */
function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function file(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!isFile(raw)) fail(name, `must name an existing file (got ${quote(raw)})`);
  return raw;
}

/**
 * QR_SIGNING_KEY_FILE and QR_SIGNING_CHAIN_FILE: the key and chain that sign payload locations
 * instead of the sandbox's generated CA, set together and checked at start (key, chain, issuers).
 */
function qrSigning(env: Env): { readonly keyFile: string; readonly chainFile: string } | undefined {
  const keyFile = file(env, 'QR_SIGNING_KEY_FILE');
  const chainFile = file(env, 'QR_SIGNING_CHAIN_FILE');
  if (Boolean(keyFile) !== Boolean(chainFile)) fail(keyFile ? 'QR_SIGNING_CHAIN_FILE' : 'QR_SIGNING_KEY_FILE', 'must be set together with the other QR signing file');
  if (!keyFile || !chainFile) return undefined;
  const wrong = signingFilesProblem(readFileSync(keyFile, 'utf8'), readFileSync(chainFile, 'utf8'));
  if (wrong) fail(wrong.variable, wrong.problem);
  return Object.freeze({ keyFile, chainFile });
}

/** WEBHOOK_CLIENT_CERT_FILE and WEBHOOK_CLIENT_KEY_FILE, both or neither. */
function webhookClient(env: Env): Config['webhookClient'] {
  const certFile = file(env, 'WEBHOOK_CLIENT_CERT_FILE');
  const keyFile = file(env, 'WEBHOOK_CLIENT_KEY_FILE');
  if (Boolean(certFile) !== Boolean(keyFile)) {
    fail(certFile ? 'WEBHOOK_CLIENT_KEY_FILE' : 'WEBHOOK_CLIENT_CERT_FILE', 'must be set together with the other webhook client file');
  }
  return certFile && keyFile ? Object.freeze({ certFile, keyFile }) : undefined;
}

/** The longest location BCB allows is 77 characters: `{host}/qr/v2/cobv/` and a 32-character token. */
export const PUBLIC_URL_MAX_HOST_LENGTH = 77 - '/qr/v2/cobv/'.length - 32;

/** PUBLIC_URL, or the listener's own address (a wildcard host read as loopback). */
function publicUrl(env: Env, host: string, port: number, tls: boolean, production: boolean): string {
  const given = url(env, 'PUBLIC_URL', production ? ['https:'] : ['http:', 'https:']);
  if (given === undefined) {
    if (production) fail('PUBLIC_URL', 'is required when PIX_MODE=production: the https address payers fetch payload locations at');
    const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
    return `${tls ? 'https' : 'http'}://${shown}:${port}`;
  }
  const parsed = new URL(given);
  if (parsed.pathname !== '/' || parsed.search !== '' || parsed.hash !== '' || parsed.username !== '' || parsed.password !== '') {
    fail('PUBLIC_URL', `must be a scheme, host and optional port only (got ${quote(given)})`);
  }
  if (parsed.host.length > PUBLIC_URL_MAX_HOST_LENGTH) {
    fail('PUBLIC_URL', `host and port must be at most ${PUBLIC_URL_MAX_HOST_LENGTH} characters, so that a location fits BCB's 77 (got ${parsed.host.length})`);
  }
  return `${parsed.protocol}//${parsed.host}`;
}

/** The default operator port in production: loopback only, so the operator API is never public by accident. */
export const DEFAULT_ADMIN_PORT = 8081;

function address(env: Env, name: string, fallback: string): string {
  const host = env[name] || fallback;
  if (!isIP(host) && host !== 'localhost') fail(name, `must be an IP address or localhost (got ${quote(host)})`);
  return host;
}

function adminListener(env: Env, production: boolean, port: number): Config['admin'] {
  const given = env.ADMIN_PORT !== undefined && env.ADMIN_PORT !== '';
  if (!given && !production) {
    if (env.ADMIN_HOST) fail('ADMIN_HOST', 'needs ADMIN_PORT (without it, /admin/* is on the main listener)');
    return undefined;
  }
  const adminPort = integer(env, 'ADMIN_PORT', DEFAULT_ADMIN_PORT, 0, 65535);
  // Port 0 asks the system for a free port: two of them never clash.
  if (adminPort !== 0 && adminPort === port) fail('ADMIN_PORT', `must differ from PORT (both ${port})`);
  return Object.freeze({ port: adminPort, host: address(env, 'ADMIN_HOST', '127.0.0.1') });
}

/** WEBHOOK_ALLOWED_PORTS: comma-separated ports; 443 is always allowed. */
function ports(env: Env): number[] {
  const raw = env.WEBHOOK_ALLOWED_PORTS ?? '';
  const list = raw.split(',').map((s) => s.trim()).filter(Boolean);
  if (list.length > 64) fail('WEBHOOK_ALLOWED_PORTS', `must list at most 64 ports (got ${list.length})`);
  for (const port of list) {
    if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
      fail('WEBHOOK_ALLOWED_PORTS', `must be a comma-separated list of ports from 1 to 65535 (got ${quote(port)})`);
    }
  }
  return [...new Set([443, ...list.map(Number)])];
}

function proxies(env: Env): string[] {
  const raw = env.TRUSTED_PROXIES ?? '127.0.0.1,::1';
  const list = raw.split(',').map((s) => s.trim()).filter(Boolean);
  for (const address of list) {
    if (!isIP(address)) fail('TRUSTED_PROXIES', `must be a comma-separated list of IP addresses (got ${quote(address)})`);
  }
  return list;
}

const KEY_ENCRYPTION_KEY_BYTES = 32;

/** 32 bytes in base64 (standard or URL-safe alphabet, padding optional). */
function keyEncryptionKey(env: Env, production: boolean): Buffer | undefined {
  const raw = env.KEY_ENCRYPTION_KEY?.trim();
  const hint = '32 bytes in base64, e.g. from `openssl rand -base64 32`';
  if (!raw) {
    if (production) fail('KEY_ENCRYPTION_KEY', `is required when PIX_MODE=production (${hint})`);
    return undefined;
  }
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(raw)) fail('KEY_ENCRYPTION_KEY', `must be ${hint}; it is not base64`);
  const key = Buffer.from(raw, raw.includes('-') || raw.includes('_') ? 'base64url' : 'base64');
  if (key.length !== KEY_ENCRYPTION_KEY_BYTES) fail('KEY_ENCRYPTION_KEY', `must be ${hint} (got ${key.length} bytes)`);
  return key;
}

/** BCB's DICT anti-scan policy by default: 100 tokens and 2 a minute for natural persons, 1,000 and 20 for legal entities. */
function directoryLimits(env: Env): DirectoryLimits {
  const MAX = 1_000_000;
  const bucket = (holder: 'CPF' | 'CNPJ', capacity: number, refillPerMinute: number) =>
    Object.freeze({
      capacity: integer(env, `DIRECTORY_${holder}_TOKENS`, capacity, 1, MAX),
      refillPerMinute: integer(env, `DIRECTORY_${holder}_REFILL_PER_MINUTE`, refillPerMinute, 1, MAX),
    });
  const cpf = bucket('CPF', 100, 2);
  const cnpj = bucket('CNPJ', 1000, 20);
  const lookupCost = integer(env, 'DIRECTORY_LOOKUP_COST', 1, 1, Math.min(cpf.capacity, cnpj.capacity));
  const missCost = integer(env, 'DIRECTORY_MISS_COST', 20, lookupCost, MAX);
  return Object.freeze({ cpf, cnpj, lookupCost, missCost });
}

function windowDays(env: Env): 'calendar' | 'business' {
  const raw = env.AUTOMATICO_WINDOW_DAYS;
  if (raw === undefined || raw === '') return 'calendar';
  if (raw !== 'calendar' && raw !== 'business') fail('AUTOMATICO_WINDOW_DAYS', `must be calendar or business (got ${quote(raw)})`);
  return raw;
}

export function loadConfig(env: Env = process.env): Config {
  const mode = env.PIX_MODE ?? 'sandbox';
  if (mode !== 'sandbox' && mode !== 'production') fail('PIX_MODE', `must be sandbox or production (got ${quote(mode)})`);
  const production = mode === 'production';
  const databaseUrl = postgresUrl(env, 'DATABASE_URL');
  if (production && !databaseUrl) {
    fail('DATABASE_URL', 'is required when PIX_MODE=production (the embedded database never fsyncs)');
  }
  const adminTokenRaw = env.ADMIN_TOKEN;
  if (production && !adminTokenRaw) fail('ADMIN_TOKEN', 'is required when PIX_MODE=production');
  if (adminTokenRaw !== undefined && adminTokenRaw !== '' && adminTokenRaw.length < 16) {
    fail('ADMIN_TOKEN', 'must be at least 16 characters');
  }
  const ispb = env.PSP_ISPB ?? '99999999';
  if (!/^\d{8}$/.test(ispb)) fail('PSP_ISPB', `must be 8 digits (got ${quote(ispb)})`);
  const host = address(env, 'HOST', production ? '0.0.0.0' : '127.0.0.1');
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const admin = adminListener(env, production, port);
  const certFile = file(env, 'TLS_CERT_FILE');
  const keyFile = file(env, 'TLS_KEY_FILE');
  if (Boolean(certFile) !== Boolean(keyFile)) fail(certFile ? 'TLS_KEY_FILE' : 'TLS_CERT_FILE', 'must be set together with the other TLS file');
  const clientCaFile = file(env, 'TLS_CLIENT_CA_FILE');
  if (clientCaFile && !certFile) fail('TLS_CLIENT_CA_FILE', 'needs TLS_CERT_FILE and TLS_KEY_FILE');

  return Object.freeze({
    port,
    host,
    admin,
    workerAdmin: env.ADMIN_PORT !== undefined && env.ADMIN_PORT !== '' ? admin : undefined,
    databaseUrl,
    databasePoolSize: integer(env, 'DATABASE_POOL_SIZE', 10, 1, 1000),
    databaseQueueTimeoutMs: integer(env, 'DATABASE_QUEUE_TIMEOUT_MS', 1000, 1, 600_000),
    databaseListPoolSize: integer(env, 'DATABASE_LIST_POOL_SIZE', 4, 1, 1000),
    databaseListStatementTimeoutMs: integer(env, 'DATABASE_LIST_STATEMENT_TIMEOUT_MS', 2000, 1, 600_000),
    listConcurrencyPerAccount: integer(env, 'LIST_CONCURRENCY_PER_ACCOUNT', 1, 1, 1000),
    listQueueTimeoutMs: integer(env, 'LIST_QUEUE_TIMEOUT_MS', 1000, 0, 60_000),
    dataDir: env.DATA_DIR || './data',
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    mode,
    adminToken: adminTokenRaw || randomToken(24),
    adminTokenGenerated: !adminTokenRaw,
    pspIspb: ispb,
    webhookAllowPrivate: boolean(env, 'WEBHOOK_ALLOW_PRIVATE', !production),
    webhookAllowedPorts: Object.freeze(ports(env)),
    webhookCaFile: file(env, 'WEBHOOK_CA_FILE'),
    webhookClient: webhookClient(env),
    settlementDelayMs: integer(env, 'SETTLEMENT_DELAY_MS', 1000, 0, 86_400_000),
    automaticoWindowDays: windowDays(env),
    trustedProxies: Object.freeze(proxies(env)),
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 100, 600_000),
    maxConnectionsPerSource: integer(env, 'MAX_CONNECTIONS_PER_SOURCE', 64, 0, 1_000_000),
    tls: certFile && keyFile ? Object.freeze({ certFile, keyFile, clientCaFile }) : undefined,
    keyEncryptionKey: keyEncryptionKey(env, production),
    directoryLimits: directoryLimits(env),
    publicUrl: publicUrl(env, host, port, Boolean(certFile && keyFile), production),
    qrSigning: qrSigning(env),
  });
}
