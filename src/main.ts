import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import { runOperatorCommand, OPERATOR_USAGE, UsageError } from './cli.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { openDatabase, DatabaseInUse, type Database } from './db/client.ts';
import { migrate } from './db/migrate.ts';
import { AppError } from './http/errors.ts';
import { systemClock } from './lib/clock.ts';
import { DEMO_OPENING_CENTAVOS, ensureDemoAccount, type DemoCredentials } from './modules/admin/demo.ts';
import { formatCentavos } from './lib/money.ts';
import { loggerOptions } from './http/logging.ts';
import { WebhookSender } from './modules/webhooks/sender.ts';
import { Worker, type WorkerOptions } from './worker/worker.ts';
import { pino } from 'pino';

const USAGE = `Usage: pix-api <command>
  serve            start the API and the settlement worker (default; migrations run first)
  worker           start only the settlement worker (scale-out on PostgreSQL)
  migrate          apply database migrations and exit
${OPERATOR_USAGE}`;

async function open(config: Config): Promise<Database> {
  const database = await openDatabase({
    url: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
    queueTimeoutMs: config.databaseQueueTimeoutMs,
  });
  await migrate(database.db);
  return database;
}

/**
 * The worker's connections: its rounds (settlement, deliveries, housekeeping, maintenance) run
 * a query or two at a time and must neither wait behind the API's requests when those pile up
 * nor be refused when they wait too long. The embedded database is one session: shared.
 */
const WORKER_POOL_SIZE = 5;
async function openForWorker(config: Config, api: Database | null): Promise<Database> {
  if (api && api.kind === 'pglite') return { ...api, close: async () => undefined };
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, poolSize: WORKER_POOL_SIZE, applicationName: 'pix-api-worker' });
  if (!api) await migrate(database.db);
  return database;
}

function banner(config: Config, address: string, demo: { created: boolean; demo: DemoCredentials } | null): string {
  const lines = [`Pix API (${config.mode}) listening on ${address}   docs: ${address}/docs`];
  lines.push(config.databaseUrl ? 'Database: PostgreSQL (DATABASE_URL)' : `Database: embedded PGlite in ${config.dataDir}/pgdata (sandbox only: it never fsyncs)`);
  if (config.adminTokenGenerated) lines.push(`ADMIN_TOKEN for /admin/* and /sandbox/* (this run only): ${config.adminToken}`);
  if (demo) {
    const d = demo.demo;
    lines.push(
      `Demo account ${d.accountId} (branch ${d.branch}, account ${d.accountNumber}, opened with R$ ${formatCentavos(DEMO_OPENING_CENTAVOS)}), Pix keys: ${d.pixKeys.map((k) => k.key).join(', ')}`,
      `  clientId:     ${d.clientId}`,
      demo.created ? `  clientSecret: ${d.clientSecret}` : `  clientSecret: in ${config.dataDir}/demo/credentials.json`,
      `  certificate:  ${d.certificateFile} (key ${d.privateKeyFile}; URL-encoded for X-SSL-Client-Cert: ${d.urlEncodedCertificateFile})`,
      `  token:        curl -s -X POST ${address}/api/auth/token -H 'content-type: application/json' \\`,
      `                  -H "x-ssl-client-cert: $(cat ${d.urlEncodedCertificateFile})" -d @${d.tokenRequestFile}`,
    );
  }
  return lines.join('\n');
}

function startWorker(config: Config, database: Database, log: WorkerOptions['log']): Worker {
  const worker = new Worker({
    db: database.db,
    clock: systemClock,
    ispb: config.pspIspb,
    settlementDelayMs: config.settlementDelayMs,
    log,
    listenUrl: config.databaseUrl,
    maintenance: { kind: database.kind },
    webhookSender: new WebhookSender({ allowPrivate: config.webhookAllowPrivate, caFile: config.webhookCaFile }),
  });
  worker.start();
  return worker;
}

async function serve(config: Config): Promise<void> {
  const database = await open(config);
  const demo = config.mode === 'sandbox' ? await ensureDemoAccount(database.db, config.dataDir, config.pspIspb) : null;
  const worker: { current?: Worker } = {};
  const app = await buildApp({
    config,
    db: database.db,
    clock: systemClock,
    logLevel: process.env.LOG_LEVEL ?? 'info',
    wakeWorker: () => worker.current?.wake(),
  });
  const workerDatabase = await openForWorker(config, database);
  worker.current = startWorker(config, workerDatabase, app.log);
  const address = await app.listen({ port: config.port, host: config.host });
  process.stdout.write(`${banner(config, address, demo)}\n`);
  installShutdown(app, [database, workerDatabase], worker.current);
}

async function workerOnly(config: Config): Promise<void> {
  const database = await openForWorker(config, null);
  const log = pino(loggerOptions(process.env.LOG_LEVEL ?? 'info'));
  const worker = startWorker(config, database, log);
  log.info('settlement worker started');
  installShutdown(null, [database], worker, log);
}

function installShutdown(app: FastifyInstance | null, databases: Database[], worker: Worker, log: WorkerOptions['log'] = app!.log): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down: no new requests, finishing in-flight ones, releasing claims');
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    (app ? app.close() : Promise.resolve())
      .then(() => worker.stop())
      .then(() => Promise.all(databases.map((d) => d.close())))
      .then(
        () => process.exit(0),
        (error: unknown) => {
          log.error({ err: error }, 'error during shutdown');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

async function main(argv: string[]): Promise<void> {
  const [command = 'serve', ...rest] = argv;
  if (command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const config = loadConfig();
  if (command === 'serve') return serve(config);
  if (command === 'worker') return workerOnly(config);
  const database = await open(config);
  try {
    if (command === 'migrate') {
      process.stdout.write('migrations applied\n');
      return;
    }
    process.stdout.write(`${await runOperatorCommand(database.db, config, [command, ...rest])}\n`);
  } finally {
    await database.close();
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof ConfigError) process.stderr.write(`Invalid configuration: ${error.message}\n`);
  else if (error instanceof UsageError || error instanceof DatabaseInUse) process.stderr.write(`${error.message}\n`);
  else if (error instanceof AppError) process.stderr.write(`Error ${error.statusCode}: ${error.message}\n`);
  else if ((error as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') process.stderr.write(`${(error as Error).message}\n${USAGE}\n`);
  else process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
