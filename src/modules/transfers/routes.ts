import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses, Timestamp } from '../../http/schemas.ts';
import { createTransfer, requireIdempotencyKey, type TransfersDeps } from './service.ts';
import { accountSecurity } from '../auth/scopes.ts';

const TransferBody = Type.Object(
  {
    pixKey: Type.String({ minLength: 1, maxLength: 77, description: 'CPF (11 digits), CNPJ (14), e-mail, +55 phone or EVP (UUID)' }),
    creditorDocument: Type.Optional(
      Type.String({ minLength: 11, maxLength: 18, description: 'CPF or CNPJ of the key owner; required when priority is HIGH' }),
    ),
    priority: Type.Optional(Type.Union([Type.Literal('HIGH'), Type.Literal('NORM')], { description: 'HIGH settles at once; NORM (default) queues' })),
    description: Type.Optional(Type.String({ maxLength: 140, description: 'Message shown to the recipient' })),
    expiration: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 10800, description: 'Seconds in the queue before the transfer fails (default 600)' }),
    ),
    payment: Type.Object(
      {
        currency: Type.Literal('BRL'),
        amount: Type.Number({ description: 'Greater than 0, at most 2 decimals' }),
      },
      { additionalProperties: false },
    ),
    ispbDeny: Type.Optional(Type.Array(Type.String({ pattern: '^[0-9]{8}$' }), { maxItems: 100, description: 'ISPBs to refuse' })),
    externalId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, pattern: '^[\\x21-\\x7E]+$', description: 'Your reference; defaults to the idempotency key' }),
    ),
  },
  // The spec names a payment-flow field without giving its name: unknown fields are accepted.
  { additionalProperties: true },
);

const TransferResponse = Type.Object({
  endToEndId: Type.String({ description: 'End-to-end id (32 characters), also in the TRANSFER webhook' }),
  eventDate: Timestamp('Time the transfer was accepted'),
  id: Type.Integer({ description: 'Transaction id' }),
  payment: Type.Object({ amount: Type.Number() }),
  type: Type.Union([Type.Literal('PENDING'), Type.Literal('COMPLETED'), Type.Literal('ERROR')]),
});

export const transferRoutes =
  (deps: TransfersDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/dict/pix',
      {
        schema: {
          operationId: 'createPixTransfer',
          tags: ['Transfers'],
          summary: 'Send a PIX to a key',
          description:
            'Debits `available` and blocks the amount until settlement. Requires `x-idempotency-key` (UUID): a repeat with ' +
            'the same key and body returns the stored answer with `Idempotent-Replayed: true`; another body is 422; a repeat ' +
            'while the first is in flight is 409. The directory look-up it makes is limited per account: 429 with `Retry-After` ' +
            "when the account's look-ups are spent (an accepted transfer gives its look-up back; a key not in the directory, " +
            'or a HIGH transfer whose creditorDocument is not the owner\'s, costs more).',
          security: accountSecurity('pix.send'),
          headers: Type.Object({ 'x-idempotency-key': Type.Optional(Type.String({ description: 'UUID' })) }),
          body: TransferBody,
          response: { 201: TransferResponse, ...errorResponses(400, 401, 409, 415, 422, 429) },
        },
      },
      async (request, reply) => {
        const key = requireIdempotencyKey(request.headers['x-idempotency-key']);
        const answer = await createTransfer(deps, request.accountId, key, request.body);
        if (answer.replayed) void reply.header('idempotent-replayed', 'true');
        return reply.status(201).send(answer.body);
      },
    );
  };
