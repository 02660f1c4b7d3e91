import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses, StringEnum, Timestamp } from '../../http/schemas.ts';
import { common } from '../sandbox/routes/schemas.ts';
import { answerSolicitationNow } from './network.ts';
import {
  cancelSandboxCharge,
  cancelSandboxRecurrence,
  createSandboxRecurrence,
  retrySandboxCharge,
  sendSandboxCharge,
  type SandboxReceiverDeps,
} from './sandbox-receiver.ts';

const Decimal = (description: string) => Type.String({ pattern: '^[0-9]{1,10}\\.[0-9]{2}$', description });
const IdRec = Type.Object({ idRec: Type.String({ pattern: '^R[RN][0-9A-Z]{8}[0-9]{8}[a-zA-Z0-9]{11}$' }) });
const Txid = Type.Object({ txid: Type.String({ pattern: '^[a-zA-Z0-9]{26,35}$' }) });

const SandboxRecurrence = Type.Object({
  idRec: Type.String(),
  status: Type.String({ description: "BCB's status of the recurrence" }),
  receiver: Type.Object({ name: Type.String(), document: Type.String(), ispb: Type.String() }),
  solicitation: Type.Object({ id: Type.String(), status: Type.String(), expiresAt: Timestamp() }),
});
const SandboxCharge = Type.Object({
  id: Type.Integer({ description: 'The id the payer names it by (GET /api/automatico/charges/{id})' }),
  txid: Type.String(),
  idRec: Type.String(),
  status: Type.String({ description: "BCB's status of the recurring charge" }),
  dueDate: Type.String({ format: 'date' }),
  settlementDate: Type.String({ format: 'date' }),
  amount: Type.String(),
});

const Answered = Type.Object({
  idSolicRec: Type.String(),
  status: Type.String({ description: 'ACEITA or REJEITADA' }),
  atualizacao: Type.Array(Type.Object({ status: Type.String(), data: Timestamp() })),
});

/**
 * Sandbox: the sandbox's payer answers a solicitation of Pix Automático now (it answers one a
 * minute after receiving it otherwise), as the payer tapping accept or reject in their bank's app.
 */
export const automaticoSandboxRoutes =
  (deps: SandboxReceiverDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    otherReceiverRoutes(app, deps);
    app.post(
      '/sandbox/automatico/solicitations/:idSolicRec/answer',
      {
        schema: {
          ...common,
          operationId: 'sandboxAnswerSolicitation',
          summary: "The sandbox's payer accepts or rejects a solicitation of Pix Automático now",
          description:
            "A solicitation RECEBIDA by the sandbox's payer PSP: `accept` makes it ACEITA and its recurrence APROVADA by JORNADA_1; " +
            '`reject` makes both REJEITADA, with `reason` AP14 (rejected, the default) or AP13 (not recognised). One to an account holder of this ' +
            'institution is theirs to answer (422 SOLICITATION_NOT_ANSWERABLE), as is one not RECEBIDA.',
          params: Type.Object({ idSolicRec: Type.String({ pattern: '^SC[0-9A-Z]{8}[0-9]{8}[a-zA-Z0-9]{11}$' }) }),
          body: Type.Object(
            { decision: StringEnum(['accept', 'reject'] as const), reason: Type.Optional(StringEnum(['AP13', 'AP14'] as const)) },
            { additionalProperties: false },
          ),
          response: { 200: Answered, ...errorResponses(400, 404, 422) },
        },
      },
      async (request) => {
        const { decision, reason } = request.body;
        const row = await answerSolicitationNow(deps, request.params.idSolicRec, decision === 'accept' ? { accept: true } : { reject: reason ?? 'AP14' });
        return { idSolicRec: row.id_solic_rec, status: row.status, atualizacao: row.history };
      },
    );
  };

type App = Parameters<FastifyPluginAsyncTypebox>[0];

/**
 * Sandbox: another institution's receiver of Pix Automático, charging an account holder of this
 * service, so that the payer's side runs alone (docs/guide/sandbox.md).
 */
function otherReceiverRoutes(app: App, deps: SandboxReceiverDeps): void {
  sandboxCreateRecurrenceRoute(app, deps);
  sandboxSendRecurringChargeRoute(app, deps);
  sandboxCancelRecurrenceRoute(app, deps);
  sandboxRetryRecurringChargeRoute(app, deps);
  sandboxCancelRecurringChargeRoute(app, deps);
}

function sandboxCreateRecurrenceRoute(app: App, deps: SandboxReceiverDeps): void {
  app.post(
    '/sandbox/automatico/recurrences',
    {
      schema: {
        ...common,
        operationId: 'sandboxCreateRecurrence',
        summary: "Another institution's receiver asks an account holder to approve a recurrence (journey 1)",
        description:
          'The recurrence is CRIADA at the sandbox\'s receiver PSP and its solicitation is sent to the account: a moment later it is PENDING among the ' +
          "account's authorizations (GET /api/automatico/authorizations), with its `authorization_requested` notification. The terms follow BCB's rules " +
          '(a start not in the past, an end not before it, a fixed amount or a minimum, not both); the solicitation expires at `expiresAt` (at most 30 days on, ' +
          'default 7 days). The devedor is the payer.',
        body: Type.Object(
          {
            payerAccountId: Type.Integer({ minimum: 1, description: 'The account holder asked' }),
            receiver: Type.Optional(
              Type.Object(
                {
                  name: Type.Optional(Type.String({ minLength: 1, maxLength: 140 })),
                  document: Type.Optional(Type.String({ pattern: '^[0-9A-Z]{12}[0-9]{2}$', description: 'CNPJ' })),
                  ispb: Type.Optional(Type.String({ pattern: '^[0-9]{8}$', description: "The receiver's PSP (default the sandbox's other institution, 12345678)" })),
                },
                { additionalProperties: false },
              ),
            ),
            contract: Type.String({ minLength: 1, maxLength: 35 }),
            object: Type.Optional(Type.String({ minLength: 1, maxLength: 35 })),
            frequency: StringEnum(['SEMANAL', 'MENSAL', 'TRIMESTRAL', 'SEMESTRAL', 'ANUAL'] as const),
            startDate: Type.String({ format: 'date' }),
            endDate: Type.Optional(Type.String({ format: 'date' })),
            fixedAmount: Type.Optional(Decimal('Every charge is this amount')),
            minimumAmount: Type.Optional(Decimal("The floor of the payer's maximum")),
            retryPolicy: Type.Optional(StringEnum(['NAO_PERMITE', 'PERMITE_3R_7D'] as const)),
            expiresAt: Type.Optional(Timestamp('When the solicitation expires')),
          },
          { additionalProperties: false },
        ),
        response: { 201: SandboxRecurrence, ...errorResponses(400, 404) },
      },
    },
    async (request, reply) => reply.status(201).send(await createSandboxRecurrence(deps, request.body)),
  );
}

function sandboxSendRecurringChargeRoute(app: App, deps: SandboxReceiverDeps): void {
  app.post(
    '/sandbox/automatico/recurrences/:idRec/charges',
    {
      schema: {
        ...common,
        operationId: 'sandboxSendRecurringCharge',
        summary: "Another institution's receiver sends a recurring charge of an approved recurrence",
        description:
          'Under the rules of a receiver here (POST /v2/cobr): the recurrence APROVADA, the due date in its window (D-10 to D-2 of the day it settles), ' +
          "one charge per cycle, the fixed amount when there is one. The payer's PSP (this service) answers it a minute later: scheduled, or refused " +
          'with a catalog code (the amount above the payer\'s maximum, AM02; ...), and debits it on its day between 00:00 and 08:00.',
        params: IdRec,
        body: Type.Object(
          {
            dueDate: Type.String({ format: 'date' }),
            amount: Decimal('The amount charged'),
            txid: Type.Optional(Type.String({ pattern: '^[a-zA-Z0-9]{26,35}$' })),
            adjustToBusinessDay: Type.Optional(Type.Boolean({ description: "BCB's ajusteDiaUtil (default true): a due date on a weekend or holiday settles the next business day" })),
            description: Type.Optional(Type.String({ maxLength: 140 })),
            unchecked: Type.Optional(
              Type.Boolean({
                description:
                  "Sent as given, without a receiver's checks (a faulty receiver PSP), so that the payer PSP's refusals show: MSUC (the recurrence not approved), " +
                  'AM09 (not its fixed amount), DTED (due after its end)',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 201: SandboxCharge, ...errorResponses(400, 404) },
      },
    },
    async (request, reply) => reply.status(201).send(await sendSandboxCharge(deps, request.params.idRec, request.body)),
  );
}

function sandboxCancelRecurrenceRoute(app: App, deps: SandboxReceiverDeps): void {
  app.post(
    '/sandbox/automatico/recurrences/:idRec/cancel',
    {
      schema: {
        ...common,
        operationId: 'sandboxCancelRecurrence',
        summary: "Another institution's receiver cancels its recurrence",
        description: 'CANCELADA by USUARIO_RECEBEDOR (SLCR); its charges not yet paid are cancelled with it, and the payer is told.',
        params: IdRec,
        response: { 200: Type.Object({ idRec: Type.String(), status: Type.String() }), ...errorResponses(400, 404) },
      },
    },
    async (request) => cancelSandboxRecurrence(deps, request.params.idRec),
  );
}

function sandboxRetryRecurringChargeRoute(app: App, deps: SandboxReceiverDeps): void {
  app.post(
    '/sandbox/automatico/charges/:txid/retry',
    {
      schema: {
        ...common,
        operationId: 'sandboxRetryRecurringCharge',
        summary: "Another institution's receiver asks for a retry of a failed charge",
        description: 'With PERMITE_3R_7D, no attempt under way, a future date within the 7 days after the due date, 3 retries at most (POST /v2/cobr/{txid}/retentativa/{data}).',
        params: Txid,
        body: Type.Object({ date: Type.String({ format: 'date' }) }, { additionalProperties: false }),
        response: { 200: SandboxCharge, ...errorResponses(400, 404) },
      },
    },
    async (request) => retrySandboxCharge(deps, request.params.txid, request.body.date),
  );
}

function sandboxCancelRecurringChargeRoute(app: App, deps: SandboxReceiverDeps): void {
  app.post(
    '/sandbox/automatico/charges/:txid/cancel',
    {
      schema: {
        ...common,
        operationId: 'sandboxCancelRecurringCharge',
        summary: "Another institution's receiver cancels a recurring charge",
        description: 'Before the day of its first attempt (SLCR, by USUARIO_RECEBEDOR); on or after it, 422 CANCELLATION_TOO_LATE.',
        params: Txid,
        response: { 200: SandboxCharge, ...errorResponses(400, 404, 422) },
      },
    },
    async (request) => cancelSandboxCharge(deps, request.params.txid),
  );
}
