import type { RouteApp } from '../../../http/route-app.ts';
import { errorResponses } from '../../../http/schemas.ts';
import * as service from '../service.ts';
import { secretRead, Secret } from './schemas.ts';

/** GET /api/webhooks/signing-secret */
export function getWebhookSigningSecretRoute(app: RouteApp, deps: service.WebhooksDeps): void {
  app.get(
    '/api/webhooks/signing-secret',
    {
      schema: {
        ...secretRead,
        operationId: 'getWebhookSigningSecret',
        summary: 'The secret that signs deliveries (Standard Webhooks, HMAC-SHA256)',
        response: { 200: Secret, ...errorResponses(401, 404) },
      },
    },
    async (request) => service.signingSecret(deps, request.accountId),
  );
}
