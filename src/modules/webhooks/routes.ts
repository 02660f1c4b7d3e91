import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { LIST_LIMITS } from '../../http/list-queries.ts';
import { BEARER_SECURITY, errorResponses, IdParam, Nullable, Timestamp } from '../../http/schemas.ts';
import { DATE_OR_TIMESTAMP_PATTERN } from '../../lib/dates.ts';
import { Metadata } from '../transactions/routes.ts';
import * as service from './service.ts';

const EventType = Type.Union(
  [
    Type.Literal('cash_in'),
    Type.Literal('cash_out'),
    Type.Literal('refund_in'),
    Type.Literal('refund_out'),
    Type.Literal('med_created'),
    Type.Literal('med_accepted'),
    Type.Literal('med_rejected'),
  ],
  { description: 'cash_in (RECEIVE), cash_out (TRANSFER), refund_in / refund_out (REFUND), med_created / med_accepted / med_rejected (MED)' },
);

const Header = Type.Object(
  { key: Type.String({ minLength: 1, maxLength: 64 }), value: Type.String({ maxLength: 1024 }) },
  { additionalProperties: false },
);
const HEADER_RULES = 'At most 5; Host, Content-Length, Connection, Transfer-Encoding, Content-Type, User-Agent and webhook-* are refused';
const Headers = Type.Union(
  [
    Type.Array(Header, { maxItems: service.MAX_HEADERS, description: `[{key, value}], as the spec gives them. ${HEADER_RULES}` }),
    Type.Record(Type.String({ minLength: 1, maxLength: 64 }), Type.String({ maxLength: 1024 }), {
      maxProperties: service.MAX_HEADERS,
      description: `{name: value}, as the listing returns them. ${HEADER_RULES}`,
    }),
  ],
  { description: 'Custom headers sent with every delivery to the URL' },
);

const Registration = Type.Object({
  id: Type.Integer(),
  type: Type.String({ description: 'Event type' }),
  url: Type.String(),
  headers: Type.Record(Type.String(), Type.String()),
  isActive: Type.Boolean(),
  version: Type.Integer({ description: 'Starts at 1; each re-registration or change of headers adds 1' }),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
});

const Secret = Type.Object({ secret: Type.String({ description: 'whsec_... (Standard Webhooks)' }) });

const Delivery = Type.Object({
  url: Type.String(),
  webhookLogId: Type.Integer(),
  sentAt: Timestamp(),
  statusCode: Type.Integer({ description: 'Status the destination answered; 0 when it could not be reached' }),
  success: Type.Boolean(),
  error: Nullable(
    Type.String({
      description:
        "`HTTP <status>`, or the class of failure (timeout, connection refused, connection failed, TLS failure, DNS failure, " +
        'non-public address, port not allowed) with the setting that changes it; never what the destination answered',
    }),
  ),
});

export const webhookRoutes =
  (deps: service.WebhooksDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const common = { tags: ['Webhooks'], security: BEARER_SECURITY };

    app.post(
      '/api/webhooks',
      {
        schema: {
          ...common,
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

    app.get(
      '/api/webhooks',
      {
        schema: {
          ...common,
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

    app.patch(
      '/api/webhooks/:id',
      {
        schema: {
          ...common,
          operationId: 'updateWebhook',
          summary: 'Switch a registration on or off, or replace its headers',
          params: Type.Object({ id: IdParam('Registration id') }),
          body: Type.Object({ isActive: Type.Optional(Type.Boolean()), headers: Type.Optional(Headers) }, { additionalProperties: false, minProperties: 1 }),
          response: { 200: Registration, ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => service.update(deps, request.accountId, BigInt(request.params.id), request.body),
    );

    app.delete(
      '/api/webhooks/:id',
      {
        schema: {
          ...common,
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

    app.get(
      '/api/webhooks/signing-secret',
      {
        schema: {
          ...common,
          operationId: 'getWebhookSigningSecret',
          summary: 'The secret that signs deliveries (Standard Webhooks, HMAC-SHA256)',
          response: { 200: Secret, ...errorResponses(401, 404) },
        },
      },
      async (request) => service.signingSecret(deps, request.accountId),
    );

    app.post(
      '/api/webhooks/signing-secret/rotate',
      {
        schema: {
          ...common,
          operationId: 'rotateWebhookSigningSecret',
          summary: 'A new signing secret; the old one also signs for 24 hours',
          response: { 200: Secret, ...errorResponses(401, 404) },
        },
      },
      async (request) => service.rotateSigningSecret(deps, request.accountId),
    );

    app.get(
      '/api/webhooks/logs',
      {
        schema: {
          ...common,
          operationId: 'listWebhookLogs',
          summary: 'Every delivery attempt and resend of an interval, newest first',
          description: `The interval is at most 31 days, the last 31 by default. ${LIST_LIMITS}`,
          querystring: Type.Object(
            {
              page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
              size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'At most 100 (default 20)' })),
              eventType: Type.Optional(EventType),
              transactionId: Type.Optional(IdParam('Transaction id')),
              success: Type.Optional(Type.Boolean()),
              startDate: Type.Optional(
                Type.String({ pattern: DATE_OR_TIMESTAMP_PATTERN, description: 'Date (São Paulo) or timestamp; default 31 days before endDate' }),
              ),
              endDate: Type.Optional(Type.String({ pattern: DATE_OR_TIMESTAMP_PATTERN, description: 'Date (inclusive, São Paulo) or timestamp; default now' })),
            },
            { additionalProperties: false },
          ),
          response: {
            200: Type.Object({
              data: Type.Array(
                Type.Object({
                  webhookLogId: Type.Integer(),
                  eventType: Type.String(),
                  transactionId: Nullable(Type.Integer()),
                  url: Type.String(),
                  webhookId: Type.String({ description: 'The webhook-id header: the same for every attempt of one notification' }),
                  attempt: Type.Integer(),
                  statusCode: Nullable(Type.Integer()),
                  success: Type.Boolean(),
                  durationMs: Type.Integer(),
                  error: Nullable(Type.String({ description: '`HTTP <status>` or the class of failure, as in a resend; never what the destination answered' })),
                  isResend: Type.Boolean(),
                  createdAt: Timestamp(),
                }),
              ),
              metadata: Metadata,
            }),
            ...errorResponses(400, 401, 429, 503),
          },
        },
      },
      async (request) => service.logs(deps, request.accountId, request.query),
    );

    app.post(
      '/api/resend-webhook/:transactionIdentifier',
      {
        // The body is optional: none at all reads as {}.
        preValidation: async (request) => {
          request.body ??= {};
        },
        schema: {
          ...common,
          operationId: 'resendWebhook',
          summary: "Deliver a transaction's notification again",
          description:
            'By numeric id, externalId or end-to-end id. To the body `url` (used once, not stored) or to every active URL ' +
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
  };
