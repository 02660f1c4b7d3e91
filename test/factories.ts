import { randomUUID } from 'node:crypto';
import type { Db } from '../src/db/client.ts';
import { pixIdentifier } from '../src/lib/ids.ts';
import { holderLedgerAccountIds, post, systemLedgerAccountId } from '../src/modules/ledger/service.ts';
import type { CreateTransferRow } from '../src/modules/transfers/repo.ts';
import { ApiClient, injectTransport, type OperatorApi } from '../scripts/lib/api-client.ts';
import type { ArrivedPix, Payer } from '../scripts/lib/api-types.ts';
import * as provision from '../scripts/lib/provision.ts';
import { TEST_ADMIN_TOKEN, type TestApp } from './harness.ts';

export { randomCnpj, randomCpf, type LinkedCertificate } from '../scripts/lib/provision.ts';

const clients = new WeakMap<TestApp, ApiClient>();

/** The API client of a test app, in process (Fastify's inject). */
export function apiClient(t: TestApp): ApiClient {
  let client = clients.get(t);
  if (!client) {
    client = new ApiClient(injectTransport(t.app));
    clients.set(t, client);
  }
  return client;
}

/** The operator and sandbox routes of a test app. */
export const operator = (t: TestApp): OperatorApi => apiClient(t).operator(TEST_ADMIN_TOKEN);

export interface TestAccount {
  accountId: number;
  branch: string;
  accountNumber: string;
  clientId: string;
  clientSecret: string;
  document: string;
}

export function createAccount(t: TestApp, input: { name?: string; document?: string } = {}): Promise<TestAccount> {
  return provision.createAccount(operator(t), input);
}

export function linkCertificate(
  t: TestApp,
  accountId: number,
  options: { notBefore?: Date; notAfter?: Date } = {},
): Promise<provision.LinkedCertificate> {
  return provision.linkCertificate(operator(t), accountId, options);
}

export async function requestToken(t: TestApp, account: TestAccount, cert: provision.LinkedCertificate): Promise<string> {
  return (await apiClient(t).token(account, cert.header)).access_token;
}

export interface TestClient extends TestAccount {
  cert: provision.LinkedCertificate;
  token: string;
  /** Authorization and certificate headers for account routes. */
  headers: Record<string, string>;
}

/** An account with a linked certificate and a fresh token: the usual starting point of a test. */
export async function createClient(t: TestApp, input: { name?: string; document?: string } = {}): Promise<TestClient> {
  const { accountId, branch, accountNumber, clientId, clientSecret, document, cert, token, headers } = await provision.provisionAccount(
    apiClient(t),
    TEST_ADMIN_TOKEN,
    { ...input, pixKey: false },
  );
  return { accountId, branch, accountNumber, clientId, clientSecret, document, cert, token, headers };
}

/** Money arriving from the Pix network, straight through the ledger (for balance tests). */
export async function creditAccount(db: Db, accountId: number, centavos: bigint): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const holder = await holderLedgerAccountIds(trx, BigInt(accountId));
    const network = await systemLedgerAccountId(trx, 'pix_network');
    await post(trx, 'test_credit', null, [{ debitAccountId: network, creditAccountId: holder.available, amountCentavos: centavos }], new Date());
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
  return (await operator(t).registerPixKey(accountId)).key;
}

/** A PIX from another institution arriving at `pixKey`, from 'Pagador' with a fresh CPF unless given. */
export function incomingPix(t: TestApp, pixKey: string, amount: string, payer: Partial<Payer> = {}): Promise<ArrivedPix> {
  return operator(t).incomingPix({ pixKey, amount, payer: { name: 'Pagador', document: provision.randomCpf(), ...payer } });
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
  const key = { key: `${randomUUID()}@example.com`, name: 'Recebedor Externo', document: provision.randomCpf(), ispb: '12345678', ...given };
  const registered = await operator(t).registerExternalKey({ ...key, ...(bankName ? { bankName } : {}), ...(behavior ? { behavior } : {}) });
  return { ...key, key: registered.key };
}
