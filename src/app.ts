import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import type { Config } from './config.ts';
import type { Db } from './db/client.ts';
import { accountAuthentication, adminAuthentication } from './http/auth.ts';
import type { CertificateTrust } from './http/client-certificate.ts';
import { errorBody, registerErrorHandling, registerNulGuard } from './http/errors.ts';
import { lazyChildLogger, loggerOptions } from './http/logging.ts';
import { openApiOptions } from './http/openapi.ts';
import { ErrorBodySchema } from './http/schemas.ts';
import { registerValidation } from './http/validation.ts';
import type { Clock } from './lib/clock.ts';
import { adminRoutes } from './modules/admin/routes.ts';
import { authRoutes } from './modules/auth/routes.ts';
import { chargeRoutes, sandboxChargeRoutes } from './modules/charges/routes.ts';
import { CertificateLinkCache } from './modules/auth/link-cache.ts';
import { defaultSecretCheckLimits, FAILED_TOKEN_REQUESTS_PER_MINUTE, SecretChecks } from './modules/auth/secret-checks.ts';
import { decoyHash } from './modules/auth/secrets.ts';
import { TokenService } from './modules/auth/tokens.ts';
import { healthRoutes } from './modules/health/routes.ts';
import { balanceRoutes } from './modules/ledger/routes.ts';
import { sandboxMedRoutes } from './modules/meds/routes.ts';
import { refundRoutes } from './modules/refunds/routes.ts';
import { sandboxRoutes } from './modules/sandbox/routes.ts';
import { transactionRoutes } from './modules/transactions/routes.ts';
import { TransferBatcher } from './modules/transfers/batcher.ts';
import { transferRoutes } from './modules/transfers/routes.ts';
import { webhookRoutes } from './modules/webhooks/routes.ts';
import { WebhookSender } from './modules/webhooks/sender.ts';
import { MemoryRateLimiter, RedisRateLimiter, type RateLimiter } from './http/rate-limit.ts';
import { RESEND_LIMIT_PER_MINUTE } from './modules/webhooks/service.ts';

export interface AppDeps {
  readonly config: Config;
  readonly db: Db;
  readonly clock: Clock;
  /** Pino level, or false for no logs (tests). */
  readonly logLevel?: string | false;
  /** Where logs go (stdout by default); tests capture them to check redaction. */
  readonly logStream?: NodeJS.WritableStream;
  /** Wakes this process's settlement worker when a HIGH transfer is accepted. */
  readonly wakeWorker?: () => void;
  /** Limits of token requests (tests make them small). */
  readonly secretCheckLimits?: { concurrency?: number; maxWaiting?: number; failuresPerMinute?: number };
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
export const BODY_LIMIT_BYTES = 64 * 1024;

function httpsOptions(config: Config) {
  if (!config.tls) return null;
  return {
    cert: readFileSync(config.tls.certFile),
    key: readFileSync(config.tls.keyFile),
    ...(config.tls.clientCaFile ? { ca: readFileSync(config.tls.clientCaFile) } : {}),
    // The certificate is requested but judged by the application, so a missing one gets the
    // spec's 400 instead of a failed handshake.
    requestCert: true,
    rejectUnauthorized: false,
  };
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, db, clock } = deps;
  const https = httpsOptions(config);
  const app = Fastify({
    ...(https ? { https } : {}),
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
    // A bad percent-escape or an over-long path parameter is refused before routing: in the
    // error shape too (Fastify's own answer adds a `code`, and names 414 "Bad Request").
    frameworkErrors: (error, request, reply) => {
      const status = error.code === 'FST_ERR_BAD_URL' ? 400 : error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : 500;
      const message = status === 400 ? 'The URL is not valid (bad percent-encoding)' : status === 414 ? 'A path parameter is too long' : 'Internal server error';
      void (reply as FastifyReply).header('x-request-id', request.id).status(status).send(errorBody(status, message));
    },
    return503OnClosing: true,
    forceCloseConnections: 'idle',
  }).withTypeProvider<TypeBoxTypeProvider>();

  registerValidation(app);
  // JSON is the only body format: anything else is 415.
  app.removeContentTypeParser(['text/plain']);
  registerErrorHandling(app);
  registerNulGuard(app);
  app.addSchema(ErrorBodySchema);
  app.addHook('onRequest', async (request, reply) => {
    void reply.header('x-request-id', request.id);
  });

  await app.register(swagger, openApiOptions());
  await app.register(swaggerUi, { routePrefix: '/docs' });

  // Resends are delivered by the API process itself, with the same rules as the worker's deliveries.
  const resendSender = new WebhookSender({ allowPrivate: config.webhookAllowPrivate, caFile: config.webhookCaFile });
  // Limits every process shares through Redis when there is one (REDIS_URL).
  const perMinute = (limit: number, prefix: string): RateLimiter =>
    config.redisUrl
      ? new RedisRateLimiter(config.redisUrl, {
          limit,
          windowMs: 60_000,
          prefix,
          onError: (error) => app.log.warn({ err: error }, 'Redis rate limit unavailable; counting in this process'),
        })
      : new MemoryRateLimiter(limit, 60_000);
  const resendLimiter = perMinute(RESEND_LIMIT_PER_MINUTE, 'pix-api:resend:');
  const secrets = new SecretChecks({
    ...defaultSecretCheckLimits(),
    ...deps.secretCheckLimits,
    failures: perMinute(deps.secretCheckLimits?.failuresPerMinute ?? FAILED_TOKEN_REQUESTS_PER_MINUTE, 'pix-api:token-failures:'),
  });
  app.addHook('onClose', async () => {
    await resendSender.close();
    await resendLimiter.close();
    await secrets.close();
  });
  const wake = deps.wakeWorker ? { onHighPriority: deps.wakeWorker } : {};
  const tokens = new TokenService(db, clock);
  // Computed now, so the first unknown client id costs what every later one does.
  await decoyHash();
  const links = new CertificateLinkCache(db, clock);
  const trust: CertificateTrust = { trustedProxies: config.trustedProxies, requireClientCa: Boolean(config.tls?.clientCaFile) };

  await app.register(healthRoutes({ db }));
  await app.register(authRoutes({ db, clock, tokens, trust, secrets }));

  await app.register(async (accountScope) => {
    accountScope.addHook('onRequest', accountAuthentication({ clock, tokens, trust, links }));
    await accountScope.register(balanceRoutes({ db, clock }));
    await accountScope.register(
      transferRoutes({
        db,
        clock,
        ispb: config.pspIspb,
        batcher: new TransferBatcher(db),
        ...wake,
      }),
    );
    await accountScope.register(transactionRoutes({ db, clock }));
    await accountScope.register(chargeRoutes({ db, clock, ispb: config.pspIspb }));
    await accountScope.register(refundRoutes({ db, clock, ispb: config.pspIspb, ...wake }));
    await accountScope.register(
      webhookRoutes({ db, clock, sender: resendSender, allowPrivate: config.webhookAllowPrivate, resendLimiter }),
    );
  });

  await app.register(async (adminScope) => {
    adminScope.addHook('onRequest', adminAuthentication(config.adminToken));
    await adminScope.register(adminRoutes({ db, ispb: config.pspIspb, onCertificateUnlinked: (id, fp) => links.invalidate(id, fp) }));
    if (config.mode === 'sandbox') {
      await adminScope.register(sandboxRoutes({ db, clock, ispb: config.pspIspb, settlementDelayMs: config.settlementDelayMs }));
      await adminScope.register(sandboxChargeRoutes({ db, clock, ispb: config.pspIspb }));
      await adminScope.register(sandboxMedRoutes({ db, clock, ispb: config.pspIspb, ...wake }));
    }
  });

  return app;
}
