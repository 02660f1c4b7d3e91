import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses, Timestamp } from '../../http/schemas.ts';
import { getRefund, requestRefund, type RefundsDeps } from './service.ts';
import { accountSecurity } from '../auth/scopes.ts';

const Params = Type.Object({
  e2eid: Type.String({ pattern: '^[a-zA-Z0-9]{32}$', description: 'End-to-end id of the received PIX (32 alphanumerics)' }),
  id: Type.String({ pattern: '^[a-zA-Z0-9]{1,35}$', description: 'Your refund id, 1 to 35 alphanumerics' }),
});

// The refund of an accepted MED has the id MED-{medId}, which clients can read but not choose.
const ReadParams = Type.Object({
  e2eid: Params.properties.e2eid,
  id: Type.String({ pattern: '^[a-zA-Z0-9-]{1,35}$', description: 'Your refund id (or MED-{medId} for a MED refund)' }),
});

const RefundBody = Type.Object(
  {
    valor: Type.String({ pattern: '^[0-9]{1,15}\\.[0-9]{2}$', description: 'Amount to refund, decimal with 2 places ("10.00")' }),
    natureza: Type.Optional(
      Type.Union([Type.Literal('ORIGINAL'), Type.Literal('RETIRADA')], {
        description: 'ORIGINAL (default): an ordinary PIX or the purchase part; RETIRADA: a withdrawal or the change part',
      }),
    ),
    descricao: Type.Optional(Type.String({ maxLength: 140, description: 'Message to the payer' })),
  },
  { additionalProperties: false },
);

const Refund = Type.Object({
  id: Type.String({ description: 'Your refund id' }),
  rtrId: Type.String({ description: 'Identifier of the refund transaction (32 characters, D...)' }),
  valor: Type.String({ description: 'Decimal with 2 places' }),
  natureza: Type.Union([Type.Literal('ORIGINAL'), Type.Literal('RETIRADA'), Type.Literal('MED_OPERACIONAL'), Type.Literal('MED_FRAUDE')]),
  descricao: Type.Optional(Type.String()),
  horario: Type.Object({
    solicitacao: Timestamp('Request time'),
    liquidacao: Type.Optional(Timestamp('Settlement time, once DEVOLVIDO')),
  }),
  status: Type.Union([Type.Literal('EM_PROCESSAMENTO'), Type.Literal('DEVOLVIDO'), Type.Literal('NAO_REALIZADO')]),
  motivo: Type.Optional(Type.String({ description: 'Why it was not made (NAO_REALIZADO)' })),
});

export const refundRoutes =
  (deps: RefundsDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.put(
      '/pix/:e2eid/devolucao/:id',
      {
        schema: {
          operationId: 'requestRefund',
          tags: ['Refunds'],
          summary: 'Refund (part of) a received PIX',
          description:
            'Debits `available` at once (the refund is `EM_PROCESSAMENTO`); the settlement worker then makes it `DEVOLVIDO` ' +
            '(REFUND webhook, `refund_in`) or `NAO_REALIZADO` with `motivo`, returning the money. The refunds of one PIX never ' +
            'add up to more than its amount (400); the window is 89 days after the PIX was received (422). Repeating an id ' +
            'with the same body answers 200 with the refund as it is now; with another body, 409.',
          security: accountSecurity('pix.write'),
          params: Params,
          body: RefundBody,
          response: { 200: Refund, 201: Refund, ...errorResponses(400, 401, 404, 409, 422) },
        },
      },
      async (request, reply) => {
        const { e2eid, id } = request.params;
        const answer = await requestRefund(deps, request.accountId, e2eid, id, request.body);
        return reply.status(answer.status).send(answer.body);
      },
    );

    app.get(
      '/pix/:e2eid/devolucao/:id',
      {
        schema: {
          operationId: 'getRefund',
          tags: ['Refunds'],
          summary: 'A refund of a received PIX',
          security: accountSecurity('pix.read'),
          params: ReadParams,
          response: { 200: Refund, ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => getRefund(deps, request.accountId, request.params.e2eid, request.params.id),
    );
  };
