import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import { notFound } from '../../http/errors.ts';
import { ADMIN_SECURITY, errorResponses, IdParam, Nullable, StringEnum, Timestamp } from '../../http/schemas.ts';
import type { FaultRow } from './repo.ts';
import { AdvanceRequest, FAULT_EFFECTS, FAULT_KINDS, FaultRequest } from './rules.ts';
import type { SandboxControls } from './service.ts';

const common = { tags: ['Sandbox'], security: ADMIN_SECURITY };

const ClockView = Type.Object({
  now: Timestamp('Business time: what every time rule of the service reads'),
  offsetSeconds: Type.Integer({ minimum: 0, description: 'How far business time runs ahead of the real clock (0 after a reset)' }),
});

const Fault = Type.Object({
  id: Type.Integer(),
  kind: StringEnum(FAULT_KINDS),
  effect: StringEnum(FAULT_EFFECTS),
  urlPrefix: Nullable(Type.String({ description: 'webhook: deliveries to URLs starting with this' })),
  pixKey: Nullable(Type.String({ description: 'settlement: transfers to this key' })),
  status: Nullable(Type.Integer({ description: 'webhook, status: the HTTP status the delivery gets' })),
  delayMs: Nullable(Type.Integer({ description: 'delay: how long the answer (webhook) or the settlement takes' })),
  reason: Nullable(Type.String({ description: "settlement, reject: BCB's reason code (AC03, AM04, AB03, ...)" })),
  remaining: Nullable(Type.Integer({ description: 'webhook: deliveries it still applies to; null: until cleared' })),
  createdAt: Timestamp(),
});

export function faultView(row: FaultRow): Static<typeof Fault> {
  return {
    id: Number(row.id),
    kind: row.kind,
    effect: row.effect,
    urlPrefix: row.url_prefix,
    pixKey: row.pix_key,
    status: row.status,
    delayMs: row.delay_ms === null ? null : Number(row.delay_ms),
    reason: row.reason,
    remaining: row.remaining,
    createdAt: row.created_at.toISOString(),
  };
}

/** The test clock and faults (admin token, sandbox mode only). `onAdvance` wakes the worker: what fell due runs at once. */
export const controlRoutes =
  (controls: SandboxControls, onAdvance: () => void): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/sandbox/clock',
      { schema: { ...common, operationId: 'sandboxGetClock', summary: "The test clock: business time and its offset from the real clock", response: { 200: ClockView } } },
      async () => {
        await controls.refresh();
        return controls.view();
      },
    );
    app.post(
      '/sandbox/clock/advance',
      {
        schema: {
          ...common,
          operationId: 'sandboxAdvanceClock',
          summary: 'Move business time forward, for every process on the database',
          description:
            'By `seconds`, or `to` a time; never back. Whatever fell due meanwhile (expiries, settlements, retries) happens promptly, in order. ' +
            'Token lifetimes and rate limits stay on real time.',
          body: AdvanceRequest,
          response: { 200: ClockView, ...errorResponses(400) },
        },
      },
      async (request) => {
        const view = await controls.advance(request.body);
        onAdvance();
        return view;
      },
    );
    app.post(
      '/sandbox/clock/reset',
      {
        schema: {
          ...common,
          operationId: 'sandboxResetClock',
          summary: 'Put business time back at the real time, for every process on the database',
          description:
            'The offset goes back to 0. What was made at a later business time keeps its times; what falls due (an expiry, a retry) waits for the real time to reach it. ' +
            'Webhook signatures are on real time whatever the clock says.',
          response: { 200: ClockView },
        },
      },
      async () => {
        const view = await controls.reset();
        onAdvance();
        return view;
      },
    );
    faultRoutes(app, controls);
  };

function faultRoutes(app: Parameters<FastifyPluginAsyncTypebox>[0], controls: SandboxControls): void {
  app.post(
    '/sandbox/faults',
    {
      schema: {
        ...common,
        operationId: 'sandboxSetFault',
        summary: 'Set a fault: webhook deliveries failing, settlement to a key rejected or delayed, the directory unavailable',
        body: FaultRequest,
        response: { 201: Fault, ...errorResponses(400, 409) },
      },
    },
    async (request, reply) => {
      const row = await controls.setFaultFrom(request.body);
      return reply.status(201).send(faultView(row));
    },
  );
  app.get(
    '/sandbox/faults',
    { schema: { ...common, operationId: 'sandboxListFaults', summary: 'The faults set now', response: { 200: Type.Object({ data: Type.Array(Fault) }) } } },
    async () => ({ data: (await controls.listFaults()).map(faultView) }),
  );
  app.delete(
    '/sandbox/faults',
    { schema: { ...common, operationId: 'sandboxClearFaults', summary: 'Clear every fault', response: { 204: Type.Null() } } },
    async (_request, reply) => {
      await controls.clearFaults();
      return reply.status(204).send(null);
    },
  );
  app.delete(
    '/sandbox/faults/:id',
    {
      schema: {
        ...common,
        operationId: 'sandboxClearFault',
        summary: 'Clear one fault',
        params: Type.Object({ id: IdParam('The fault') }),
        response: { 204: Type.Null(), ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      if ((await controls.clearFaults(BigInt(request.params.id))) === 0) throw notFound('FAULT_NOT_FOUND', `No fault ${request.params.id}`);
      return reply.status(204).send(null);
    },
  );
}
