import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ADMIN_SECURITY, errorResponses, Nullable, Timestamp } from '../../http/schemas.ts';
import { receiveIncomingPix, receiveIncomingRefund, registerExternalKey, settleNow, type SandboxDeps } from './service.ts';

const Decimal2 = (description: string) => Type.String({ pattern: '^[0-9]{1,16}\\.[0-9]{2}$', description });
const Name = Type.String({ minLength: 1, maxLength: 140 });
const DocumentField = Type.String({ minLength: 11, maxLength: 18, description: 'CPF or CNPJ' });
const Ispb = Type.String({ pattern: '^[0-9]{8}$' });
const Movement = Type.Object({ endToEndId: Type.String(), transactionId: Type.Integer() });

export const sandboxRoutes =
  (deps: SandboxDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const common = { tags: ['Sandbox'], security: ADMIN_SECURITY };

    app.post(
      '/sandbox/dict/keys',
      {
        schema: {
          ...common,
          operationId: 'sandboxRegisterExternalKey',
          summary: 'Register a key held at another institution',
          body: Type.Object(
            {
              key: Type.String({ minLength: 1, maxLength: 77 }),
              name: Name,
              document: DocumentField,
              ispb: Ispb,
              bankName: Type.Optional(Type.String({ maxLength: 140 })),
              branch: Type.Optional(Type.String({ maxLength: 10 })),
              accountNumber: Type.Optional(Type.String({ maxLength: 20 })),
              behavior: Type.Optional(
                Type.Union([Type.Literal('reject'), Type.Literal('timeout')], {
                  description: 'reject: every transfer to it ends in ERROR; timeout: transfers never settle (expiration applies)',
                }),
              ),
            },
            { additionalProperties: false },
          ),
          response: {
            201: Type.Object({ key: Type.String(), type: Type.String(), ispb: Type.String(), behavior: Nullable(Type.String()) }),
            ...errorResponses(400, 401, 409),
          },
        },
      },
      async (request, reply) => reply.status(201).send(await registerExternalKey(deps, request.body)),
    );

    app.post(
      '/sandbox/pix/incoming',
      {
        schema: {
          ...common,
          operationId: 'sandboxIncomingPix',
          summary: 'A PIX arrives from another institution',
          body: Type.Object(
            {
              pixKey: Type.String({ minLength: 1, maxLength: 77 }),
              amount: Decimal2('Amount, "10.00"'),
              payer: Type.Object(
                {
                  name: Name,
                  document: DocumentField,
                  ispb: Type.Optional(Ispb),
                  behavior: Type.Optional(
                    Type.Literal('reject', { description: "The payer's institution refuses refunds of this PIX: they end NAO_REALIZADO" }),
                  ),
                },
                { additionalProperties: false },
              ),
              txid: Type.Optional(Type.String({ pattern: '^[a-zA-Z0-9]{26,35}$', description: 'Pays the charge with this txid of the account owning pixKey' })),
              receivedAt: Type.Optional(Timestamp('Back-dates the receipt (to test the refund window)')),
              description: Type.Optional(Type.String({ maxLength: 140 })),
            },
            { additionalProperties: false },
          ),
          response: { 201: Movement, ...errorResponses(400, 401, 404, 422) },
        },
      },
      async (request, reply) => reply.status(201).send(await receiveIncomingPix(deps, request.body)),
    );

    app.post(
      '/sandbox/refunds/incoming',
      {
        schema: {
          ...common,
          operationId: 'sandboxIncomingRefund',
          summary: 'The receiver of one of our transfers sends money back (REFUND_OUT)',
          body: Type.Object(
            { endToEndId: Type.String({ pattern: '^[a-zA-Z0-9]{32}$' }), amount: Decimal2('Amount refunded, "10.00"') },
            { additionalProperties: false },
          ),
          response: { 201: Movement, ...errorResponses(400, 401, 404, 422) },
        },
      },
      async (request, reply) => reply.status(201).send(await receiveIncomingRefund(deps, request.body)),
    );

    app.post(
      '/sandbox/settle',
      {
        schema: {
          ...common,
          operationId: 'sandboxSettle',
          summary: 'Settle every queued transfer now',
          response: { 200: Type.Object({ settled: Type.Integer(), failed: Type.Integer() }), ...errorResponses(401) },
        },
      },
      async () => settleNow(deps),
    );
  };
