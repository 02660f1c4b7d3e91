import { Type, type Static, type TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { unprocessable } from '../../http/errors.ts';
import { parseDateBound } from '../../lib/dates.ts';
import { formatCentavos, parseDecimal2 } from '../../lib/money.ts';
import { cobvAmount } from '../cobv/amount.ts';
import { saoPauloDay } from '../cobv/due.ts';

/**
 * The payer's reading of a verified payload (BCB's CobPayload and CobVPayload): only the fields
 * a payment needs are required, the rest is ignored as a payer's app would.
 */
const Money = Type.String({ pattern: '^\\d{1,10}\\.\\d{2}$' });
const Modalidade = Type.Optional(Type.Union([Type.Literal(0), Type.Literal(1)]));
const Common = { txid: Type.String({ pattern: '^[a-zA-Z0-9]{26,35}$' }), revisao: Type.Integer({ minimum: 0 }), status: Type.String(), chave: Type.String({ minLength: 1, maxLength: 77 }) };
/** A withdrawal (saque) or change (troco) of BCB's CobValor.retirada: its value, and whether the payer chooses it. */
const RetiradaItem = Type.Object({ valor: Money, modalidadeAlteracao: Modalidade });
const CobPayload = Type.Object({
  ...Common,
  calendario: Type.Object({ criacao: Type.String(), expiracao: Type.Integer({ minimum: 1 }) }),
  valor: Type.Object({
    original: Money,
    modalidadeAlteracao: Modalidade,
    retirada: Type.Optional(Type.Object({ saque: Type.Optional(RetiradaItem), troco: Type.Optional(RetiradaItem) })),
  }),
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
  /**
   * A cobv paid on an earlier day than the one its payload prices (a location serves no past
   * day): that earlier day. `amountCentavos` is then the payload's day's amount, and the
   * payment is priced again for this day by whoever can (the charge's own PSP).
   */
  priceOn?: string | undefined;
}

const payloadInvalid = (reason: string) => unprocessable('PAYLOAD_INVALID', `The signed payload is not a charge a payer can pay: ${reason}`);
const amountNotAllowed = (reason: string) => unprocessable('AMOUNT_NOT_ALLOWED', reason);

/** The statuses of a charge whose time may have run out: one past it is expired, whichever of the two its payload says. */
const EXPIRABLE: readonly string[] = ['ATIVA', 'REMOVIDA_PELO_PSP'];

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

/**
 * What a cob asks (BCB's CobValor): valor.original, or `amount` where modalidadeAlteracao is 1.
 * With valor.retirada, the original (0.00 for a Pix Saque, the purchase for a Pix Troco) plus the
 * withdrawal or change; where the withdrawal's or change's own modalidadeAlteracao is 1, the
 * payer chooses it: `amount` is then the original plus the withdrawal or change chosen.
 */
function cobAmount(valor: Static<typeof CobPayload>['valor'], requested: bigint | undefined): bigint {
  const original = parseDecimal2(valor.original)!;
  if (valor.retirada === undefined) return amountPaid(original, valor.modalidadeAlteracao === 1, requested);
  const { saque, troco } = valor.retirada;
  const item = saque ?? troco;
  if (!item || (saque && troco)) throw payloadInvalid('valor.retirada has not exactly one of saque and troco');
  const due = original + parseDecimal2(item.valor)!;
  if (item.modalidadeAlteracao !== 1 || requested === undefined) return amountPaid(due, false, requested);
  if (requested < original) throw amountNotAllowed(`The code's purchase is ${formatCentavos(original)}: the amount is that plus the ${saque ? 'withdrawal' : 'change'} chosen`);
  return requested;
}

function cobTerms(text: string, paidAt: Date, requested: bigint | undefined): PayloadTerms {
  const payload = parsed(CobPayload, text);
  const criacao = instant(payload.calendario.criacao, 'calendario.criacao');
  const expiry = new Date(criacao.getTime() + payload.calendario.expiracao * 1000);
  if (EXPIRABLE.includes(payload.status) && paidAt.getTime() >= expiry.getTime()) {
    throw unprocessable('CHARGE_EXPIRED', `The charge expired at ${expiry.toISOString()} (calendario.criacao + expiracao)`);
  }
  requireAtiva(payload.status);
  return { txid: payload.txid, chave: payload.chave, amountCentavos: cobAmount(payload.valor, requested) };
}

/** `day`: the payment date (DPP) the payload was asked for, whose amounts it carries. */
function cobvTerms(text: string, paidAt: Date, requested: bigint | undefined, day: string): PayloadTerms {
  const payload = parsed(CobVPayload, text);
  instant(payload.calendario.criacao, 'calendario.criacao');
  const { dataDeVencimento, validadeAposVencimento } = payload.calendario;
  if (!parseDateBound(dataDeVencimento)?.isDate) throw payloadInvalid('calendario.dataDeVencimento is not a date');
  const final = parseDecimal2(payload.valor.final)!;
  const paidOn = saoPauloDay(paidAt);
  // The last payable day follows the core's rule (the due date moved to a banking day, plus the validity).
  const validity = cobvAmount({ valor: { originalCentavos: final }, dataDeVencimento, validadeAposVencimento, dataDePagamento: paidOn });
  if (EXPIRABLE.includes(payload.status) && !validity.payable) {
    throw unprocessable('CHARGE_EXPIRED', `The charge could be paid until ${validity.ultimoDiaPagavel} (dataDeVencimento + validadeAposVencimento)`);
  }
  requireAtiva(payload.status);
  if (final === 0n) throw payloadInvalid('valor.final is 0.00');
  const terms = { txid: payload.txid, chave: payload.chave };
  if (paidOn !== day) return { ...terms, amountCentavos: final, priceOn: paidOn };
  return { ...terms, amountCentavos: amountPaid(final, false, requested) };
}

/**
 * Checks a verified payload at the payment time and says what to pay; 422 when it cannot be
 * paid. `day` is the payment date a cobv's payload was asked for (DPP).
 */
export function payloadTerms(kind: TipoCob, text: string, paidAt: Date, requested: bigint | undefined, day: string): PayloadTerms {
  return kind === 'cob' ? cobTerms(text, paidAt, requested) : cobvTerms(text, paidAt, requested, day);
}

/** The payer's reading of a verified RecPayload: the recurrence, and the amounts its charges may take. */
const RecPayload = Type.Object({
  idRec: Type.String({ pattern: '^[a-zA-Z0-9]{29}$' }),
  recebedor: Type.Object({ ispbParticipante: Type.String({ pattern: '^[0-9A-Z]{8}$' }) }),
  valor: Type.Optional(Type.Object({ valorRec: Type.Optional(Money), valorMinimoRecebedor: Type.Optional(Money) })),
});

export interface RecPayloadTerms {
  idRec: string;
  valorRec: bigint | null;
  valorMinimo: bigint | null;
}

export function recPayloadTerms(text: string): RecPayloadTerms {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw unprocessable('PAYLOAD_INVALID', 'The signed payload is not a recurrence a payer can approve: it is not JSON');
  }
  const [first] = Value.Errors(RecPayload, value);
  if (first) throw unprocessable('PAYLOAD_INVALID', `The signed payload is not a recurrence a payer can approve: ${first.instancePath.slice(1).replaceAll('/', '.') || 'the payload'} ${first.message}`);
  const payload = value as Static<typeof RecPayload>;
  const money = (text: string | undefined) => (text === undefined ? null : parseDecimal2(text));
  return { idRec: payload.idRec, valorRec: money(payload.valor?.valorRec), valorMinimo: money(payload.valor?.valorMinimoRecebedor) };
}
