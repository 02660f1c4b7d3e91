import type { DbExecutor, Trx } from '../../db/client.ts';
import type { AccountAddress } from '../../db/schema.ts';

export interface NewAccount {
  name: string;
  document: string;
  documentType: 'CPF' | 'CNPJ';
  clientId: string;
  clientSecretHash: string;
  webhookSecret: string;
  address?: AccountAddress | null;
}

export async function insertAccount(trx: Trx, account: NewAccount): Promise<bigint> {
  const row = await trx
    .insertInto('accounts')
    .values({
      name: account.name,
      document: account.document,
      document_type: account.documentType,
      branch: '0001',
      // Replaced below, once the id that the number is derived from exists.
      account_number: `pending-${account.clientId}`,
      client_id: account.clientId,
      client_secret_hash: account.clientSecretHash,
      webhook_secret: account.webhookSecret,
      address: account.address ? (JSON.stringify(account.address) as unknown as AccountAddress) : null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function setAccountNumber(trx: Trx, accountId: bigint, accountNumber: string): Promise<void> {
  await trx.updateTable('accounts').set({ account_number: accountNumber }).where('id', '=', accountId).execute();
}

export function findAccount(db: DbExecutor, accountId: bigint) {
  return db
    .selectFrom('accounts')
    .select(['id', 'name', 'document', 'document_type', 'branch', 'account_number', 'client_id', 'status', 'address'])
    .where('id', '=', accountId)
    .executeTakeFirst();
}

export function findAccountByClientId(db: DbExecutor, clientId: string) {
  return db.selectFrom('accounts').select(['id', 'client_secret_hash', 'status']).where('client_id', '=', clientId).executeTakeFirst();
}

/** The account a certificate is linked to, with what a token request checks: one read, no hash. */
export function findCertificateHolder(db: DbExecutor, fingerprint: string) {
  return db
    .selectFrom('account_certificates')
    .innerJoin('accounts', 'accounts.id', 'account_certificates.account_id')
    .select(['accounts.id', 'accounts.client_id', 'accounts.client_secret_hash', 'accounts.client_secret_version', 'accounts.status', 'accounts.scopes'])
    .where('account_certificates.fingerprint', '=', fingerprint)
    .executeTakeFirst();
}

/** A new secret hash, and a new version that revokes the tokens issued under the old secret. */
export async function updateClientSecretHash(db: DbExecutor, accountId: bigint, hash: string): Promise<string | undefined> {
  const row = await db
    .updateTable('accounts')
    .set((eb) => ({ client_secret_hash: hash, client_secret_version: eb('client_secret_version', '+', 1) }))
    .where('id', '=', accountId)
    .returning('client_id')
    .executeTakeFirst();
  return row?.client_id;
}

/**
 * Sets the holder's address and the OAuth scopes the client may hold (null: all of them), each
 * only when given; the account's settings after, or undefined when no such account.
 */
export async function updateAccountSettings(db: DbExecutor, accountId: bigint, change: { address?: AccountAddress; scopes?: string[] | null }) {
  const set = {
    ...(change.address !== undefined ? { address: JSON.stringify(change.address) as unknown as AccountAddress } : {}),
    ...(change.scopes !== undefined ? { scopes: change.scopes } : {}),
  };
  const query = Object.keys(set).length > 0 ? db.updateTable('accounts').set(set).where('id', '=', accountId).returning(['client_id', 'scopes', 'address']) : null;
  return query
    ? query.executeTakeFirst()
    : db.selectFrom('accounts').select(['client_id', 'scopes', 'address']).where('id', '=', accountId).executeTakeFirst();
}

export function findCertificate(db: DbExecutor, fingerprint: string) {
  return db
    .selectFrom('account_certificates')
    .select(['account_id', 'fingerprint', 'not_before', 'not_after'])
    .where('fingerprint', '=', fingerprint)
    .executeTakeFirst();
}

export async function insertCertificate(
  db: DbExecutor,
  cert: { accountId: bigint; fingerprint: string; subject: string; notBefore: Date; notAfter: Date; pem: string },
): Promise<boolean> {
  const result = await db
    .insertInto('account_certificates')
    .values({
      account_id: cert.accountId,
      fingerprint: cert.fingerprint,
      subject: cert.subject,
      not_before: cert.notBefore,
      not_after: cert.notAfter,
      pem: cert.pem,
    })
    .onConflict((oc) => oc.column('fingerprint').doNothing())
    .executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

export async function deleteCertificate(db: DbExecutor, accountId: bigint, fingerprint: string): Promise<boolean> {
  const result = await db
    .deleteFrom('account_certificates')
    .where('account_id', '=', accountId)
    .where('fingerprint', '=', fingerprint)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Locks the account row until the transaction ends: serializes changes to its Pix keys. */
export async function lockAccount(trx: Trx, accountId: bigint): Promise<void> {
  await trx.selectFrom('accounts').select('id').where('id', '=', accountId).forUpdate().execute();
}

export function countPixKeys(db: DbExecutor, accountId: bigint) {
  return db
    .selectFrom('dict_keys')
    .select((eb) => eb.fn.countAll<bigint>().as('count'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
}

/** Whether the certificate that a token is bound to is still linked to the token's account. */
export function findLinkedCertificate(db: DbExecutor, accountId: bigint, fingerprint: string) {
  return db
    .selectFrom('account_certificates')
    .innerJoin('accounts', 'accounts.id', 'account_certificates.account_id')
    .select(['account_certificates.not_before', 'account_certificates.not_after', 'accounts.status', 'accounts.client_secret_version', 'accounts.scopes'])
    .where('account_certificates.account_id', '=', accountId)
    .where('account_certificates.fingerprint', '=', fingerprint)
    .executeTakeFirst();
}

/** The oldest account of a holder (name and document as stored), if any. */
export function findOldestAccountOfHolder(db: DbExecutor, name: string, document: string) {
  return db
    .selectFrom('accounts')
    .select(['id', 'client_id'])
    .where('name', '=', name)
    .where('document', '=', document)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
}

/** A page of every account, newest first, with how many there are in all (the operator's console). */
export async function listAccounts(db: DbExecutor, page: { offset: number; limit: number }) {
  const [rows, counted] = await Promise.all([
    db
      .selectFrom('accounts')
      .select(['id', 'name', 'document', 'document_type', 'branch', 'account_number', 'status', 'created_at'])
      .orderBy('id', 'desc')
      .offset(page.offset)
      .limit(page.limit)
      .execute(),
    db.selectFrom('accounts').select((eb) => eb.fn.countAll<bigint>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(counted.total) };
}

/** Changes when an account is created: the newest id (an index look-up). */
export const changeMarker = (db: DbExecutor) => db.selectFrom('accounts').select((eb) => eb.fn.max('id').as('marker'));
