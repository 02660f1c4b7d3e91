import { Type } from 'typebox';
import { StringEnum } from '../../http/schemas.ts';
import { centavosToNumber, parseDecimal } from '../../lib/money.ts';
import { approveAuthorization, cancelAuthorization, cancelPayerCharge, rejectAuthorization } from '../recurrences/payer.ts';
import { IdRecParam } from '../recurrences/payer-schemas.ts';
import { createSandboxRecurrence, sendSandboxCharge } from '../recurrences/sandbox-receiver.ts';
import { action, amountOf, given, Text, type ConsoleAction } from './actions.ts';
import { brl } from './views/format.ts';

/**
 * The console's forms for Pix Automático on the payer's side: the account holder answering the
 * authorizations asked of it and cancelling what it may, and the sandbox as another institution's
 * receiver asking the account holder and charging it. Each calls the same function the API's
 * route calls (recurrences/payer.ts, recurrences/sandbox-receiver.ts): the rules are theirs.
 */

const Required = (maxLength: number) => Type.String({ minLength: 1, maxLength });
const AccountId = Type.String({ pattern: '^[1-9][0-9]{0,17}$' });
const IdRec = IdRecParam.properties.idRec;
/** A day as a date field sends it. */
const Day = Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' });

export const FREQUENCIES = ['SEMANAL', 'MENSAL', 'TRIMESTRAL', 'SEMESTRAL', 'ANUAL'] as const;
export const RETRY_POLICIES = ['NAO_PERMITE', 'PERMITE_3R_7D'] as const;

const brlOf = (decimal: string) => brl(parseDecimal(decimal)!);
const orNothing = (decimal: string | null) => (decimal === null ? '' : brlOf(decimal));

/** An optional amount as typed: absent when left empty, else the decimal string money.ts makes of it. */
const optionalAmount = (text: string | undefined, field: string): string | undefined => {
  const typed = given(text);
  return typed === undefined ? undefined : amountOf(typed, field);
};

/** The view of an authorization in one sentence: its status and what it came to (why it ended, or its journey and the payer's maximum). */
function authorizationText(v: Awaited<ReturnType<typeof approveAuthorization>>): string {
  const said = `The authorization ${v.idRec} of ${v.receiver.name} is ${v.status}`;
  if (v.cancellation) return `${said} (${v.cancellation.code} by ${v.cancellation.requestedBy})`;
  if (v.rejection) return `${said} (${v.rejection.code}: ${v.rejection.description})`;
  const maximum = v.amount.payerMaximum ? `, at most ${orNothing(v.amount.payerMaximum)} a charge` : '';
  return `${said}${v.journey ? ` (${v.journey})` : ''}${maximum}`;
}

export const PAYER_ACTIONS: readonly ConsoleAction[] = [
  action({
    name: 'approve-authorization',
    as: 'holder',
    body: Type.Object({ accountId: AccountId, idRec: IdRec, maximumAmount: Text(20) }),
    async run(ctx, b) {
      const maximum = optionalAmount(b.maximumAmount, 'maximumAmount');
      const input = maximum === undefined ? {} : { maximumAmount: centavosToNumber(parseDecimal(maximum)!) };
      return authorizationText(await approveAuthorization(ctx.payerSide, BigInt(b.accountId), b.idRec, input));
    },
  }),
  action({
    name: 'reject-authorization',
    as: 'holder',
    body: Type.Object({ accountId: AccountId, idRec: IdRec }),
    async run(ctx, b) {
      return authorizationText(await rejectAuthorization(ctx.payerSide, BigInt(b.accountId), b.idRec));
    },
  }),
  action({
    name: 'cancel-authorization',
    as: 'holder',
    body: Type.Object({ accountId: AccountId, idRec: IdRec }),
    async run(ctx, b) {
      return authorizationText(await cancelAuthorization(ctx.payerSide, BigInt(b.accountId), b.idRec));
    },
  }),
  action({
    name: 'cancel-payer-charge',
    as: 'holder',
    body: Type.Object({ accountId: AccountId, id: AccountId }),
    async run(ctx, b) {
      const v = await cancelPayerCharge(ctx.payerSide, BigInt(b.accountId), BigInt(b.id));
      const cancellation = v.cancellation ? ` (${v.cancellation.code} by ${v.cancellation.requestedBy})` : '';
      return `The recurring charge ${v.id} of ${brlOf(v.amount)} due ${v.dueDate} to ${v.receiver.name} is ${v.status}${cancellation}`;
    },
  }),
  action({
    name: 'sandbox-recurrence',
    as: 'network',
    body: Type.Object({
      payerAccountId: AccountId,
      receiverName: Text(140),
      contract: Required(35),
      object: Text(35),
      frequency: StringEnum(FREQUENCIES),
      startDate: Day,
      fixedAmount: Text(20),
      minimumAmount: Text(20),
      retryPolicy: StringEnum(RETRY_POLICIES),
    }),
    async run(ctx, b) {
      const name = given(b.receiverName);
      const object = given(b.object);
      const fixedAmount = optionalAmount(b.fixedAmount, 'fixedAmount');
      const minimumAmount = optionalAmount(b.minimumAmount, 'minimumAmount');
      const made = await createSandboxRecurrence(ctx.sandboxReceiver, {
        payerAccountId: Number(b.payerAccountId),
        ...(name === undefined ? {} : { receiver: { name } }),
        contract: b.contract.trim(),
        ...(object === undefined ? {} : { object }),
        frequency: b.frequency,
        startDate: b.startDate,
        ...(fixedAmount === undefined ? {} : { fixedAmount }),
        ...(minimumAmount === undefined ? {} : { minimumAmount }),
        retryPolicy: b.retryPolicy,
      });
      return (
        `${made.receiver.name} (ISPB ${made.receiver.ispb}) asked the account ${b.payerAccountId} to approve the recurrence ${made.idRec}: ` +
        `its solicitation ${made.solicitation.id} is ${made.solicitation.status} and reaches the account a moment later, PENDING`
      );
    },
  }),
  action({
    name: 'sandbox-recurring-charge',
    as: 'network',
    body: Type.Object({ idRec: IdRec, dueDate: Day, amount: Required(20), description: Text(140) }),
    async run(ctx, b) {
      const description = given(b.description);
      const sent = await sendSandboxCharge(ctx.sandboxReceiver, b.idRec, { dueDate: b.dueDate, amount: amountOf(b.amount), ...(description ? { description } : {}) });
      const settles = sent.settlementDate === sent.dueDate ? '' : `, settling ${sent.settlementDate}`;
      return (
        `The recurring charge ${sent.id} (txid ${sent.txid}) of ${brlOf(sent.amount)} due ${sent.dueDate}${settles} was sent for ${sent.idRec}: ` +
        `it is ${sent.status}, and this institution, the payer's PSP, answers it a minute later`
      );
    },
  }),
];
