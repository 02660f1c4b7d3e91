/**
 * The calendar of Pix Automático's recurring charges, as pure functions of dates (`YYYY-MM-DD`,
 * days in São Paulo) and instants: which cycle of a recurrence a due date falls in, the day a
 * charge settles (its due date, moved to the next business day by `ajusteDiaUtil`), the window
 * in which the receiver's PSP may send it (D-10 to D-2 of that day), the slots in which the
 * payer's PSP settles it (00:00 to 08:00, the evening's retry 18:00 to 21:00), the dates a
 * retry may take (D+1 to D+7, at most 3), and the cut-offs of cancellations. Every rule reads
 * them from here. Decision: docs/decisions/0048-pix-automatico-cycle.md.
 */
import { formatDay, isBankingDay, nextBankingDay, parseDay } from '../../lib/banking-days.ts';
import { DAY_MS, SAO_PAULO_OFFSET } from '../../lib/dates.ts';
import type { RecPeriodicidade } from '../../db/schema.ts';

/** How the D-10..D-2 window counts days: calendar days (the regulation's, the default) or business days. */
export type WindowDays = 'calendar' | 'business';

/** The receiver's PSP sends a charge at most this many days before it settles... */
export const WINDOW_OPENS_DAYS = 10;
/** ...and at least this many. */
export const WINDOW_CLOSES_DAYS = 2;
/** The payer's PSP answers a charge (schedules it or refuses it) within this long. */
export const ANSWER_WITHIN_MS = 2 * 3_600_000;
/** The morning's settlement slot, in São Paulo: from 00:00 to 08:00. */
export const SETTLEMENT_SLOT = { from: 0, to: 8 } as const;
/** The evening's retry of an attempt that lacked funds: from 18:00 to 21:00. */
export const RETRY_SLOT = { from: 18, to: 21 } as const;
/** PERMITE_3R_7D: at most 3 retries, on distinct dates within 7 days after the due date. */
export const MAX_RETRIES = 3;
export const RETRY_DAYS = 7;

const OFFSET_HOURS = Number(SAO_PAULO_OFFSET.slice(0, 3));

function day(text: string): number {
  const value = parseDay(text);
  if (value === null) throw new RangeError(`not a date: ${text}`);
  return value;
}

/** The day `n` days after `text` (before, for a negative n). */
export function addDays(text: string, n: number): string {
  return formatDay(day(text) + n);
}

/** Whole days from `from` to `to` (negative when `to` is earlier). */
export function daysBetween(from: string, to: string): number {
  return day(to) - day(from);
}

/** The instant a São Paulo day's hour begins (UTC-03:00 all year since 2019). */
export function saoPauloHour(text: string, hour: number): Date {
  return new Date(day(text) * DAY_MS + (hour - OFFSET_HOURS) * 3_600_000);
}

/** The day a charge settles: its due date, or the next business day when it falls on none and `ajusteDiaUtil`. */
export function settlementDate(dueDate: string, ajusteDiaUtil: boolean): string {
  return ajusteDiaUtil ? formatDay(nextBankingDay(day(dueDate))) : dueDate;
}

/** `n` business days before `text` (for n >= 0). */
function businessDaysBefore(text: string, n: number): string {
  let d = day(text);
  for (let left = n; left > 0; ) {
    d--;
    if (isBankingDay(d)) left--;
  }
  return formatDay(d);
}

/**
 * The days on which the receiver's PSP may send a charge that settles on `settlement`: from
 * D-10 to D-2, counted in calendar days or business days.
 */
export function sendingWindow(settlement: string, days: WindowDays): { opens: string; closes: string } {
  if (days === 'business') return { opens: businessDaysBefore(settlement, WINDOW_OPENS_DAYS), closes: businessDaysBefore(settlement, WINDOW_CLOSES_DAYS) };
  return { opens: addDays(settlement, -WINDOW_OPENS_DAYS), closes: addDays(settlement, -WINDOW_CLOSES_DAYS) };
}

const MONTHS: Record<Exclude<RecPeriodicidade, 'SEMANAL'>, number> = { MENSAL: 1, TRIMESTRAL: 3, SEMESTRAL: 6, ANUAL: 12 };

/**
 * The recurrence's cycle a due date falls in, counted from its first day (0: the first period),
 * or null before it. A weekly recurrence's cycles are 7 days; the others' are whole months from
 * the first day's date (a monthly one starting on the 31st turns on the 31st, or the month's end).
 */
export function cycleOf(dataInicial: string, periodicidade: RecPeriodicidade, dueDate: string): number | null {
  if (dueDate < dataInicial) return null;
  if (periodicidade === 'SEMANAL') return Math.floor(daysBetween(dataInicial, dueDate) / 7);
  const [y0, m0, d0] = dataInicial.split('-').map(Number) as [number, number, number];
  const [y1, m1, d1] = dueDate.split('-').map(Number) as [number, number, number];
  let months = (y1 - y0) * 12 + (m1 - m0);
  // Not yet the first day's date in the due month (nor that month's last day, for a 31st).
  const lastOfMonth = new Date(Date.UTC(y1, m1, 0)).getUTCDate();
  if (d1 < Math.min(d0, lastOfMonth)) months--;
  return Math.floor(months / MONTHS[periodicidade]);
}

/** The first day of a recurrence's cycle `n` (whole periods after its first day; a month's end where the date is past it). */
export function cycleStart(dataInicial: string, periodicidade: RecPeriodicidade, n: number): string {
  if (periodicidade === 'SEMANAL') return addDays(dataInicial, 7 * n);
  const [y0, m0, d0] = dataInicial.split('-').map(Number) as [number, number, number];
  const months = m0 - 1 + n * MONTHS[periodicidade];
  const year = y0 + Math.floor(months / 12);
  const month = (months % 12) + 1;
  const lastOfMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(Math.min(d0, lastOfMonth)).padStart(2, '0')}`;
}

/** When the morning's settlement of a day begins: 00:00 in São Paulo. */
export const settlementAt = (text: string): Date => saoPauloHour(text, SETTLEMENT_SLOT.from);
/** When the evening's retry of a day runs: 18:00 in São Paulo. */
export const retryAt = (text: string): Date => saoPauloHour(text, RETRY_SLOT.from);
/** The end of a day in São Paulo (the next day's 00:00). */
export const endOf = (text: string): Date => saoPauloHour(addDays(text, 1), 0);

/**
 * The last day an attempt of a charge may settle: its settlement day when the recurrence takes
 * no retries; with PERMITE_3R_7D, the 7th day after the due date (or the settlement day, if later).
 */
export function lastAttemptDay(charge: { due_date: string; settlement_date: string }, retries: boolean): string {
  if (!retries) return charge.settlement_date;
  const last = addDays(charge.due_date, RETRY_DAYS);
  return last > charge.settlement_date ? last : charge.settlement_date;
}

/**
 * Why a retry on `date` cannot be asked for, or null when it can: a date not after today, one
 * outside D+1..D+7 of the due date, one an attempt already took, or a 4th retry.
 */
export function retryRefusal(input: { today: string; date: string; dueDate: string; takenDates: readonly string[]; retriesUsed: number }): string | null {
  if (input.date <= input.today) return `data ${input.date} is not a future date (today is ${input.today})`;
  const after = daysBetween(input.dueDate, input.date);
  if (after < 1 || after > RETRY_DAYS) return `data ${input.date} is outside the ${RETRY_DAYS} days after the due date (${addDays(input.dueDate, 1)} to ${addDays(input.dueDate, RETRY_DAYS)})`;
  if (input.takenDates.includes(input.date)) return `data ${input.date} already has an attempt`;
  if (input.retriesUsed >= MAX_RETRIES) return `the charge already had ${MAX_RETRIES} retries after its due date`;
  return null;
}

/** A receiver cancels a charge before the day of its first attempt; the payer until 23:59 of the day before it is due. */
export function receiverMayCancel(today: string, firstAttemptDay: string): boolean {
  return today < firstAttemptDay;
}
export function payerMayCancel(now: Date, settlement: string): boolean {
  return now.getTime() < settlementAt(settlement).getTime();
}
