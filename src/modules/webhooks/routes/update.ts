import { Type } from 'typebox';
import type { RouteApp } from '../../../http/route-app.ts';
import { errorResponses, IdParam } from '../../../http/schemas.ts';
import * as service from '../service.ts';
import { write, Headers, Registration } from './schemas.ts';

/** PATCH /api/webhooks/{id} */
export function updateWebhookRoute(app: RouteApp, deps: service.WebhooksDeps): void {
  app.patch(
    '/api/webhooks/:id',
    {
      schema: {
        ...write,
        operationId: 'updateWebhook',
        summary: 'Switch a registration on or off, or replace its headers',
        params: Type.Object({ id: IdParam('Registration id') }),
        body: Type.Object({ isActive: Type.Optional(Type.Boolean()), headers: Type.Optional(Headers) }, { additionalProperties: false, minProperties: 1 }),
        response: { 200: Registration, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => service.update(deps, request.accountId, BigInt(request.params.id), request.body),
  );
}
