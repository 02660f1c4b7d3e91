import assert from 'node:assert/strict';
import { randomInt, randomUUID } from 'node:crypto';
import type { Db } from '../src/db/client.ts';
import { issueCertificate, type IssuedCertificate } from '../src/lib/certificate-authority.ts';
import { cnpjCheckDigits, cpfCheckDigits } from '../src/lib/document.ts';
import { pixIdentifier } from '../src/lib/ids.ts';
import { holderLedgerAccountIds, post, systemLedgerAccountId } from '../src/modules/ledger/service.ts';
import type { CreateTransferRow } from '../src/modules/transfers/repo.ts';
import { adminHeaders, type TestApp } from './harness.ts';

export function randomCpf(): string {
  for (;;) {
    const base = Array.from({ length: 9 }, () => randomInt(10)).join('');
    if (!/^(\d)\1{8}$/.test(base)) return base + cpfCheckDigits(base);
  }
}

const CNPJ_CHARS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';
export function randomCnpj(alphanumeric = false): string {
  const alphabet = alphanumeric ? CNPJ_CHARS : '0123456789';
  for (;;) {
    const base = Array.from({ length: 12 }, () => alphabet[randomInt(alphabet.length)]).join('');
    if (!/^(\d)\1{11}$/.test(base)) return base + cnpjCheckDigits(base);
  }
}

export interface TestAccount {
  accountId: number;
  branch: string;
  accountNumber: string;
  clientId: string;
  clientSecret: string;
  document: string;
}

export async function createAccount(t: TestApp, input: { name?: string; document?: string } = {}): Promise<TestAccount> {
  const document = input.document ?? randomCpf();
  const res = await t.app.inject({
    method: 'POST',
    url: '/admin/accounts',
    headers: adminHeaders,
    payload: { name: input.name ?? 'Maria Teste', document },
  });
  if (res.statusCode !== 201) throw new Error(`create account: ${res.statusCode} ${res.body}`);
  return { ...res.json<Omit<TestAccount, 'document'>>(), document };
}

export interface LinkedCertificate extends IssuedCertificate {
  fingerprint: string;
  /** The X-SSL-Client-Cert header value. */
  header: string;
}

export async function linkCertificate(
  t: TestApp,
  accountId: number,
  options: { notBefore?: Date; notAfter?: Date } = {},
): Promise<LinkedCertificate> {
  const issued = await issueCertificate({ commonName: `client-${accountId}`, ...options });
  const res = await t.app.inject({
    method: 'POST',
    url: `/admin/accounts/${accountId}/certificates`,
    headers: adminHeaders,
    payload: { pem: issued.certPem },
  });
  if (res.statusCode !== 201) throw new Error(`link certificate: ${res.statusCode} ${res.body}`);
  return { ...issued, fingerprint: res.json<{ fingerprint: string }>().fingerprint, header: encodeURIComponent(issued.certPem) };
}

export async function requestToken(t: TestApp, account: TestAccount, cert: LinkedCertificate): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/auth/token',
    headers: { 'x-ssl-client-cert': cert.header },
    payload: { clientId: account.clientId, clientSecret: account.clientSecret },
  });
  if (res.statusCode !== 201) throw new Error(`token: ${res.statusCode} ${res.body}`);
  return res.json<{ access_token: string }>().access_token;
}

export interface TestClient extends TestAccount {
  cert: LinkedCertificate;
  token: string;
  /** Authorization and certificate headers for account routes. */
  headers: Record<string, string>;
}

/** An account with a linked certificate and a fresh token: the usual starting point of a test. */
export async function createClient(t: TestApp, input: { name?: string; document?: string } = {}): Promise<TestClient> {
  const account = await createAccount(t, input);
  const cert = await linkCertificate(t, account.accountId);
  const token = await requestToken(t, account, cert);
  return { ...account, cert, token, headers: { authorization: `Bearer ${token}`, 'x-ssl-client-cert': cert.header } };
}

/** Money arriving from the Pix network, straight through the ledger (for balance tests). */
export async function creditAccount(db: Db, accountId: number, centavos: bigint): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const holder = await holderLedgerAccountIds(trx, BigInt(accountId));
    const network = await systemLedgerAccountId(trx, 'pix_network');
    await post(trx, 'test_credit', null, [{ debitAccountId: network, creditAccountId: holder.available, amountCentavos: centavos }]);
  });
}

/**
 * A transfer as the batcher hands it to the database: NORM, R$ 1.00, fresh idempotency key,
 * request hash and end-to-end id (of the default PSP_ISPB), unless given.
 */
export function transferRow(input: Partial<CreateTransferRow> & Pick<CreateTransferRow, 'accountId'>): CreateTransferRow {
  const now = input.now ?? new Date();
  return {
    idempotencyKey: randomUUID(),
    requestHash: randomUUID(),
    amountCentavos: 100n,
    pixKey: 'nobody@example.com',
    priority: 'NORM',
    expirationSeconds: 600,
    creditorDocument: null,
    ispbDeny: null,
    description: null,
    externalId: null,
    endToEndId: pixIdentifier('E', '99999999', now),
    now,
    ...input,
  };
}

/** A client account holding `centavos` (credited from the network; none when 0). */
export async function fundedClient(t: TestApp, centavos: bigint): Promise<TestClient> {
  const client = await createClient(t);
  if (centavos > 0n) await creditAccount(t.db, client.accountId, centavos);
  return client;
}

/** A new EVP key of one of our own accounts, through the operator API. */
export async function evpKey(t: TestApp, accountId: number): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: `/admin/accounts/${accountId}/pix-keys`, headers: adminHeaders, payload: { type: 'evp' } });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<{ key: string }>().key;
}

export interface ExternalKey {
  key: string;
  name: string;
  document: string;
  ispb: string;
}

/**
 * A key held at another institution, registered in the sandbox directory: an e-mail key of
 * 'Recebedor Externo' at ISPB 12345678 with a fresh CPF, unless given.
 */
export async function externalKey(
  t: TestApp,
  input: { key?: string; name?: string; document?: string; ispb?: string; bankName?: string; behavior?: 'reject' | 'timeout' } = {},
): Promise<ExternalKey> {
  const { bankName, behavior, ...given } = input;
  const key = { key: `${randomUUID()}@example.com`, name: 'Recebedor Externo', document: randomCpf(), ispb: '12345678', ...given };
  const res = await t.app.inject({
    method: 'POST',
    url: '/sandbox/dict/keys',
    headers: adminHeaders,
    payload: { ...key, ...(bankName ? { bankName } : {}), ...(behavior ? { behavior } : {}) },
  });
  assert.equal(res.statusCode, 201, res.body);
  return { ...key, key: res.json<{ key: string }>().key };
}
