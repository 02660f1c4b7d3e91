import { Type } from 'typebox';
import { LIST_LIMITS } from '../../../http/list-queries.ts';
import type { RouteApp } from '../../../http/route-app.ts';
import { errorResponses, IdParam, Nullable, Timestamp } from '../../../http/schemas.ts';
import { DATE_OR_TIMESTAMP_PATTERN } from '../../../lib/dates.ts';
import { Metadata } from '../../transactions/routes/schemas.ts';
import * as service from '../service.ts';
import { read, LoggedEventType } from './schemas.ts';

const LogsQuery = Type.Object(
  {
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'At most 100 (default 20)' })),
    eventType: Type.Optional(LoggedEventType),
    transactionId: Type.Optional(IdParam('Transaction id')),
    success: Type.Optional(Type.Boolean()),
    startDate: Type.Optional(
      Type.String({ pattern: DATE_OR_TIMESTAMP_PATTERN, description: 'Date (São Paulo) or timestamp; default 31 days before endDate' }),
    ),
    endDate: Type.Optional(Type.String({ pattern: DATE_OR_TIMESTAMP_PATTERN, description: 'Date (inclusive, São Paulo) or timestamp; default now' })),
  },
  { additionalProperties: false },
);

const LogsResponse = Type.Object({
  data: Type.Array(
    Type.Object({
      webhookLogId: Type.Integer(),
      eventType: Type.String({ description: 'An event type, or pix, rec or cobr (a BCB callback): each one a value the eventType filter takes' }),
      transactionId: Nullable(Type.Integer()),
      url: Type.String(),
      webhookId: Type.String({ description: 'The webhook-id header: the same for every attempt of one notification' }),
      attempt: Type.Integer(),
      statusCode: Nullable(Type.Integer()),
      success: Type.Boolean(),
      durationMs: Type.Integer(),
      error: Nullable(
        Type.String({
          description:
            '`HTTP <status>` or the class of failure, as in a resend; never what the destination answered. In the sandbox, also the fault ' +
            'that touched the attempt and what it did, on a delivered attempt too (`HTTP 503 (sandbox fault 3)`, `delayed 1500 ms by sandbox fault 3`)',
        }),
      ),
      isResend: Type.Boolean(),
      createdAt: Timestamp(),
    }),
  ),
  metadata: Metadata,
});

/** GET /api/webhooks/logs */
export function listWebhookLogsRoute(app: RouteApp, deps: service.WebhooksDeps): void {
  app.get(
    '/api/webhooks/logs',
    {
      schema: {
        ...read,
        operationId: 'listWebhookLogs',
        summary: 'Every delivery attempt and resend of an interval, newest first',
        description: `The interval is at most 31 days, the last 31 by default. ${LIST_LIMITS}`,
        querystring: LogsQuery,
        response: { 200: LogsResponse, ...errorResponses(400, 401, 429, 503) },
      },
    },
    async (request) => service.logs(deps, request.accountId, request.query),
  );
}
