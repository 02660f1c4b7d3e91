import { Type } from 'typebox';
import type { RouteApp } from '../../../http/route-app.ts';
import { errorResponses } from '../../../http/schemas.ts';
import * as service from '../service.ts';
import { write, EventType, Headers } from './schemas.ts';

/** POST /api/webhooks */
export function registerWebhookRoute(app: RouteApp, deps: service.WebhooksDeps): void {
  app.post(
    '/api/webhooks',
    {
      schema: {
        ...write,
        operationId: 'registerWebhook',
        summary: 'Register a URL for an event type',
        description:
          'HTTPS on port 443 (or a port the operator lists in WEBHOOK_ALLOWED_PORTS), on a public address (private and ' +
          'loopback ones too where WEBHOOK_ALLOW_PRIVATE allows, as it does by default in sandbox mode, on any port). Up to 3 ' +
          'active URLs per event type and 20 registrations per account, active or not. Registering a URL already registered ' +
          'for the event type replaces its headers, adds 1 to its version and switches it on again.',
        body: Type.Object(
          { url: Type.String({ minLength: 1, maxLength: 2048 }), eventType: EventType, headers: Type.Optional(Headers) },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Object({ success: Type.Boolean(), message: Type.String(), id: Type.Integer(), version: Type.Integer() }),
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (request, reply) => reply.status(201).send(await service.register(deps, request.accountId, request.body)),
  );
}
