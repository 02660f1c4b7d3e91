import { randomUUID } from 'node:crypto';
import { Type, type Static, type TObject } from 'typebox';
import { badRequest } from '../../http/errors.ts';
import { StringEnum } from '../../http/schemas.ts';
import { randomAlphanumeric } from '../../lib/ids.ts';
import { centavosToNumber, formatCentavos, parseDecimal } from '../../lib/money.ts';
import { createCharge } from '../charges/service.ts';
import { closeMed, openMed } from '../meds/service.ts';
import { answerSolicitationNow } from '../recurrences/network.ts';
import { payBrCode, type PayerPayment } from '../payer/service.ts';
import { requestRefund } from '../refunds/service.ts';
import { receiveIncomingPix, receiveIncomingRefund, registerExternalKey, settleNow } from '../sandbox/service.ts';
import { createTransfer } from '../transfers/service.ts';
import { callbackUrl } from '../webhooks/pix-callbacks.ts';
import { putKeyWebhook } from '../webhooks/pix-keys.ts';
import { register, resend } from '../webhooks/service.ts';
import { WEBHOOK_EVENT_TYPES } from '../webhooks/event-types.ts';
import { brl } from './views/format.ts';
import type { ConsoleContext } from './service.ts';

/**
 * What the console's forms do: each a POST to /console/actions/{name} with its TypeBox body,
 * calling the same service the API's route calls. `run` answers one sentence for the page.
 * A form field left empty arrives as "", which the optional fields read as absent.
 */
export interface ConsoleAction<S extends TObject = TObject> {
  readonly name: string;
  /** Who the console acts as: the Pix network (sandbox) or an account holder. */
  readonly as: 'network' | 'holder';
  readonly body: S;
  run(ctx: ConsoleContext, body: Static<S>): Promise<string>;
}

export const action = <S extends TObject>(a: ConsoleAction<S>): ConsoleAction => a as unknown as ConsoleAction;

export const Text = (maxLength: number) => Type.Optional(Type.String({ maxLength }));
const Required = (maxLength: number) => Type.String({ minLength: 1, maxLength });
const AccountId = Type.String({ pattern: '^[1-9][0-9]{0,17}$' });
const Id = AccountId;

export const given = (text: string | undefined): string | undefined => (text === undefined || text.trim() === '' ? undefined : text.trim());

/** An amount as typed ("12.50", "12,50", "12"): a decimal string with 2 places, through money.ts. */
export function amountOf(text: string, field = 'amount'): string {
  const trimmed = text.trim();
  const centavos = parseDecimal(/^\d+,\d{1,2}$/.test(trimmed) ? trimmed.replace(',', '.') : trimmed);
  if (centavos === null || centavos <= 0n) throw badRequest('INVALID_AMOUNT', `${field} must be an amount greater than 0 with at most 2 decimals ("10.00" or "10,00")`);
  return formatCentavos(centavos);
}

const brlOf = (decimal: string) => brl(parseDecimal(decimal)!);
const Payer = { payerName: Required(140), payerDocument: Required(18) };

/** What a BR Code's payment paid, in words: a charge, a Pix carrying a txid no charge has, or one to another institution. */
function paidText(paid: PayerPayment): string {
  const approved = paid.recurrence ? ` The recurrence ${paid.recurrence.idRec} is ${paid.recurrence.status} (${paid.recurrence.tipoJornada}).` : '';
  if (paid.amount === null) return `Nothing was paid (the code is a recurrence's alone).${approved}`;
  return paymentText(paid, brlOf(paid.amount)) + approved;
}

function paymentText(paid: PayerPayment, amount: string): string {
  if (paid.paid === 'charge') return `The charge ${paid.txid} was paid: ${amount}`;
  const carried = paid.txid ? `, carrying the txid ${paid.txid} (no charge of the account has it)` : '';
  if (paid.paid === 'key') return `A Pix of ${amount} was paid to the key ${paid.key}${carried}`;
  return `A Pix of ${amount} was paid to the key ${paid.key} at another institution${carried.replace(' (no charge of the account has it)', '')}: simulated, nothing is credited here`;
}

export const NETWORK_ACTIONS: readonly ConsoleAction[] = [
  action({
    name: 'incoming-pix',
    as: 'network',
    body: Type.Object({ pixKey: Required(77), amount: Required(20), ...Payer, description: Text(140) }),
    async run(ctx, b) {
      const amount = amountOf(b.amount);
      const description = given(b.description);
      const payer = { name: b.payerName.trim(), document: b.payerDocument };
      const arrived = await receiveIncomingPix(ctx.sandbox, { pixKey: b.pixKey.trim(), amount, payer, ...(description ? { description } : {}) });
      return `A Pix of ${brlOf(amount)} arrived at ${b.pixKey.trim()} (endToEndId ${arrived.endToEndId})`;
    },
  }),
  action({
    name: 'pay-brcode',
    as: 'network',
    body: Type.Object({ pixCopiaECola: Required(512), ...Payer, amount: Text(20) }),
    async run(ctx, b) {
      const amount = given(b.amount);
      const input = { pixCopiaECola: b.pixCopiaECola.trim(), payer: { name: b.payerName.trim(), document: b.payerDocument } };
      const paid = await payBrCode(ctx.payer, amount ? { ...input, amount: amountOf(amount) } : input);
      return paid.endToEndId === null ? paidText(paid) : `${paidText(paid)} (endToEndId ${paid.endToEndId})`;
    },
  }),
  action({
    name: 'incoming-refund',
    as: 'network',
    body: Type.Object({ endToEndId: Required(32), amount: Required(20) }),
    async run(ctx, b) {
      const amount = amountOf(b.amount);
      const refund = await receiveIncomingRefund(ctx.sandbox, { endToEndId: b.endToEndId.trim(), amount });
      return `A refund of ${brlOf(amount)} arrived for ${b.endToEndId.trim()} (rtrId ${refund.endToEndId})`;
    },
  }),
  action({
    name: 'open-med',
    as: 'network',
    body: Type.Object({ endToEndId: Required(32), reason: StringEnum(['FRAUD', 'OPERATIONAL_FLAW'] as const), details: Text(500) }),
    async run(ctx, b) {
      const details = given(b.details);
      const { medId } = await openMed(ctx.meds, { endToEndId: b.endToEndId.trim(), reason: b.reason, ...(details ? { details } : {}) });
      return `MED ${medId} opened against ${b.endToEndId.trim()}`;
    },
  }),
  action({
    name: 'close-med',
    as: 'network',
    body: Type.Object({ medId: Id, decision: StringEnum(['accept', 'reject'] as const) }),
    async run(ctx, b) {
      const closed = await closeMed(ctx.meds, BigInt(b.medId), b.decision);
      return `MED ${b.medId} ${closed.status}`;
    },
  }),
  action({
    name: 'settle',
    as: 'network',
    body: Type.Object({}),
    async run(ctx) {
      const { settled, failed } = await settleNow(ctx.sandbox);
      return `Settlement round: ${settled} settled, ${failed} failed`;
    },
  }),
  action({
    name: 'external-key',
    as: 'network',
    body: Type.Object({
      key: Required(77),
      name: Required(140),
      document: Required(18),
      ispb: Type.String({ pattern: '^[0-9]{8}$' }),
      bankName: Text(140),
      behavior: Type.Optional(StringEnum(['', 'reject', 'timeout'] as const)),
    }),
    async run(ctx, b) {
      const bankName = given(b.bankName);
      const behavior = b.behavior === '' ? undefined : b.behavior;
      const input = { key: b.key.trim(), name: b.name.trim(), document: b.document, ispb: b.ispb, bankName, behavior };
      const registered = await registerExternalKey(ctx.sandbox, input);
      return `Key ${registered.key} (${registered.type}) registered at institution ${registered.ispb}`;
    },
  }),
  action({
    name: 'answer-solicitation',
    as: 'network',
    body: Type.Object({ idSolicRec: Type.String({ pattern: '^SC[0-9A-Z]{8}[0-9]{8}[a-zA-Z0-9]{11}$' }), decision: StringEnum(['accept', 'reject'] as const) }),
    async run(ctx, b) {
      const row = await answerSolicitationNow(ctx.automatico, b.idSolicRec, b.decision === 'accept' ? { accept: true } : { reject: 'AP14' });
      return `The payer ${b.decision === 'accept' ? 'accepted' : 'rejected'} the solicitation ${row.id_solic_rec}: it is ${row.status}`;
    },
  }),
];

export const HOLDER_ACTIONS: readonly ConsoleAction[] = [
  action({
    name: 'create-charge',
    as: 'holder',
    body: Type.Object({ accountId: AccountId, amount: Required(20), expiration: Type.Optional(Type.String({ pattern: '^[0-9]{0,9}$' })), txid: Text(35), message: Text(140) }),
    async run(ctx, b) {
      const message = given(b.message);
      const input = {
        calendario: { expiracao: given(b.expiration) === undefined ? 3600 : Number(b.expiration) },
        valor: { original: amountOf(b.amount) },
        ...(message ? { solicitacaoPagador: message } : {}),
      };
      const charge = await createCharge(ctx.charges, BigInt(b.accountId), input, given(b.txid));
      return `Charge ${charge.txid} of ${brl(charge.amount_centavos)} created`;
    },
  }),
  action({
    name: 'transfer',
    as: 'holder',
    body: Type.Object({ accountId: AccountId, pixKey: Required(77), amount: Required(20), description: Text(140), priority: Type.Optional(StringEnum(['NORM', 'HIGH'] as const)) }),
    async run(ctx, b) {
      const amount = amountOf(b.amount);
      const description = given(b.description);
      const request = { pixKey: b.pixKey.trim(), payment: { currency: 'BRL', amount: centavosToNumber(parseDecimal(amount)!) }, priority: b.priority, ...(description ? { description } : {}) };
      const { body } = await createTransfer(ctx.transfers, BigInt(b.accountId), randomUUID(), request);
      return `Transfer of ${brlOf(amount)} to ${b.pixKey.trim()} accepted: ${body.type} (endToEndId ${body.endToEndId})`;
    },
  }),
  action({
    name: 'refund',
    as: 'holder',
    body: Type.Object({ accountId: AccountId, endToEndId: Required(32), amount: Required(20), description: Text(140) }),
    async run(ctx, b) {
      const descricao = given(b.description);
      const id = `console${randomAlphanumeric(20)}`;
      const { body } = await requestRefund(ctx.refunds, BigInt(b.accountId), b.endToEndId.trim(), id, { valor: amountOf(b.amount), ...(descricao ? { descricao } : {}) });
      return `Refund ${body.id} of ${brlOf(body.valor)} requested: ${body.status} (rtrId ${body.rtrId})`;
    },
  }),
  action({
    name: 'register-webhook',
    as: 'holder',
    body: Type.Object({ accountId: AccountId, url: Required(2048), eventType: StringEnum(WEBHOOK_EVENT_TYPES) }),
    async run(ctx, b) {
      const answer = await register(ctx.webhooks, BigInt(b.accountId), { url: b.url.trim(), eventType: b.eventType });
      return `${answer.message}: ${b.eventType} to ${b.url.trim()} (id ${answer.id}, version ${answer.version})`;
    },
  }),
  action({
    name: 'register-key-webhook',
    as: 'holder',
    body: Type.Object({ accountId: AccountId, chave: Required(77), webhookUrl: Required(2048) }),
    async run(ctx, b) {
      const row = await putKeyWebhook(ctx.webhooks, BigInt(b.accountId), b.chave.trim(), b.webhookUrl.trim());
      return `Webhook of the key ${row.chave} set: its callbacks go to ${callbackUrl(row.webhook_url)}`;
    },
  }),
  action({
    name: 'resend-webhook',
    as: 'holder',
    body: Type.Object({ accountId: AccountId, transaction: Required(64), url: Text(2048) }),
    async run(ctx, b) {
      const url = given(b.url);
      const answer = await resend(ctx.webhooks, BigInt(b.accountId), b.transaction.trim(), url ? { url } : {});
      return answer.message;
    },
  }),
];
