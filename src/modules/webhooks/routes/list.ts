import { Type } from 'typebox';
import type { RouteApp } from '../../../http/route-app.ts';
import { errorResponses } from '../../../http/schemas.ts';
import * as service from '../service.ts';
import { read, Registration } from './schemas.ts';

/** GET /api/webhooks */
export function listWebhooksRoute(app: RouteApp, deps: service.WebhooksDeps): void {
  app.get(
    '/api/webhooks',
    {
      schema: {
        ...read,
        operationId: 'listWebhooks',
        summary: "The account's webhook registrations",
        response: {
          200: Type.Object({ accountId: Type.Integer(), webhooks: Type.Array(Registration), total: Type.Integer() }),
          ...errorResponses(401, 404),
        },
      },
    },
    async (request) => service.list(deps, request.accountId),
  );
}
