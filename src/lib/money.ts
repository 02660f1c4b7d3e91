/**
 * Money is bigint centavos inside the service. This module is the only place that converts it
 * to and from the wire: JSON numbers with at most 2 decimals, or 2-decimal strings.
 */

/** Largest amount accepted from outside: R$ 1 trillion, far below 2^53 centavos. */
export const MAX_AMOUNT_CENTAVOS = 100_000_000_000_000n;

const DECIMAL = /^(0|[1-9]\d{0,15})(?:\.(\d{1,2}))?$/;
const DECIMAL_2 = /^(0|[1-9]\d{0,15})\.(\d{2})$/;

/**
 * Parses a decimal string with up to 2 decimals ("12", "12.5", "12.50"); null if malformed or
 * above MAX_AMOUNT_CENTAVOS, so no amount from outside can exceed the limit.
 */
export function parseDecimal(text: string): bigint | null {
  const match = DECIMAL.exec(text);
  if (!match) return null;
  const centavos = BigInt(match[1]!) * 100n + BigInt((match[2] ?? '').padEnd(2, '0'));
  return centavos <= MAX_AMOUNT_CENTAVOS ? centavos : null;
}

/** Parses a string with exactly 2 decimals ("12.50"), the format of `cob` and refund values. */
export function parseDecimal2(text: string): bigint | null {
  return DECIMAL_2.test(text) ? parseDecimal(text) : null;
}

/**
 * Reads a JSON number as centavos. The shortest decimal spelling of a double (String(n)) is the
 * decimal the client wrote whenever it had at most 2 decimals and at most 15 significant digits,
 * so the conversion is exact up to MAX_AMOUNT_CENTAVOS (15 digits); anything larger (where
 * 1000000000000000.01 already reads back as 1000000000000000), with more decimals, an exponent
 * or a sign is refused (null).
 */
export function numberToCentavos(value: number): bigint | null {
  // String(-0) is "0": the sign of a JSON "-0" or "-0.00" would otherwise slip through.
  if (!Number.isFinite(value) || Object.is(value, -0)) return null;
  return parseDecimal(String(value));
}

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** Centavos as a decimal string with 2 places: 12345n -> "123.45", -5n -> "-0.05". */
export function formatCentavos(centavos: bigint): string {
  const negative = centavos < 0n;
  let whole: number | bigint;
  let cents: number | bigint;
  if (centavos <= SAFE && centavos >= -SAFE) {
    // Up to 2^53 in integer doubles, which are exact there: a page of transactions formats
    // sixty amounts, and BigInt division allocates.
    const abs = Math.abs(Number(centavos));
    cents = abs % 100;
    whole = (abs - cents) / 100;
  } else {
    const abs = negative ? -centavos : centavos;
    cents = abs % 100n;
    whole = abs / 100n;
  }
  const text = `${whole}.${cents < 10 ? '0' : ''}${cents}`;
  return negative ? `-${text}` : text;
}

/**
 * Centavos as a JSON number (for fields the spec types as number). The number is parsed from
 * the exact decimal text, so it is the double nearest to it and prints back as that decimal.
 */
export function centavosToNumber(centavos: bigint): number {
  // Below 2^53 both the centavos and 100 are exact doubles, and IEEE division rounds the exact
  // quotient, which is that decimal: the same double as parsing its text.
  if (centavos <= SAFE && centavos >= -SAFE) return Number(centavos) / 100;
  return Number(formatCentavos(centavos));
}
