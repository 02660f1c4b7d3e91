import { isValidCnpj, isValidCpf } from './document.ts';

export type PixKeyType = 'CPF' | 'CNPJ' | 'EMAIL' | 'PHONE' | 'EVP';

export const PIX_KEY_MAX_LENGTH = 77;
const EMAIL = /^[a-z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/i;
const PHONE = /^\+55[1-9][0-9]9?[0-9]{8}$/;
const EVP = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Whether `key` is a well-formed key of `type` (documents checked by their check digits). */
export function isValidPixKey(type: PixKeyType, key: string): boolean {
  if (key.length > PIX_KEY_MAX_LENGTH) return false;
  switch (type) {
    case 'CPF':
      return isValidCpf(key);
    case 'CNPJ':
      return isValidCnpj(key);
    case 'EMAIL':
      return EMAIL.test(key);
    case 'PHONE':
      return PHONE.test(key);
    case 'EVP':
      return EVP.test(key);
  }
}

/**
 * The type of a key as a payer writes it. The formats do not overlap: 11 digits is a CPF,
 * 14 characters ending in 2 digits a CNPJ, `+55...` a phone, a lower-case UUID an EVP and
 * anything with `@` an e-mail. Returns null for a malformed key.
 */
export function detectPixKeyType(key: string): PixKeyType | null {
  if (key.length === 0 || key.length > PIX_KEY_MAX_LENGTH) return null;
  // '@' first: an e-mail may start with '+' ("+news@example.com"), a phone never has an '@'.
  if (key.includes('@')) return EMAIL.test(key) ? 'EMAIL' : null;
  if (key.startsWith('+')) return PHONE.test(key) ? 'PHONE' : null;
  if (EVP.test(key)) return 'EVP';
  if (isValidCpf(key)) return 'CPF';
  if (isValidCnpj(key)) return 'CNPJ';
  return null;
}

/** A key as the directory stores it (trimmed, e-mails in lower case) with its type; null if malformed. */
export function parsePixKey(raw: string): { key: string; type: PixKeyType } | null {
  const trimmed = raw.trim();
  const key = trimmed.includes('@') ? trimmed.toLowerCase() : trimmed;
  const type = detectPixKeyType(key);
  return type ? { key, type } : null;
}
