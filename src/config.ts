import { statSync } from 'node:fs';
import { isIP } from 'node:net';
import { randomToken } from './lib/ids.ts';

/** The environment, parsed once into a typed, frozen object (operations-and-sandbox.md). */
export interface Config {
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string | undefined;
  /** PostgreSQL connections of the API in each process (the worker has a few of its own). */
  readonly databasePoolSize: number;
  /** How long a request may wait for one of them before it is answered 503. */
  readonly databaseQueueTimeoutMs: number;
  readonly dataDir: string;
  readonly redisUrl: string | undefined;
  readonly mode: 'sandbox' | 'production';
  readonly adminToken: string;
  /** True when ADMIN_TOKEN was generated at start (sandbox), so it is printed. */
  readonly adminTokenGenerated: boolean;
  readonly pspIspb: string;
  readonly webhookAllowPrivate: boolean;
  readonly webhookCaFile: string | undefined;
  readonly settlementDelayMs: number;
  readonly trustedProxies: readonly string[];
  readonly tls: { readonly certFile: string; readonly keyFile: string; readonly clientCaFile: string | undefined } | undefined;
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

function proxies(env: Env): string[] {
  const raw = env.TRUSTED_PROXIES ?? '127.0.0.1,::1';
  const list = raw.split(',').map((s) => s.trim()).filter(Boolean);
  for (const address of list) {
    if (!isIP(address)) fail('TRUSTED_PROXIES', `must be a comma-separated list of IP addresses (got ${quote(address)})`);
  }
  return list;
}

export function loadConfig(env: Env = process.env): Config {
  const mode = env.PIX_MODE ?? 'sandbox';
  if (mode !== 'sandbox' && mode !== 'production') fail('PIX_MODE', `must be sandbox or production (got ${quote(mode)})`);
  const production = mode === 'production';
  const databaseUrl = url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
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
  const host = env.HOST || (production ? '0.0.0.0' : '127.0.0.1');
  if (!isIP(host) && host !== 'localhost') fail('HOST', `must be an IP address or localhost (got ${quote(host)})`);
  const certFile = file(env, 'TLS_CERT_FILE');
  const keyFile = file(env, 'TLS_KEY_FILE');
  if (Boolean(certFile) !== Boolean(keyFile)) fail(certFile ? 'TLS_KEY_FILE' : 'TLS_CERT_FILE', 'must be set together with the other TLS file');
  const clientCaFile = file(env, 'TLS_CLIENT_CA_FILE');
  if (clientCaFile && !certFile) fail('TLS_CLIENT_CA_FILE', 'needs TLS_CERT_FILE and TLS_KEY_FILE');

  return Object.freeze({
    port: integer(env, 'PORT', 8080, 0, 65535),
    host,
    databaseUrl,
    databasePoolSize: integer(env, 'DATABASE_POOL_SIZE', 10, 1, 1000),
    databaseQueueTimeoutMs: integer(env, 'DATABASE_QUEUE_TIMEOUT_MS', 1000, 1, 600_000),
    dataDir: env.DATA_DIR || './data',
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    mode,
    adminToken: adminTokenRaw || randomToken(24),
    adminTokenGenerated: !adminTokenRaw,
    pspIspb: ispb,
    webhookAllowPrivate: boolean(env, 'WEBHOOK_ALLOW_PRIVATE', false),
    webhookCaFile: file(env, 'WEBHOOK_CA_FILE'),
    settlementDelayMs: integer(env, 'SETTLEMENT_DELAY_MS', 1000, 0, 86_400_000),
    trustedProxies: Object.freeze(proxies(env)),
    tls: certFile && keyFile ? Object.freeze({ certFile, keyFile, clientCaFile }) : undefined,
  });
}
