import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import { badRequest, notFound } from '../../http/errors.ts';
import { errorResponses, IdParam, Nullable, StringEnum, Timestamp } from '../../http/schemas.ts';
import { ADMIN_SECURITY } from '../../http/schemas.ts';
import type { FaultRow } from './repo.ts';
import type { SandboxControls } from './service.ts';

const common = { tags: ['Sandbox'], security: ADMIN_SECURITY };

/** Ten years: as far as one advance may move the clock. */
const MAX_ADVANCE_SECONDS = 10 * 366 * 86_400;
/** A delay longer than this is a timeout under any receiver's or settlement's rules. */
const MAX_DELAY_MS = 600_000;
const MAX_COUNT = 10_000;

const ClockView = Type.Object({
  now: Timestamp('Business time: what every time rule of the service reads'),
  offsetSeconds: Type.Integer({ minimum: 0, description: 'How far business time runs ahead of the real clock' }),
});

const Fault = Type.Object({
  id: Type.Integer(),
  kind: StringEnum(['webhook', 'settlement', 'directory'] as const),
  effect: StringEnum(['status', 'timeout', 'delay', 'reject', 'unavailable'] as const),
  urlPrefix: Nullable(Type.String({ description: 'webhook: deliveries to URLs starting with this' })),
  pixKey: Nullable(Type.String({ description: 'settlement: transfers to this key' })),
  status: Nullable(Type.Integer({ description: 'webhook, status: the HTTP status the delivery gets' })),
  delayMs: Nullable(Type.Integer({ description: 'delay: how long the answer (webhook) or the settlement takes' })),
  reason: Nullable(Type.String({ description: "settlement, reject: BCB's reason code (AC03, AM04, AB03, ...)" })),
  remaining: Nullable(Type.Integer({ description: 'webhook: deliveries it still applies to; null: until cleared' })),
  createdAt: Timestamp(),
});

const FaultRequest = Type.Object(
  {
    kind: StringEnum(['webhook', 'settlement', 'directory'] as const),
    effect: StringEnum(['status', 'timeout', 'delay', 'reject', 'unavailable'] as const, {
      description: 'webhook: status, timeout or delay; settlement: reject or delay; directory: unavailable',
    }),
    urlPrefix: Type.Optional(Type.String({ minLength: 8, maxLength: 2048, pattern: '^https?://', description: 'webhook (required)' })),
    pixKey: Type.Optional(Type.String({ minLength: 1, maxLength: 77, description: 'settlement (required)' })),
    status: Type.Optional(Type.Integer({ minimum: 200, maximum: 599, description: 'webhook, status (required)' })),
    delayMs: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_DELAY_MS, description: 'delay (required)' })),
    reason: Type.Optional(Type.String({ pattern: '^[A-Z]{2}[0-9]{2}$', description: 'settlement, reject (required): AC03, AM04, AB03, ...' })),
    count: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_COUNT, description: 'webhook: the next N deliveries only (default: until cleared)' })),
  },
  { additionalProperties: false },
);
type FaultInput = Static<typeof FaultRequest>;

/** The fields each kind and effect takes: a request with another combination is refused, naming it. */
const NEEDS: Record<string, { effects: readonly string[]; required: readonly (keyof FaultInput)[]; allowed: readonly (keyof FaultInput)[] }> = {
  webhook: { effects: ['status', 'timeout', 'delay'], required: ['urlPrefix'], allowed: ['urlPrefix', 'status', 'delayMs', 'count'] },
  settlement: { effects: ['reject', 'delay'], required: ['pixKey'], allowed: ['pixKey', 'reason', 'delayMs'] },
  directory: { effects: ['unavailable'], required: [], allowed: [] },
};
const BY_EFFECT: Record<string, keyof FaultInput | undefined> = { status: 'status', delay: 'delayMs', reject: 'reason' };

function checkFault(input: FaultInput): void {
  const rule = NEEDS[input.kind]!;
  if (!rule.effects.includes(input.effect)) throw badRequest('VALIDATION_FAILED', `A ${input.kind} fault's effect is one of ${rule.effects.join(', ')}`);
  const needed = [...rule.required, ...(BY_EFFECT[input.effect] ? [BY_EFFECT[input.effect]!] : [])];
  for (const field of needed) if (input[field] === undefined) throw badRequest('VALIDATION_FAILED', `A ${input.kind} fault with effect ${input.effect} needs ${String(field)}`);
  for (const field of Object.keys(input) as (keyof FaultInput)[]) {
    if (field !== 'kind' && field !== 'effect' && !needed.includes(field) && !(field === 'count' && rule.allowed.includes('count'))) {
      throw badRequest('VALIDATION_FAILED', `A ${input.kind} fault with effect ${input.effect} takes no ${String(field)}`);
    }
  }
}

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
          body: Type.Object(
            {
              seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_ADVANCE_SECONDS })),
              to: Type.Optional(Timestamp('The business time to move to')),
            },
            { additionalProperties: false },
          ),
          response: { 200: ClockView, ...errorResponses(400) },
        },
      },
      async (request) => {
        const { seconds, to } = request.body;
        if ((seconds === undefined) === (to === undefined)) throw badRequest('VALIDATION_FAILED', 'Send seconds or to (one of them)');
        const view = await controls.advance({ seconds, to });
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
      const input = request.body;
      checkFault(input);
      const row = await controls.setFault({
        kind: input.kind,
        effect: input.effect,
        urlPrefix: input.urlPrefix,
        pixKey: input.pixKey,
        status: input.status,
        delayMs: input.delayMs === undefined ? undefined : BigInt(input.delayMs),
        reason: input.reason,
        remaining: input.count,
      });
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
