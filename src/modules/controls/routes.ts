import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import { badRequest, conflict, notFound } from '../../http/errors.ts';
import { ADMIN_SECURITY, errorResponses, IdParam, Nullable, StringEnum, Timestamp } from '../../http/schemas.ts';
import type { FaultRow } from './repo.ts';
import { AdvanceRequest, FAULT_EFFECTS, FAULT_KINDS, FAULT_STAGES, FaultRequest, NEXT_EVENT, type AdvanceInput } from './rules.ts';
import type { SandboxControls } from './service.ts';

const common = { tags: ['Sandbox'], security: ADMIN_SECURITY };

const ClockView = Type.Object({
  now: Timestamp('Business time: what every time rule of the service reads'),
  offsetSeconds: Type.Integer({ minimum: 0, description: 'How far business time runs ahead of the real clock (0 after a reset)' }),
});

const Event = Type.Object({
  at: Timestamp('When the rule acts'),
  kind: Type.String({ description: 'solicitation-sent, solicitation-received, solicitation-answered, solicitation-expiry, charge-answered, charge-answer-overdue, settlement-slot, intraday-retry, charge-expiry, window-opens, cob-expiry, cobv-expiry' }),
  description: Type.String({ description: 'What happens then' }),
});

const AdvanceView = Type.Object({
  now: Timestamp('Business time: what every time rule of the service reads'),
  offsetSeconds: Type.Integer({ minimum: 0, description: 'How far business time runs ahead of the real clock (0 after a reset)' }),
  event: Type.Optional(Event),
  steps: Type.Integer({ minimum: 0, description: "Pix Automático's steps the advance ran (solicitations, schedulings, settlements, expiries), each at its own moment" }),
});

/** What the clock's routes run besides the clock: what fell due, and the next moment a rule acts. */
export interface ClockRules {
  /** Runs every rule due by the clock's time now; resolves with how many steps it took. */
  runDue(): Promise<number>;
  /** The next moment after `now` at which a rule acts (null: none). */
  nextEvent(now: Date): Promise<{ at: Date; kind: string; description: string } | null>;
}

const Fault = Type.Object({
  id: Type.Integer(),
  kind: StringEnum(FAULT_KINDS),
  effect: StringEnum(FAULT_EFFECTS),
  urlPrefix: Nullable(Type.String({ description: 'webhook: deliveries to URLs starting with this' })),
  pixKey: Nullable(Type.String({ description: 'settlement: transfers to this key' })),
  status: Nullable(Type.Integer({ description: 'webhook, status: the HTTP status the delivery gets' })),
  delayMs: Nullable(Type.Integer({ description: 'delay: how long the answer (webhook) or the settlement takes; webhook late: the longest hold (null: 60000)' })),
  reason: Nullable(Type.String({ description: "reject: BCB's reason code (settlement: AC03, AM04, AB03, ...; automatico: a catalog code)" })),
  remaining: Nullable(Type.Integer({ description: 'webhook and automatico: deliveries or answers it still applies to; null: until cleared' })),
  stage: Type.Unsafe<(typeof FAULT_STAGES)[number] | null>({ type: ['string', 'null'], enum: [...FAULT_STAGES, null], description: "automatico: the sandbox payer PSP's stage it acts at" }),
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
    stage: row.stage,
    createdAt: row.created_at.toISOString(),
  };
}

/**
 * Moves the test clock as an advance asks (`seconds`, `to` a time, or `to` the next event), then
 * runs what fell due: the one way the API and the console move it.
 */
export async function advanceClock(controls: SandboxControls, rules: ClockRules, input: AdvanceInput) {
  let event: { at: Date; kind: string; description: string } | null = null;
  if (input.to === NEXT_EVENT) {
    if (input.seconds !== undefined) throw badRequest('VALIDATION_FAILED', 'Send seconds or to (one of them)');
    await controls.refresh();
    event = await rules.nextEvent(controls.clock.now());
    if (!event) throw conflict('NO_NEXT_EVENT', 'No rule of the service is due to act at a later moment: nothing is scheduled, expiring or waiting for an answer');
    if (event.at.getTime() > controls.clock.now().getTime()) await controls.advance({ to: event.at.toISOString() });
  } else {
    await controls.advance(input);
  }
  const steps = await rules.runDue();
  return { ...controls.view(), ...(event ? { event: { at: event.at.toISOString(), kind: event.kind, description: event.description } } : {}), steps };
}

/**
 * The test clock and faults (admin token, sandbox mode only). An advance runs what fell due
 * before it answers (`rules`), and `onAdvance` wakes the worker for the rest (settlements,
 * deliveries).
 */
export const controlRoutes =
  (controls: SandboxControls, rules: ClockRules, onAdvance: () => void): FastifyPluginAsyncTypebox =>
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
            'By `seconds`, or `to` a time, or `to: "next-event"`: the next moment at which a rule acts (a solicitation sent or answered, a recurring ' +
            "charge answered, a settlement slot, the evening's retry, a window opening, an expiry), which the answer names; 409 NO_NEXT_EVENT when none is pending. " +
            "Never back. Pix Automático's steps that fell due run before the answer, in order, each at its own moment; the rest (settlements, deliveries) " +
            'happens promptly. Token lifetimes and rate limits stay on real time.',
          body: AdvanceRequest,
          response: { 200: AdvanceView, ...errorResponses(400, 409) },
        },
      },
      async (request) => {
        const view = await advanceClock(controls, rules, request.body);
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
        summary: 'Set a fault: webhook deliveries failing, sent twice or late, settlement to a key rejected or delayed, the directory unavailable',
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
