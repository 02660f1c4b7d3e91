import { join } from 'node:path';
import type { Config } from './config.ts';
import { formatCentavos } from './lib/money.ts';
import { DEMO_OPENING_CENTAVOS, type DemoOutcome } from './modules/admin/demo.ts';

export interface BannerFacts {
  readonly config: Config;
  readonly addresses: { readonly main: string; readonly admin: string | undefined };
  /** The database as a person names it, with its identity. */
  readonly database: string;
  readonly demo: DemoOutcome | null;
}

/** Single-quotes a path for the shell when it needs it, so the printed commands can be pasted. */
const shellPath = (path: string) => (/^[A-Za-z0-9_./:@%+=-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`);

/**
 * Commands that get a token and read the balance with the demo files: every account route needs
 * the token and the certificate it is bound to.
 */
function tryIt(address: string, demo: DemoOutcome['demo']): string[] {
  const certificate = `-H "x-ssl-client-cert: $(cat ${shellPath(demo.urlEncodedCertificateFile)})"`;
  const insecure = address.startsWith('https:') ? ' -k' : '';
  return [
    `TOKEN=$(curl -s${insecure} -X POST ${address}/api/auth/token -H 'content-type: application/json' \\`,
    `  ${certificate} -d @${shellPath(demo.tokenRequestFile)} | sed -E 's/.*"access_token":"([^"]+)".*/\\1/')`,
    `curl -s${insecure} ${address}/balance -H "authorization: Bearer $TOKEN" ${certificate}`,
  ];
}

function demoLines(address: string, outcome: DemoOutcome): string[] {
  const d = outcome.demo;
  const lines = [
    `Demo account ${d.accountId} (branch ${d.branch}, account ${d.accountNumber}, opened with R$ ${formatCentavos(DEMO_OPENING_CENTAVOS)}), Pix keys: ${d.pixKeys.map((k) => k.key).join(', ')}`,
    `  files:        ${outcome.dir}/ (this database's demo files)`,
    ...outcome.notes.map((note) => `  note:         ${note}`),
    `  clientId:     ${d.clientId}`,
    outcome.status === 'reused' ? `  clientSecret: in ${outcome.dir}/credentials.json` : `  clientSecret: ${d.clientSecret}`,
    `  certificate:  ${d.certificateFile} (key ${d.privateKeyFile}; URL-encoded for X-SSL-Client-Cert: ${d.urlEncodedCertificateFile})`,
  ];
  const [first, ...rest] = tryIt(address, d);
  lines.push(`  try it:       ${first}`, ...rest.map((line) => `                ${line}`));
  return lines;
}

/** The rule that sets the banner apart from the log's JSON lines around it. */
const RULE = '─'.repeat(78);

/** What a start prints once its listeners are bound and its worker runs: framed, apart from the log lines. */
export function banner({ config, addresses, database, demo }: BannerFacts): string {
  const lines = [`Pix API (${config.mode}) listening on ${addresses.main}   docs: ${addresses.main}/docs`];
  if (config.mode === 'sandbox') lines.push(`Console: ${addresses.main}/console (sign in with the ADMIN_TOKEN)`);
  if (addresses.admin) lines.push(`Operator API (/admin/*) listening on ${addresses.admin}`);
  const embedded = config.databaseUrl ? '' : ' (PGlite, sandbox only: it never fsyncs)';
  lines.push(`Database: ${database}${embedded}`);
  if (config.adminTokenGenerated) {
    lines.push(`ADMIN_TOKEN for /admin/*, /sandbox/* and the console (kept in ${shellPath(join(config.dataDir, 'admin-token'))} until ADMIN_TOKEN is set): ${config.adminToken}`);
  }
  if (demo) lines.push(...demoLines(addresses.main, demo));
  return ['', RULE, ...lines, RULE, ''].join('\n');
}
