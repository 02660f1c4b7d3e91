import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { badRequest } from '../../http/errors.ts';
import { StringEnum, Timestamp } from '../../http/schemas.ts';
import type { NewFault } from './repo.ts';

/**
 * What the sandbox's controls take, checked in one place for the API's routes and the console's
 * forms alike: how far the clock may move, and which fields each kind and effect of fault takes.
 */

/** Ten years: as far as one advance may move the clock. */
export const MAX_ADVANCE_SECONDS = 10 * 366 * 86_400;
/** A delay longer than this is a timeout under any receiver's or settlement's rules. */
export const MAX_DELAY_MS = 600_000;
const MAX_COUNT = 10_000;

export const AdvanceRequest = Type.Object(
  {
    seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_ADVANCE_SECONDS })),
    to: Type.Optional(Timestamp('The business time to move to')),
  },
  { additionalProperties: false },
);
export type AdvanceInput = Static<typeof AdvanceRequest>;

export const FAULT_KINDS = ['webhook', 'settlement', 'directory'] as const;
export const FAULT_EFFECTS = ['status', 'timeout', 'delay', 'reject', 'unavailable'] as const;

export const FaultRequest = Type.Object(
  {
    kind: StringEnum(FAULT_KINDS),
    effect: StringEnum(FAULT_EFFECTS, {
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
export type FaultInput = Static<typeof FaultRequest>;
export type FaultField = Exclude<keyof FaultInput, 'kind' | 'effect'>;

/** The fields each kind takes: always (`required`), by effect (BY_EFFECT), and optionally (`optional`). */
const NEEDS: Record<FaultInput['kind'], { effects: readonly FaultInput['effect'][]; required: readonly FaultField[]; optional: readonly FaultField[] }> = {
  webhook: { effects: ['status', 'timeout', 'delay'], required: ['urlPrefix'], optional: ['count'] },
  settlement: { effects: ['reject', 'delay'], required: ['pixKey'], optional: [] },
  directory: { effects: ['unavailable'], required: [], optional: [] },
};
const BY_EFFECT: Partial<Record<FaultInput['effect'], FaultField>> = { status: 'status', delay: 'delayMs', reject: 'reason' };

/** The effects a kind of fault may have. */
export const effectsOf = (kind: FaultInput['kind']): readonly FaultInput['effect'][] => NEEDS[kind].effects;

/** The fields a fault of this kind and effect needs, and those it may take besides. */
export function faultFields(kind: FaultInput['kind'], effect: FaultInput['effect']): { needed: FaultField[]; optional: FaultField[] } {
  const rule = NEEDS[kind];
  const byEffect = BY_EFFECT[effect];
  return { needed: [...rule.required, ...(byEffect ? [byEffect] : [])], optional: [...rule.optional] };
}

/** A fault's fields against its kind and effect: a request with another combination is refused, naming it. */
export function checkFault(input: FaultInput): void {
  if (!effectsOf(input.kind).includes(input.effect)) throw badRequest('VALIDATION_FAILED', `A ${input.kind} fault's effect is one of ${effectsOf(input.kind).join(', ')}`);
  const { needed, optional } = faultFields(input.kind, input.effect);
  for (const field of needed) if (input[field] === undefined) throw badRequest('VALIDATION_FAILED', `A ${input.kind} fault with effect ${input.effect} needs ${field}`);
  for (const field of Object.keys(input) as (keyof FaultInput)[]) {
    if (field !== 'kind' && field !== 'effect' && !needed.includes(field) && !optional.includes(field)) {
      throw badRequest('VALIDATION_FAILED', `A ${input.kind} fault with effect ${input.effect} takes no ${field}`);
    }
  }
}

/** One advance: by `seconds` or `to` a time, one of them. */
export function checkAdvance(input: AdvanceInput): void {
  if ((input.seconds === undefined) === (input.to === undefined)) throw badRequest('VALIDATION_FAILED', 'Send seconds or to (one of them)');
}

/**
 * A value built elsewhere than from a request's JSON (a console form) against a schema of these
 * rules: the first problem, as the API's validation would name it.
 */
export function checkSchema<T extends typeof FaultRequest | typeof AdvanceRequest>(schema: T, value: unknown): asserts value is Static<T> {
  const [first] = Value.Errors(schema, value);
  if (first) throw badRequest('VALIDATION_FAILED', `${first.instancePath.slice(1).replaceAll('/', '.') || 'the request'} ${first.message}`);
}

/** A checked request as the repository stores it. */
export function newFault(input: FaultInput): Omit<NewFault, 'createdAt'> {
  return {
    kind: input.kind,
    effect: input.effect,
    urlPrefix: input.urlPrefix,
    pixKey: input.pixKey,
    status: input.status,
    delayMs: input.delayMs === undefined ? undefined : BigInt(input.delayMs),
    reason: input.reason,
    remaining: input.count,
  };
}
