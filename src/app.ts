import { createPrivateKey, randomUUID, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { ConfigError, type Config } from './config.ts';
import type { Db } from './db/client.ts';
import { accountAuthentication, adminAuthentication, FAILED_ADMIN_TOKENS_PER_MINUTE } from './http/auth.ts';
import type { CertificateTrust } from './http/client-certificate.ts';
import { PROBLEM_SCHEMAS, sendProblem } from './dialects/bcb/problems.ts';
import { bcbOperations, bcbPublicRoutes, type BcbDeps } from './dialects/bcb/operations.ts';
import { BCB_PREFIX, bcbScopeWith, isBcbPath, problemOfBody, withoutTrailingSlash } from './dialects/bcb/scope.ts';
import { registerEmptyBodies } from './http/empty-bodies.ts';
import { boundHeaders, limitConnectionsPerSource, requestTimeouts, type ConnectionLimits } from './http/connection-limits.ts';
import { errorBody, registerErrorHandling, registerNulGuard } from './http/errors.ts';
import { ListQueries } from './http/list-queries.ts';
import { lazyChildLogger, loggerOptions } from './http/logging.ts';
import { DOC_PARTS, docsPageOptions, documentPart, openApiOptions, type DocPart } from './http/openapi.ts';
import { ErrorBodySchema, errorResponses } from './http/schemas.ts';
import { lazySerializers, registerValidation } from './http/validation.ts';
import type { Clock } from './lib/clock.ts';
import { Lru } from './lib/lru.ts';
import type { QueuedDelivery, SandboxControls } from './modules/controls/service.ts';
import { controlRoutes } from './modules/controls/routes.ts';
import { consoleRoutes } from './modules/console/routes/index.ts';
import { INBOX_ARRIVALS_PER_MINUTE, inboxReadRoutes, inboxReceiveRoute } from './modules/controls/inbox-routes.ts';
import { adminRoutes } from './modules/admin/routes/index.ts';
import { signingKeyRoutes } from './modules/admin/signing-key-routes.ts';
import { authRoutes } from './modules/auth/routes.ts';
import { requireDeclaredScopes } from './modules/auth/scopes.ts';
import { chargeRoutes, sandboxChargeRoutes } from './modules/charges/routes/index.ts';
import { CertificateLinkCache } from './modules/auth/link-cache.ts';
import { resolveKeyEncryptionKey, type KeyEncryptionKey } from './modules/auth/key-encryption.ts';
import { KeyRing } from './modules/auth/key-ring.ts';
import { defaultSecretCheckLimits, FAILED_TOKEN_REQUESTS_PER_MINUTE, SecretChecks } from './modules/auth/secret-checks.ts';
import { TokenService } from './modules/auth/tokens.ts';
import { DirectoryLookups } from './modules/directory/lookups.ts';
import { directoryRoutes } from './modules/directory/routes.ts';
import { healthRoutes } from './modules/health/routes.ts';
import { isPrimary } from './modules/health/repo.ts';
import { metricsRoute, ServiceMetrics } from './http/metrics.ts';
import { queueState as settlementQueueState } from './modules/settlement/repo.ts';
import { queueState as deliveryQueueState } from './modules/webhooks/queue/repo.ts';
import { balanceRoutes } from './modules/ledger/routes.ts';
import { payloadSignerFromFiles } from './modules/locations/signing/files.ts';
import { preparePayloadSigner, signingAddress } from './modules/locations/signing/service.ts';
import type { PayloadSigner } from './modules/locations/signing/signer.ts';
import { medRoutes, sandboxMedRoutes } from './modules/meds/routes.ts';
import { payerAutomaticoRoutes } from './modules/recurrences/payer-routes.ts';
import { payerRoutes } from './modules/payer/routes.ts';
import { refundRoutes } from './modules/refunds/routes.ts';
import { sandboxRoutes } from './modules/sandbox/routes/index.ts';
import { transactionRoutes } from './modules/transactions/routes/index.ts';
import { TransferBatcher } from './modules/transfers/batcher.ts';
import { CobBatcher } from './modules/charges/batcher.ts';
import { transferRoutes } from './modules/transfers/routes.ts';
import { webhookRoutes } from './modules/webhooks/routes/index.ts';
import { listenerReceiveRoute, listenerRoutes } from './modules/webhooks/routes/listeners.ts';
import { destinationPolicy } from './modules/webhooks/destination.ts';
import { webhookClientCertificate } from './modules/webhooks/client-certificate.ts';
import { WebhookSender } from './modules/webhooks/sender.ts';
import { MemoryRateLimiter, RedisRateLimiter, type RateLimiter } from './http/rate-limit.ts';
import { MemoryTokenBuckets, RedisTokenBuckets } from './http/token-bucket.ts';
import { RESEND_LIMIT_PER_MINUTE } from './modules/webhooks/service.ts';
import { networkDeps, nextEvent, runDue } from './modules/recurrences/network.ts';
import { automaticoSandboxRoutes } from './modules/recurrences/sandbox-routes.ts';

export interface AppDeps {
  readonly config: Config;
  readonly db: Db;
  /** Where account lists run (`Database.lists`: their own pool on PostgreSQL); `db` when absent. */
  readonly listDb?: Db;
  /**
   * Business time: what every rule of the service reads (expiries, due dates, windows,
   * settlement, retries). In sandbox mode the test clock moves it (`controls`).
   */
  readonly clock: Clock;
  /** Real time: token lifetimes, certificate validity and rate limits (`clock` when absent). */
  readonly realClock?: Clock;
  /** Sandbox mode: the test clock, faults and inbox every process shares (modules/controls). */
  readonly controls?: SandboxControls;
  /** The process's metrics, shared with its worker (a registry of its own when absent). */
  readonly metrics?: ServiceMetrics;
  /** Pino level, or false for no logs (tests). */
  readonly logLevel?: string | false;
  /** Where logs go (stdout by default); tests capture them to check redaction. */
  readonly logStream?: NodeJS.WritableStream;
  /** Wakes this process's settlement worker when a HIGH transfer is accepted. */
  readonly wakeWorker?: () => void;
  /** Limits of token requests (tests make them small). */
  readonly secretCheckLimits?: {
    concurrency?: number;
    maxWaiting?: number;
    /** Failures a minute per source (an IPv4 address, an IPv6 /64). */
    failuresPerMinute?: number;
    /** Failures a minute per client id, and per certificate. */
    clientFailuresPerMinute?: number;
  };
  /** Wrong admin tokens a minute per source (tests that send many on purpose raise it). */
  readonly adminFailuresPerMinute?: number;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** How long a request may take to arrive when the configuration does not say (REQUEST_TIMEOUT_MS). */
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
export const BODY_LIMIT_BYTES = 64 * 1024;

/** Reads a TLS file and checks it parses, so that a wrong one stops the start naming its variable. */
function tlsFile(variable: string, path: string, parse: (pem: Buffer) => unknown, what: string): Buffer {
  try {
    const pem = readFileSync(path);
    parse(pem);
    return pem;
  } catch (error) {
    throw new ConfigError(`${variable} must name a PEM ${what} (${path}: ${(error as Error).message})`);
  }
}

/**
 * Throws the ConfigError a wrong TLS file would give, before anything is opened; and in
 * production, the one of a missing payload-signing key and chain: the API serves /v2 charges,
 * whose payloads no payer would trust under the sandbox's own root.
 */
export function checkTlsFiles(config: Config): void {
  httpsOptions(config);
  if (config.mode === 'production' && !config.qrSigning) {
    throw new ConfigError('QR_SIGNING_KEY_FILE and QR_SIGNING_CHAIN_FILE are required to serve when PIX_MODE=production: they sign the payload locations of /v2 charges');
  }
}

function httpsOptions(config: Config) {
  if (!config.tls) return null;
  const cert = tlsFile('TLS_CERT_FILE', config.tls.certFile, (pem) => new X509Certificate(pem), 'certificate');
  const key = tlsFile('TLS_KEY_FILE', config.tls.keyFile, (pem) => createPrivateKey(pem), 'private key');
  if (!new X509Certificate(cert).checkPrivateKey(createPrivateKey(key))) {
    throw new ConfigError(`TLS_KEY_FILE must be the private key of TLS_CERT_FILE's certificate (${config.tls.keyFile} is another key)`);
  }
  return {
    cert,
    key,
    ...(config.tls.clientCaFile ? { ca: tlsFile('TLS_CLIENT_CA_FILE', config.tls.clientCaFile, (pem) => new X509Certificate(pem), 'certificate bundle') } : {}),
    // The certificate is requested but judged by the application, so a missing one gets the
    // spec's 400 instead of a failed handshake.
    requestCert: true,
    rejectUnauthorized: false,
  };
}

/**
 * A Fastify server with the service's plumbing (limits, request ids, validation, the error
 * shape) and no routes: the listeners start from it, and tests mount a scope of their own on it.
 */
export function createServer(
  deps: Pick<AppDeps, 'logLevel' | 'logStream'>,
  https: ReturnType<typeof httpsOptions> = null,
  limits: Pick<ConnectionLimits, 'requestTimeoutMs'> = { requestTimeoutMs: DEFAULT_REQUEST_TIMEOUT_MS },
) {
  const timeouts = requestTimeouts(limits);
  const app = Fastify({
    ...(https ? { https: { ...https, ...timeouts.server } } : { http: timeouts.server }),
    requestTimeout: timeouts.requestTimeout,
    logger:
      deps.logLevel === false
        ? false
        : { ...loggerOptions(deps.logLevel ?? 'info'), ...(deps.logStream ? { stream: deps.logStream } : {}) },
    childLoggerFactory: (logger, bindings, options) => lazyChildLogger(logger, bindings, options),
    bodyLimit: BODY_LIMIT_BYTES,
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    routerOptions: { maxParamLength: 200 },
    rewriteUrl: (req) => withoutTrailingSlash(req.url ?? '/'),
    // A bad percent-escape or an over-long path parameter is refused before routing: in the
    // error shape too (Fastify's own answer adds a `code`, and names 414 "Bad Request").
    frameworkErrors: (error, request, reply) => {
      const status = error.code === 'FST_ERR_BAD_URL' ? 400 : error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : 500;
      const message = status === 400 ? 'The URL is not valid (bad percent-encoding)' : status === 414 ? 'A path parameter is too long' : 'Internal server error';
      const code = status === 400 ? 'INVALID_URL' : status === 414 ? 'PARAMETER_TOO_LONG' : 'INTERNAL_ERROR';
      const body = errorBody(status, message, code);
      if (isBcbPath(request.url)) return void sendProblem(request, reply as FastifyReply, problemOfBody(body));
      void (reply as FastifyReply).header('x-request-id', request.id).status(status).send(body);
    },
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    schemaController: { compilersFactory: { buildSerializer: lazySerializers as never } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  boundHeaders(app.server, limits);
  registerValidation(app);
  // JSON is the only body format: anything else is 415.
  app.removeContentTypeParser(['text/plain']);
  registerErrorHandling(app);
  registerNulGuard(app);
  registerEmptyBodies(app);
  app.addSchema(ErrorBodySchema);
  for (const schema of PROBLEM_SCHEMAS) app.addSchema(schema);
  app.addHook('onRequest', async (request, reply) => {
    void reply.header('x-request-id', request.id);
    // Also on the raw response at once, where a trace's server span reads it (telemetry/start.ts).
    reply.raw.setHeader('x-request-id', request.id);
  });
  return app;
}

/**
 * The service's listeners. `main` is the public one: authentication, the account routes, health,
 * the docs, and in sandbox mode /sandbox/*. `admin` serves the operator API (/admin/*, and
 * /metrics when it comes); it is `main` itself when no separate operator listener is in use.
 */
export interface Listeners {
  readonly main: FastifyInstance;
  readonly admin: FastifyInstance;
  /** Closes both: no new requests, in-flight ones finish. */
  close(): Promise<void>;
}

/** Every route on one server, whatever ADMIN_PORT says: for app.inject tests and the OpenAPI document. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  return (await build(deps, false)).main;
}

/** The listeners as the configuration asks: the operator API apart when `config.admin` is set. */
export function buildListeners(deps: AppDeps): Promise<Listeners> {
  return build(deps, deps.config.admin !== undefined);
}

/**
 * A `worker` process's own listener (`config.workerAdmin`): its /metrics behind the admin token,
 * so that the settlements and deliveries it counts are scraped, and the probes. Nothing else: a
 * worker serves no account and no operator command.
 */
export async function buildWorkerListener(deps: AppDeps): Promise<FastifyInstance> {
  const https = httpsOptions(deps.config);
  const app = createServer(deps, https ? { ...https, requestCert: false } : null, deps.config);
  const metrics = serviceMetrics(deps);
  metrics.observeRequests(app);
  const failures = perMinuteLimiters(deps.config, app)(deps.adminFailuresPerMinute ?? FAILED_ADMIN_TOKENS_PER_MINUTE, 'pix-api:admin-failures:');
  const trust: CertificateTrust = { trustedProxies: deps.config.trustedProxies, requireClientCa: false };
  await app.register(healthRoutes({ db: deps.db }));
  await app.register(async (scope) => {
    scope.addHook('onRequest', adminAuthentication({ adminToken: deps.config.adminToken, clock: realClockOf(deps), trust, failures }));
    await scope.register(metricsRoute(metrics));
  });
  return app;
}

async function build(deps: AppDeps, separateAdmin: boolean): Promise<Listeners> {
  // First, before anything is opened that would have to be closed: a wrong or missing
  // KEY_ENCRYPTION_KEY stops the start here (ConfigError, one line).
  const kek = resolveKeyEncryptionKey(deps.config);
  const keys = new KeyRing(deps.db, realClockOf(deps), kek);
  await keys.prepare();
  const https = httpsOptions(deps.config);
  const main = createServer(deps, https, deps.config);
  // The operator listener speaks what the main one speaks, without asking for a client certificate.
  const admin = separateAdmin ? createServer(deps, https ? { ...https, requestCert: false } : null, deps.config) : main;
  const metrics = serviceMetrics(deps);
  limitPublicConnections(deps.config, main, metrics, realClockOf(deps));
  metrics.observeRequests(main);
  if (admin !== main) metrics.observeRequests(admin);
  const close = async () => {
    await Promise.all([main.close(), admin === main ? undefined : admin.close()]);
  };
  try {
    await registerRoutes(deps, { main, admin, kek, keys, metrics });
  } catch (error) {
    // Whatever was opened so far (Redis connections among them) is closed by the servers' hooks.
    await close().catch(() => undefined);
    throw error;
  }
  return { main, admin, close };
}

/**
 * The public listener's connections per source (MAX_CONNECTIONS_PER_SOURCE), the trusted proxies
 * aside: one over the limit is closed on arrival, counted, and logged once a minute per source.
 */
function limitPublicConnections(config: Config, main: FastifyInstance, metrics: ServiceMetrics, clock: Clock): void {
  const logged = new Lru<string, number>(1_000);
  limitConnectionsPerSource(main.server, { ...config, exempt: config.trustedProxies }, (source) => {
    metrics.connectionRefused();
    const now = clock.now().getTime();
    if (now - (logged.get(source) ?? 0) < 60_000) return;
    logged.set(source, now);
    main.log.warn({ source, limit: config.maxConnectionsPerSource }, 'Connections refused: the source holds MAX_CONNECTIONS_PER_SOURCE already');
  });
}

interface Parts {
  readonly main: FastifyInstance;
  readonly admin: FastifyInstance;
  /** The key that seals private signing keys, and the signing keys it opens. */
  readonly kek: KeyEncryptionKey;
  readonly keys: KeyRing;
  readonly metrics: ServiceMetrics;
}

/** What the routes share: senders, limiters and caches, each closed with the main listener. */
interface Services {
  readonly policy: ReturnType<typeof destinationPolicy>;
  readonly resendSender: WebhookSender;
  readonly resendLimiter: RateLimiter;
  readonly secrets: SecretChecks;
  readonly lookups: DirectoryLookups;
  readonly adminFailures: RateLimiter;
  readonly tokens: TokenService;
  readonly links: CertificateLinkCache;
  readonly trust: CertificateTrust;
  readonly lists: ListQueries;
  readonly metrics: ServiceMetrics;
  /** New immediate charges, created together (both dialects share it). */
  readonly cobs: CobBatcher;
}

type PerMinute = (limit: number, prefix: string) => RateLimiter;

/** The process's metrics, with the gauges read from the database when scraped. */
function serviceMetrics(deps: AppDeps): ServiceMetrics {
  const metrics = deps.metrics ?? new ServiceMetrics();
  metrics.setState({
    read: async () => {
      const now = deps.clock.now();
      const [queue, deliveries, primary] = await Promise.all([
        settlementQueueState(deps.db, now, deps.config.settlementDelayMs),
        deliveryQueueState(deps.db, now),
        isPrimary(deps.db),
      ]);
      return {
        settlementQueued: queue.queued,
        settlementLagSeconds: queue.lagSeconds,
        deliveriesPending: deliveries.pending,
        oldestDueDeliverySeconds: deliveries.oldestDueSeconds,
        openBreakers: deliveries.openBreakers,
        primary,
      };
    },
  });
  return metrics;
}

/** The clock of token lifetimes, certificate validity and rate limits: never the test clock. */
const realClockOf = (deps: AppDeps): Clock => deps.realClock ?? deps.clock;

async function registerRoutes(deps: AppDeps, parts: Parts): Promise<void> {
  const { db } = deps;
  const clock = realClockOf(deps);
  const { main } = parts;
  await main.register(swagger, openApiOptions());
  await main.register(swaggerUi, docsPageOptions());
  // The parts /docs shows, built once from the whole document.
  const partsOfDocs = new Map<DocPart, Record<string, unknown>>();
  main.get<{ Params: { part: DocPart } }>(
    '/docs/parts/:part',
    { schema: { hide: true, params: { type: 'object', properties: { part: { type: 'string', enum: Object.keys(DOC_PARTS) } }, required: ['part'] } } },
    async (request) => {
      const part = request.params.part;
      let document = partsOfDocs.get(part);
      if (!document) partsOfDocs.set(part, (document = documentPart(main.swagger() as { paths?: Record<string, unknown> }, part)));
      return document;
    },
  );

  const services = createServices(deps, parts);
  const { tokens, trust, secrets } = services;
  await main.register(healthRoutes({ db }));
  await main.register(authRoutes({ db, clock, tokens, trust, secrets }));
  await main.register(accountRoutes(deps, services));
  await registerBcbRoutes(deps, parts, services);
  await registerOperatorRoutes(deps, parts, services);
}

/** BCB's API Pix under /v2 (behind the account's token and certificate) and its public payload locations. */
async function registerBcbRoutes(deps: AppDeps, { main, kek }: Parts, services: Services): Promise<void> {
  const { config, db, clock } = deps;
  const { tokens, trust, links, lists } = services;
  let signer: Promise<PayloadSigner> | undefined;
  const payloadSigner = () => {
    signer ??= config.qrSigning
      ? payloadSignerFromFiles(config.qrSigning, signingAddress(config.publicUrl).jku)
      : preparePayloadSigner(db, kek, { publicUrl: config.publicUrl, now: realClockOf(deps).now() });
    // A failed preparation (the database briefly away) is tried again by the next request.
    signer.catch(() => (signer = undefined));
    return signer;
  };
  const bcb: BcbDeps = { config, db, clock, lists, payloadSigner, cobs: services.cobs };
  const authenticate = accountAuthentication({ clock: realClockOf(deps), tokens, trust, links });
  await main.register(
    async (v2) => {
      requireDeclaredScopes(v2);
      await v2.register(bcbScopeWith({ onRequest: authenticate }, ...bcbOperations(bcb)));
    },
    { prefix: BCB_PREFIX },
  );
  for (const routes of bcbPublicRoutes(bcb)) await main.register(routes);
}

function createServices(deps: AppDeps, { main, keys, metrics }: Parts): Services {
  const { config, db } = deps;
  // Resends are delivered by the API process itself, with the same rules as the worker's
  // deliveries, BCB's callbacks with the same client certificate.
  const policy = destinationPolicy(config);
  const resendSender = new WebhookSender({
    policy,
    caFile: config.webhookCaFile,
    clientCertificate: webhookClientCertificate(config),
    observe: (attempt) => metrics.webhookAttempt(attempt),
    ...senderFaults(deps.controls),
  });
  main.addHook('onClose', () => resendSender.close());
  const perMinute = perMinuteLimiters(config, main);
  const resendLimiter = perMinute(RESEND_LIMIT_PER_MINUTE, 'pix-api:resend:');
  const secrets = secretChecks(deps, main, perMinute);
  const lookups = directoryLookups(deps, main);
  const adminFailures = perMinute(deps.adminFailuresPerMinute ?? FAILED_ADMIN_TOKENS_PER_MINUTE, 'pix-api:admin-failures:');
  const tokens = new TokenService(keys, realClockOf(deps));
  const links = new CertificateLinkCache(db, realClockOf(deps));
  const trust: CertificateTrust = { trustedProxies: config.trustedProxies, requireClientCa: Boolean(config.tls?.clientCaFile) };
  // Every account list goes through this: its own connections and a limit per account.
  const lists = new ListQueries(deps.listDb ?? db, { perAccount: config.listConcurrencyPerAccount, queueTimeoutMs: config.listQueueTimeoutMs });
  const cobs = new CobBatcher(db, deps.clock);
  return { policy, resendSender, resendLimiter, secrets, lookups, adminFailures, tokens, links, trust, lists, metrics, cobs };
}

/** The sandbox's webhook faults, for a sender's options (none in production). */
export function senderFaults(controls: SandboxControls | undefined) {
  return controls ? { faults: (url: string, delivery?: QueuedDelivery) => controls.webhookFault(url, 'sender', delivery) } : {};
}

/** Limits every process shares through Redis when there is one (REDIS_URL). */
function perMinuteLimiters(config: Config, main: FastifyInstance): PerMinute {
  return (limit, prefix) => {
    const limiter = config.redisUrl
      ? new RedisRateLimiter(config.redisUrl, {
          limit,
          windowMs: 60_000,
          prefix,
          onError: (error) => main.log.warn({ err: error }, 'Redis rate limit unavailable; counting in this process'),
        })
      : new MemoryRateLimiter(limit, 60_000);
    main.addHook('onClose', () => limiter.close());
    return limiter;
  };
}

function secretChecks(deps: AppDeps, main: FastifyInstance, perMinute: PerMinute): SecretChecks {
  const limits = deps.secretCheckLimits;
  const clientFailures = limits?.clientFailuresPerMinute;
  const secrets = new SecretChecks({
    ...defaultSecretCheckLimits(),
    ...(limits?.concurrency === undefined ? {} : { concurrency: limits.concurrency }),
    ...(limits?.maxWaiting === undefined ? {} : { maxWaiting: limits.maxWaiting }),
    failures: {
      source: perMinute(limits?.failuresPerMinute ?? FAILED_TOKEN_REQUESTS_PER_MINUTE.source, 'pix-api:token-failures:'),
      client: perMinute(clientFailures ?? FAILED_TOKEN_REQUESTS_PER_MINUTE.client, 'pix-api:token-failures:client:'),
      certificate: perMinute(clientFailures ?? FAILED_TOKEN_REQUESTS_PER_MINUTE.certificate, 'pix-api:token-failures:certificate:'),
    },
  });
  main.addHook('onClose', () => secrets.close());
  return secrets;
}

/**
 * Directory look-ups, limited per account; the institution's ISPB in the Redis key keeps two
 * services that share a Redis apart.
 */
function directoryLookups(deps: AppDeps, main: FastifyInstance): DirectoryLookups {
  const { config, db, controls } = deps;
  const lookups = new DirectoryLookups({
    db,
    clock: realClockOf(deps),
    ...(controls ? { unavailable: () => controls.directoryUnavailable() } : {}),
    limits: config.directoryLimits,
    buckets: config.redisUrl
      ? new RedisTokenBuckets(config.redisUrl, {
          prefix: `pix-api:dict:${config.pspIspb}:`,
          onError: (error) => main.log.warn({ err: error }, 'Redis directory buckets unavailable; counting in this process'),
        })
      : new MemoryTokenBuckets(),
  });
  main.addHook('onClose', () => lookups.close());
  return lookups;
}

/** Wakes this process's settlement worker on a HIGH transfer, when there is one. */
function wakeOption(deps: AppDeps) {
  return deps.wakeWorker ? { onHighPriority: deps.wakeWorker } : {};
}

/** The account routes, behind the account token (and its certificate). */
function accountRoutes(deps: AppDeps, services: Services) {
  const { config, db, clock } = deps;
  const { tokens, trust, links, lookups, lists, resendSender: sender, policy, resendLimiter } = services;
  const wake = wakeOption(deps);
  return async (accountScope: FastifyInstance) => {
    accountScope.addHook('onRequest', accountAuthentication({ clock: realClockOf(deps), tokens, trust, links }));
    requireDeclaredScopes(accountScope);
    await accountScope.register(balanceRoutes({ db, clock }));
    await accountScope.register(
      transferRoutes({
        db,
        clock,
        ispb: config.pspIspb,
        batcher: new TransferBatcher(db),
        lookups,
        metrics: services.metrics,
        ...wake,
      }),
    );
    await accountScope.register(directoryRoutes({ db, lookups }));
    await accountScope.register(transactionRoutes({ db, clock, lists, controls: deps.controls }));
    await accountScope.register(chargeRoutes({ db, clock, ispb: config.pspIspb, publicUrl: config.publicUrl, lists, cobs: services.cobs }));
    await accountScope.register(refundRoutes({ db, clock, ispb: config.pspIspb, ...wake }));
    await accountScope.register(medRoutes({ db, clock, lists }));
    await accountScope.register(payerAutomaticoRoutes({ db, clock, ispb: config.pspIspb, publicUrl: config.publicUrl, lists }));
    await accountScope.register(webhookRoutes({ db, clock, realClock: realClockOf(deps), sender, policy, resendLimiter, lists }));
  };
}

/** The operator API on the admin listener, and in sandbox mode the simulated network on the main one. */
async function registerOperatorRoutes(deps: AppDeps, { main, admin, kek, keys, metrics }: Parts, services: Services): Promise<void> {
  const { config, db, clock } = deps;
  const { links, trust, adminFailures } = services;
  // The operator listener: probes answer there too, so a supervisor needs no access to the public
  // one; /metrics is beside /admin/*, behind the admin token, never on `main` when they are apart.
  if (admin !== main) await admin.register(healthRoutes({ db }));
  const authenticateAdmin = adminAuthentication({ adminToken: config.adminToken, clock: realClockOf(deps), trust, failures: adminFailures });
  // Every operator and sandbox route can answer 401 and 429 from that hook.
  const documentAdminErrors = (route: { schema?: { response?: unknown } }) => {
    if (route.schema?.response) route.schema.response = { ...errorResponses(401, 429), ...(route.schema.response as object) };
  };
  await admin.register(async (operatorScope) => {
    operatorScope.addHook('onRequest', authenticateAdmin);
    operatorScope.addHook('onRoute', documentAdminErrors);
    await operatorScope.register(
      adminRoutes({
        db,
        ispb: config.pspIspb,
        // Certificates are valid or not in real time.
        clock: realClockOf(deps),
        onCertificateUnlinked: (id, fp) => links.invalidate(id, fp),
        onClientChanged: (id) => links.invalidateAccount(id),
      }),
    );
    await operatorScope.register(signingKeyRoutes({ db, kek, onSigningKeysChanged: () => keys.invalidate() }));
    await operatorScope.register(metricsRoute(metrics));
  });

  // The simulated network stays on the main listener: sandbox clients call it beside the account routes.
  if (config.mode === 'sandbox') {
    const wake = wakeOption(deps);
    const listeners = {
      db,
      clock,
      realClock: realClockOf(deps),
      policy: services.policy,
      publicUrl: config.publicUrl,
      clientCertificate: webhookClientCertificate(config),
    };
    await main.register(async (sandboxScope) => {
      sandboxScope.addHook('onRequest', authenticateAdmin);
      sandboxScope.addHook('onRoute', documentAdminErrors);
      await sandboxScope.register(sandboxRoutes({ db, clock, ispb: config.pspIspb, settlementDelayMs: config.settlementDelayMs, metrics }));
      await sandboxScope.register(sandboxChargeRoutes({ db, clock, ispb: config.pspIspb, publicUrl: config.publicUrl }));
      await sandboxScope.register(sandboxMedRoutes({ db, clock, ispb: config.pspIspb, ...wake }));
      await sandboxScope.register(automaticoSandboxRoutes({ db, clock, ispb: config.pspIspb, windowDays: config.automaticoWindowDays, lists: services.lists }));
      await sandboxScope.register(payerRoutes({ db, clock, ispb: config.pspIspb, settlementDelayMs: config.settlementDelayMs, publicUrl: config.publicUrl, qrSigning: config.qrSigning, tlsCertFile: config.tls?.certFile }));
      if (deps.controls) {
        const network = networkDeps(deps, main.log);
        const rules = { runDue: () => runDue(network), nextEvent: (now: Date) => nextEvent(network, now) };
        await sandboxScope.register(controlRoutes(deps.controls, rules, () => deps.wakeWorker?.()));
        await sandboxScope.register(inboxReadRoutes({ controls: deps.controls, db, clock }));
      }
      await sandboxScope.register(listenerRoutes(listeners));
    });
    // The inbox and the listeners take webhooks, which carry no admin token.
    await main.register(listenerReceiveRoute(listeners));
    if (deps.controls) {
      const arrivals = perMinuteLimiters(config, main)(INBOX_ARRIVALS_PER_MINUTE, 'pix-api:inbox-arrivals:');
      await main.register(inboxReceiveRoute({ controls: deps.controls, db, clock, arrivals, realClock: realClockOf(deps), trust }));
    }
    await main.register(consoleRoutes({ ...deps, ...services }));
  }
}
