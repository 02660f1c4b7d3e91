// npm run demo: a day of an account, end to end, printing each step.
//
// On its own it starts the service on the embedded database in a temporary DATA_DIR, with a
// local HTTPS webhook receiver that has its own CA (the service is started trusting it). Against
// a running service (PIX_API_URL=http://127.0.0.1:8080 ADMIN_TOKEN=... npm run demo), in sandbox
// mode, the webhooks go to that service's own inbox ({PUBLIC_URL}/sandbox/inbox/{name}, names of
// this run) and the demo reads them there with the admin token. Either way it checks every
// webhook's signature. A failure ends with one line on stderr and exit code 1.
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { formatCentavos, numberToCentavos } from '../src/lib/money.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../test/webhook-receiver.ts';
import { ApiClient, ApiError, fetchTransport, type AccountApi, type OperatorApi } from './lib/api-client.ts';
import { authHeaders, createAccount, linkCertificate, randomCpf } from './lib/provision.ts';
import { SERVICE_MAIN, startChild, stopChild } from './lib/processes.ts';

const bold = (s: string) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);
let stepNo = 0;
const step = (title: string) => console.log(`\n${bold(`${++stepNo}. ${title}`)}`);
const show = (label: string, value: unknown) => console.log(`   ${label}: ${typeof value === 'string' ? value : JSON.stringify(value)}`);
const PAYER = { name: 'Maria Cliente', document: '52998224725' };

const EVENT_TYPES = ['cash_in', 'cash_out', 'refund_in'] as const;
type EventType = (typeof EVENT_TYPES)[number];
/** How long a webhook is awaited: settlement waits SETTLEMENT_DELAY_MS, delivery the worker's next round. */
const WEBHOOK_WAIT_MS = 15_000;
const POLL_MS = 150;

/** A delivery as it arrived: where, its headers (lower-case names) and its body as sent. */
interface Delivery {
  where: string;
  headers: Record<string, string>;
  body: string;
}

/** Where the account's webhooks go, one URL per event type, and what has arrived there. */
interface Deliveries {
  /** What the demo prints about them. */
  readonly about: string;
  url(eventType: EventType): string;
  /** The deliveries the receiver answered with 200 at eventType's URL so far, oldest first. */
  arrived(eventType: EventType): Promise<Delivery[]>;
  /** Why the service may refuse the URLs as webhooks, said with the refusal. */
  readonly refusalHint?: string;
}

/** The local HTTPS receiver of a service the demo started (trusting the receiver's CA). */
function localReceiver(receiver: WebhookReceiver): Deliveries {
  const path = (eventType: EventType) => `/pix/${eventType}`;
  return {
    about: `${receiver.origin} (a local HTTPS receiver, CA ${receiver.caFile})`,
    url: (eventType) => receiver.origin + path(eventType),
    arrived: async (eventType) => receiver.received.filter((r) => r.path === path(eventType)).map((r) => ({ where: r.path, headers: r.headers, body: r.body })),
  };
}

/**
 * A running service's own webhook inbox, one per event type under names of this run. Reading it
 * first checks what the demo needs of the service: that it answers, takes the admin token and
 * runs in sandbox mode.
 */
async function serviceInbox(base: string, operator: OperatorApi): Promise<Deliveries> {
  const run = `demo-${randomUUID().slice(0, 8)}`;
  const name = (eventType: EventType) => `${run}-${eventType}`;
  const path = (eventType: EventType) => `/sandbox/inbox/${name(eventType)}`;
  try {
    await operator.inbox(name('cash_in'));
  } catch (error) {
    const status = error instanceof ApiError ? error.status : undefined;
    const why =
      status === 401
        ? 'refused ADMIN_TOKEN (401): give the admin token it printed at start'
        : status === 404
          ? 'has no /sandbox routes there (404): the demo needs it in sandbox mode (PIX_MODE=sandbox), with its operator API on that address'
          : undefined;
    if (why === undefined) throw error;
    throw new Error(`the service at ${base} ${why}`, { cause: error });
  }
  return {
    about: `${base}/sandbox/inbox/${run}-{${EVENT_TYPES.join(',')}} (the service's own inbox, read with the admin token)`,
    url: (eventType) => base + path(eventType),
    arrived: async (eventType) =>
      (await operator.inbox(name(eventType))).data
        .filter((a) => a.method === 'POST' && a.status === 200)
        .reverse()
        .map((a) => ({ where: path(eventType), headers: a.headers, body: a.body })),
    refusalHint: `the service takes only its own address (PUBLIC_URL, the address its banner says it listens on) for its inbox: set PIX_API_URL to it`,
  };
}

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
  deliveries: Deliveries;
}

type VerifiedWebhook = Delivery & { payload: { type: string; data: Record<string, unknown> } };
type NextWebhook = (eventType: EventType) => Promise<VerifiedWebhook>;
let verified = 0;

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

/** What an error answer says: its message, or its text. */
function answerMessage(error: ApiError): string {
  try {
    const { message } = JSON.parse(error.text) as { message?: unknown };
    if (typeof message === 'string') return message;
  } catch {
    // Not JSON: the text as it came.
  }
  return error.text;
}

/** Step 3: one URL per event type; resolves to a function that awaits the next webhook of a type and checks its signature. */
async function registerWebhooks(d: Demo, account: AccountApi): Promise<NextWebhook> {
  step('Webhooks: one URL per event type, signed with the account secret');
  for (const eventType of EVENT_TYPES) {
    const url = d.deliveries.url(eventType);
    try {
      await account.registerWebhook({ url, eventType, headers: [{ key: 'X-Demo', value: 'yes' }] });
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 400 && d.deliveries.refusalHint)) throw error;
      throw new Error(`the service refused ${url} as a webhook (${answerMessage(error)}): ${d.deliveries.refusalHint}`, { cause: error });
    }
  }
  const verifier = new Webhook((await account.signingSecret()).secret);
  show('registered', EVENT_TYPES.join(', '));
  const seen: Record<EventType, number> = { cash_in: 0, cash_out: 0, refund_in: 0 };
  return async (eventType) => {
    const deadline = Date.now() + WEBHOOK_WAIT_MS;
    let hook: Delivery | undefined;
    while (!(hook = (await d.deliveries.arrived(eventType))[seen[eventType]])) {
      if (Date.now() > deadline) {
        throw new Error(`no ${eventType} webhook arrived at ${d.deliveries.url(eventType)} within ${WEBHOOK_WAIT_MS / 1000} s (does a worker run for the service?)`);
      }
      await sleep(POLL_MS);
    }
    seen[eventType]++;
    let payload: VerifiedWebhook['payload'];
    try {
      payload = verifier.verify(hook.body, hook.headers) as VerifiedWebhook['payload'];
    } catch (error) {
      throw new Error(`webhook ${hook.where}, webhook-id ${hook.headers['webhook-id']}: signature not verified (${(error as Error).message})`, { cause: error });
    }
    verified++;
    console.log(`   webhook ${hook.where} ${payload.type}, webhook-id ${hook.headers['webhook-id']}: signature verified`);
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
async function payAndRefund(d: Demo, account: AccountApi, txid: string, nextWebhook: NextWebhook): Promise<void> {
  step('The payer pays the charge (sandbox), the account is credited and notified');
  const paid = await d.operator.payCharge(txid, PAYER);
  show('endToEndId', paid.endToEndId);
  show('RECEIVE', (await nextWebhook('cash_in')).payload.data);
  show('charge status', (await account.getCharge(txid)).status);

  step('A partial refund (devolucao) of R$ 20.00');
  show('refund', await account.requestRefund(paid.endToEndId, 'demo1', { valor: '20.00', descricao: 'Um pão a menos' }));
  show('REFUND', (await nextWebhook('refund_in')).payload.data);
  show('refund now', (await account.getRefund(paid.endToEndId, 'demo1')).status);
}

/** Steps 8 and 9: a transfer to a key of another institution, looked up first, and its settlement. */
async function transferOut(d: Demo, account: AccountApi, nextWebhook: NextWebhook): Promise<void> {
  step('A transfer of R$ 35.50 to a key at another institution');
  const outside = `fornecedor-${randomUUID().slice(0, 8)}@example.com`;
  await d.operator.registerExternalKey({ key: outside, name: 'Moinho Fornecedor SA', document: '11222333000181', ispb: '60746948', bankName: 'Banco Exemplo' });
  // What a payment app shows before paying: the key's owner and institution.
  show('the key, looked up', await account.lookupKey(outside));
  show('accepted', await account.transfer({ pixKey: outside, payment: { currency: 'BRL', amount: 35.5 }, description: 'Farinha' }));
  show('balances while pending', (await account.balances()).data);

  step('Settlement (the worker settles NORM transfers after SETTLEMENT_DELAY_MS)');
  show('TRANSFER', (await nextWebhook('cash_out')).payload.data);
}

/** Steps 4 to 10, once the account can call. */
async function tour(d: Demo): Promise<void> {
  const { account, key } = await openAccount(d);
  const nextWebhook = await registerWebhooks(d, account);

  step('The test clock moves two days ahead: payloads carry business time, signatures the real one');
  const moved = await d.operator.advanceClock(2 * 86_400);
  show('business time', `${moved.now} (${moved.offsetSeconds / 3600} hours ahead of the real clock: POST /sandbox/clock/reset puts it back)`);

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
  console.log(`\n${bold('Done:')} ${verified} webhooks received, every signature verified.`);
}

/** The header, then the tour, against the service at `base`. */
async function runDemo(base: string, service: string, adminToken: string, deliveriesOf: (operator: OperatorApi) => Promise<Deliveries>): Promise<void> {
  const client = new ApiClient(fetchTransport(base));
  const operator = client.operator(adminToken);
  const deliveries = await deliveriesOf(operator);
  console.log(bold('Pix API sandbox demo'));
  show('service', service);
  show('webhooks', deliveries.about);
  await tour({ client, operator, deliveries });
}

/** The service started here, on the embedded database in a temporary DATA_DIR, trusting a local receiver's CA. */
async function onItsOwn(): Promise<void> {
  const adminToken = `demo-admin-${randomUUID()}`;
  const receiver = await startWebhookReceiver();
  const dataDir = mkdtempSync(join(tmpdir(), 'pix-demo-'));
  let service: { child: ChildProcess; url: string } | undefined;
  try {
    service = await startService(dataDir, receiver.caFile, adminToken);
    await runDemo(service.url, `${service.url} (started on the embedded database in ${dataDir})`, adminToken, async () => localReceiver(receiver));
  } finally {
    await receiver.close();
    if (service) await stopChild(service.child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** A running service: its address and admin token from the environment, its own inbox for the webhooks. */
async function againstRunning(given: string): Promise<void> {
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new Error(`PIX_API_URL must be the service's address, such as http://127.0.0.1:8080 (got ${JSON.stringify(given)})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`PIX_API_URL must be an http or https address (got ${JSON.stringify(given)})`);
  const adminToken = process.env.ADMIN_TOKEN;
  if (!adminToken) throw new Error('PIX_API_URL needs ADMIN_TOKEN: the admin token the service printed at start (npm start keeps it in data/admin-token)');
  const base = url.origin + url.pathname.replace(/\/+$/, '');
  await runDemo(base, `${base} (running)`, adminToken, (operator) => serviceInbox(base, operator));
}

/** One line for any failure: a service that cannot be reached says so, not "fetch failed". */
function failureLine(error: unknown): string {
  const target = process.env.PIX_API_URL ? ` at ${process.env.PIX_API_URL}` : '';
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : undefined;
  const text =
    error instanceof TypeError && error.message === 'fetch failed'
      ? `cannot reach the service${target} (${(cause as NodeJS.ErrnoException | undefined)?.code ?? cause?.message ?? 'fetch failed'})`
      : error instanceof Error
        ? error.message
        : String(error);
  return `demo failed: ${text.replace(/\s*\n\s*/g, ' ').trim()}`;
}

const given = process.env.PIX_API_URL;
(given ? againstRunning(given) : onItsOwn()).catch((error: unknown) => {
  console.error(failureLine(error));
  process.exit(1);
});
