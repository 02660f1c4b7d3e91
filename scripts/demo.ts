// npm run demo: a day of an account, end to end, printing each step.
//
// Starts the service itself on the embedded database in a temporary DATA_DIR (or uses a running
// one: PIX_API_URL=http://127.0.0.1:8080 ADMIN_TOKEN=... npm run demo; that service must then
// run with WEBHOOK_ALLOW_PRIVATE=true and WEBHOOK_CA_FILE=<the file this script prints>), and a
// local HTTPS webhook receiver with its own CA that checks every signature.
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { formatCentavos, numberToCentavos } from '../src/lib/money.ts';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../test/webhook-receiver.ts';
import { ApiClient, fetchTransport, type AccountApi, type OperatorApi } from './lib/api-client.ts';
import { authHeaders, createAccount, linkCertificate, randomCpf } from './lib/provision.ts';
import { SERVICE_MAIN, startChild, stopChild } from './lib/processes.ts';

const bold = (s: string) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);
let stepNo = 0;
const step = (title: string) => console.log(`\n${bold(`${++stepNo}. ${title}`)}`);
const show = (label: string, value: unknown) => console.log(`   ${label}: ${typeof value === 'string' ? value : JSON.stringify(value)}`);
const PAYER = { name: 'Maria Cliente', document: '52998224725' };

async function startService(dataDir: string, caFile: string, adminToken: string): Promise<{ child: ChildProcess; url: string }> {
  const { child, port } = await startChild([SERVICE_MAIN, 'serve'], {
    DATABASE_URL: '',
    DATA_DIR: dataDir,
    PORT: '0',
    ADMIN_TOKEN: adminToken,
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_CA_FILE: caFile,
    SETTLEMENT_DELAY_MS: '500',
    LOG_LEVEL: 'warn',
  });
  return { child, url: `http://127.0.0.1:${port}` };
}

interface Demo {
  client: ApiClient;
  operator: OperatorApi;
  receiver: WebhookReceiver;
}

type VerifiedWebhook = ReceivedWebhook & { payload: { type: string; data: Record<string, unknown> } };

/** Steps 1 and 2: the account, its certificate and key, then a token bound to the certificate. */
async function openAccount(d: Demo): Promise<{ account: AccountApi; key: string }> {
  step('The operator opens an account, links its certificate and gives it a PIX key');
  const created = await createAccount(d.operator, { name: 'Padaria Pão Quente Ltda', document: randomCpf() });
  const cert = await linkCertificate(d.operator, created.accountId, { commonName: `demo-${created.accountId}` });
  const { key } = await d.operator.registerPixKey(created.accountId);
  show('account', { accountId: created.accountId, clientId: created.clientId });
  show('PIX key (EVP)', key);

  step('Token: client credentials plus the client certificate (X-SSL-Client-Cert, URL-encoded PEM)');
  const token = await d.client.token(created, cert.header);
  show('access_token', `${token.access_token.slice(0, 24)}... (expires in ${token.expires_in} s)`);
  return { account: d.client.account(authHeaders(token.access_token, cert)), key };
}

/** Step 3: one URL per event type; resolves to a function that awaits the next webhook and checks its signature. */
async function registerWebhooks(d: Demo, account: AccountApi): Promise<() => Promise<VerifiedWebhook>> {
  step('Webhooks: one HTTPS URL per event type, signed with the account secret');
  for (const eventType of ['cash_in', 'cash_out', 'refund_in'] as const) {
    await account.registerWebhook({ url: `${d.receiver.origin}/pix/${eventType}`, eventType, headers: [{ key: 'X-Demo', value: 'yes' }] });
  }
  const verifier = new Webhook((await account.signingSecret()).secret);
  show('registered', 'cash_in, cash_out, refund_in');
  let seen = 0;
  return async () => {
    const all = await d.receiver.waitFor(++seen, 15_000);
    const hook = all[seen - 1]!;
    const payload = verifier.verify(hook.body, hook.headers) as VerifiedWebhook['payload'];
    console.log(`   webhook ${hook.path} ${payload.type}, webhook-id ${hook.headers['webhook-id']}: signature verified`);
    return { ...hook, payload };
  };
}

/** Step 5: a charge with its BR Code, and its QR code written to a file. */
async function createCharge(account: AccountApi, key: string): Promise<string> {
  step('A charge (cob) of R$ 150.00 with its copy-and-paste BR Code and QR code');
  const txid = `demo${randomUUID().replace(/-/g, '')}`.slice(0, 32);
  const charge = await account.createCharge(txid, {
    calendario: { expiracao: 3600 },
    devedor: { cpf: PAYER.document, nome: PAYER.name },
    valor: { original: '150.00' },
    chave: key,
    solicitacaoPagador: 'Encomenda de pães',
  });
  show('status', charge.status);
  show('pixCopiaECola', charge.pixCopiaECola);
  const png = await account.chargeQrCode(txid, 'png');
  const qrFile = join(tmpdir(), `pix-demo-${txid}.png`);
  writeFileSync(qrFile, png.bytes);
  show('QR code', `${qrFile} (${png.contentType})`);
  return txid;
}

/** Steps 6 and 7: the charge paid and notified, then part of it refunded. */
async function payAndRefund(d: Demo, account: AccountApi, txid: string, nextWebhook: () => Promise<VerifiedWebhook>): Promise<void> {
  step('The payer pays the charge (sandbox), the account is credited and notified');
  const paid = await d.operator.payCharge(txid, PAYER);
  show('endToEndId', paid.endToEndId);
  show('RECEIVE', (await nextWebhook()).payload.data);
  show('charge status', (await account.getCharge(txid)).status);

  step('A partial refund (devolucao) of R$ 20.00');
  show('refund', await account.requestRefund(paid.endToEndId, 'demo1', { valor: '20.00', descricao: 'Um pão a menos' }));
  show('REFUND', (await nextWebhook()).payload.data);
  show('refund now', (await account.getRefund(paid.endToEndId, 'demo1')).status);
}

/** Steps 8 and 9: a transfer to a key of another institution, looked up first, and its settlement. */
async function transferOut(d: Demo, account: AccountApi, nextWebhook: () => Promise<VerifiedWebhook>): Promise<void> {
  step('A transfer of R$ 35.50 to a key at another institution');
  const outside = `fornecedor-${randomUUID().slice(0, 8)}@example.com`;
  await d.operator.registerExternalKey({ key: outside, name: 'Moinho Fornecedor SA', document: '11222333000181', ispb: '60746948', bankName: 'Banco Exemplo' });
  // What a payment app shows before paying: the key's owner and institution.
  show('the key, looked up', await account.lookupKey(outside));
  show('accepted', await account.transfer({ pixKey: outside, payment: { currency: 'BRL', amount: 35.5 }, description: 'Farinha' }));
  show('balances while pending', (await account.balances()).data);

  step('Settlement (the worker settles NORM transfers after SETTLEMENT_DELAY_MS)');
  show('TRANSFER', (await nextWebhook()).payload.data);
}

/** Steps 4 to 10, once the account can call. */
async function tour(d: Demo): Promise<void> {
  const { account, key } = await openAccount(d);
  const nextWebhook = await registerWebhooks(d, account);

  step('Balance');
  show('GET /accounts/balances', (await account.balances()).data);

  const txid = await createCharge(account, key);
  await payAndRefund(d, account, txid, nextWebhook);
  await transferOut(d, account, nextWebhook);

  step('The transaction list');
  for (const t of (await account.listTransactions()).data) {
    const amount = formatCentavos(numberToCentavos(t.finalAmount) ?? 0n);
    console.log(`   ${t.operationType.padEnd(10)} ${t.movementType.padEnd(6)} ${amount.padStart(8)} ${t.status.padEnd(11)} ${t.counterpart.name} ${t.counterpart.document}`);
  }
  show('final balance', (await account.balances()).data);
  console.log(`\n${bold('Done:')} ${d.receiver.received.length} webhooks received, every signature verified.`);
}

async function main() {
  const receiver = await startWebhookReceiver();
  const given = process.env.PIX_API_URL;
  const adminToken = given ? process.env.ADMIN_TOKEN : `demo-admin-${randomUUID()}`;
  if (!adminToken) throw new Error('PIX_API_URL needs ADMIN_TOKEN (the service prints it at start)');
  const dataDir = given ? null : mkdtempSync(join(tmpdir(), 'pix-demo-'));
  const service = dataDir ? await startService(dataDir, receiver.caFile, adminToken) : null;
  const base = given ?? service!.url;
  console.log(bold('Pix API sandbox demo'));
  show('service', given ? `${base} (running)` : `${base} (started on the embedded database in ${dataDir})`);
  show('webhook receiver', `${receiver.origin} (CA ${receiver.caFile})`);
  const client = new ApiClient(fetchTransport(base));
  try {
    await tour({ client, operator: client.operator(adminToken), receiver });
  } finally {
    await receiver.close();
    if (service) await stopChild(service.child);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
