import { newWebhookSecret } from '../webhooks/secrets.ts';
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.ts';
import type { AccountAddress } from '../../db/schema.ts';
import { badRequest, conflict, notFound, unprocessable } from '../../http/errors.ts';
import { isCurrentlyValid, parsePemCertificate } from '../../lib/certificate.ts';
import type { Clock } from '../../lib/clock.ts';
import { documentType, normalizeDocument } from '../../lib/document.ts';
import { randomAlphanumeric, randomToken } from '../../lib/ids.ts';
import { isValidPixKey, type PixKeyType } from '../../lib/pix-key.ts';
import { hashSecret } from '../auth/secrets.ts';
import { heldScopes, isScope } from '../auth/scopes.ts';
import { createHolderLedgerAccounts } from '../ledger/service.ts';
import { insertKey } from '../directory/repo.ts';
import * as repo from './repo.ts';

/** The name this institution shows for its own accounts in the directory and in views. */
export const INSTITUTION_NAME = 'Pix API PSP';
/** Directory rule: at most 20 keys per account. */
export const MAX_PIX_KEYS_PER_ACCOUNT = 20;

export interface AccountsDeps {
  readonly db: Db;
  readonly ispb: string;
  /** Judges a certificate's validity when it is linked. */
  readonly clock: Clock;
  /** Told when a certificate is unlinked, so cached links drop it at once. */
  readonly onCertificateUnlinked?: (accountId: bigint, fingerprint: string) => void;
  /**
   * Told when what a client's live tokens may do changes (its secret rotated, its scopes
   * narrowed), so that this process applies it at once.
   */
  readonly onClientChanged?: (accountId: bigint) => void;
}

export interface CreatedAccount {
  accountId: bigint;
  branch: string;
  accountNumber: string;
  clientId: string;
  clientSecret: string;
}

/** Account number: the id in 8 digits and a modulo-10 check digit, "00000042-6". */
export function accountNumberFor(id: bigint): string {
  const digits = id.toString().padStart(8, '0');
  const sum = [...digits].reduce((acc, d, i) => acc + Number(d) * (i % 2 === 0 ? 2 : 1), 0);
  return `${digits}-${(10 - (sum % 10)) % 10}`;
}

export function validDocument(raw: string): { document: string; type: 'CPF' | 'CNPJ' } {
  const document = normalizeDocument(raw);
  const type = documentType(document);
  if (!type) throw badRequest('INVALID_DOCUMENT', 'document must be a valid CPF or CNPJ (check digits)');
  return { document, type };
}

/** The 27 federative units, as BCB's `uf` writes them. */
const UFS = new Set('AC AL AP AM BA CE DF ES GO MA MT MS MG PA PB PR PE PI RJ RN RS RO RR SC SP SE TO'.split(' '));

/**
 * An address as BCB's DadosRecebedor takes it: a street and a city of 1 to 200 characters, one of
 * the 27 UFs, a CEP of 8 digits (a hyphen after the fifth is dropped).
 */
export function validAddress(input: AccountAddress): AccountAddress {
  const logradouro = input.logradouro.trim();
  const cidade = input.cidade.trim();
  if (logradouro.length === 0 || logradouro.length > 200) throw badRequest('INVALID_ADDRESS', 'address.logradouro must have 1 to 200 characters');
  if (cidade.length === 0 || cidade.length > 200) throw badRequest('INVALID_ADDRESS', 'address.cidade must have 1 to 200 characters');
  const uf = input.uf.trim().toUpperCase();
  if (!UFS.has(uf)) throw badRequest('INVALID_ADDRESS', 'address.uf must be one of the 27 UFs (SP, RJ, DF, ...)');
  const cep = input.cep.trim();
  if (!/^\d{5}-?\d{3}$/.test(cep)) throw badRequest('INVALID_ADDRESS', 'address.cep must be 8 digits (01001000 or 01001-000)');
  return { logradouro, cidade, uf, cep: cep.replace('-', '') };
}

export async function createAccount(deps: AccountsDeps, input: { name: string; document: string; address?: AccountAddress | undefined }): Promise<CreatedAccount> {
  const name = input.name.trim();
  if (name.length === 0) throw badRequest('INVALID_NAME', 'name must not be blank');
  const { document, type } = validDocument(input.document);
  const address = input.address ? validAddress(input.address) : null;
  const clientId = `pix_${randomAlphanumeric(24).toLowerCase()}`;
  const clientSecret = randomToken(32);
  const clientSecretHash = await hashSecret(clientSecret);
  const webhookSecret = newWebhookSecret();
  return deps.db.transaction().execute(async (trx) => {
    const accountId = await repo.insertAccount(trx, { name, document, documentType: type, clientId, clientSecretHash, webhookSecret, address });
    const accountNumber = accountNumberFor(accountId);
    await repo.setAccountNumber(trx, accountId, accountNumber);
    await createHolderLedgerAccounts(trx, accountId);
    return { accountId, branch: '0001', accountNumber, clientId, clientSecret };
  });
}

export async function requireAccount(deps: AccountsDeps, accountId: bigint) {
  const account = await repo.findAccount(deps.db, accountId);
  if (!account) throw notFound('ACCOUNT_NOT_FOUND', `Account ${accountId} not found`);
  return account;
}

export async function linkCertificate(deps: AccountsDeps, accountId: bigint, pem: string): Promise<{ fingerprint: string }> {
  await requireAccount(deps, accountId);
  const cert = parsePemCertificate(pem);
  if (!cert) throw badRequest('INVALID_CERTIFICATE', 'pem must be one PEM-encoded X.509 certificate');
  // A certificate that cannot get a token now is a mistake to catch while the operator is here.
  if (!isCurrentlyValid(cert, deps.clock.now())) {
    const expired = cert.notAfter.getTime() < deps.clock.now().getTime();
    throw badRequest(
      'INVALID_CERTIFICATE',
      expired ? `The certificate expired at ${cert.notAfter.toISOString()}` : `The certificate is not valid before ${cert.notBefore.toISOString()}`,
    );
  }
  const inserted = await repo.insertCertificate(deps.db, {
    accountId,
    fingerprint: cert.fingerprint,
    subject: cert.subject,
    notBefore: cert.notBefore,
    notAfter: cert.notAfter,
    pem: cert.x509.toString(),
  });
  if (!inserted) {
    const existing = await repo.findCertificate(deps.db, cert.fingerprint);
    if (existing && existing.account_id !== accountId) {
      throw conflict('CERTIFICATE_LINKED_ELSEWHERE', 'This certificate is already linked to another account');
    }
  }
  return { fingerprint: cert.fingerprint };
}

export async function unlinkCertificate(deps: AccountsDeps, accountId: bigint, fingerprint: string): Promise<void> {
  await requireAccount(deps, accountId);
  const removed = await repo.deleteCertificate(deps.db, accountId, fingerprint.toLowerCase());
  if (!removed) throw notFound('CERTIFICATE_NOT_FOUND', 'Certificate not linked to this account');
  deps.onCertificateUnlinked?.(accountId, fingerprint.toLowerCase());
}

const KEY_TYPES: Record<string, PixKeyType> = { cpf: 'CPF', cnpj: 'CNPJ', email: 'EMAIL', phone: 'PHONE', evp: 'EVP' };

function keyFor(type: PixKeyType, given: string | undefined, account: { document: string; document_type: string }): string {
  if (type === 'EVP') {
    if (given !== undefined) throw badRequest('INVALID_PIX_KEY', 'an evp key is generated by the directory; do not send key');
    return randomUUID();
  }
  if (type === 'CPF' || type === 'CNPJ') {
    const key = given === undefined ? account.document : normalizeDocument(given);
    if (key !== account.document || account.document_type !== type) {
      throw badRequest('INVALID_PIX_KEY', `a ${type} key must be the account holder's own ${type}`);
    }
    return key;
  }
  if (given === undefined) throw badRequest('INVALID_PIX_KEY', `key is required for type ${type.toLowerCase()}`);
  return type === 'EMAIL' ? given.trim().toLowerCase() : given.trim();
}

export async function registerPixKey(deps: AccountsDeps, accountId: bigint, input: { type: string; key?: string | undefined }) {
  // Own properties only: "toString" or "__proto__" must not resolve to Object.prototype members.
  const type = Object.hasOwn(KEY_TYPES, input.type) ? KEY_TYPES[input.type] : undefined;
  if (!type) throw badRequest('INVALID_PIX_KEY_TYPE', 'type must be cpf, cnpj, email, phone or evp');
  const account = await requireAccount(deps, accountId);
  const key = keyFor(type, input.key, account);
  if (!isValidPixKey(type, key)) throw badRequest('INVALID_PIX_KEY', `key is not a valid ${type.toLowerCase()} key`);
  // Count and insert under a lock on the account row: otherwise concurrent registrations all
  // see the same count and together pass the limit.
  return deps.db.transaction().execute(async (trx) => {
    await repo.lockAccount(trx, accountId);
    const { count } = await repo.countPixKeys(trx, accountId);
    if (count >= BigInt(MAX_PIX_KEYS_PER_ACCOUNT)) {
      throw unprocessable('PIX_KEY_LIMIT', `An account holds at most ${MAX_PIX_KEYS_PER_ACCOUNT} Pix keys`);
    }
    const inserted = await insertKey(trx, {
      key,
      type,
      accountId,
      name: account.name,
      document: account.document,
      ispb: deps.ispb,
      bankName: INSTITUTION_NAME,
      branch: account.branch,
      accountNumber: account.account_number,
      behavior: null,
    });
    if (!inserted) throw conflict('PIX_KEY_EXISTS', 'This key is already registered in the directory');
    return { key, type: type.toLowerCase() };
  });
}

/**
 * Limits the OAuth scopes a client may hold (null: all of them again). Tokens already issued keep
 * theirs until they expire; the next token request is refused the scopes no longer held.
 */
/** What an operator may change of an account: the holder's address, the client's scopes (null: all). */
export interface AccountChange {
  address?: AccountAddress | undefined;
  scopes?: readonly string[] | null | undefined;
}

/** An account's settings, as the operator API answers them. */
export interface AccountSettings {
  accountId: number;
  clientId: string;
  scopes: string[];
  address: AccountAddress | null;
}

/** Changes what `change` names, leaves the rest; answers the settings after the change. */
export async function updateAccount(deps: AccountsDeps, accountId: bigint, change: AccountChange): Promise<AccountSettings> {
  const unknown = change.scopes?.find((scope) => !isScope(scope));
  if (unknown !== undefined) throw badRequest('VALIDATION_FAILED', `scopes: unknown scope ${JSON.stringify(unknown).slice(0, 80)}`);
  const row = await repo.updateAccountSettings(deps.db, accountId, {
    ...(change.address !== undefined ? { address: validAddress(change.address) } : {}),
    ...(change.scopes !== undefined ? { scopes: change.scopes === null ? null : heldScopes(change.scopes) } : {}),
  });
  if (!row) throw notFound('ACCOUNT_NOT_FOUND', `Account ${accountId} not found`);
  if (change.scopes !== undefined) deps.onClientChanged?.(accountId);
  return { accountId: Number(accountId), clientId: row.client_id, scopes: heldScopes(row.scopes), address: row.address };
}

export async function rotateClientSecret(deps: AccountsDeps, accountId: bigint) {
  const clientSecret = randomToken(32);
  const clientId = await repo.updateClientSecretHash(deps.db, accountId, await hashSecret(clientSecret));
  if (!clientId) throw notFound('ACCOUNT_NOT_FOUND', `Account ${accountId} not found`);
  deps.onClientChanged?.(accountId);
  return { clientId, clientSecret };
}

/** Accounts a page of the operator's list holds at most. */
export const MAX_ACCOUNTS_PAGE = 100;

/** Every account, newest first, a page at a time: the operator's view (the console). */
export async function listAccounts(deps: Pick<AccountsDeps, 'db'>, page: number, size: number) {
  const limit = Math.min(Math.max(size, 1), MAX_ACCOUNTS_PAGE);
  const { rows, total } = await repo.listAccounts(deps.db, { offset: (Math.max(page, 1) - 1) * limit, limit });
  return { rows, total, page: Math.max(page, 1), size: limit };
}
