import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

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
 * The sandbox's ADMIN_TOKEN when the environment sets none: made on the first start and kept in
 * DATA_DIR/admin-token (mode 0600), as the key-encryption key is, so that the console's session
 * and every terminal's `$ADMIN_TOKEN` outlive a restart. A file that holds no usable token (16
 * characters at least) is replaced.
 */
export function keptAdminToken(dataDir: string, generated: string): { token: string; created: boolean } {
  const file = join(dataDir, 'admin-token');
  try {
    const kept = readFileSync(file, 'utf8').trim();
    if (/^\S{16,}$/.test(kept)) return { token: kept, created: false };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(file, `${generated}\n`, { mode: 0o600 });
  return { token: generated, created: true };
}

/**
 * The sandbox's ADMIN_TOKEN beside the demo account's files too (`admin-token`, mode 0600), so
 * that a shell can `export ADMIN_TOKEN=$(cat data/current/admin-token)`; with a token set in the
 * environment, no file (one left by an earlier run is removed: it no longer works).
 */
export function writeAdminTokenFile(dir: string, keptToken: string | null): void {
  const file = join(dir, 'admin-token');
  if (keptToken === null) rmSync(file, { force: true });
  else writeFileSync(file, `${keptToken}\n`, { mode: 0o600 });
}

/** DATA_DIR/current: the demo files of the database the latest start ran on, whichever it was. */
export const CURRENT_DEMO = 'current';

/**
 * Points DATA_DIR/current at `dir` (a relative link, replaced whole), so that the same commands
 * read the demo files on the embedded database and on PostgreSQL.
 */
export function pointCurrentDemo(dataDir: string, dir: string): void {
  const link = join(dataDir, CURRENT_DEMO);
  const fresh = `${link}.${process.pid}`;
  rmSync(fresh, { force: true });
  symlinkSync(relative(dataDir, dir), fresh);
  renameSync(fresh, link);
}
