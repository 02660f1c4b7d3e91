/**
 * The Brazilian national banking calendar: a banking day is a weekday that is not a national
 * holiday. The list is ANBIMA's national holiday calendar (https://www.anbima.com.br/feriados/),
 * the one the financial market settles by:
 * - fixed: January 1st, April 21st (Tiradentes), May 1st, September 7th, October 12th, November
 *   2nd, November 15th, November 20th (from 2024, Lei 14.759/2023) and December 25th
 *   (Lei 662/1949 as amended by Lei 10.607/2002, and Lei 6.802/1980);
 * - moveable, from Easter Sunday: Carnival Monday and Tuesday (48 and 47 days before), Good
 *   Friday (2 days before) and Corpus Christi (60 days after).
 * State and municipal holidays are not modelled. See docs/decisions/0031-cobv-amounts.md.
 *
 * Days are calendar dates (`YYYY-MM-DD`) or day numbers: whole days since 1970-01-01, which
 * make the arithmetic plain integers.
 */
import { DAY_MS } from './dates.ts';

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Day number of a `YYYY-MM-DD` date; null when malformed or not a real day (2026-02-30). */
export function parseDay(text: string): number | null {
  const match = DATE.exec(text);
  if (!match) return null;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  const ms = Date.UTC(year, month - 1, day);
  const back = new Date(ms);
  if (back.getUTCFullYear() !== year || back.getUTCMonth() !== month - 1 || back.getUTCDate() !== day) return null;
  return ms / DAY_MS;
}

/** The `YYYY-MM-DD` text of a day number. */
export function formatDay(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

function dayOf(year: number, month: number, date: number): number {
  return Date.UTC(year, month - 1, date) / DAY_MS;
}

/** Easter Sunday of a Gregorian year (the anonymous algorithm, Meeus/Jones/Butcher). */
export function easterDay(year: number): number {
  const a = year % 19;
  const b = Math.floor(year / 100);
  const c = year % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  const date = ((h + l - 7 * m + 114) % 31) + 1;
  return dayOf(year, month, date);
}

const FIXED: ReadonlyArray<readonly [month: number, date: number]> = [
  [1, 1], [4, 21], [5, 1], [9, 7], [10, 12], [11, 2], [11, 15], [12, 25],
];
/** November 20th became a national holiday with Lei 14.759 of December 2023. */
const BLACK_CONSCIOUSNESS_FROM_YEAR = 2024;

const holidayCache = new Map<number, ReadonlySet<number>>();

/** The national holidays of a year, as day numbers (some may fall on weekends). */
export function holidays(year: number): ReadonlySet<number> {
  let set = holidayCache.get(year);
  if (set) return set;
  const days = FIXED.map(([month, date]) => dayOf(year, month, date));
  if (year >= BLACK_CONSCIOUSNESS_FROM_YEAR) days.push(dayOf(year, 11, 20));
  const easter = easterDay(year);
  days.push(easter - 48, easter - 47, easter - 2, easter + 60);
  set = new Set(days);
  // Years are few in any real use; the bound keeps a caller walking centuries from growing it.
  if (holidayCache.size >= 400) holidayCache.clear();
  holidayCache.set(year, set);
  return set;
}

function yearOf(day: number): number {
  return new Date(day * DAY_MS).getUTCFullYear();
}

/** 1970-01-01 was a Thursday: day 0 has weekday 4 (Sunday = 0). */
function weekday(day: number): number {
  return (((day + 4) % 7) + 7) % 7;
}

function isWeekend(day: number): boolean {
  const w = weekday(day);
  return w === 0 || w === 6;
}

export function isBankingDay(day: number): boolean {
  return !isWeekend(day) && !holidays(yearOf(day)).has(day);
}

/** The day itself when it is a banking day, else the first banking day after it. */
export function nextBankingDay(day: number): number {
  let d = day;
  // Carnival Monday after a weekend is the longest run of non-banking days: four.
  while (!isBankingDay(d)) d++;
  return d;
}

/** Weekdays (Monday to Friday) in the day numbers [0, n), for n >= 0. */
function weekdaysBefore(n: number): number {
  const weeks = Math.floor(n / 7);
  let count = weeks * 5;
  for (let d = weeks * 7; d < n; d++) if (!isWeekend(d)) count++;
  return count;
}

/**
 * Banking days in the half-open range (from, to]: the days late when `from` is the due date
 * and `to` the payment date. Zero when to <= from. Linear in the years spanned, not the days.
 */
export function bankingDaysBetween(from: number, to: number): number {
  if (to <= from) return 0;
  // Shift both ends by whole weeks so the weekday count starts at a non-negative day number.
  const shift = from < 0 ? Math.ceil(-from / 7) * 7 : 0;
  let count = weekdaysBefore(to + 1 + shift) - weekdaysBefore(from + 1 + shift);
  for (let year = yearOf(from + 1); year <= yearOf(to); year++) {
    for (const holiday of holidays(year)) {
      if (holiday > from && holiday <= to && !isWeekend(holiday)) count--;
    }
  }
  return count;
}
