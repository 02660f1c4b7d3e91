import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { adminTokenCheck } from '../../../http/auth.ts';
import { PayerConnections } from '../../payer/fetch.ts';
import { ChangeFeed } from '../changes.ts';
import { CHANGE_SOURCES } from '../panels.ts';
import { consoleContext, type ConsoleDeps } from '../service.ts';
import { ConsoleSessions } from '../session.ts';
import { actionRoutes } from './actions.ts';
import { assetRoutes } from './assets.ts';
import { eventRoutes } from './events.ts';
import { registerGuard } from './guard.ts';
import { pageRoutes } from './pages.ts';
import { signInRoutes } from './sign-in.ts';

export type { ConsoleDeps } from '../service.ts';

/**
 * The sandbox's web console under /console (sandbox mode only), signed in with ADMIN_TOKEN:
 * server-drawn pages, one static script, live updates over server-sent events. Its routes are
 * pages and forms, left out of the OpenAPI document.
 */
export const consoleRoutes =
  (deps: ConsoleDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const connections = new PayerConnections({ publicUrl: deps.config.publicUrl, tlsCertFile: deps.config.tls?.certFile });
    app.addHook('onClose', () => connections.close());
    const ctx = consoleContext(deps, connections);
    const realClock = ctx.realClock;
    const sessions = new ConsoleSessions(deps.config.adminToken, () => realClock.now().getTime());
    const feed = new ChangeFeed(deps.db, CHANGE_SOURCES, { onError: (error) => app.log.warn({ err: error }, 'console: the change marker could not be read') });
    app.addHook('onClose', async () => feed.close());
    const checkAdminToken = adminTokenCheck({ adminToken: deps.config.adminToken, clock: realClock, trust: deps.trust, failures: deps.adminFailures });

    registerGuard(app, sessions);
    await app.register(signInRoutes({ sessions, checkAdminToken, secure: deps.config.publicUrl.startsWith('https:') }));
    await app.register(assetRoutes());
    await app.register(eventRoutes(feed));
    await app.register(pageRoutes({ ctx, feed, sessions }));
    await app.register(actionRoutes({ ctx, sessions }));
  };
