import { formatCentavos } from '../../../lib/money.ts';
import { html, type SafeHtml } from './html.ts';

/**
 * Amounts and times as Brazil reads them. An amount is formatted from the exact decimal string
 * money.ts makes of its centavos (Intl formats such a string without a float): R$ 1.234,56.
 */
const BRL = new Intl.NumberFormat('pt-BR', { style: 'currency', currency: 'BRL' });
const SAO_PAULO = new Intl.DateTimeFormat('pt-BR', { timeZone: 'America/Sao_Paulo', dateStyle: 'short', timeStyle: 'medium' });

export const TIME_ZONE = 'America/Sao_Paulo';

/** "R$ 1.234,56" (with a no-break space, as Intl writes it). */
export function brl(centavos: bigint): string {
  return BRL.format(formatCentavos(centavos) as Intl.StringNumericLiteral);
}

/** An amount as a `data` element: the text for people, the decimal string for machines. */
export function money(centavos: bigint): SafeHtml {
  return html`<data class="money" value="${formatCentavos(centavos)}">${brl(centavos)}</data>`;
}

/** "22/11/2026, 09:00:00" in São Paulo, in a `time` element carrying the instant. */
export function time(at: Date | null | undefined): SafeHtml {
  if (!at) return html`<span class="none">—</span>`;
  return html`<time datetime="${at.toISOString()}">${SAO_PAULO.format(at)}</time>`;
}

/** A day (YYYY-MM-DD, as a cobv's due date is kept) as Brazil writes it, "25/12/2026", in a `time` element. */
export function day(text: string): SafeHtml {
  const [year, month, date] = text.split('-');
  return html`<time datetime="${text}">${date}/${month}/${year}</time>`;
}

/** "22/11/2026, 09:00:00" in São Paulo, as text (a status line). */
export const timeText = (at: Date): string => SAO_PAULO.format(at);

const INTEGER = new Intl.NumberFormat('pt-BR', { maximumFractionDigits: 0 });

/** A count or a number of milliseconds as Brazil writes it: 1.234.567. */
export const integer = (n: number | bigint): string => INTEGER.format(n);

/** A span of time in words: "1 d 2 h 3 min 4 s" ("0 s" for none); milliseconds are left out. */
export function duration(ms: number): string {
  let rest = Math.floor(ms / 1000);
  const parts: string[] = [];
  for (const [unit, seconds] of [['d', 86_400], ['h', 3_600], ['min', 60], ['s', 1]] as const) {
    const n = Math.floor(rest / seconds);
    rest -= n * seconds;
    if (n > 0) parts.push(`${integer(n)} ${unit}`);
  }
  return parts.length === 0 ? '0 s' : parts.join(' ');
}

/** A JSON body indented for reading; any other body as it came. */
export function readable(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}
