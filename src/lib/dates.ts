/**
 * Dates on the wire: a calendar date (`2026-11-22`) is a day in America/Sao_Paulo, which has
 * kept UTC-03:00 all year since 2019; a full RFC 3339 timestamp is an instant.
 */
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
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
    if (Number.isNaN(at.getTime())) return null;
    // Date accepts 2026-02-30 as March 2nd: the day must read back the same.
    const back = new Date(at.getTime() - 3 * 3_600_000).toISOString().slice(0, 10);
    return back === text ? { at, isDate: true } : null;
  }
  if (TIMESTAMP.test(text)) {
    const at = new Date(text);
    return Number.isNaN(at.getTime()) ? null : { at, isDate: false };
  }
  return null;
}
