import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildListeners, buildWorkerListener, checkTlsFiles, senderFaults, type Listeners } from './app.ts';
import { networkDeps } from './modules/recurrences/network.ts';
import { banner } from './banner.ts';
import { runOperatorCommand, OPERATOR_USAGE } from './cli.ts';
import { loadConfig, type Config } from './config.ts';
import { describeConnectionFailure, describePostgres, parsePostgresUrl, postgresTarget } from './db/connection.ts';
import { openDatabase, type Database } from './db/client.ts';
import { awaitFailover } from './db/multi-host.ts';
import { isDatabaseUnavailable } from './http/errors.ts';
import { databaseIdentity, migrate, UnknownMigrations } from './db/migrate.ts';
import { failureLine, exitIfStillRunning } from './failure.ts';
import { listenFailure, Resources, StartFailure } from './lifecycle.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import { SandboxControls } from './modules/controls/service.ts';
import { loggerOptions } from './http/logging.ts';
import { ensureDemoAccount, type DemoOptions } from './modules/admin/demo.ts';
import { keptAdminToken, pointCurrentDemo, writeAdminTokenFile } from './modules/admin/demo-files.ts';
import { destinationPolicy } from './modules/webhooks/destination.ts';
import { webhookClientCertificate } from './modules/webhooks/client-certificate.ts';
import { WebhookSender, type Attempt } from './modules/webhooks/sender.ts';
import { ServiceMetrics } from './http/metrics.ts';
import { cancelTableMaintenance } from './worker/maintenance.ts';
import { Worker, type WorkerOptions } from './worker/worker.ts';

type Log = WorkerOptions['log'];

const USAGE = `Usage: pix-api <command>
  serve            start the API and the settlement worker (default; migrations run first)
  worker           start only the settlement worker (scale-out on PostgreSQL; /metrics on ADMIN_PORT when set)
  migrate          apply database migrations and exit
  listen           forward a running sandbox's deliveries to URLs here (pix-api listen -h) [--forward-to URL] [--forward-pix-to URL] [--forward-rec-to URL] [--forward-cobr-to URL] [--mtls] [--ca FILE] [--name NAME] [--url URL] [--admin-token TOKEN] [--account ID] [--dir DIR]
  trigger          make an event happen in a running sandbox, as the network would: pix-api trigger EVENT [--list] [--amount AMOUNT] [--key KEY] [--reason CODE] [--url URL] [--admin-token TOKEN] [--account ID] [--dir DIR]
${OPERATOR_USAGE}`;

/** Opens the database, applies pending migrations, and registers its closing with `taken`. */
async function open(config: Config, taken: Resources): Promise<Database> {
  const database = await openDatabase({
    url: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
    queueTimeoutMs: config.databaseQueueTimeoutMs,
    lists: { poolSize: config.databaseListPoolSize, statementTimeoutMs: config.databaseListStatementTimeoutMs },
  });
  taken.add('database', () => database.close());
  await migrateAtStart(config, database);
  return database;
}

/**
 * Applies pending migrations and function files. Another process's table maintenance is
 * cancelled first, or an ALTER TABLE would wait behind it (worker/maintenance.ts).
 */
async function migrateAtStart(config: Config, database: Database): Promise<void> {
  try {
    await reachable(config, () => throughFailover(config, () => migrate(database.db, { beforeSchemaChange: cancelTableMaintenance })));
  } catch (error) {
    throw error instanceof UnknownMigrations ? new StartFailure(otherMigrations(config, error), { cause: error }) : error;
  }
}

/**
 * A database made by migrations this version does not have (those from before the baseline,
 * docs/decisions/0028-function-files.md) cannot be upgraded: what to do instead, in one line.
 */
function otherMigrations(config: Config, error: UnknownMigrations): string {
  const made = `was made by migrations this version does not have (${error.shown}) and cannot be brought up to date`;
  if (!config.databaseUrl) {
    return `the embedded database in ${join(config.dataDir, 'pgdata')} ${made}: delete the data directory ${config.dataDir} (DATA_DIR), or set DATA_DIR to another directory, and start again`;
  }
  const { database } = postgresTarget(config.databaseUrl);
  return `${describePostgres(config.databaseUrl)} ${made}: create a new database and set DATABASE_URL to it, or drop database "${database}" and create it again`;
}

/** How long a start that meets a failover keeps trying its first work (migrations, the demo account). */
const START_FAILOVER_MS = 60_000;

/**
 * A start's first work on a replicated PostgreSQL (a multi-host DATABASE_URL) that a failover
 * interrupts (the primary lost under it): once the new primary answers, the work runs again. It
 * must be safe to run again: migrations and the demo account are (each step commits alone and
 * the next run finds it done), and so is building the listeners. A single server's failure stops
 * the start as before.
 */
async function throughFailover<T>(config: Config, work: () => Promise<T>): Promise<T> {
  const url = config.databaseUrl;
  if (!url || !parsePostgresUrl(url).multiHost) return work();
  const deadline = performance.now() + START_FAILOVER_MS;
  for (;;) {
    try {
      return await work();
    } catch (error) {
      if (!isDatabaseUnavailable(error) || performance.now() > deadline) throw error;
      await awaitFailover(url);
    }
  }
}

/** Runs the first work on a PostgreSQL database, naming DATABASE_URL when it cannot be reached. */
async function reachable<T>(config: Config, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const line = config.databaseUrl ? describeConnectionFailure(error, config.databaseUrl) : undefined;
    throw line ? new StartFailure(line, { cause: error }) : error;
  }
}

/**
 * The worker's connections: its rounds (settlement, deliveries, housekeeping, maintenance) run
 * a query or two at a time and must neither wait behind the API's requests when those pile up
 * nor be refused when they wait too long. The embedded database is one session: shared.
 * Why, and what was measured: docs/decisions/0020-limits-on-the-database-wait.md.
 */
const WORKER_POOL_SIZE = 5;
async function openForWorker(config: Config, api: Database | null, taken: Resources): Promise<Database> {
  if (api && api.kind === 'pglite') return api;
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, poolSize: WORKER_POOL_SIZE, applicationName: 'pix-api-worker' });
  taken.add('worker database', () => database.close());
  if (!api) await migrateAtStart(config, database);
  return database;
}

/**
 * Sandbox mode: the test clock and faults, read from the database now and polled from then on, so
 * that what another process changes is seen here. Production: none, business time is real time.
 */
async function startControls(config: Config, database: Database, log: Log, taken: Resources): Promise<SandboxControls | undefined> {
  if (config.mode !== 'sandbox') return undefined;
  const controls = new SandboxControls(database.db, systemClock, { publicUrl: config.publicUrl });
  await throughFailover(config, () => controls.start((error) => log.warn({ err: error }, 'sandbox controls could not be read; trying again')));
  taken.add('sandbox controls', () => controls.stop());
  return controls;
}

/** The worker, made but not started: nothing runs in the background before the listeners are bound. */
function createWorker(config: Config, database: Database, log: Log, taken: Resources, controls: SandboxControls | undefined, metrics?: ServiceMetrics): Worker {
  const clock: Clock = controls?.clock ?? systemClock;
  const worker = new Worker({
    db: database.db,
    clock,
    ...(metrics ? { metrics } : {}),
    ispb: config.pspIspb,
    settlementDelayMs: config.settlementDelayMs,
    log,
    listenUrl: config.databaseUrl,
    maintenance: { kind: database.kind },
    automatico: networkDeps({ config, db: database.db, clock, controls }, log),
    webhookSender: new WebhookSender({
      policy: destinationPolicy(config),
      caFile: config.webhookCaFile,
      clientCertificate: webhookClientCertificate(config),
      ...(metrics ? { observe: (attempt: Attempt) => metrics.webhookAttempt(attempt) } : {}),
      ...senderFaults(controls),
    }),
  });
  taken.add('worker', () => worker.stop());
  return worker;
}

async function bind(app: FastifyInstance, port: number, host: string, names: { portVariable: string; hostVariable: string }): Promise<string> {
  try {
    return await app.listen({ port, host });
  } catch (error) {
    throw listenFailure(error, { port, host, ...names });
  }
}

/** Whether a listener could bind `port` on `host` now: a throwaway bind, closed at once (port 0 is always free). */
async function portFree(port: number, host: string, names: { portVariable: string; hostVariable: string }): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen({ port, host, exclusive: true }, resolve);
    });
  } catch (error) {
    throw listenFailure(error, { port, host, ...names });
  } finally {
    if (probe.listening) await new Promise<void>((resolve) => probe.close(() => resolve()));
  }
}

/** Binds the public listener, then the operator one when it is apart; resolves with their addresses. */
async function bindListeners(config: Config, listeners: Listeners): Promise<{ main: string; admin: string | undefined }> {
  const main = await bind(listeners.main, config.port, config.host, { portVariable: 'PORT', hostVariable: 'HOST' });
  if (!config.admin || listeners.admin === listeners.main) return { main, admin: undefined };
  const admin = await bind(listeners.admin, config.admin.port, config.admin.host, { portVariable: 'ADMIN_PORT', hostVariable: 'ADMIN_HOST' });
  return { main, admin };
}

/** The database as the banner and the demo files name it. */
function demoDatabase(config: Config): DemoOptions['database'] {
  if (!config.databaseUrl) return { kind: 'embedded', description: `the embedded database in ${join(config.dataDir, 'pgdata')}` };
  return { kind: 'postgres', description: describePostgres(config.databaseUrl), name: postgresTarget(config.databaseUrl).database };
}

/**
 * The service: the database, the listeners bound, the demo account (sandbox), then the worker.
 * Whatever fails releases everything taken before it, in reverse.
 */
async function serve(config: Config, taken: Resources): Promise<Log> {
  checkTlsFiles(config);
  // Before the database is opened: a port another process holds is told at once, not once the
  // migrations and the listeners are ready (the listeners' own bind still reports a late taker).
  await portFree(config.port, config.host, { portVariable: 'PORT', hostVariable: 'HOST' });
  if (config.admin) await portFree(config.admin.port, config.admin.host, { portVariable: 'ADMIN_PORT', hostVariable: 'ADMIN_HOST' });
  const database = await open(config, taken);
  const workerDatabase = await openForWorker(config, database, taken);
  const log = pino(loggerOptions(process.env.LOG_LEVEL ?? 'info'));
  const controls = await startControls(config, database, log, taken);
  // One registry for the process: the worker's settlements and deliveries count beside the requests.
  const metrics = new ServiceMetrics();
  metrics.addPool('api', () => database.stats());
  if (workerDatabase !== database) metrics.addPool('worker', () => workerDatabase.stats());
  const worker = createWorker(config, workerDatabase, log, taken, controls, metrics);
  // Building them reads the signing keys and the payload signer: a failover under that runs it
  // again (a failed build closes what it opened).
  const listeners = await throughFailover(config, () =>
    buildListeners({
      config,
      db: database.db,
      listDb: database.lists,
      clock: controls?.clock ?? systemClock,
      realClock: systemClock,
      ...(controls ? { controls } : {}),
      metrics,
      logLevel: process.env.LOG_LEVEL ?? 'info',
      wakeWorker: worker.wake,
    }),
  );
  taken.add('listeners', () => listeners.close());
  const addresses = await bindListeners(config, listeners);
  const described = demoDatabase(config);
  const demo =
    config.mode === 'sandbox'
      ? await throughFailover(config, () => ensureDemoAccount(database.db, { dataDir: config.dataDir, ispb: config.pspIspb, database: described }))
      : null;
  if (demo) {
    writeAdminTokenFile(demo.dir, config.adminTokenGenerated ? config.adminToken : null);
    pointCurrentDemo(config.dataDir, demo.dir);
  }
  worker.start();
  const identity = await throughFailover(config, () => databaseIdentity(database.db));
  process.stdout.write(`${banner({ config, addresses, database: `${described.description}, id ${identity.id}`, demo })}\n`);
  return log;
}

/**
 * A worker alone. With ADMIN_PORT set it binds that listener for its /metrics and probes: the
 * settlements and deliveries it makes count there, and nowhere else.
 */
async function workerOnly(config: Config, taken: Resources): Promise<Log> {
  const database = await openForWorker(config, null, taken);
  const log = pino(loggerOptions(process.env.LOG_LEVEL ?? 'info'));
  const controls = await startControls(config, database, log, taken);
  const metrics = config.workerAdmin ? new ServiceMetrics() : undefined;
  metrics?.addPool('worker', () => database.stats());
  const worker = createWorker(config, database, log, taken, controls, metrics);
  if (config.workerAdmin && metrics) {
    const listener = await buildWorkerListener({
      config,
      db: database.db,
      clock: controls?.clock ?? systemClock,
      realClock: systemClock,
      metrics,
      logLevel: process.env.LOG_LEVEL ?? 'info',
    });
    taken.add('operator listener', () => listener.close());
    const address = await bind(listener, config.workerAdmin.port, config.workerAdmin.host, { portVariable: 'ADMIN_PORT', hostVariable: 'ADMIN_HOST' });
    log.info({ address }, `metrics and probes on ${address}`);
  }
  worker.start();
  log.info('settlement worker started');
  return log;
}

/**
 * The first SIGTERM or SIGINT. Listened for from the very start: a signal that comes while the
 * service starts (or just as its banner is printed) stops it once started, instead of killing it
 * with the embedded database locked. A second signal kills at once.
 */
function stopSignal(): Promise<string> {
  return new Promise((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
}

/** The listeners stop taking requests and finish theirs, the worker releases its claims, the databases close. */
async function shutdown(taken: Resources, log: Log, signal: string): Promise<never> {
  log.info({ signal }, 'shutting down: no new requests, finishing in-flight ones, releasing claims');
  setTimeout(() => process.exit(1), 15_000).unref();
  const failures = await taken.release();
  for (const failure of failures) log.error({ err: failure }, 'error during shutdown');
  process.exit(failures.length > 0 ? 1 : 0);
}

/** A command that runs and ends: migrations, an operator command. */
async function once(config: Config, args: string[], taken: Resources): Promise<void> {
  const database = await open(config, taken);
  const output = args[0] === 'migrate' ? 'migrations applied' : await runOperatorCommand(database.db, config, args);
  await releaseAll(taken);
  process.stdout.write(`${output}\n`);
}

async function releaseAll(taken: Resources): Promise<void> {
  const failures = await taken.release();
  if (failures.length > 0) throw failures[0];
}

/**
 * PORT=0 asks for a free port. Payload locations name the port (PUBLIC_URL's default is the
 * listener's own address), so the port is chosen before anything is built from the configuration.
 */
async function withPortChosen(config: Config, command: string): Promise<Config> {
  if (command !== 'serve' || config.port !== 0 || process.env.PUBLIC_URL) return config;
  const probe = createServer();
  const port = await new Promise<number>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(0, config.host, () => resolve((probe.address() as AddressInfo).port));
  });
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return loadConfig({ ...process.env, PORT: String(port) });
}

/**
 * A sandbox with no ADMIN_TOKEN set keeps the one it made under DATA_DIR (the service and its
 * workers share it, and it outlives a restart); production requires one.
 */
function withKeptAdminToken(config: Config, command: string): Config {
  if (config.mode !== 'sandbox' || !config.adminTokenGenerated || (command !== 'serve' && command !== 'worker')) return config;
  return Object.freeze({ ...config, adminToken: keptAdminToken(config.dataDir, config.adminToken).token });
}

async function main(argv: string[], telemetry: (() => Promise<void>) | undefined): Promise<void> {
  const [command = 'serve', ...rest] = argv;
  if (command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  // Client commands: they reach a running sandbox over HTTP, here or on another machine.
  if (command === 'listen') return (await import('./remote/listen.ts')).runListen(rest);
  if (command === 'trigger') return (await import('./remote/trigger.ts')).runTrigger(rest);
  const config = withKeptAdminToken(await withPortChosen(loadConfig(), command), command);
  const taken = new Resources();
  // Released last: the spans of everything else's shutdown are sent before the process ends.
  if (telemetry) taken.add('telemetry', telemetry);
  const signal = command === 'serve' || command === 'worker' ? stopSignal() : undefined;
  let log: Log | undefined;
  try {
    if (command === 'serve') log = await serve(config, taken);
    else if (command === 'worker') log = await workerOnly(config, taken);
    else await once(config, [command, ...rest], taken);
  } catch (error) {
    // What the start took is given back before the line is printed: the next start finds nothing held.
    await taken.release();
    throw error;
  }
  if (signal && log) await shutdown(taken, log, await signal);
}

/** Runs one command of the binary (src/main.ts); what it started is released on failure or signal. */
export function run(argv: string[], telemetry?: () => Promise<void>): void {
  main(argv, telemetry).catch((error: unknown) => {
    process.stderr.write(`${failureLine(error, USAGE)}\n`);
    process.exitCode = 1;
    exitIfStillRunning();
  });
}
