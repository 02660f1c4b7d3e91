import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { badRequest } from '../../http/errors.ts';
import { StringEnum, Timestamp } from '../../http/schemas.ts';
import type { NewFault } from './repo.ts';
import { CHARGE_REJECTIONS, INSUFFICIENT_FUNDS, REC_REJECTIONS } from '../recurrences/catalog.ts';

/**
 * What the sandbox's controls take, checked in one place for the API's routes and the console's
 * forms alike: how far the clock may move, and which fields each kind and effect of fault takes.
 */

/** Ten years: as far as one advance may move the clock. */
export const MAX_ADVANCE_SECONDS = 10 * 366 * 86_400;
/** A delay longer than this is a timeout under any receiver's or settlement's rules. */
export const MAX_DELAY_MS = 600_000;
const MAX_COUNT = 10_000;

/** `to` this: the next moment at which a rule acts (a window opening, a settlement slot, an expiry). */
export const NEXT_EVENT = 'next-event';

export const AdvanceRequest = Type.Object(
  {
    seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_ADVANCE_SECONDS })),
    to: Type.Optional(
      Type.Union([Timestamp('The business time to move to'), Type.Literal(NEXT_EVENT, { description: 'The next moment at which a rule of the service acts' })], {
        description: 'A business time to move to, or `next-event`: the next moment at which a rule acts (the answer says which)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type AdvanceInput = Static<typeof AdvanceRequest>;

export const FAULT_KINDS = ['webhook', 'settlement', 'directory', 'automatico'] as const;
export const FAULT_EFFECTS = ['status', 'timeout', 'delay', 'reject', 'unavailable', 'late', 'duplicate'] as const;
/** A webhook `late` fault's longest hold when it names no `delayMs`. */
export const DEFAULT_LATE_HOLD_MS = 60_000;
export const FAULT_STAGES = ['solicitation', 'scheduling', 'attempt'] as const;

/**
 * The codes a Pix Automático fault refuses with, by stage: a recurrence's refusals for a
 * solicitation; the catalog's refusals of a charge for a scheduling; those and AM04 (no funds:
 * the evening's retry follows) for a settlement attempt.
 */
export const AUTOMATICO_REASONS: Record<(typeof FAULT_STAGES)[number], readonly string[]> = {
  solicitation: Object.keys(REC_REJECTIONS),
  scheduling: Object.keys(CHARGE_REJECTIONS),
  attempt: [INSUFFICIENT_FUNDS, ...Object.keys(CHARGE_REJECTIONS)],
};

export const FaultRequest = Type.Object(
  {
    kind: StringEnum(FAULT_KINDS),
    effect: StringEnum(FAULT_EFFECTS, {
      description:
        'webhook: status, timeout or delay; duplicate (each delivery sent twice: the same body and webhook-id, each signed); late (a delivery held until the next one to its URL is delivered, so the two arrive in the reverse order; at most delayMs, default 60000); ' +
        'settlement: reject or delay; directory: unavailable; automatico: reject, or late (stage scheduling)',
    }),
    stage: Type.Optional(
      StringEnum(FAULT_STAGES, {
        description: "automatico (required): the sandbox payer PSP's solicitations, schedulings of recurring charges, or settlement attempts",
      }),
    ),
    urlPrefix: Type.Optional(Type.String({ minLength: 8, maxLength: 2048, pattern: '^https?://', description: 'webhook (required)' })),
    pixKey: Type.Optional(Type.String({ minLength: 1, maxLength: 77, description: 'settlement (required)' })),
    status: Type.Optional(Type.Integer({ minimum: 200, maximum: 599, description: 'webhook, status (required)' })),
    delayMs: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_DELAY_MS, description: 'delay (required); webhook late: the longest hold (default 60000)' })),
    reason: Type.Optional(
      Type.String({
        pattern: '^[A-Z0-9]{4}$',
        description: 'reject (required): settlement, a reason code (AC03, AM04, AB03, ...); automatico, a catalog code (solicitation AP13, AP14; scheduling AM02, MSUC, ...; attempt AM04 for no funds, AB10, ...)',
      }),
    ),
    count: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_COUNT, description: 'webhook and automatico: the next N deliveries (duplicated, held) or answers only (default: until cleared)' })),
  },
  { additionalProperties: false },
);
export type FaultInput = Static<typeof FaultRequest>;
export type FaultField = Exclude<keyof FaultInput, 'kind' | 'effect'>;

/** The fields each kind takes: always (`required`), by effect (BY_EFFECT), and optionally (`optional`). */
const NEEDS: Record<FaultInput['kind'], { effects: readonly FaultInput['effect'][]; required: readonly FaultField[]; optional: readonly FaultField[] }> = {
  webhook: { effects: ['status', 'timeout', 'delay', 'duplicate', 'late'], required: ['urlPrefix'], optional: ['count'] },
  settlement: { effects: ['reject', 'delay'], required: ['pixKey'], optional: [] },
  directory: { effects: ['unavailable'], required: [], optional: [] },
  automatico: { effects: ['reject', 'late'], required: ['stage'], optional: ['count'] },
};
const BY_EFFECT: Partial<Record<FaultInput['effect'], FaultField>> = { status: 'status', delay: 'delayMs', reject: 'reason' };

/** The effects a kind of fault may have. */
export const effectsOf = (kind: FaultInput['kind']): readonly FaultInput['effect'][] => NEEDS[kind].effects;

/** The fields a fault of this kind and effect needs, and those it may take besides. */
export function faultFields(kind: FaultInput['kind'], effect: FaultInput['effect']): { needed: FaultField[]; optional: FaultField[] } {
  const rule = NEEDS[kind];
  const byEffect = BY_EFFECT[effect];
  // A webhook delivery held late goes at the latest after delayMs (DEFAULT_LATE_HOLD_MS unless named).
  const late: FaultField[] = kind === 'webhook' && effect === 'late' ? ['delayMs'] : [];
  return { needed: [...rule.required, ...(byEffect ? [byEffect] : [])], optional: [...rule.optional, ...late] };
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
  if (input.kind === 'settlement' && input.reason !== undefined && !/^[A-Z]{2}[0-9]{2}$/.test(input.reason)) {
    throw badRequest('VALIDATION_FAILED', 'A settlement fault\'s reason is a reason code of two letters and two digits (AC03, AM04, AB03, ...)');
  }
  if (input.kind === 'automatico' && input.stage !== undefined) {
    if (input.effect === 'late' && input.stage !== 'scheduling') throw badRequest('VALIDATION_FAILED', 'An automatico fault with effect late acts at the stage scheduling (the payer PSP does not answer within 2 hours)');
    const allowed = AUTOMATICO_REASONS[input.stage];
    if (input.reason !== undefined && !allowed.includes(input.reason)) {
      throw badRequest('VALIDATION_FAILED', `An automatico fault at the stage ${input.stage} refuses with one of ${allowed.join(', ')}`);
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
    stage: input.stage,
  };
}
