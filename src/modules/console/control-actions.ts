import { Type } from 'typebox';
import { badRequest, notFound } from '../../http/errors.ts';
import { StringEnum } from '../../http/schemas.ts';
import { SAO_PAULO_OFFSET } from '../../lib/dates.ts';
import { AdvanceRequest, checkSchema, FAULT_EFFECTS, FAULT_KINDS, faultFields, FaultRequest, NEXT_EVENT, type AdvanceInput, type FaultInput } from '../controls/rules.ts';
import type { SandboxControls } from '../controls/service.ts';
import { advanceClock } from '../controls/routes.ts';
import { nextEvent, runDue } from '../recurrences/network.ts';
import { action, given, Text, type ConsoleAction } from './actions.ts';
import type { ConsoleContext } from './service.ts';
import { duration, timeText } from './views/format.ts';

/**
 * The console's forms for the sandbox's controls: the test clock, faults and the inbox. Each turns
 * its form's text into the request the API's route takes and checks it with the controls' own
 * rules (modules/controls/rules.ts), then calls the same SandboxControls the route calls.
 */

/** What "advance by" counts in. */
export const ADVANCE_UNITS = { seconds: 1, minutes: 60, hours: 3_600, days: 86_400 } as const;
export type AdvanceUnit = keyof typeof ADVANCE_UNITS;

const InboxName = Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' });
const Id = Type.String({ pattern: '^[1-9][0-9]{0,17}$' });

function controlsOf(ctx: ConsoleContext): SandboxControls {
  if (!ctx.controls) throw notFound('ROUTE_NOT_FOUND', 'This process has no test clock, faults or inbox');
  return ctx.controls;
}

/** A date and time as a datetime-local field sends it ("2026-11-25T10:30", seconds optional), read in São Paulo's time. */
export function saoPauloInstant(text: string): string {
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})(:\d{2})?$/.exec(text);
  const at = match ? new Date(`${match[1]}${match[2] ?? ':00'}${SAO_PAULO_OFFSET}`) : null;
  if (!at || Number.isNaN(at.getTime())) throw badRequest('VALIDATION_FAILED', `to must be a date and time (YYYY-MM-DDTHH:MM), got ${text.slice(0, 40)}`);
  return at.toISOString();
}

/** An instant as a datetime-local field shows it in São Paulo ("2026-11-25T10:30:00"): the inverse of saoPauloInstant. */
export function saoPauloLocal(at: Date): string {
  const offsetMs = (Number(SAO_PAULO_OFFSET.slice(0, 3)) * 60 + Number(`${SAO_PAULO_OFFSET[0]}${SAO_PAULO_OFFSET.slice(4)}`)) * 60_000;
  return new Date(at.getTime() + offsetMs).toISOString().slice(0, 19);
}

/** The advance a form asks for: by a whole number of a unit, or to a São Paulo date and time. */
export function advanceInput(b: { by?: string | undefined; unit?: AdvanceUnit | undefined; to?: string | undefined }): AdvanceInput {
  const by = given(b.by);
  const to = given(b.to);
  if (by !== undefined && !/^[0-9]{1,15}$/.test(by)) throw badRequest('VALIDATION_FAILED', 'by must be a whole number');
  const input: AdvanceInput = {
    ...(by === undefined ? {} : { seconds: Number(by) * ADVANCE_UNITS[b.unit ?? 'seconds'] }),
    ...(to === undefined ? {} : { to: saoPauloInstant(to) }),
  };
  checkSchema(AdvanceRequest, input);
  return input;
}

/**
 * A fault as a form sends it: every field as text, the form offering them all. Only the fields
 * the controls' rules give the chosen kind and effect are taken; numbers are read as numbers
 * where the API's schema has integers. The schema and the rules then check it as the API does.
 */
export function faultInput(fields: Readonly<Record<string, string | undefined>>): FaultInput {
  const kind = fields.kind as FaultInput['kind'];
  const effect = fields.effect as FaultInput['effect'];
  const { needed, optional } = faultFields(kind, effect);
  const input: Record<string, unknown> = { kind, effect };
  for (const field of [...needed, ...optional]) {
    const text = given(fields[field]);
    if (text === undefined) continue;
    const integer = (FaultRequest.properties[field] as { type?: string }).type === 'integer';
    input[field] = integer && /^[0-9]{1,15}$/.test(text) ? Number(text) : text;
  }
  checkSchema(FaultRequest, input);
  return input;
}

/** What an advance runs besides the clock: Pix Automático's steps, as the API's route runs them. */
const clockRules = (ctx: ConsoleContext) => ({ runDue: () => runDue(ctx.automatico), nextEvent: (now: Date) => nextEvent(ctx.automatico, now) });
const stepsText = (steps: number) => (steps === 0 ? '' : `; ${steps} step${steps === 1 ? '' : 's'} of Pix Automático ran`);

export const CONTROL_ACTIONS: readonly ConsoleAction[] = [
  action({
    name: 'advance-clock',
    as: 'network',
    body: Type.Object({ by: Text(20), unit: Type.Optional(StringEnum(Object.keys(ADVANCE_UNITS) as AdvanceUnit[])), to: Text(40) }),
    async run(ctx, b) {
      const controls = controlsOf(ctx);
      const before = controls.clock.offsetMs;
      const view = await advanceClock(controls, clockRules(ctx), advanceInput(b));
      ctx.wakeWorker();
      const moved = controls.clock.offsetMs - before;
      return `The clock moved ahead ${duration(moved)}: business time is ${timeText(new Date(view.now))} (${duration(view.offsetSeconds * 1000)} ahead of the real clock)${stepsText(view.steps)}`;
    },
  }),
  action({
    name: 'advance-next-event',
    as: 'network',
    body: Type.Object({}),
    async run(ctx) {
      const view = await advanceClock(controlsOf(ctx), clockRules(ctx), { to: NEXT_EVENT });
      ctx.wakeWorker();
      return `${view.event!.description}: business time is ${timeText(new Date(view.now))}${stepsText(view.steps)}`;
    },
  }),
  action({
    name: 'reset-clock',
    as: 'network',
    body: Type.Object({}),
    async run(ctx) {
      const view = await controlsOf(ctx).reset();
      ctx.wakeWorker();
      return `The clock is back at the real time: business time is ${timeText(new Date(view.now))}`;
    },
  }),
  action({
    name: 'set-fault',
    as: 'network',
    body: Type.Object({
      kind: StringEnum(FAULT_KINDS),
      effect: StringEnum(FAULT_EFFECTS),
      urlPrefix: Text(2100),
      pixKey: Text(100),
      status: Text(20),
      delayMs: Text(20),
      reason: Text(20),
      count: Text(20),
      stage: Text(20),
    }),
    async run(ctx, b) {
      const row = await controlsOf(ctx).setFaultFrom(faultInput(b));
      return `Fault ${row.id} set: ${row.kind}, ${row.effect}${row.stage ? ` at ${row.stage}` : ''}${row.reason ? ` (${row.reason})` : ''}`;
    },
  }),
  action({
    name: 'clear-fault',
    as: 'network',
    body: Type.Object({ id: Id }),
    async run(ctx, b) {
      if ((await controlsOf(ctx).clearFaults(BigInt(b.id))) === 0) throw notFound('FAULT_NOT_FOUND', `No fault ${b.id}: it was cleared or used up`);
      return `Fault ${b.id} cleared`;
    },
  }),
  action({
    name: 'clear-faults',
    as: 'network',
    body: Type.Object({}),
    async run(ctx) {
      const cleared = await controlsOf(ctx).clearFaults();
      return cleared === 1 ? 'The one fault was cleared' : `${cleared} faults cleared`;
    },
  }),
  action({
    name: 'clear-inbox',
    as: 'network',
    body: Type.Object({ name: InboxName }),
    async run(ctx, b) {
      const cleared = await controlsOf(ctx).clearInbox(b.name);
      return `The inbox ${b.name} was emptied (${cleared} ${cleared === 1 ? 'arrival' : 'arrivals'})`;
    },
  }),
];
