import { AppError, RuleFailures } from './errors.ts';

/** The fields a rule of the core refused, each with the value the request gave it: what a dialect lists. */
export interface RuleField {
  /** Dotted, with indices: `valor.original`, `desconto.descontoDataFixa[1].data`. */
  readonly field: string;
  readonly message: string;
  /** The request's value, as text (at most MAX_VALUE_CHARS characters); absent when it gave none. */
  readonly value?: string;
}

/** Each `value` echoes at most this many characters. */
export const MAX_VALUE_CHARS = 256;

export type Segment = string | number;

export function valueAt(data: unknown, path: readonly Segment[]): unknown {
  let node = data;
  for (const s of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[String(s)];
  }
  return node;
}

/** The value as text, cut to MAX_VALUE_CHARS characters (whole code points). */
export function asText(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  if (text.length <= MAX_VALUE_CHARS) return text;
  return [...text].slice(0, MAX_VALUE_CHARS).join('');
}

/**
 * The field one refusal is about: the error's `field`, or the one its message names first
 * (`valor.original must be greater than 0`), when the request has it. A message that names no
 * field of the request gives none.
 */
export function ruleFieldOf(message: string, data: unknown, field?: string): RuleField | undefined {
  const named = field ?? /^([A-Za-z][A-Za-z0-9]*(?:\.[A-Za-z][A-Za-z0-9]*|\[\d+\])*) /.exec(message)?.[1];
  if (!named) return undefined;
  const path: Segment[] = [];
  for (const part of named.matchAll(/([A-Za-z][A-Za-z0-9]*)|\[(\d+)\]/g)) path.push(part[1] ?? Number(part[2]));
  const top = data !== null && typeof data === 'object' && Object.hasOwn(data, String(path[0]));
  if (path.length === 1 && !top) return undefined;
  const value = asText(valueAt(data, path));
  return { field: named, message, ...(value === undefined ? {} : { value }) };
}

/** Every field a refusal is about: each rule's, when the core checked several (RuleFailures). */
export function ruleFieldsOf(error: AppError, data: unknown): RuleField[] {
  const failures = error instanceof RuleFailures ? error.failures : [error];
  return failures.flatMap((failure) => ruleFieldOf(failure.message, data, failure.field) ?? []);
}
