import { Type } from 'typebox';
import type { RouteApp } from '../../../http/route-app.ts';
import { errorResponses, IdParam } from '../../../http/schemas.ts';
import * as service from '../service.ts';
import { write } from './schemas.ts';

/** DELETE /api/webhooks/{id} */
export function deleteWebhookRoute(app: RouteApp, deps: service.WebhooksDeps): void {
  app.delete(
    '/api/webhooks/:id',
    {
      schema: {
        ...write,
        operationId: 'deleteWebhook',
        summary: 'Remove a registration (its pending deliveries stop)',
        params: Type.Object({ id: IdParam('Registration id') }),
        response: { 204: Type.Null(), ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      await service.remove(deps, request.accountId, BigInt(request.params.id));
      return reply.status(204).send(null);
    },
  );
}
