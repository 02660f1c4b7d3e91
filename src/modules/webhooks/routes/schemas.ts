import { Type } from 'typebox';
import { Nullable, Timestamp } from '../../../http/schemas.ts';
import { MAX_HEADERS } from '../service.ts';
import { accountSecurity } from '../../auth/scopes.ts';
import { WEBHOOK_EVENT_TYPES } from '../event-types.ts';

/** The tag and security of each kind of webhook operation. */
const tags = ['Webhooks'];
export const write = { tags, security: accountSecurity('webhook.write') };
export const read = { tags, security: accountSecurity('webhook.read') };
export const secretRead = { tags, security: accountSecurity('webhooksecret.read') };
export const secretWrite = { tags, security: accountSecurity('webhooksecret.write') };

export const EventType = Type.Union(
  WEBHOOK_EVENT_TYPES.map((type) => Type.Literal(type)),
  { description: 'cash_in (RECEIVE), cash_out (TRANSFER), refund_in / refund_out (REFUND), med_created / med_accepted / med_rejected (MED)' },
);

/**
 * What the delivery log calls an entry's event: a registration's event type, or `pix` for BCB's
 * callbacks to a key's webhook. The log's filter takes each value its entries carry.
 */
export const LoggedEventType = Type.Union([...EventType.anyOf, Type.Literal('pix'), Type.Literal('rec'), Type.Literal('cobr')], {
  description:
    "An event type, or one of BCB's callbacks: pix, a received Pix to its key's webhook (PUT /v2/webhook/{chave}); rec and cobr, " +
    "Pix Automático's recurrences and recurring charges to PUT /v2/webhookrec's and /v2/webhookcobr's",
});

const Header = Type.Object(
  { key: Type.String({ minLength: 1, maxLength: 64 }), value: Type.String({ maxLength: 1024 }) },
  { additionalProperties: false },
);
const HEADER_RULES = 'At most 5; Host, Content-Length, Connection, Transfer-Encoding, Content-Type, User-Agent and webhook-* are refused';
export const Headers = Type.Union(
  [
    Type.Array(Header, { maxItems: MAX_HEADERS, description: `[{key, value}], as the spec gives them. ${HEADER_RULES}` }),
    Type.Record(Type.String({ minLength: 1, maxLength: 64 }), Type.String({ maxLength: 1024 }), {
      maxProperties: MAX_HEADERS,
      description: `{name: value}, as the listing returns them. ${HEADER_RULES}`,
    }),
  ],
  { description: 'Custom headers sent with every delivery to the URL' },
);

export const Registration = Type.Object({
  id: Type.Integer(),
  type: Type.String({ description: 'Event type' }),
  url: Type.String(),
  headers: Type.Record(Type.String(), Type.String()),
  isActive: Type.Boolean(),
  version: Type.Integer({ description: 'Starts at 1; each re-registration or change of headers adds 1' }),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
});

export const Secret = Type.Object({ secret: Type.String({ description: 'whsec_... (Standard Webhooks)' }) });

export const Delivery = Type.Object({
  url: Type.String(),
  webhookLogId: Type.Integer(),
  sentAt: Timestamp(),
  statusCode: Type.Integer({ description: 'Status the destination answered; 0 when it could not be reached' }),
  success: Type.Boolean(),
  error: Nullable(
    Type.String({
      description:
        "`HTTP <status>`, or the class of failure (timeout, connection refused, connection failed, TLS failure, DNS failure, " +
        'non-public address, port not allowed) with the setting that changes it; never what the destination answered. In the sandbox, also ' +
        'the fault that touched the attempt and what it did, on a delivered attempt too (`HTTP 503 (sandbox fault 3)`, `delayed 1500 ms by sandbox fault 3`)',
    }),
  ),
});
