import { Type } from 'typebox';
import type { RouteApp } from '../../../http/route-app.ts';
import { errorResponses, Timestamp } from '../../../http/schemas.ts';
import * as service from '../service.ts';
import { write, Delivery } from './schemas.ts';

/** POST /api/resend-webhook/{transactionIdentifier} */
export function resendWebhookRoute(app: RouteApp, deps: service.WebhooksDeps): void {
  app.post(
    '/api/resend-webhook/:transactionIdentifier',
    {
      // The body is optional: none at all reads as {}.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        ...write,
        operationId: 'resendWebhook',
        summary: "Deliver a transaction's notification again",
        description:
          'By numeric id, externalId or end-to-end id; or the latest Pix Automático callback of a recurrence (idRec) or a recurring charge (txid). To the body `url` (used once, not stored) or to every active URL ' +
          "of the transaction's event type, with the notification's own webhook-id. At most 60 per minute per account (429 " +
          'with Retry-After).',
        params: Type.Object({ transactionIdentifier: Type.String({ minLength: 1, maxLength: 64 }) }),
        body: Type.Object(
          { url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'HTTPS URL for this resend only' })) },
          { additionalProperties: false, description: 'Optional' },
        ),
        response: {
          200: Type.Object({
            message: Type.String(),
            webhookLogId: Type.Integer(),
            sentAt: Timestamp(),
            statusCode: Type.Integer(),
            webhookId: Type.String(),
            deliveries: Type.Array(Delivery),
          }),
          ...errorResponses(400, 401, 404, 429),
        },
      },
    },
    async (request) => service.resend(deps, request.accountId, request.params.transactionIdentifier, request.body),
  );
}
