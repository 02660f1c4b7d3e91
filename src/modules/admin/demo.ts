import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { Db } from '../../db/client.ts';
import { issueCertificate } from '../../lib/certificate-authority.ts';
import { cnpjCheckDigits, cpfCheckDigits } from '../../lib/document.ts';
import { pixIdentifier } from '../../lib/ids.ts';
import { enqueue } from '../notifications/repo.ts';
import { receivePayload } from '../notifications/payloads.ts';
import { SANDBOX_PAYER_BANK, SANDBOX_PAYER_ISPB } from '../sandbox/service.ts';
import { receiveFromNetwork } from '../settlement/service.ts';
import { createAccount, linkCertificate, registerPixKey } from '../accounts/service.ts';
import { findAccountByClientId } from '../accounts/repo.ts';
import { findKey } from '../directory/repo.ts';

export interface DemoCredentials {
  accountId: number;
  branch: string;
  accountNumber: string;
  clientId: string;
  clientSecret: string;
  fingerprint: string;
  pixKeys: { key: string; type: string }[];
  certificateFile: string;
  privateKeyFile: string;
  urlEncodedCertificateFile: string;
  /** The body of POST /api/auth/token, for `curl -d @file`. */
  tokenRequestFile: string;
}

const DEMO_LOCK = 72_620_002;
export const DEMO_NAME = 'Conta Demo Sandbox';
export const DEMO_CPF = `123456789${cpfCheckDigits('123456789')}`;
const DEMO_PAYER_CNPJ = `112223330001${cnpjCheckDigits('112223330001')}`;

/**
 * Provisions the sandbox's demo account once per database: an account, a client certificate
 * and key written to DATA_DIR/demo/, and an EVP and a CPF key in the directory. Returns the
 * credentials and whether they were created now (the secret is printed only then).
 */
export async function ensureDemoAccount(db: Db, dataDir: string, ispb: string): Promise<{ created: boolean; demo: DemoCredentials }> {
  const dir = join(dataDir, 'demo');
  const credentialsFile = join(dir, 'credentials.json');
  if (existsSync(credentialsFile)) {
    const demo = JSON.parse(readFileSync(credentialsFile, 'utf8')) as DemoCredentials;
    if (await findAccountByClientId(db, demo.clientId)) return { created: false, demo };
  }
  return db.connection().execute(async (conn) => {
    // Several processes starting on one fresh database provision one demo account.
    await sql`select pg_advisory_lock(${DEMO_LOCK})`.execute(conn);
    try {
      mkdirSync(dir, { recursive: true });
      // Everything runs on the locked connection (PGlite has only one).
      const deps = { db: conn, ispb };
      const account = await createAccount(deps, { name: DEMO_NAME, document: DEMO_CPF });
      const issued = await issueCertificate({ commonName: `demo-client-${account.accountId}` });
      const { fingerprint } = await linkCertificate(deps, account.accountId, issued.certPem);
      const keys = [
        await registerPixKey(deps, account.accountId, { type: 'evp' }),
        // The demo CPF key can be held by one account only; a second demo account goes without.
        ...((await findKey(conn, DEMO_CPF)) ? [] : [await registerPixKey(deps, account.accountId, { type: 'cpf' })]),
      ];
      await openingCredit(conn, account.accountId, keys[0]!.key);
      const demo: DemoCredentials = {
        accountId: Number(account.accountId),
        branch: account.branch,
        accountNumber: account.accountNumber,
        clientId: account.clientId,
        clientSecret: account.clientSecret,
        fingerprint,
        pixKeys: keys,
        certificateFile: join(dir, 'client.crt'),
        privateKeyFile: join(dir, 'client.key'),
        urlEncodedCertificateFile: join(dir, 'client.crt.urlencoded'),
        tokenRequestFile: join(dir, 'token-request.json'),
      };
      writeFileSync(demo.certificateFile, issued.certPem);
      writeFileSync(demo.privateKeyFile, issued.keyPem, { mode: 0o600 });
      writeFileSync(demo.urlEncodedCertificateFile, encodeURIComponent(issued.certPem));
      writeFileSync(demo.tokenRequestFile, JSON.stringify({ clientId: demo.clientId, clientSecret: demo.clientSecret }), { mode: 0o600 });
      writeFileSync(credentialsFile, `${JSON.stringify(demo, null, 2)}\n`, { mode: 0o600 });
      return { created: true, demo };
    } finally {
      await sql`select pg_advisory_unlock(${DEMO_LOCK})`.execute(conn);
    }
  });
}

/** The demo account starts with money, as a PIX received from a sandbox payer (RECEIVE notification). */
export const DEMO_OPENING_CENTAVOS = 1_000_00n;

async function openingCredit(db: Db, accountId: bigint, pixKey: string): Promise<void> {
  const now = new Date();
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

