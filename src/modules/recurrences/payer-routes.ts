import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses, IdParam, StringEnum } from '../../http/schemas.ts';
import { LIST_LIMITS } from '../../http/list-queries.ts';
import { accountSecurity } from '../auth/scopes.ts';
import {
  approveAuthorization,
  approveFromCode,
  cancelAuthorization,
  cancelPayerCharge,
  getAuthorization,
  getPayerCharge,
  listAuthorizations,
  listPayerCharges,
  rejectAuthorization,
  type PayerSideDeps,
} from './payer.ts';
import {
  ApproveBody,
  Authorization,
  AUTHORIZATION_STATUSES,
  AuthorizationList,
  CodeBody,
  IdRecParam,
  Page,
  PAYER_CHARGE_STATUSES,
  PayerCharge,
  PayerChargeList,
} from './payer-schemas.ts';

const TAGS = ['Pix Automático (payer)'];
const read = { tags: TAGS, security: accountSecurity('transactions.read') };
const write = { tags: TAGS, security: accountSecurity('pix.send') };
/** A body that is optional: none at all reads as {}. */
const optionalBody = async (request: { body: unknown }) => {
  request.body ??= {};
};

type App = Parameters<FastifyPluginAsyncTypebox>[0];

function listAutomaticoAuthorizationsRoute(app: App, deps: PayerSideDeps): void {
  app.get(
    '/api/automatico/authorizations',
    {
      schema: {
        ...read,
        operationId: 'listAutomaticoAuthorizations',
        summary: 'List the authorizations of Pix Automático asked of or held by the account',
        description: `Newest first, optionally of one status: PENDING ones wait for the holder's answer. ${LIST_LIMITS}`,
        querystring: Type.Object({ ...Page, status: Type.Optional(StringEnum(AUTHORIZATION_STATUSES)) }, { additionalProperties: false }),
        response: { 200: AuthorizationList, ...errorResponses(400, 401, 429, 503) },
      },
    },
    async (request) => listAuthorizations(deps, request.accountId, request.query),
  );
}

function approveAutomaticoCodeRoute(app: App, deps: PayerSideDeps): void {
  app.post(
    '/api/automatico/authorizations',
    {
      schema: {
        ...write,
        operationId: 'approveAutomaticoCode',
        summary: 'Approve a recurrence from its code (journeys 2 to 4)',
        description:
          "The code the holder scanned: a recurrence's own code approves it (JORNADA_2); a composite code also pays its charge from the account's " +
          '`available` in the same act (a cob: JORNADA_3; a cobv: JORNADA_4), refused whole when the money is not there (422 INSUFFICIENT_BALANCE). ' +
          "Codes of this institution's receivers; another institution's receiver asks through a solicitation.",
        body: CodeBody,
        response: { 201: Authorization, ...errorResponses(400, 401, 422) },
      },
    },
    async (request, reply) => reply.status(201).send(await approveFromCode(deps, request.accountId, request.body)),
  );
}

function getAutomaticoAuthorizationRoute(app: App, deps: PayerSideDeps): void {
  app.get(
    '/api/automatico/authorizations/:idRec',
    {
      schema: {
        ...read,
        operationId: 'getAutomaticoAuthorization',
        summary: 'An authorization of Pix Automático of the account',
        params: IdRecParam,
        response: { 200: Authorization, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => getAuthorization(deps, request.accountId, request.params.idRec),
  );
}

function approveAutomaticoAuthorizationRoute(app: App, deps: PayerSideDeps): void {
  app.post(
    '/api/automatico/authorizations/:idRec/approve',
    {
      preValidation: optionalBody,
      schema: {
        ...write,
        operationId: 'approveAutomaticoAuthorization',
        summary: 'Approve a PENDING authorization (journey 1)',
        description:
          "Accepts the receiver's solicitation: the recurrence becomes APROVADA by JORNADA_1 and its charges are debited automatically. " +
          '`maximumAmount` caps each charge where the recurrence fixes no amount.',
        params: IdRecParam,
        body: ApproveBody,
        response: { 200: Authorization, ...errorResponses(400, 401, 404, 422) },
      },
    },
    async (request) => approveAuthorization(deps, request.accountId, request.params.idRec, request.body),
  );
}

function rejectAutomaticoAuthorizationRoute(app: App, deps: PayerSideDeps): void {
  app.post(
    '/api/automatico/authorizations/:idRec/reject',
    {
      schema: {
        ...write,
        operationId: 'rejectAutomaticoAuthorization',
        summary: 'Reject a PENDING authorization',
        description: 'The solicitation and the recurrence end REJEITADA, with the code AP14 (the payer rejected it).',
        params: IdRecParam,
        response: { 200: Authorization, ...errorResponses(400, 401, 404, 422) },
      },
    },
    async (request) => rejectAuthorization(deps, request.accountId, request.params.idRec),
  );
}

function cancelAutomaticoAuthorizationRoute(app: App, deps: PayerSideDeps): void {
  app.post(
    '/api/automatico/authorizations/:idRec/cancel',
    {
      schema: {
        ...write,
        operationId: 'cancelAutomaticoAuthorization',
        summary: 'Cancel an APPROVED authorization',
        description: 'The recurrence ends CANCELADA by USUARIO_PAGADOR (code SLDB); its charges not yet paid are cancelled with it (CCLD).',
        params: IdRecParam,
        response: { 200: Authorization, ...errorResponses(400, 401, 404, 422) },
      },
    },
    async (request) => cancelAuthorization(deps, request.accountId, request.params.idRec),
  );
}

function listAutomaticoChargesRoute(app: App, deps: PayerSideDeps): void {
  app.get(
    '/api/automatico/charges',
    {
      schema: {
        ...read,
        operationId: 'listAutomaticoCharges',
        summary: 'List the recurring charges the account pays',
        description: `Latest due date first, optionally of one status or one recurrence. ${LIST_LIMITS}`,
        querystring: Type.Object(
          { ...Page, status: Type.Optional(StringEnum(PAYER_CHARGE_STATUSES)), idRec: Type.Optional(IdRecParam.properties.idRec) },
          { additionalProperties: false },
        ),
        response: { 200: PayerChargeList, ...errorResponses(400, 401, 429, 503) },
      },
    },
    async (request) => listPayerCharges(deps, request.accountId, request.query),
  );
}

function getAutomaticoChargeRoute(app: App, deps: PayerSideDeps): void {
  app.get(
    '/api/automatico/charges/:id',
    {
      schema: {
        ...read,
        operationId: 'getAutomaticoCharge',
        summary: 'A recurring charge the account pays, with its attempts',
        params: Type.Object({ id: IdParam('The recurring charge') }),
        response: { 200: PayerCharge, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => getPayerCharge(deps, request.accountId, BigInt(request.params.id)),
  );
}

function cancelAutomaticoChargeRoute(app: App, deps: PayerSideDeps): void {
  app.post(
    '/api/automatico/charges/:id/cancel',
    {
      schema: {
        ...write,
        operationId: 'cancelAutomaticoCharge',
        summary: 'Cancel a scheduled recurring charge',
        description:
          'Until 23:59 (São Paulo) of the day before its attempt settles: the charge ends CANCELADA by USUARIO_PAGADOR (code SLBD). After that, 422 ' +
          'CANCELLATION_TOO_LATE; with no attempt under way, 422 RECURRING_CHARGE_NOT_SCHEDULED.',
        params: Type.Object({ id: IdParam('The recurring charge') }),
        response: { 200: PayerCharge, ...errorResponses(400, 401, 404, 422) },
      },
    },
    async (request) => cancelPayerCharge(deps, request.accountId, BigInt(request.params.id)),
  );
}

/**
 * The account holder as the payer of Pix Automático: its authorizations and the recurring charges
 * it pays. Reading takes `transactions.read`; approving, rejecting and cancelling take
 * `pix.send`, since they let money leave the account.
 */
export const payerAutomaticoRoutes =
  (deps: PayerSideDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    listAutomaticoAuthorizationsRoute(app, deps);
    approveAutomaticoCodeRoute(app, deps);
    getAutomaticoAuthorizationRoute(app, deps);
    approveAutomaticoAuthorizationRoute(app, deps);
    rejectAutomaticoAuthorizationRoute(app, deps);
    cancelAutomaticoAuthorizationRoute(app, deps);
    listAutomaticoChargesRoute(app, deps);
    getAutomaticoChargeRoute(app, deps);
    cancelAutomaticoChargeRoute(app, deps);
  };
