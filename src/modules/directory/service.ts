import type { Db } from '../../db/client.ts';
import { badRequest, notFound } from '../../http/errors.ts';
import { maskDocument } from '../../lib/document.ts';
import { parsePixKey, type PixKeyType } from '../../lib/pix-key.ts';
import type { DirectoryLookups } from './lookups.ts';
import { findEntry } from './repo.ts';

/** A key as the directory stores it, or 400 naming `field` when it is no PIX key at all. */
export function requirePixKey(raw: string, field: string): { key: string; type: PixKeyType } {
  const parsed = parsePixKey(raw);
  if (!parsed) throw badRequest('INVALID_PIX_KEY', `${field} is not a valid PIX key (CPF, CNPJ, e-mail, +55 phone or EVP)`);
  return parsed;
}

export interface DirectoryDeps {
  readonly db: Db;
  readonly lookups: DirectoryLookups;
}

/**
 * GET /dict/keys/{key}: what a payer is shown before paying a key (its owner's name, the
 * owner's document masked as the transaction views mask it, the institution). A directory
 * look-up like the one a transfer makes, paid for in the same bucket before the key is read.
 */
export async function lookUpKey(deps: DirectoryDeps, accountId: bigint, raw: string) {
  const { key } = requirePixKey(raw, 'key');
  const lookup = await deps.lookups.charge(accountId);
  // A failed read keeps the look-up's cost: it is no answer about the key, and no refund either.
  const entry = await findEntry(deps.db, key);
  await lookup.settle(entry ? 'found' : 'missing');
  if (!entry) throw notFound('PIX_KEY_NOT_FOUND', 'PIX key not found in the directory');
  return {
    key: entry.key,
    type: entry.key_type.toLowerCase() as Lowercase<PixKeyType>,
    owner: { name: entry.owner_name, document: maskDocument(entry.owner_document) ?? '' },
    institution: { ispb: entry.ispb, name: entry.bank_name },
  };
}
