import { Type, type Static, type TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { unprocessable } from '../../http/errors.ts';
import { formatDay } from '../../lib/banking-days.ts';
import { DAY_MS, parseDateBound, SAO_PAULO_OFFSET } from '../../lib/dates.ts';
import { formatCentavos, parseDecimal2 } from '../../lib/money.ts';
import { cobvAmount } from '../cobv/amount.ts';

/**
 * The payer's reading of a verified payload (BCB's CobPayload and CobVPayload): only the fields
 * a payment needs are required, the rest is ignored as a payer's app would.
 */
const Money = Type.String({ pattern: '^\\d{1,10}\\.\\d{2}$' });
const Common = { txid: Type.String({ pattern: '^[a-zA-Z0-9]{26,35}$' }), revisao: Type.Integer({ minimum: 0 }), status: Type.String(), chave: Type.String({ minLength: 1, maxLength: 77 }) };
const CobPayload = Type.Object({
  ...Common,
  calendario: Type.Object({ criacao: Type.String(), expiracao: Type.Integer({ minimum: 1 }) }),
  valor: Type.Object({ original: Money, modalidadeAlteracao: Type.Optional(Type.Union([Type.Literal(0), Type.Literal(1)])) }),
});
const CobVPayload = Type.Object({
  ...Common,
  calendario: Type.Object({ criacao: Type.String(), dataDeVencimento: Type.String(), validadeAposVencimento: Type.Integer({ minimum: 0, maximum: 36_500 }) }),
  valor: Type.Object({ final: Money }),
});

export type TipoCob = 'cob' | 'cobv';

/** What the payment will be: the charge's txid and key, and the amount paid. */
export interface PayloadTerms {
  txid: string;
  chave: string;
  amountCentavos: bigint;
}

const payloadInvalid = (reason: string) => unprocessable('PAYLOAD_INVALID', `The signed payload is not a charge a payer can pay: ${reason}`);
const amountNotAllowed = (reason: string) => unprocessable('AMOUNT_NOT_ALLOWED', reason);

/** The day (YYYY-MM-DD) an instant falls on in São Paulo: a cobv's payment date (DPP). */
export function saoPauloDay(at: Date): string {
  const offsetMs = Number(SAO_PAULO_OFFSET.slice(0, 3)) * 3_600_000;
  return formatDay(Math.floor((at.getTime() + offsetMs) / DAY_MS));
}

function parsed<T extends TSchema>(schema: T, text: string): Static<T> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw payloadInvalid('it is not JSON');
  }
  const [first] = Value.Errors(schema, value);
  if (first) throw payloadInvalid(`${first.instancePath.slice(1).replaceAll('/', '.') || 'the payload'} ${first.message}`);
  return value as Static<T>;
}

function instant(text: string, field: string): Date {
  const bound = parseDateBound(text);
  if (!bound || bound.isDate) throw payloadInvalid(`${field} is not an RFC 3339 timestamp`);
  return bound.at;
}

function requireAtiva(status: string): void {
  if (status !== 'ATIVA') throw unprocessable('CHARGE_NOT_ACTIVE', `The charge is not ATIVA (its payload says ${status})`);
}

/** The amount of a code: `requested` only where the payload lets the payer change it. */
export function amountPaid(due: bigint, changeable: boolean, requested: bigint | undefined): bigint {
  if (requested === undefined) {
    if (due === 0n) throw unprocessable('AMOUNT_REQUIRED', 'The code leaves the amount to the payer: send amount');
    return due;
  }
  if (!changeable && requested !== due) throw amountNotAllowed(`The code's amount is ${formatCentavos(due)}: the payer cannot change it`);
  return requested;
}

function cobTerms(text: string, paidAt: Date, requested: bigint | undefined): PayloadTerms {
  const payload = parsed(CobPayload, text);
  requireAtiva(payload.status);
  const criacao = instant(payload.calendario.criacao, 'calendario.criacao');
  const expiry = new Date(criacao.getTime() + payload.calendario.expiracao * 1000);
  if (paidAt.getTime() >= expiry.getTime()) throw unprocessable('CHARGE_EXPIRED', `The charge expired at ${expiry.toISOString()} (calendario.criacao + expiracao)`);
  const original = parseDecimal2(payload.valor.original)!;
  const amountCentavos = amountPaid(original, payload.valor.modalidadeAlteracao === 1, requested);
  return { txid: payload.txid, chave: payload.chave, amountCentavos };
}

function cobvTerms(text: string, paidAt: Date, requested: bigint | undefined): PayloadTerms {
  const payload = parsed(CobVPayload, text);
  requireAtiva(payload.status);
  instant(payload.calendario.criacao, 'calendario.criacao');
  const { dataDeVencimento, validadeAposVencimento } = payload.calendario;
  if (!parseDateBound(dataDeVencimento)?.isDate) throw payloadInvalid('calendario.dataDeVencimento is not a date');
  const final = parseDecimal2(payload.valor.final)!;
  // The last payable day follows the core's rule (the due date moved to a banking day, plus the validity).
  const validity = cobvAmount({ valor: { originalCentavos: final }, dataDeVencimento, validadeAposVencimento, dataDePagamento: saoPauloDay(paidAt) });
  if (!validity.payable) throw unprocessable('CHARGE_EXPIRED', `The charge could be paid until ${validity.ultimoDiaPagavel} (dataDeVencimento + validadeAposVencimento)`);
  if (final === 0n) throw payloadInvalid('valor.final is 0.00');
  return { txid: payload.txid, chave: payload.chave, amountCentavos: amountPaid(final, false, requested) };
}

/** Checks a verified payload at the payment time and says what to pay; 422 when it cannot be paid. */
export function payloadTerms(kind: TipoCob, text: string, paidAt: Date, requested: bigint | undefined): PayloadTerms {
  return kind === 'cob' ? cobTerms(text, paidAt, requested) : cobvTerms(text, paidAt, requested);
}
