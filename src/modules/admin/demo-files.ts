import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The sandbox's demo files: the demo account's credentials, certificate and private key, written
 * under DATA_DIR for a person to use. They belong to the database they were made on, which
 * credentials.json names (docs/decisions/0005-start-up-and-demo-files.md).
 */

/** A database as the demo files name it. */
export interface DemoDatabase {
  /** Its identity (database_identity.id). */
  readonly id: string;
  /** How a person names it: "the embedded database in data/pgdata", "PostgreSQL database "pix" on 127.0.0.1:5432". */
  readonly description: string;
  readonly kind: 'embedded' | 'postgres';
  /** The PostgreSQL database's name, for its directory. */
  readonly name?: string;
}

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
  /** The database the files belong to (absent in files written before databases had an identity). */
  database?: { id: string; description: string };
}

/** What a directory holds. Files without `database` are judged by their client id (demo.ts). */
export type DemoDirectory =
  | { readonly dir: string; readonly kind: 'empty' }
  | { readonly dir: string; readonly kind: 'ours' | 'unnamed'; readonly credentials: DemoCredentials }
  | { readonly dir: string; readonly kind: 'foreign'; readonly whose: string };

const CREDENTIALS = 'credentials.json';

/** A database name as a directory name: letters, digits, `_.-`, at most 40 characters. */
const directoryName = (name: string) => name.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 40);

/**
 * Where a database's demo files go, in order: its own directory (DATA_DIR/demo for the embedded
 * database, as from a fresh clone; DATA_DIR/demo-NAME-ID8 for a PostgreSQL database), then one
 * named after its full identity, used only when the first holds another database's files.
 */
export function demoDirectories(dataDir: string, database: DemoDatabase): [string, string] {
  const own = database.kind === 'embedded' ? 'demo' : `demo-${directoryName(database.name ?? 'postgres')}-${database.id.slice(0, 8)}`;
  return [join(dataDir, own), join(dataDir, `demo-${database.id}`)];
}

/** Where files written before databases had an identity are: every database wrote them there. */
export const unnamedDirectory = (dataDir: string) => join(dataDir, 'demo');

export function readDemoDirectory(dir: string, databaseId: string): DemoDirectory {
  const file = join(dir, CREDENTIALS);
  if (!existsSync(file)) return { dir, kind: 'empty' };
  let credentials: DemoCredentials;
  try {
    credentials = JSON.parse(readFileSync(file, 'utf8')) as DemoCredentials;
  } catch (error) {
    return { dir, kind: 'foreign', whose: `an unknown database (${file} cannot be read: ${(error as Error).message})` };
  }
  if (typeof credentials?.clientId !== 'string') return { dir, kind: 'foreign', whose: `an unknown database (${file} names no client)` };
  if (!credentials.database) return { dir, kind: 'unnamed', credentials };
  if (credentials.database.id === databaseId) return { dir, kind: 'ours', credentials };
  return { dir, kind: 'foreign', whose: `${credentials.database.description} (id ${credentials.database.id})` };
}

/** Moves a directory where nothing is, or into an empty one; false when the target holds anything. */
export function moveDirectory(from: string, to: string): boolean {
  if (existsSync(to) && readdirSync(to).length > 0) return false;
  renameSync(from, to);
  return true;
}

/** The credentials with their files' paths in `dir`. */
export function placedIn(dir: string, credentials: Omit<DemoCredentials, 'certificateFile' | 'privateKeyFile' | 'urlEncodedCertificateFile' | 'tokenRequestFile'>): DemoCredentials {
  return {
    ...credentials,
    certificateFile: join(dir, 'client.crt'),
    privateKeyFile: join(dir, 'client.key'),
    urlEncodedCertificateFile: join(dir, 'client.crt.urlencoded'),
    tokenRequestFile: join(dir, 'token-request.json'),
  };
}

/** Writes the certificate, its key and the token request, then credentials.json, which marks the set complete. */
export function writeDemoFiles(dir: string, demo: DemoCredentials, certificate?: { certPem: string; keyPem: string }): void {
  mkdirSync(dir, { recursive: true });
  if (certificate) {
    writeFileSync(demo.certificateFile, certificate.certPem);
    writeFileSync(demo.privateKeyFile, certificate.keyPem, { mode: 0o600 });
    writeFileSync(demo.urlEncodedCertificateFile, encodeURIComponent(certificate.certPem));
  }
  writeFileSync(demo.tokenRequestFile, JSON.stringify({ clientId: demo.clientId, clientSecret: demo.clientSecret }), { mode: 0o600 });
  writeFileSync(join(dir, CREDENTIALS), `${JSON.stringify(demo, null, 2)}\n`, { mode: 0o600 });
}

/**
 * The ADMIN_TOKEN generated for this run, beside the demo account's files (`admin-token`, mode
 * 0600), so that a shell can `export ADMIN_TOKEN=$(cat data/demo/admin-token)`; with a token set
 * in the environment, no file (one left by an earlier run is removed: it no longer works).
 */
export function writeAdminTokenFile(dir: string, generatedToken: string | null): void {
  const file = join(dir, 'admin-token');
  if (generatedToken === null) rmSync(file, { force: true });
  else writeFileSync(file, `${generatedToken}\n`, { mode: 0o600 });
}
