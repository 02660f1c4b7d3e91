/**
 * Dates on the wire: a calendar date (`2026-11-22`) is a day in America/Sao_Paulo, which has
 * kept UTC-03:00 all year since 2019; a full RFC 3339 timestamp is an instant.
 */
const DATE = /^\d{4}-\d{2}-\d{2}$/;
// RFC 3339 hours run 00-23: Date would read T24:00 as the next day's midnight.
const TIMESTAMP = /^(\d{4}-\d{2}-\d{2})T([01]\d|2[0-3]):\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
export const SAO_PAULO_OFFSET = '-03:00';
export const DAY_MS = 86_400_000;

export const DATE_OR_TIMESTAMP_PATTERN = '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2}))?$';

export interface ParsedBound {
  /** The instant the value names (midnight in São Paulo for a date). */
  at: Date;
  isDate: boolean;
}

/** Parses a date or timestamp; null when malformed or not a real day (2026-02-30). */
export function parseDateBound(text: string): ParsedBound | null {
  if (DATE.test(text)) {
    const at = new Date(`${text}T00:00:00.000${SAO_PAULO_OFFSET}`);
    return isRealDay(text) && !Number.isNaN(at.getTime()) ? { at, isDate: true } : null;
  }
  const timestamp = TIMESTAMP.exec(text);
  if (timestamp) {
    const at = new Date(text);
    return isRealDay(timestamp[1]!) && !Number.isNaN(at.getTime()) ? { at, isDate: false } : null;
  }
  return null;
}

/** Date accepts 2026-02-30 as March 2nd, in a date and in a timestamp: the day must read back the same. */
function isRealDay(day: string): boolean {
  const at = new Date(`${day}T00:00:00.000Z`);
  return !Number.isNaN(at.getTime()) && at.toISOString().slice(0, 10) === day;
}
