/**
 * The amount a due-date charge (`cobv`) asks on a payment date: BCB's API Pix `CobVValor`
 * (original, multa, juros, abatimento, desconto in each `modalidade`) applied to
 * `calendario.dataDeVencimento` and `validadeAposVencimento`. Pure: no clock, no database.
 *
 * The rules, argued in docs/decisions/0031-cobv-amounts.md:
 * - A due date on a non-banking day moves to the next banking day, and everything that refers
 *   to it (lateness, the last payable day, a discount dated on it) follows the move.
 * - Every percentage is of `valor.original`.
 * - Interest is simple, counted in calendar or banking days after the (moved) due date; a
 *   month is 30 calendar or 21 banking days, a year 365 calendar or 252 banking days.
 * - Rounding: each component is computed exactly as a fraction of centavos and rounded once,
 *   half up, to the centavo (interest over n days is rounded once, not per day).
 * - final = original - abatimento - desconto + juros + multa, never below zero: the discount is
 *   cut to what the abatement leaves.
 */
import { assert } from '../../lib/assert.ts';
import { bankingDaysBetween, formatDay, nextBankingDay, parseDay } from '../../lib/banking-days.ts';

/**
 * A `valorPerc` read by parseDecimal2: the wire's 2-decimal number times 100, which is
 * centavos for a value modalidade and hundredths of a percent for a percentage one.
 */
type Hundredths = bigint;

export interface Multa {
  /** 1: fixed value; 2: percentage. */
  modalidade: 1 | 2;
  valorPercHundredths: Hundredths;
}

export interface Juros {
  /**
   * Calendar days: 1 value per day, 2 percent per day, 3 percent per month, 4 percent per year;
   * banking days: 5 to 8 the same.
   */
  modalidade: 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8;
  valorPercHundredths: Hundredths;
}

export interface Abatimento {
  /** 1: fixed value; 2: percentage. */
  modalidade: 1 | 2;
  valorPercHundredths: Hundredths;
}

export interface DescontoDataFixa {
  /** 1: fixed value until each date; 2: percentage until each date. */
  modalidade: 1 | 2;
  /** One to three `{data, valorPerc}`: the discount for paying on or before `data`. */
  descontoDataFixa: ReadonlyArray<{ data: string; valorPercHundredths: Hundredths }>;
}

export interface DescontoAntecipacao {
  /** Per day paid early: 3 value per calendar day, 4 value per banking day, 5 and 6 percent. */
  modalidade: 3 | 4 | 5 | 6;
  valorPercHundredths: Hundredths;
}

export interface CobvValor {
  originalCentavos: bigint;
  multa?: Multa | undefined;
  juros?: Juros | undefined;
  abatimento?: Abatimento | undefined;
  desconto?: DescontoDataFixa | DescontoAntecipacao | undefined;
}

export interface CobvAmountInput {
  valor: CobvValor;
  /** `YYYY-MM-DD`, a day in America/Sao_Paulo. */
  dataDeVencimento: string;
  /** Calendar days after the (moved) due date during which the charge can still be paid. */
  validadeAposVencimento: number;
  /** `YYYY-MM-DD`: the day of payment (the payload's `DPP`). */
  dataDePagamento: string;
}

export interface CobvAmount {
  /** False when the payment date is after `ultimoDiaPagavel`: the charge can no longer be paid. */
  payable: boolean;
  /** The due date moved to a banking day. */
  vencimentoAjustado: string;
  /** The last day the charge can be paid. */
  ultimoDiaPagavel: string;
  originalCentavos: bigint;
  abatimentoCentavos: bigint;
  descontoCentavos: bigint;
  jurosCentavos: bigint;
  multaCentavos: bigint;
  finalCentavos: bigint;
}

const PERCENT_HUNDREDTHS = 10_000n;
const CALENDAR_DAYS_PER_MONTH = 30n;
const CALENDAR_DAYS_PER_YEAR = 365n;
const BANKING_DAYS_PER_MONTH = 21n;
const BANKING_DAYS_PER_YEAR = 252n;

/** numerator / denominator rounded half up, for numerator >= 0 and denominator > 0. */
function roundHalfUp(numerator: bigint, denominator: bigint): bigint {
  return (2n * numerator + denominator) / (2n * denominator);
}

/** A share of the original: `hundredths` hundredths of a percent, `times` times, over `per`. */
function percentOf(originalCentavos: bigint, hundredths: Hundredths, times: bigint, per = 1n): bigint {
  return roundHalfUp(originalCentavos * hundredths * times, PERCENT_HUNDREDTHS * per);
}

function day(text: string, field: string): number {
  const parsed = parseDay(text);
  assert(parsed !== null, `${field} is not a date: ${text}`);
  return parsed;
}

/**
 * The last day (`YYYY-MM-DD`) a cobv can be paid: the due date moved to a banking day, plus
 * `validadeAposVencimento` calendar days, moved to a banking day in turn (BCB's examples A to G).
 */
export function lastPayableDay(dataDeVencimento: string, validadeAposVencimento: number): string {
  return formatDay(nextBankingDay(nextBankingDay(day(dataDeVencimento, 'dataDeVencimento')) + validadeAposVencimento));
}

export function cobvAmount(input: CobvAmountInput): CobvAmount {
  const { valor } = input;
  assert(valor.originalCentavos >= 0n, 'valor.original is negative');
  assert(Number.isSafeInteger(input.validadeAposVencimento) && input.validadeAposVencimento >= 0,
    'validadeAposVencimento is not a non-negative integer');
  const due = day(input.dataDeVencimento, 'dataDeVencimento');
  const paid = day(input.dataDePagamento, 'dataDePagamento');
  const movedDue = nextBankingDay(due);
  const lastPayable = nextBankingDay(movedDue + input.validadeAposVencimento);

  const abatimentoCentavos = abatimento(valor);
  let descontoCentavos = paid <= movedDue ? desconto(valor, due, movedDue, paid) : 0n;
  const left = valor.originalCentavos - abatimentoCentavos;
  if (descontoCentavos > left) descontoCentavos = left > 0n ? left : 0n;
  const late = paid > movedDue;
  const jurosCentavos = late ? juros(valor, movedDue, paid) : 0n;
  const multaCentavos = late ? multa(valor) : 0n;
  const total = left - descontoCentavos + jurosCentavos + multaCentavos;
  return {
    payable: paid <= lastPayable,
    vencimentoAjustado: formatDay(movedDue),
    ultimoDiaPagavel: formatDay(lastPayable),
    originalCentavos: valor.originalCentavos,
    abatimentoCentavos,
    descontoCentavos,
    jurosCentavos,
    multaCentavos,
    finalCentavos: total > 0n ? total : 0n,
  };
}

function abatimento({ abatimento: a, originalCentavos }: CobvValor): bigint {
  if (!a) return 0n;
  return a.modalidade === 1 ? a.valorPercHundredths : percentOf(originalCentavos, a.valorPercHundredths, 1n);
}

function multa({ multa: m, originalCentavos }: CobvValor): bigint {
  if (!m) return 0n;
  return m.modalidade === 1 ? m.valorPercHundredths : percentOf(originalCentavos, m.valorPercHundredths, 1n);
}

function juros({ juros: j, originalCentavos }: CobvValor, movedDue: number, paid: number): bigint {
  if (!j) return 0n;
  const banking = j.modalidade >= 5;
  const days = BigInt(banking ? bankingDaysBetween(movedDue, paid) : paid - movedDue);
  const rate = j.valorPercHundredths;
  switch (j.modalidade) {
    case 1: case 5: return rate * days;
    case 2: case 6: return percentOf(originalCentavos, rate, days);
    case 3: return percentOf(originalCentavos, rate, days, CALENDAR_DAYS_PER_MONTH);
    case 7: return percentOf(originalCentavos, rate, days, BANKING_DAYS_PER_MONTH);
    case 4: return percentOf(originalCentavos, rate, days, CALENDAR_DAYS_PER_YEAR);
    case 8: return percentOf(originalCentavos, rate, days, BANKING_DAYS_PER_YEAR);
  }
}

/** The discount for paying on `paid`, on or before the moved due date. */
function desconto({ desconto: d, originalCentavos }: CobvValor, due: number, movedDue: number, paid: number): bigint {
  if (!d) return 0n;
  if ('descontoDataFixa' in d) {
    // Each element promises its discount until its date; when several still hold, the largest.
    let best: bigint | null = null;
    for (const entry of d.descontoDataFixa) {
      const written = day(entry.data, 'desconto.descontoDataFixa.data');
      const limit = written === due ? movedDue : written;
      if (limit >= paid && (best === null || entry.valorPercHundredths > best)) best = entry.valorPercHundredths;
    }
    if (best === null) return 0n;
    return d.modalidade === 1 ? best : percentOf(originalCentavos, best, 1n);
  }
  // Days of anticipation: calendar days before the due date, or banking days in [paid, due).
  const banking = d.modalidade === 4 || d.modalidade === 6;
  const days = BigInt(banking ? bankingDaysBetween(paid - 1, movedDue - 1) : movedDue - paid);
  const perDay = d.valorPercHundredths;
  return d.modalidade === 3 || d.modalidade === 4 ? perDay * days : percentOf(originalCentavos, perDay, days);
}
