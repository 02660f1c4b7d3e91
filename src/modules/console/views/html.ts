/**
 * The console's one way of writing HTML: a tagged template whose every interpolated value is
 * escaped, unless it is itself SafeHtml (made by this template, or a constant of the code).
 */
export class SafeHtml {
  readonly #text: string;
  constructor(text: string) {
    this.#text = text;
  }
  toString(): string {
    return this.#text;
  }
}

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

/** Text made safe in element content and in quoted attribute values alike. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);
}

function part(value: unknown): string {
  if (value instanceof SafeHtml) return value.toString();
  if (Array.isArray(value)) return value.map(part).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

/** html`<p>${name}</p>`: arrays are joined, null, undefined and false are nothing, the rest is escaped. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += part(value) + strings[i + 1]!;
  });
  return new SafeHtml(out);
}

/** An attribute present or not (`checked`, `selected`, `open`). */
export const flag = (name: string, on: boolean): SafeHtml => new SafeHtml(on ? ` ${name}` : '');
