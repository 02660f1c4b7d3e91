import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { SandboxDeps } from '../service.ts';
import { sandboxIncomingPixRoute } from './incoming-pix.ts';
import { sandboxIncomingRefundRoute } from './incoming-refund.ts';
import { sandboxRegisterExternalKeyRoute } from './register-external-key.ts';
import { sandboxSettleRoute } from './settle.ts';

/** The simulated network's operations, in the order the OpenAPI document lists them. */
export const sandboxRoutes =
  (deps: SandboxDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    sandboxRegisterExternalKeyRoute(app, deps);
    sandboxIncomingPixRoute(app, deps);
    sandboxIncomingRefundRoute(app, deps);
    sandboxSettleRoute(app, deps);
  };
