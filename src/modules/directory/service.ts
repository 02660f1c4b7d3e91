import { badRequest } from '../../http/errors.ts';
import { parsePixKey, type PixKeyType } from '../../lib/pix-key.ts';

/** A key as the directory stores it, or 400 naming `field` when it is no PIX key at all. */
export function requirePixKey(raw: string, field: string): { key: string; type: PixKeyType } {
  const parsed = parsePixKey(raw);
  if (!parsed) throw badRequest('INVALID_PIX_KEY', `${field} is not a valid PIX key (CPF, CNPJ, e-mail, +55 phone or EVP)`);
  return parsed;
}
