// How the scripts and the tests make accounts: a document, the account, a linked client
// certificate, an EVP key, money arriving from outside and a token, each through the API client.
import { randomInt } from 'node:crypto';
import { issueCertificate, type IssuedCertificate } from '../../src/lib/certificate-authority.ts';
import { cnpjCheckDigits, cpfCheckDigits } from '../../src/lib/document.ts';
import type { AccountApi, ApiClient, OperatorApi } from './api-client.ts';
import type { CreatedAccount } from './api-types.ts';

/** A valid CPF at random (never one digit repeated, which the check digits would accept). */
export function randomCpf(): string {
  for (;;) {
    const base = Array.from({ length: 9 }, () => randomInt(10)).join('');
    if (!/^(\d)\1{8}$/.test(base)) return base + cpfCheckDigits(base);
  }
}

const CNPJ_CHARS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** A valid CNPJ at random, numeric or (`alphanumeric`) of the 2026 form. */
export function randomCnpj(alphanumeric = false): string {
  const alphabet = alphanumeric ? CNPJ_CHARS : '0123456789';
  for (;;) {
    const base = Array.from({ length: 12 }, () => alphabet[randomInt(alphabet.length)]).join('');
    if (!/^(\d)\1{11}$/.test(base)) return base + cnpjCheckDigits(base);
  }
}

/** A payer of another institution, for money arriving from outside. */
export const OUTSIDE_PAYER = { name: 'Funding', document: '52998224725' };

export interface Account extends CreatedAccount {
  document: string;
}

export async function createAccount(operator: OperatorApi, input: { name?: string; document?: string } = {}): Promise<Account> {
  const document = input.document ?? randomCpf();
  return { ...(await operator.createAccount({ name: input.name ?? 'Maria Teste', document })), document };
}

export interface LinkedCertificate extends IssuedCertificate {
  fingerprint: string;
  /** The X-SSL-Client-Cert header value (the URL-encoded PEM). */
  header: string;
}

/** A new client certificate, linked to the account. */
export async function linkCertificate(
  operator: OperatorApi,
  accountId: number,
  options: { commonName?: string; notBefore?: Date; notAfter?: Date } = {},
): Promise<LinkedCertificate> {
  const { commonName, ...validity } = options;
  const issued = await issueCertificate({ commonName: commonName ?? `client-${accountId}`, ...validity });
  const { fingerprint } = await operator.linkCertificate(accountId, issued.certPem);
  return { ...issued, fingerprint, header: encodeURIComponent(issued.certPem) };
}

/** Authorization and certificate headers for the account routes. */
export const authHeaders = (token: string, cert: LinkedCertificate) => ({ authorization: `Bearer ${token}`, 'x-ssl-client-cert': cert.header });

export interface ProvisionOptions {
  name?: string;
  document?: string;
  /** Of the client certificate. */
  commonName?: string;
  /** Registers an EVP key (default true). */
  pixKey?: boolean;
  /** Money arriving on the EVP key from outside, a decimal string ("100.00"). */
  fund?: string;
  /** Asks for a token (default true). */
  token?: boolean;
}

export interface ProvisionedAccount extends Account {
  cert: LinkedCertificate;
  /** Its EVP key (null with pixKey: false). */
  key: string | null;
  /** The access token ('' with token: false). */
  token: string;
  /** Authorization and certificate headers for the account routes. */
  headers: Record<string, string>;
  /** The account routes with those headers. */
  api: AccountApi;
}

/** An account with a linked certificate and, unless told not to, an EVP key and a token. */
export async function provisionAccount(client: ApiClient, adminToken: string, options: ProvisionOptions = {}): Promise<ProvisionedAccount> {
  const operator = client.operator(adminToken);
  const account = await createAccount(operator, options);
  const cert = await linkCertificate(operator, account.accountId, options.commonName ? { commonName: options.commonName } : {});
  const key = options.pixKey === false ? null : (await operator.registerPixKey(account.accountId)).key;
  if (options.fund !== undefined) {
    if (key === null) throw new Error('fund needs the EVP key');
    await operator.incomingPix({ pixKey: key, amount: options.fund, payer: OUTSIDE_PAYER });
  }
  const token = options.token === false ? '' : (await client.token(account, cert.header)).access_token;
  const headers = authHeaders(token, cert);
  return { ...account, cert, key, token, headers, api: client.account(headers) };
}
