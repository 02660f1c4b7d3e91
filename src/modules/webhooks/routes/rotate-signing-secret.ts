import type { RouteApp } from '../../../http/route-app.ts';
import { errorResponses } from '../../../http/schemas.ts';
import * as service from '../service.ts';
import { secretWrite, Secret } from './schemas.ts';

/** POST /api/webhooks/signing-secret/rotate */
export function rotateWebhookSigningSecretRoute(app: RouteApp, deps: service.WebhooksDeps): void {
  app.post(
    '/api/webhooks/signing-secret/rotate',
    {
      schema: {
        ...secretWrite,
        operationId: 'rotateWebhookSigningSecret',
        summary: 'A new signing secret; the old one also signs for 24 hours',
        response: { 200: Secret, ...errorResponses(401, 404) },
      },
    },
    async (request) => service.rotateSigningSecret(deps, request.accountId),
  );
}
