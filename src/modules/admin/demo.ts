import type { Db } from '../../db/client.ts';
import { databaseIdentity } from '../../db/migrate.ts';
import { issueCertificate } from '../../lib/certificate-authority.ts';
import { systemClock } from '../../lib/clock.ts';
import { cnpjCheckDigits, cpfCheckDigits } from '../../lib/document.ts';
import { pixIdentifier } from '../../lib/ids.ts';
import { enqueue } from '../notifications/repo.ts';
import { receivePayload } from '../notifications/payloads.ts';
import { SANDBOX_PAYER_BANK, SANDBOX_PAYER_ISPB } from '../sandbox/service.ts';
import { receiveFromNetwork } from '../settlement/service.ts';
import { createAccount, linkCertificate, registerPixKey, rotateClientSecret, type AccountsDeps } from '../accounts/service.ts';
import { findAccount, findAccountByClientId, findOldestAccountOfHolder } from '../accounts/repo.ts';
import { findKey, listAccountKeys } from '../directory/repo.ts';
import {
  demoDirectories,
  moveDirectory,
  placedIn,
  readDemoDirectory,
  unnamedDirectory,
  writeDemoFiles,
  type DemoCredentials,
  type DemoDatabase,
  type DemoDirectory,
} from './demo-files.ts';
import { findDemoAccountId, recordDemoAccount, withDemoLock } from './repo.ts';

export type { DemoCredentials } from './demo-files.ts';

export const DEMO_NAME = 'Conta Demo Sandbox';
export const DEMO_CPF = `123456789${cpfCheckDigits('123456789')}`;
/** The demo holder's address: the recebedor's in its cobv answers and payloads. */
export const DEMO_ADDRESS = { logradouro: 'Rua Augusta, 1500', cidade: 'São Paulo', uf: 'SP', cep: '01304001' };
const DEMO_PAYER_CNPJ = `112223330001${cnpjCheckDigits('112223330001')}`;

/** What a start found and did about the demo account and its files. */
export interface DemoOutcome {
  /** created: a new account; reused: the files matched; reissued: new credentials for the existing account. */
  readonly status: 'created' | 'reused' | 'reissued';
  readonly demo: DemoCredentials;
  /** The directory of this database's demo files. */
  readonly dir: string;
  /** Sentences for the banner: files of other databases kept, files moved, why credentials were reissued. */
  readonly notes: readonly string[];
}

export interface DemoOptions {
  readonly dataDir: string;
  readonly ispb: string;
  /** The database as the files will name it (its identity is read from it). */
  readonly database: Omit<DemoDatabase, 'id'>;
}

/**
 * Gives this database its one demo account (recorded in the database, so files never decide it)
 * and makes sure a directory of its own holds files that match it: an account with a client
 * certificate, an EVP and a CPF key, and an opening balance. Files of another database are never
 * overwritten: they are named in the outcome's notes, and this database's go to its next directory.
 */
export async function ensureDemoAccount(db: Db, options: DemoOptions): Promise<DemoOutcome> {
  const database: DemoDatabase = { ...options.database, id: (await databaseIdentity(db)).id };
  // Several processes starting on one database provision one demo account and write its files once.
  return withDemoLock(db, async (conn) => {
    const deps = { db: conn, ispb: options.ispb, clock: systemClock };
    const notes: string[] = [];
    const found = await survey(conn, options.dataDir, database, notes);
    const accountId = (await findDemoAccountId(conn)) ?? (await adopt(conn, found, notes));
    const account = accountId === undefined ? undefined : await findAccount(conn, accountId);
    const matching = account && found.find((d) => d.kind === 'ours' && d.credentials.clientId === account.client_id);
    const home = matching ?? found.find((d) => d.kind !== 'foreign');
    if (!home) throw new Error(`${found.map((d) => d.dir).join(' and ')} hold other databases' demo files: move one of them away`);
    // Said at every start, so that nobody takes them for this database's.
    for (const other of found.slice(0, found.indexOf(home))) {
      if (other.kind === 'foreign') notes.push(`${other.dir} holds the demo files of ${other.whose}: kept as they are; this database's are in ${home.dir}`);
    }
    if (home.kind === 'ours' && home === matching) return { status: 'reused', demo: home.credentials, dir: home.dir, notes };
    if (!account) {
      const demo = await provision(deps, home.dir, database);
      return { status: 'created', demo, dir: home.dir, notes };
    }
    notes.push(`no files in ${home.dir} matched demo account ${account.id}: it has a new client secret and certificate (the previous ones were not kept here)`);
    const demo = await reissue(deps, account, home.dir, database);
    return { status: 'reissued', demo, dir: home.dir, notes };
  });
}

/** This database's directories, in order of preference, with what each holds. */
async function survey(db: Db, dataDir: string, database: DemoDatabase, notes: string[]): Promise<DemoDirectory[]> {
  const dirs = demoDirectories(dataDir, database);
  await claimUnnamed(db, dataDir, dirs[0], database, notes);
  return dirs.map((dir) => {
    const here = readDemoDirectory(dir, database.id);
    // Unnamed files still unclaimed are another database's: their client is none of this one's accounts.
    if (here.kind !== 'unnamed') return here;
    return { dir, kind: 'foreign', whose: `another database (written before databases had an identity; its client ${here.credentials.clientId} is not one of this database's)` };
  });
}

/**
 * Files that name no database (written before databases had an identity, always in
 * DATA_DIR/demo) are this database's when their client is one of its accounts: they are named
 * after it, and moved to its own directory when that is another one.
 */
async function claimUnnamed(db: Db, dataDir: string, own: string, database: DemoDatabase, notes: string[]): Promise<void> {
  const unnamed = readDemoDirectory(unnamedDirectory(dataDir), database.id);
  if (unnamed.kind !== 'unnamed' || !(await findAccountByClientId(db, unnamed.credentials.clientId))) return;
  let dir = unnamed.dir;
  if (dir !== own && moveDirectory(dir, own)) {
    notes.push(`moved this database's demo files from ${dir} to ${own}`);
    dir = own;
  }
  writeDemoFiles(dir, { ...placedIn(dir, unnamed.credentials), database: named(database) });
}

/**
 * A database provisioned before it recorded its demo account: the account its unnamed files
 * name, else its oldest account with the demo holder's name and document.
 */
async function adopt(db: Db, found: DemoDirectory[], notes: string[]): Promise<bigint | undefined> {
  const ours = found.find((d) => d.kind === 'ours');
  const fromFiles = ours?.kind === 'ours' ? await findAccountByClientId(db, ours.credentials.clientId) : undefined;
  const accountId = fromFiles?.id ?? (await findOldestAccountOfHolder(db, DEMO_NAME, DEMO_CPF))?.id;
  if (accountId === undefined) return undefined;
  await recordDemoAccount(db, accountId);
  notes.push(`account ${accountId}, provisioned before the database recorded its demo account, is its demo account`);
  return accountId;
}

const named = (database: DemoDatabase) => ({ id: database.id, description: database.description });

async function provision(deps: AccountsDeps, dir: string, database: DemoDatabase): Promise<DemoCredentials> {
  const conn = deps.db;
  const account = await createAccount(deps, { name: DEMO_NAME, document: DEMO_CPF, address: DEMO_ADDRESS });
  await recordDemoAccount(conn, account.accountId);
  const issued = await issueCertificate({ commonName: `demo-client-${account.accountId}` });
  const { fingerprint } = await linkCertificate(deps, account.accountId, issued.certPem);
  const keys = [
    await registerPixKey(deps, account.accountId, { type: 'evp' }),
    // The demo CPF key can be held by one account only.
    ...((await findKey(conn, DEMO_CPF)) ? [] : [await registerPixKey(deps, account.accountId, { type: 'cpf' })]),
  ];
  await openingCredit(conn, account.accountId, keys[0]!.key);
  const demo = placedIn(dir, {
    accountId: Number(account.accountId),
    branch: account.branch,
    accountNumber: account.accountNumber,
    clientId: account.clientId,
    clientSecret: account.clientSecret,
    fingerprint,
    pixKeys: keys,
    database: named(database),
  });
  writeDemoFiles(dir, demo, issued);
  return demo;
}

/** New credentials for the existing demo account: its secret rotated, a new certificate linked. */
async function reissue(
  deps: AccountsDeps,
  account: { id: bigint; branch: string; account_number: string },
  dir: string,
  database: DemoDatabase,
): Promise<DemoCredentials> {
  const { clientId, clientSecret } = await rotateClientSecret(deps, account.id);
  const issued = await issueCertificate({ commonName: `demo-client-${account.id}` });
  const { fingerprint } = await linkCertificate(deps, account.id, issued.certPem);
  const keys = await listAccountKeys(deps.db, account.id);
  const demo = placedIn(dir, {
    accountId: Number(account.id),
    branch: account.branch,
    accountNumber: account.account_number,
    clientId,
    clientSecret,
    fingerprint,
    pixKeys: keys.map((k) => ({ key: k.key, type: k.key_type.toLowerCase() })),
    database: named(database),
  });
  writeDemoFiles(dir, demo, issued);
  return demo;
}

/** The demo account starts with money, as a PIX received from a sandbox payer (RECEIVE notification). */
export const DEMO_OPENING_CENTAVOS = 1_000_00n;

async function openingCredit(db: Db, accountId: bigint, pixKey: string): Promise<void> {
  const now = systemClock.now();
  await db.transaction().execute(async (trx) => {
    const row = await receiveFromNetwork(trx, {
      type: 'PAYMENT',
      accountId,
      amountCentavos: DEMO_OPENING_CENTAVOS,
      endToEndId: pixIdentifier('E', SANDBOX_PAYER_ISPB, now),
      pixKey,
      txid: null,
      description: 'Opening balance of the sandbox demo account',
      originalTransactionId: null,
      counterpart: { name: 'Pix Sandbox', document: DEMO_PAYER_CNPJ, ispb: SANDBOX_PAYER_ISPB, bankName: SANDBOX_PAYER_BANK, branch: null, account: null, accountId: null },
      at: now,
      now,
    });
    await enqueue(trx, { accountId, eventType: 'cash_in', transactionId: row.id, payload: receivePayload(row), now });
  });
}

