/**
 * Brazilian taxpayer documents: CPF (11 digits) and CNPJ (14 characters, including the
 * alphanumeric CNPJ of the Receita Federal: 12 characters [0-9A-Z] and 2 check digits).
 * Both are checked by their modulo-11 check digits.
 */

export type DocumentType = 'CPF' | 'CNPJ';

const CPF = /^\d{11}$/;
const CNPJ = /^[0-9A-Z]{12}\d{2}$/;

function mod11Digit(sum: number): number {
  const rest = sum % 11;
  return rest < 2 ? 0 : 11 - rest;
}

/** The two CPF check digits of the first 9 digits. */
export function cpfCheckDigits(base9: string): string {
  const digits = [...base9].map(Number);
  const d1 = mod11Digit(digits.reduce((sum, d, i) => sum + d * (10 - i), 0));
  const d2 = mod11Digit([...digits, d1].reduce((sum, d, i) => sum + d * (11 - i), 0));
  return `${d1}${d2}`;
}

export function isValidCpf(value: string): boolean {
  if (!CPF.test(value)) return false;
  // Repeated digits pass the arithmetic but are not issued.
  if (/^(\d)\1{10}$/.test(value)) return false;
  return cpfCheckDigits(value.slice(0, 9)) === value.slice(9);
}

/** A CNPJ character's value: its ASCII code minus 48 ('0' -> 0, 'A' -> 17). */
const cnpjValue = (char: string): number => char.charCodeAt(0) - 48;
const CNPJ_WEIGHTS = [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];

function cnpjDigit(chars: string): number {
  const weights = CNPJ_WEIGHTS.slice(CNPJ_WEIGHTS.length - chars.length);
  const sum = [...chars].reduce((acc, c, i) => acc + cnpjValue(c) * weights[i]!, 0);
  return mod11Digit(sum);
}

/** The two CNPJ check digits of the first 12 characters (digits or upper-case letters). */
export function cnpjCheckDigits(base12: string): string {
  const d1 = cnpjDigit(base12);
  const d2 = cnpjDigit(`${base12}${d1}`);
  return `${d1}${d2}`;
}

export function isValidCnpj(value: string): boolean {
  if (!CNPJ.test(value)) return false;
  if (/^(\d)\1{13}$/.test(value)) return false;
  return cnpjCheckDigits(value.slice(0, 12)) === value.slice(12);
}

/** Strips the usual punctuation ("123.456.789-09", "12.ABC.345/01DE-35") and upper-cases. */
export function normalizeDocument(value: string): string {
  return value.replace(/[.\-/\s]/g, '').toUpperCase();
}

/** The type of a valid document, or null. Expects a normalized value. */
export function documentType(value: string): DocumentType | null {
  if (isValidCpf(value)) return 'CPF';
  if (isValidCnpj(value)) return 'CNPJ';
  return null;
}

/** Masks a document for display: CPF `***.456.789-**`, CNPJ `12.345.678/****-**`. */
export function maskDocument(value: string | null | undefined): string | null {
  if (!value) return null;
  if (value.length === 11) return `***.${value.slice(3, 6)}.${value.slice(6, 9)}-**`;
  if (value.length === 14) return `${value.slice(0, 2)}.${value.slice(2, 5)}.${value.slice(5, 8)}/****-**`;
  return '***';
}
