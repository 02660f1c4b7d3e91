import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ADMIN_SECURITY, errorResponses, IdParam, Nullable, Timestamp } from '../../http/schemas.ts';
import { LIST_LIMITS, type ListQueries } from '../../http/list-queries.ts';
import { DATE_OR_TIMESTAMP_PATTERN } from '../../lib/dates.ts';
import { Metadata } from '../transactions/routes/schemas.ts';
import { closeMed, getAccountMed, listAccountMeds, openMed, type MedDeps } from './service.ts';
import { accountSecurity } from '../auth/scopes.ts';

const Reason = Type.Union([Type.Literal('FRAUD'), Type.Literal('OPERATIONAL_FLAW')], {
  description: 'FRAUD (refund natureza MED_FRAUDE) or OPERATIONAL_FLAW (MED_OPERACIONAL)',
});

const MedStatus = Type.Union([Type.Literal('OPEN'), Type.Literal('ACCEPTED'), Type.Literal('REJECTED')]);

/** The MED as its webhooks carry it. */
export const Med = Type.Object({
  id: Type.Integer({ description: 'MED id' }),
  endToEndId: Nullable(Type.String({ description: 'The disputed PIX' })),
  transactionId: Type.Integer({ description: 'Transaction id of the disputed PIX' }),
  amount: Type.String({ description: 'Amount blocked, decimal with 2 places' }),
  currency: Type.Literal('BRL'),
  reason: Reason,
  details: Nullable(Type.String()),
  status: MedStatus,
  createdAt: Timestamp(),
  closedAt: Nullable(Timestamp()),
  refund: Type.Union([
    Type.Object({ id: Type.String(), rtrId: Type.String(), natureza: Type.String(), status: Type.String() }),
    Type.Null(),
  ]),
});

const DateParam = (description: string) => Type.String({ pattern: DATE_OR_TIMESTAMP_PATTERN, description });

/** The account holder reads the MED disputes opened against the PIX it received. */
export const medRoutes =
  (deps: Pick<MedDeps, 'db' | 'clock'> & { lists: ListQueries }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const common = { tags: ['MED'], security: accountSecurity('transactions.read') };
    app.get(
      '/api/meds',
      {
        schema: {
          ...common,
          operationId: 'listMeds',
          summary: 'List the MED disputes opened against the account',
          description:
            'Newest first (ties by id), opened between startDate and endDate (at most 31 days apart; default the last 31 days), ' +
            `optionally of one status. Each item is the \`data\` of the MED webhooks. ${LIST_LIMITS}`,
          querystring: Type.Object(
            {
              page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: '1-indexed (default 1)' })),
              size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Page size, at most 100 (default 20)' })),
              status: Type.Optional(MedStatus),
              startDate: Type.Optional(DateParam('Date (São Paulo) or timestamp; default 31 days before endDate')),
              endDate: Type.Optional(DateParam('Date (inclusive, São Paulo) or timestamp; default now')),
            },
            { additionalProperties: false },
          ),
          response: { 200: Type.Object({ data: Type.Array(Med), metadata: Metadata }), ...errorResponses(400, 401, 429, 503) },
        },
      },
      async (request) => listAccountMeds(deps, request.accountId, request.query),
    );
    app.get(
      '/api/meds/:id',
      {
        schema: {
          ...common,
          operationId: 'getMed',
          summary: 'A MED dispute of the account',
          params: Type.Object({ id: IdParam('MED id') }),
          response: { 200: Med, ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => getAccountMed(deps, request.accountId, BigInt(request.params.id)),
    );
  };

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
