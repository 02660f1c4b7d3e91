import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ADMIN_SECURITY, errorResponses, IdParam, Nullable, Timestamp } from '../../http/schemas.ts';
import { closeMed, openMed, type MedDeps } from './service.ts';

const Reason = Type.Union([Type.Literal('FRAUD'), Type.Literal('OPERATIONAL_FLAW')], {
  description: 'FRAUD (refund natureza MED_FRAUDE) or OPERATIONAL_FLAW (MED_OPERACIONAL)',
});

/** The MED as its webhooks carry it. */
export const Med = Type.Object({
  id: Type.Integer({ description: 'MED id' }),
  endToEndId: Nullable(Type.String({ description: 'The disputed PIX' })),
  transactionId: Type.Integer({ description: 'Transaction id of the disputed PIX' }),
  amount: Type.String({ description: 'Amount blocked, decimal with 2 places' }),
  currency: Type.Literal('BRL'),
  reason: Reason,
  details: Nullable(Type.String()),
  status: Type.Union([Type.Literal('OPEN'), Type.Literal('ACCEPTED'), Type.Literal('REJECTED')]),
  createdAt: Timestamp(),
  closedAt: Nullable(Timestamp()),
  refund: Type.Union([
    Type.Object({ id: Type.String(), rtrId: Type.String(), natureza: Type.String(), status: Type.String() }),
    Type.Null(),
  ]),
});

/** Sandbox: MED disputes opened by the payer's institution, and their outcome. */
export const sandboxMedRoutes =
  (deps: MedDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const common = { tags: ['Sandbox'], security: ADMIN_SECURITY };
    app.post(
      '/sandbox/med',
      {
        schema: {
          ...common,
          operationId: 'sandboxOpenMed',
          summary: 'Open a MED against a received PIX',
          description:
            'Blocks what is still refundable of the PIX (`available` -> `blocked`; at most what the account has available) ' +
            'and sends `med_created`. 404 when no account of this service received that PIX, 409 when a MED is already ' +
            'open against it, 422 when nothing is left to block.',
          body: Type.Object(
            {
              endToEndId: Type.String({ pattern: '^[a-zA-Z0-9]{32}$' }),
              reason: Reason,
              details: Type.Optional(Type.String({ maxLength: 2000 })),
            },
            { additionalProperties: false },
          ),
          response: { 201: Type.Object({ medId: Type.Integer() }), ...errorResponses(400, 401, 404, 409, 422) },
        },
      },
      async (request, reply) => reply.status(201).send(await openMed(deps, request.body)),
    );

    for (const decision of ['accept', 'reject'] as const) {
      app.post(
        `/sandbox/med/:medId/${decision}`,
        {
          schema: {
            ...common,
            operationId: decision === 'accept' ? 'sandboxAcceptMed' : 'sandboxRejectMed',
            summary: decision === 'accept' ? 'Accept a MED: refund the blocked money' : 'Reject a MED: release the blocked money',
            description:
              decision === 'accept'
                ? 'Executes a refund of the blocked amount with natureza MED_FRAUDE or MED_OPERACIONAL (id MED-{medId}) and ' +
                  'sends `med_accepted`; the REFUND webhook follows when the refund settles. 409 when the MED is closed.'
                : 'Returns the blocked amount to `available` and sends `med_rejected`. 409 when the MED is closed.',
            params: Type.Object({ medId: IdParam('MED id') }),
            response: { 200: Med, ...errorResponses(400, 401, 404, 409) },
          },
        },
        async (request) => closeMed(deps, BigInt(request.params.medId), decision),
      );
    }
  };
