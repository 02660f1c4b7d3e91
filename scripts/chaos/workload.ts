// The workload of npm run chaos: accounts with keys, certificates, tokens and webhooks; clients
// moving money at random among them (transfers between them and to other institutions, PIX
// arriving from outside, refunds); an idempotency storm; and, at the end, every request whose
// outcome is unknown sent again until it has one. Every answer is kept for the checks.
import { randomUUID } from 'node:crypto';
import type { WebhookReceiver } from '../../test/webhook-receiver.ts';
import type { AccountApi, ApiClient, ApiRequest } from '../lib/api-client.ts';
import type { EventType, TransferInput } from '../lib/api-types.ts';
import { query } from '../lib/pg.ts';
import { provisionAccount } from '../lib/provision.ts';
import { log, pick, sleep } from './common.ts';

export const EVENT_TYPES = ['cash_in', 'cash_out', 'refund_in', 'refund_out'] as const satisfies readonly EventType[];
/** Other institutions' keys: one that settles, one that rejects every transfer. */
const OUTSIDE_OK = 'chaos-ok@example.com';
const OUTSIDE_REJECT = 'chaos-reject@example.com';

/** An answer, or none (status null) when the request failed on the way; when it was sent and came (performance.now()). */
export interface Answer {
  status: number | null;
  body: Record<string, unknown>;
  error?: string;
  sentAt: number;
  at: number;
}

/** Sends a request; a failure on the way (a process killed, a timeout) is an answer with no status. */
export async function call(client: ApiClient, request: ApiRequest): Promise<Answer> {
  const sentAt = performance.now();
  try {
    const answer = await client.send(request);
    return { status: answer.status, body: answer.body, sentAt, at: performance.now() };
  } catch (error) {
    return { status: null, body: {}, error: (error as Error).message, sentAt, at: performance.now() };
  }
}

/** An answer that says what happened: not a failure on the way, a 5xx or a 409 (still in flight). */
export const definite = (a: Answer | undefined) => a !== undefined && a.status !== null && a.status < 500 && a.status !== 409;

export interface BankAccount {
  accountId: number;
  key: string;
  document: string;
  api: AccountApi;
  /** Its webhook signing secret. */
  secret: string;
}

/** A request sent (again, while its outcome is unknown) and every answer it got. */
export interface Logged {
  account: BankAccount;
  request: ApiRequest;
  answers: Answer[];
}

export interface TransferLog extends Logged {
  key: string;
}

export interface RefundLog extends Logged {
  id: string;
}

export interface Bank {
  accounts: BankAccount[];
  transfers: TransferLog[];
  refunds: RefundLog[];
  incoming: { answer: Answer; amount: string }[];
  /** Account id -> end-to-end ids of the PIX it received (acknowledged). */
  received: Map<number, string[]>;
}

/** The outside keys and `count` accounts, each with a key, a certificate, a token and webhooks for EVENT_TYPES. */
export async function openBank(client: ApiClient, adminToken: string, receiver: WebhookReceiver, count: number): Promise<Bank> {
  const operator = client.operator(adminToken);
  for (const [key, behavior] of [[OUTSIDE_OK, undefined], [OUTSIDE_REJECT, 'reject']] as const) {
    await operator.registerExternalKey({ key, name: 'Outside', document: '11222333000181', ispb: '60746948', ...(behavior ? { behavior } : {}) });
  }
  const accounts: BankAccount[] = [];
  for (let i = 0; i < count; i++) {
    const a = await provisionAccount(client, adminToken, { name: `Chaos ${i}`, commonName: `chaos-${i}` });
    for (const eventType of EVENT_TYPES) await a.api.registerWebhook({ url: `${receiver.origin}/${a.accountId}/${eventType}`, eventType });
    accounts.push({ accountId: a.accountId, key: a.key!, document: a.document, api: a.api, secret: (await a.api.signingSecret()).secret });
  }
  log(`${count} accounts, each with a key, a certificate, a token and webhooks for ${EVENT_TYPES.join(', ')}`);
  return { accounts, transfers: [], refunds: [], incoming: [], received: new Map() };
}

/** A PIX from outside to the account's key. */
export async function receive(bank: Bank, client: ApiClient, adminToken: string, target: BankAccount, amount: string): Promise<void> {
  const r = await call(client, client.operator(adminToken).incomingPixRequest({ pixKey: target.key, amount, payer: { name: 'Outside payer', document: '52998224725' } }));
  bank.incoming.push({ answer: r, amount });
  if (r.status === 201) bank.received.set(target.accountId, [...(bank.received.get(target.accountId) ?? []), r.body.endToEndId as string]);
}

async function transfer(bank: Bank, client: ApiClient, me: BankAccount, body: TransferInput): Promise<void> {
  const key = randomUUID();
  const entry: TransferLog = { account: me, key, request: me.api.transferRequest(body, key), answers: [] };
  bank.transfers.push(entry);
  entry.answers.push(await call(client, entry.request));
}

/** One operation of one client, at random: a transfer between accounts or out, a PIX in, or a refund. */
async function operation(bank: Bank, any: () => ApiClient, adminToken: string): Promise<void> {
  const me = pick(bank.accounts);
  const roll = Math.random();
  if (roll < 0.5) {
    const other = pick(bank.accounts.filter((a) => a !== me));
    const high = Math.random() < 0.3;
    const payment = { currency: 'BRL', amount: Math.floor(1 + Math.random() * 2000) / 100 } as const;
    await transfer(bank, any(), me, { pixKey: other.key, payment, ...(high ? { priority: 'HIGH', creditorDocument: other.document } : {}) });
  } else if (roll < 0.7) {
    const pixKey = Math.random() < 0.8 ? OUTSIDE_OK : OUTSIDE_REJECT;
    await transfer(bank, any(), me, { pixKey, payment: { currency: 'BRL', amount: Math.floor(1 + Math.random() * 1000) / 100 } });
  } else if (roll < 0.85) {
    await receive(bank, any(), adminToken, me, `${Math.floor(1 + Math.random() * 30)}.${String(Math.floor(Math.random() * 100)).padStart(2, '0')}`);
  } else {
    const mine = bank.received.get(me.accountId) ?? [];
    if (mine.length === 0) return;
    const id = randomUUID().replace(/-/g, '').slice(0, 20);
    const entry: RefundLog = { account: me, id, request: me.api.refundRequest(pick(mine), id, { valor: '0.50' }), answers: [] };
    bank.refunds.push(entry);
    entry.answers.push(await call(any(), entry.request));
  }
}

/** `clients` clients, each running one operation after another for `seconds`; resolves with how many ran. */
export async function runClients(bank: Bank, any: () => ApiClient, adminToken: string, clients: number, seconds: number): Promise<number> {
  const deadline = Date.now() + seconds * 1000;
  let operations = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (Date.now() < deadline) {
        operations++;
        await operation(bank, any, adminToken);
      }
    }),
  );
  return operations;
}

export interface Storm {
  account: BankAccount;
  key: string;
  answers: Answer[];
}

/** 100 concurrent transfers with one idempotency key. */
export async function idempotencyStorm(account: BankAccount, any: () => ApiClient): Promise<Storm> {
  const key = randomUUID();
  const request = account.api.transferRequest({ pixKey: OUTSIDE_OK, payment: { currency: 'BRL', amount: 0.01 } }, key);
  const answers = await Promise.all(Array.from({ length: 100 }, () => call(any(), request)));
  return { account, key, answers };
}

/** Logs how many requests got each status first. */
export function logFirstAnswers(bank: Bank): void {
  const firstAnswers = new Map<string, number>();
  for (const e of [...bank.transfers, ...bank.refunds]) {
    const a = e.answers[0]!;
    const label = a.status === null ? 'no answer' : String(a.status);
    firstAnswers.set(label, (firstAnswers.get(label) ?? 0) + 1);
  }
  log(`first answers: ${JSON.stringify(Object.fromEntries([...firstAnswers].sort()))}`);
}

/**
 * Requests whose outcome is unknown (no answer, or 5xx) are sent again with the same idempotency
 * key or refund id, several at a time as the clients sent them, until they get a definite answer
 * (20 rounds at most). Resolves with how many were sent again.
 */
export async function resendUnknown(bank: Bank, any: () => ApiClient, clients: number): Promise<number> {
  let retried = 0;
  for (let round = 0; round < 20; round++) {
    const pending = [...bank.transfers, ...bank.refunds].filter((e) => !definite(e.answers.at(-1)));
    if (pending.length === 0) break;
    await Promise.all(
      Array.from({ length: clients }, async () => {
        for (let entry = pending.shift(); entry !== undefined; entry = pending.shift()) {
          retried++;
          entry.answers.push(await call(any(), entry.request));
        }
      }),
    );
    await sleep(500);
  }
  return retried;
}

/** Settles everything, then lets deliveries (and their retries) finish; resolves with the deliveries still pending. */
export async function quiesce(client: ApiClient, adminToken: string, url: string): Promise<number> {
  for (let i = 0; i < 20; i++) {
    const r = await call(client, client.operator(adminToken).settleRequest());
    const [q] = await query<{ n: number }>(url, 'select count(*)::int as n from settlement_queue');
    if (r.status === 200 && q!.n === 0) break;
    await sleep(500);
  }
  let pendingDeliveries = -1;
  for (let i = 0; i < 90; i++) {
    const [d] = await query<{ n: number }>(url, `select count(*)::int as n from webhook_deliveries where status = 'PENDING'`);
    pendingDeliveries = d!.n;
    if (pendingDeliveries === 0) break;
    await sleep(1000);
  }
  return pendingDeliveries;
}
