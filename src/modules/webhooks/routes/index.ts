import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { WebhooksDeps } from '../service.ts';
import { deleteWebhookRoute } from './delete.ts';
import { listWebhooksRoute } from './list.ts';
import { listWebhookLogsRoute } from './logs.ts';
import { registerWebhookRoute } from './register.ts';
import { resendWebhookRoute } from './resend.ts';
import { rotateWebhookSigningSecretRoute } from './rotate-signing-secret.ts';
import { getWebhookSigningSecretRoute } from './signing-secret.ts';
import { updateWebhookRoute } from './update.ts';

/** The webhook operations, in the order the OpenAPI document lists them. */
export const webhookRoutes =
  (deps: WebhooksDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    registerWebhookRoute(app, deps);
    listWebhooksRoute(app, deps);
    updateWebhookRoute(app, deps);
    deleteWebhookRoute(app, deps);
    getWebhookSigningSecretRoute(app, deps);
    rotateWebhookSigningSecretRoute(app, deps);
    listWebhookLogsRoute(app, deps);
    resendWebhookRoute(app, deps);
  };
