import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import fc from 'fast-check';
import { ConfigError, loadConfig } from './config.ts';

type Env = Record<string, string | undefined>;

/** Files that exist (this test file) and do not, for the *_FILE variables. */
const EXISTING_FILE = import.meta.filename;
const DIRECTORY = import.meta.dirname;
const MISSING_FILE = join(import.meta.dirname, `missing-${randomUUID()}.pem`);

const PRODUCTION: Env = {
  PIX_MODE: 'production',
  DATABASE_URL: 'postgres://pix:secret@db.internal:5432/pix',
  ADMIN_TOKEN: 'a-long-enough-admin-token-0123456789',
  KEY_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
  PUBLIC_URL: 'https://pix.example.com.br',
};

/** Runs loadConfig expecting a ConfigError naming `variable` first, on one line; returns the message. */
function configError(env: Env, variable: string): string {
  let error: unknown;
  try {
    loadConfig(env);
  } catch (caught) {
    error = caught;
  }
  assert.ok(error instanceof ConfigError, `${JSON.stringify(env)} should throw a ConfigError, got ${String(error)}`);
  assert.equal(error.name, 'ConfigError');
  assert.ok(error.message.startsWith(`${variable} `), `"${error.message}" should start with ${variable}`);
  assert.doesNotMatch(error.message, /[\r\n]/, 'the message is one line');
  return error.message;
}

describe('loadConfig defaults', () => {
  test('an empty environment gives the documented sandbox defaults', () => {
    const config = loadConfig({});
    assert.equal(config.port, 8080);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.dataDir, './data');
    assert.equal(config.redisUrl, undefined);
    assert.equal(config.mode, 'sandbox');
    assert.equal(config.pspIspb, '99999999');
    assert.equal(config.webhookAllowPrivate, true, 'sandbox: the developer\'s receiver runs beside the service');
    assert.deepEqual(config.webhookAllowedPorts, [443]);
    assert.equal(config.webhookCaFile, undefined);
    assert.equal(config.settlementDelayMs, 1000);
    assert.deepEqual(config.trustedProxies, ['127.0.0.1', '::1']);
    assert.equal(config.requestTimeoutMs, 30_000);
    assert.equal(config.maxConnectionsPerSource, 64);
    assert.equal(config.tls, undefined);
    // BCB's DICT anti-scan policy.
    assert.deepEqual(config.directoryLimits, {
      cpf: { capacity: 100, refillPerMinute: 2 },
      cnpj: { capacity: 1000, refillPerMinute: 20 },
      lookupCost: 1,
      missCost: 20,
    });
  });

  test('the directory limits are read', () => {
    const config = loadConfig({
      DIRECTORY_CPF_TOKENS: '10',
      DIRECTORY_CPF_REFILL_PER_MINUTE: '60',
      DIRECTORY_CNPJ_TOKENS: '5000',
      DIRECTORY_CNPJ_REFILL_PER_MINUTE: '600',
      DIRECTORY_LOOKUP_COST: '2',
      DIRECTORY_MISS_COST: '2',
    });
    assert.deepEqual(config.directoryLimits, {
      cpf: { capacity: 10, refillPerMinute: 60 },
      cnpj: { capacity: 5000, refillPerMinute: 600 },
      lookupCost: 2,
      missCost: 2,
    });
    assert.ok(Object.isFrozen(config.directoryLimits) && Object.isFrozen(config.directoryLimits.cpf));
  });

  test('without ADMIN_TOKEN the sandbox generates a fresh random one and says so', () => {
    const first = loadConfig({});
    const second = loadConfig({});
    assert.equal(first.adminTokenGenerated, true);
    assert.ok(first.adminToken.length >= 16, first.adminToken);
    assert.match(first.adminToken, /^[A-Za-z0-9_-]+$/);
    assert.notEqual(first.adminToken, second.adminToken);
  });

  test('a given ADMIN_TOKEN is used as is', () => {
    const config = loadConfig({ ADMIN_TOKEN: '0123456789abcdef' });
    assert.equal(config.adminToken, '0123456789abcdef');
    assert.equal(config.adminTokenGenerated, false);
  });

  test('production listens on 0.0.0.0 by default and keeps the other defaults', () => {
    const config = loadConfig(PRODUCTION);
    assert.equal(config.mode, 'production');
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.port, 8080);
    assert.equal(config.databaseUrl, PRODUCTION.DATABASE_URL);
    assert.equal(config.adminToken, PRODUCTION.ADMIN_TOKEN);
    assert.equal(config.adminTokenGenerated, false);
    assert.equal(config.pspIspb, '99999999');
    assert.deepEqual(config.trustedProxies, ['127.0.0.1', '::1']);
    assert.equal(config.webhookAllowPrivate, false, 'production: public destinations only, unless the operator allows');
    assert.deepEqual(config.webhookAllowedPorts, [443]);
    assert.equal(loadConfig({ ...PRODUCTION, WEBHOOK_ALLOW_PRIVATE: 'true' }).webhookAllowPrivate, true);
  });

  test('WEBHOOK_ALLOWED_PORTS adds ports to 443, once each', () => {
    assert.deepEqual(loadConfig({ WEBHOOK_ALLOWED_PORTS: '8443, 9443,8443' }).webhookAllowedPorts, [443, 8443, 9443]);
    assert.deepEqual(loadConfig({ WEBHOOK_ALLOWED_PORTS: '443' }).webhookAllowedPorts, [443]);
    assert.deepEqual(loadConfig({ WEBHOOK_ALLOWED_PORTS: '' }).webhookAllowedPorts, [443]);
  });

  test('empty values count as unset where a default exists', () => {
    const config = loadConfig({
      PORT: '', HOST: '', DATA_DIR: '', DATABASE_URL: '', REDIS_URL: '', SETTLEMENT_DELAY_MS: '',
      DATABASE_POOL_SIZE: '', DATABASE_QUEUE_TIMEOUT_MS: '', DATABASE_LIST_POOL_SIZE: '', DATABASE_LIST_STATEMENT_TIMEOUT_MS: '',
      LIST_CONCURRENCY_PER_ACCOUNT: '', LIST_QUEUE_TIMEOUT_MS: '', WEBHOOK_ALLOW_PRIVATE: '', WEBHOOK_CA_FILE: '', TLS_CERT_FILE: '', TLS_KEY_FILE: '', TLS_CLIENT_CA_FILE: '',
    });
    assert.equal(config.port, 8080);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.dataDir, './data');
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.redisUrl, undefined);
    assert.equal(config.settlementDelayMs, 1000);
    assert.equal(config.databasePoolSize, 10);
    assert.equal(config.databaseQueueTimeoutMs, 1000);
    assert.equal(config.databaseListPoolSize, 4);
    assert.equal(config.databaseListStatementTimeoutMs, 2000);
    assert.equal(config.listConcurrencyPerAccount, 1);
    assert.equal(config.listQueueTimeoutMs, 1000);
    assert.equal(config.webhookAllowPrivate, true);
    assert.equal(config.webhookCaFile, undefined);
    assert.equal(config.tls, undefined);
    assert.equal(config.adminTokenGenerated, true);
  });
});

describe('loadConfig explicit values', () => {
  test('every variable is read', () => {
    const config = loadConfig({
      PORT: '3000',
      HOST: '::',
      DATA_DIR: '/var/lib/pix',
      DATABASE_URL: 'postgresql://localhost/pix',
      DATABASE_POOL_SIZE: '40',
      DATABASE_QUEUE_TIMEOUT_MS: '250',
      DATABASE_LIST_POOL_SIZE: '6',
      DATABASE_LIST_STATEMENT_TIMEOUT_MS: '5000',
      LIST_CONCURRENCY_PER_ACCOUNT: '3',
      LIST_QUEUE_TIMEOUT_MS: '0',
      REDIS_URL: 'rediss://cache.internal:6380',
      PIX_MODE: 'sandbox',
      ADMIN_TOKEN: 'admin-token-admin-token',
      PSP_ISPB: '12345678',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_ALLOWED_PORTS: '8443',
      WEBHOOK_CA_FILE: EXISTING_FILE,
      SETTLEMENT_DELAY_MS: '0',
      TRUSTED_PROXIES: ' 10.0.0.1 , fd00::1 ,',
      REQUEST_TIMEOUT_MS: '5000',
      MAX_CONNECTIONS_PER_SOURCE: '0',
      TLS_CERT_FILE: EXISTING_FILE,
      TLS_KEY_FILE: EXISTING_FILE,
      TLS_CLIENT_CA_FILE: EXISTING_FILE,
    });
    assert.equal(config.port, 3000);
    assert.equal(config.host, '::');
    assert.equal(config.dataDir, '/var/lib/pix');
    assert.equal(config.databaseUrl, 'postgresql://localhost/pix');
    assert.equal(config.databasePoolSize, 40);
    assert.equal(config.databaseQueueTimeoutMs, 250);
    assert.equal(config.databaseListPoolSize, 6);
    assert.equal(config.databaseListStatementTimeoutMs, 5000);
    assert.equal(config.listConcurrencyPerAccount, 3);
    assert.equal(config.listQueueTimeoutMs, 0);
    assert.equal(config.redisUrl, 'rediss://cache.internal:6380');
    assert.equal(config.pspIspb, '12345678');
    assert.equal(config.webhookAllowPrivate, true);
    assert.deepEqual(config.webhookAllowedPorts, [443, 8443]);
    assert.equal(config.webhookCaFile, EXISTING_FILE);
    assert.equal(config.settlementDelayMs, 0);
    assert.deepEqual(config.trustedProxies, ['10.0.0.1', 'fd00::1']);
    assert.equal(config.requestTimeoutMs, 5000);
    assert.equal(config.maxConnectionsPerSource, 0);
    assert.deepEqual(config.tls, { certFile: EXISTING_FILE, keyFile: EXISTING_FILE, clientCaFile: EXISTING_FILE });
  });

  test('booleans accept true/false and 1/0', () => {
    assert.equal(loadConfig({ WEBHOOK_ALLOW_PRIVATE: '1' }).webhookAllowPrivate, true);
    assert.equal(loadConfig({ WEBHOOK_ALLOW_PRIVATE: 'false' }).webhookAllowPrivate, false);
    assert.equal(loadConfig({ WEBHOOK_ALLOW_PRIVATE: '0' }).webhookAllowPrivate, false);
  });

  test('HOST may be localhost; redis: and postgres: URLs are accepted; TLS without a client CA', () => {
    const config = loadConfig({
      HOST: 'localhost',
      REDIS_URL: 'redis://127.0.0.1:6379/0',
      DATABASE_URL: 'postgres://u@h/d',
      TLS_CERT_FILE: EXISTING_FILE,
      TLS_KEY_FILE: EXISTING_FILE,
    });
    assert.equal(config.host, 'localhost');
    assert.equal(config.redisUrl, 'redis://127.0.0.1:6379/0');
    assert.deepEqual(config.tls, { certFile: EXISTING_FILE, keyFile: EXISTING_FILE, clientCaFile: undefined });
  });

  test('an empty TRUSTED_PROXIES trusts no proxy', () => {
    assert.deepEqual(loadConfig({ TRUSTED_PROXIES: '' }).trustedProxies, []);
  });

  test('any port from 0 to 65535 is read as that number', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 65535 }), (port) => loadConfig({ PORT: String(port) }).port === port), { numRuns: 200 });
  });

  test('any PORT that is not a plain integer in range is refused, naming PORT', () => {
    const notAPort = fc.oneof(
      fc.integer({ min: 65536, max: 2 ** 40 }).map(String),
      fc.integer({ min: -65535, max: -1 }).map(String),
      fc.string({ minLength: 1, maxLength: 8 }).filter((s) => !/^\d+$/.test(s)),
    );
    fc.assert(fc.property(notAPort, (port) => void configError({ PORT: port }, 'PORT')), { numRuns: 200 });
  });
});

describe('loadConfig refuses bad values with one line naming the variable', () => {
  const cases: [string, Env, string][] = [
    ['PORT=abc', { PORT: 'abc' }, 'PORT'],
    ['PORT=70000', { PORT: '70000' }, 'PORT'],
    ['PORT=-1', { PORT: '-1' }, 'PORT'],
    ['PORT=80.5', { PORT: '80.5' }, 'PORT'],
    ['PORT with a newline', { PORT: '80\n80' }, 'PORT'],
    ['PIX_MODE=x', { PIX_MODE: 'x' }, 'PIX_MODE'],
    ['PIX_MODE=Production', { PIX_MODE: 'Production' }, 'PIX_MODE'],
    ['DATABASE_URL=mysql://x', { DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    ['DATABASE_URL not a URL', { DATABASE_URL: 'not a url' }, 'DATABASE_URL'],
    ['PSP_ISPB=123', { PSP_ISPB: '123' }, 'PSP_ISPB'],
    ['PSP_ISPB=1234567a', { PSP_ISPB: '1234567a' }, 'PSP_ISPB'],
    ['PSP_ISPB with a newline', { PSP_ISPB: '1234\n5678' }, 'PSP_ISPB'],
    ['TRUSTED_PROXIES=foo', { TRUSTED_PROXIES: 'foo' }, 'TRUSTED_PROXIES'],
    ['TRUSTED_PROXIES with a CIDR', { TRUSTED_PROXIES: '127.0.0.1,10.0.0.0/8' }, 'TRUSTED_PROXIES'],
    ['WEBHOOK_ALLOW_PRIVATE=maybe', { WEBHOOK_ALLOW_PRIVATE: 'maybe' }, 'WEBHOOK_ALLOW_PRIVATE'],
    ['WEBHOOK_ALLOW_PRIVATE=yes', { WEBHOOK_ALLOW_PRIVATE: 'yes' }, 'WEBHOOK_ALLOW_PRIVATE'],
    ['WEBHOOK_ALLOWED_PORTS=0', { WEBHOOK_ALLOWED_PORTS: '0' }, 'WEBHOOK_ALLOWED_PORTS'],
    ['WEBHOOK_ALLOWED_PORTS=65536', { WEBHOOK_ALLOWED_PORTS: '443,65536' }, 'WEBHOOK_ALLOWED_PORTS'],
    ['WEBHOOK_ALLOWED_PORTS with a range', { WEBHOOK_ALLOWED_PORTS: '8000-9000' }, 'WEBHOOK_ALLOWED_PORTS'],
    ['WEBHOOK_ALLOWED_PORTS=https', { WEBHOOK_ALLOWED_PORTS: 'https' }, 'WEBHOOK_ALLOWED_PORTS'],
    ['SETTLEMENT_DELAY_MS=-1', { SETTLEMENT_DELAY_MS: '-1' }, 'SETTLEMENT_DELAY_MS'],
    ['SETTLEMENT_DELAY_MS=1.5', { SETTLEMENT_DELAY_MS: '1.5' }, 'SETTLEMENT_DELAY_MS'],
    ['SETTLEMENT_DELAY_MS over a day', { SETTLEMENT_DELAY_MS: '86400001' }, 'SETTLEMENT_DELAY_MS'],
    ['REDIS_URL=http://x', { REDIS_URL: 'http://x' }, 'REDIS_URL'],
    ['DATABASE_POOL_SIZE=0', { DATABASE_POOL_SIZE: '0' }, 'DATABASE_POOL_SIZE'],
    ['DATABASE_POOL_SIZE=ten', { DATABASE_POOL_SIZE: 'ten' }, 'DATABASE_POOL_SIZE'],
    ['DATABASE_QUEUE_TIMEOUT_MS=0 (a request would never wait)', { DATABASE_QUEUE_TIMEOUT_MS: '0' }, 'DATABASE_QUEUE_TIMEOUT_MS'],
    ['DATABASE_QUEUE_TIMEOUT_MS over ten minutes', { DATABASE_QUEUE_TIMEOUT_MS: '600001' }, 'DATABASE_QUEUE_TIMEOUT_MS'],
    ['DATABASE_LIST_POOL_SIZE=0', { DATABASE_LIST_POOL_SIZE: '0' }, 'DATABASE_LIST_POOL_SIZE'],
    ['DATABASE_LIST_STATEMENT_TIMEOUT_MS=0 (no limit at all)', { DATABASE_LIST_STATEMENT_TIMEOUT_MS: '0' }, 'DATABASE_LIST_STATEMENT_TIMEOUT_MS'],
    ['LIST_CONCURRENCY_PER_ACCOUNT=0', { LIST_CONCURRENCY_PER_ACCOUNT: '0' }, 'LIST_CONCURRENCY_PER_ACCOUNT'],
    ['LIST_QUEUE_TIMEOUT_MS over a minute', { LIST_QUEUE_TIMEOUT_MS: '60001' }, 'LIST_QUEUE_TIMEOUT_MS'],
    ['REQUEST_TIMEOUT_MS=0 (a request would never have to arrive)', { REQUEST_TIMEOUT_MS: '0' }, 'REQUEST_TIMEOUT_MS'],
    ['MAX_CONNECTIONS_PER_SOURCE=-1', { MAX_CONNECTIONS_PER_SOURCE: '-1' }, 'MAX_CONNECTIONS_PER_SOURCE'],
    ['HOST=example.com', { HOST: 'example.com' }, 'HOST'],
    ['ADMIN_TOKEN too short', { ADMIN_TOKEN: 'short' }, 'ADMIN_TOKEN'],
    ['TLS_CERT_FILE without TLS_KEY_FILE', { TLS_CERT_FILE: EXISTING_FILE }, 'TLS_KEY_FILE'],
    ['TLS_KEY_FILE without TLS_CERT_FILE', { TLS_KEY_FILE: EXISTING_FILE }, 'TLS_CERT_FILE'],
    ['TLS_CERT_FILE missing', { TLS_CERT_FILE: MISSING_FILE, TLS_KEY_FILE: EXISTING_FILE }, 'TLS_CERT_FILE'],
    ['TLS_CERT_FILE a directory', { TLS_CERT_FILE: DIRECTORY, TLS_KEY_FILE: EXISTING_FILE }, 'TLS_CERT_FILE'],
    ['TLS_KEY_FILE missing', { TLS_CERT_FILE: EXISTING_FILE, TLS_KEY_FILE: MISSING_FILE }, 'TLS_KEY_FILE'],
    ['TLS_CLIENT_CA_FILE without TLS', { TLS_CLIENT_CA_FILE: EXISTING_FILE }, 'TLS_CLIENT_CA_FILE'],
    ['TLS_CLIENT_CA_FILE missing', { TLS_CERT_FILE: EXISTING_FILE, TLS_KEY_FILE: EXISTING_FILE, TLS_CLIENT_CA_FILE: MISSING_FILE }, 'TLS_CLIENT_CA_FILE'],
    ['WEBHOOK_CA_FILE missing', { WEBHOOK_CA_FILE: MISSING_FILE }, 'WEBHOOK_CA_FILE'],
    ['DIRECTORY_CPF_TOKENS=0 (no look-up could ever pay)', { DIRECTORY_CPF_TOKENS: '0' }, 'DIRECTORY_CPF_TOKENS'],
    ['DIRECTORY_CNPJ_TOKENS over a million', { DIRECTORY_CNPJ_TOKENS: '1000001' }, 'DIRECTORY_CNPJ_TOKENS'],
    ['DIRECTORY_CPF_REFILL_PER_MINUTE=0 (a bucket that never refills)', { DIRECTORY_CPF_REFILL_PER_MINUTE: '0' }, 'DIRECTORY_CPF_REFILL_PER_MINUTE'],
    ['DIRECTORY_CNPJ_REFILL_PER_MINUTE=0.5', { DIRECTORY_CNPJ_REFILL_PER_MINUTE: '0.5' }, 'DIRECTORY_CNPJ_REFILL_PER_MINUTE'],
    ['DIRECTORY_LOOKUP_COST=0 (look-ups would be free)', { DIRECTORY_LOOKUP_COST: '0' }, 'DIRECTORY_LOOKUP_COST'],
    ['DIRECTORY_LOOKUP_COST above a bucket', { DIRECTORY_CPF_TOKENS: '5', DIRECTORY_LOOKUP_COST: '6' }, 'DIRECTORY_LOOKUP_COST'],
    ['DIRECTORY_MISS_COST below a look-up', { DIRECTORY_LOOKUP_COST: '3', DIRECTORY_MISS_COST: '2' }, 'DIRECTORY_MISS_COST'],
    ['WEBHOOK_CA_FILE under a file', { WEBHOOK_CA_FILE: join(EXISTING_FILE, 'ca.pem') }, 'WEBHOOK_CA_FILE'],
    ['ADMIN_PORT=admin', { ADMIN_PORT: 'admin' }, 'ADMIN_PORT'],
    ['ADMIN_PORT=70000', { ADMIN_PORT: '70000' }, 'ADMIN_PORT'],
    ['ADMIN_PORT equal to PORT', { PORT: '9000', ADMIN_PORT: '9000' }, 'ADMIN_PORT'],
    ['ADMIN_PORT the default PORT', { ADMIN_PORT: '8080' }, 'ADMIN_PORT'],
    ['ADMIN_HOST without ADMIN_PORT in the sandbox', { ADMIN_HOST: '127.0.0.1' }, 'ADMIN_HOST'],
    ['ADMIN_HOST=example.com', { ADMIN_PORT: '9001', ADMIN_HOST: 'example.com' }, 'ADMIN_HOST'],
  ];
  for (const [name, env, variable] of cases) {
    test(name, () => void configError(env, variable));
  }

  test('a missing file is named in the message', () => {
    assert.ok(configError({ TLS_CERT_FILE: MISSING_FILE, TLS_KEY_FILE: EXISTING_FILE }, 'TLS_CERT_FILE').includes(MISSING_FILE));
  });

  test('secrets in bad values are not echoed', () => {
    assert.doesNotMatch(configError({ DATABASE_URL: 'mysql://pix:s3cr3t@db/pix' }, 'DATABASE_URL'), /s3cr3t/);
    assert.doesNotMatch(configError({ REDIS_URL: 'http://:s3cr3t@cache' }, 'REDIS_URL'), /s3cr3t/);
    assert.doesNotMatch(configError({ ADMIN_TOKEN: 's3cr3t' }, 'ADMIN_TOKEN'), /s3cr3t/);
  });
});

describe('loadConfig in production', () => {
  test('DATABASE_URL is required', () => {
    configError({ ...PRODUCTION, DATABASE_URL: undefined }, 'DATABASE_URL');
    configError({ ...PRODUCTION, DATABASE_URL: '' }, 'DATABASE_URL');
  });

  test('ADMIN_TOKEN is required, never generated', () => {
    configError({ ...PRODUCTION, ADMIN_TOKEN: undefined }, 'ADMIN_TOKEN');
    configError({ ...PRODUCTION, ADMIN_TOKEN: '' }, 'ADMIN_TOKEN');
  });

  test('HOST can still be set explicitly', () => {
    assert.equal(loadConfig({ ...PRODUCTION, HOST: '10.1.2.3' }).host, '10.1.2.3');
  });

  test('the operator API is on its own listener, 127.0.0.1:8081 unless ADMIN_PORT and ADMIN_HOST say otherwise', () => {
    assert.deepEqual(loadConfig(PRODUCTION).admin, { port: 8081, host: '127.0.0.1' });
    assert.deepEqual(loadConfig({ ...PRODUCTION, ADMIN_PORT: '9443', ADMIN_HOST: '10.0.0.5' }).admin, { port: 9443, host: '10.0.0.5' });
    assert.deepEqual(loadConfig({ ...PRODUCTION, ADMIN_HOST: '::1' }).admin, { port: 8081, host: '::1' });
    // Whatever PORT is: a PORT of 8081 asks for another ADMIN_PORT.
    configError({ ...PRODUCTION, PORT: '8081' }, 'ADMIN_PORT');
  });

  test('PUBLIC_URL is required in production, and https: payers fetch payload locations there', () => {
    const { PUBLIC_URL: _given, ...without } = PRODUCTION;
    assert.match(configError(without, 'PUBLIC_URL'), /required when PIX_MODE=production/);
    assert.match(configError({ ...PRODUCTION, PUBLIC_URL: 'http://pix.example.com.br' }, 'PUBLIC_URL'), /https/);
    assert.equal(loadConfig(PRODUCTION).publicUrl, 'https://pix.example.com.br');
    assert.equal(loadConfig({ PUBLIC_URL: 'http://127.0.0.1:8080' }).publicUrl, 'http://127.0.0.1:8080', 'the sandbox takes http');
  });

  test('a worker binds the operator listener only when ADMIN_PORT is set: beside a serve on the defaults it binds nothing', () => {
    assert.equal(loadConfig(PRODUCTION).workerAdmin, undefined);
    assert.equal(loadConfig({ ...PRODUCTION, ADMIN_PORT: '' }).workerAdmin, undefined);
    assert.deepEqual(loadConfig({ ...PRODUCTION, ADMIN_PORT: '9443', ADMIN_HOST: '10.0.0.5' }).workerAdmin, { port: 9443, host: '10.0.0.5' });
    assert.deepEqual(loadConfig({ ADMIN_PORT: '0' }).workerAdmin, { port: 0, host: '127.0.0.1' });
    assert.equal(loadConfig({}).workerAdmin, undefined);
  });
});

describe('loadConfig: the operator listener in the sandbox', () => {
  test('without ADMIN_PORT, /admin/* is on the main listener', () => {
    assert.equal(loadConfig({}).admin, undefined);
    assert.equal(loadConfig({ ADMIN_PORT: '' }).admin, undefined);
  });

  test('with ADMIN_PORT, a listener of its own, on 127.0.0.1 unless ADMIN_HOST says otherwise', () => {
    assert.deepEqual(loadConfig({ ADMIN_PORT: '9000' }).admin, { port: 9000, host: '127.0.0.1' });
    assert.deepEqual(loadConfig({ ADMIN_PORT: '9000', ADMIN_HOST: '0.0.0.0' }).admin, { port: 9000, host: '0.0.0.0' });
    // Port 0 (a free port the system picks) may be asked for both.
    assert.deepEqual(loadConfig({ PORT: '0', ADMIN_PORT: '0' }).admin, { port: 0, host: '127.0.0.1' });
    assert.ok(Object.isFrozen(loadConfig({ ADMIN_PORT: '9000' }).admin));
  });
});

describe('the returned config is frozen', () => {
  test('top level, proxy list and TLS settings cannot change', () => {
    const config = loadConfig({ TLS_CERT_FILE: EXISTING_FILE, TLS_KEY_FILE: EXISTING_FILE });
    assert.ok(Object.isFrozen(config));
    assert.ok(Object.isFrozen(config.trustedProxies));
    assert.ok(Object.isFrozen(config.tls));
    assert.throws(() => {
      (config as { port: number }).port = 1;
    }, TypeError);
    assert.throws(() => (config.trustedProxies as string[]).push('10.0.0.1'), TypeError);
    assert.throws(() => {
      (config.tls as { certFile: string }).certFile = '/etc/passwd';
    }, TypeError);
    assert.equal(config.port, 8080);
    assert.deepEqual(config.trustedProxies, ['127.0.0.1', '::1']);
    assert.equal(config.tls?.certFile, EXISTING_FILE);
  });
});
