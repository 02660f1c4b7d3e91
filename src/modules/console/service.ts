import type { Config } from '../../config.ts';
import type { Db } from '../../db/client.ts';
import type { CertificateTrust } from '../../http/client-certificate.ts';
import { ListQueries } from '../../http/list-queries.ts';
import type { RateLimiter } from '../../http/rate-limit.ts';
import type { Clock } from '../../lib/clock.ts';
import { Lru } from '../../lib/lru.ts';
import { listAccounts, requireAccount } from '../accounts/service.ts';
import { brCodeDataUri, effectiveStatus, listChargesOf, type ChargeListDeps } from '../charges/service.ts';
import type { ChargeStatus, ChargeWithPayment } from '../charges/repo.ts';
import { cobvDueOn, saoPauloDay } from '../cobv/due.ts';
import type { SandboxControls } from '../controls/service.ts';
import { listAccountKeys } from '../directory/repo.ts';
import type { DirectoryLookups } from '../directory/lookups.ts';
import { holderBalances, holdersBalances } from '../ledger/repo.ts';
import { listAccountMeds, type MedDeps } from '../meds/service.ts';
import type { PayerConnections } from '../payer/fetch.ts';
import { signingRootsOf, type PayerDeps } from '../payer/service.ts';
import type { RefundsDeps } from '../refunds/service.ts';
import type { SandboxDeps } from '../sandbox/service.ts';
import { TransferBatcher } from '../transfers/batcher.ts';
import type { TransfersDeps } from '../transfers/service.ts';
import type { DestinationPolicy } from '../webhooks/destination.ts';
import { deliveryDetails } from '../webhooks/log-details.ts';
import { callbackUrl } from '../webhooks/pix-callbacks.ts';
import { listKeyWebhooks } from '../webhooks/pix-key-repo.ts';
import type { WebhookSender } from '../webhooks/sender.ts';
import { list as listWebhooks, type WebhooksDeps } from '../webhooks/service.ts';
import { transactionsWithTimelines } from './timeline.ts';
import { networkDeps, type NetworkDeps } from '../recurrences/network.ts';
import { detailsOf, selectRecurrences, selectRecurringCharges } from '../recurrences/rows.ts';
import { recurrenceCode } from '../recurrences/service.ts';
import { listAuthorizations, listPayerCharges, type PayerSideDeps } from '../recurrences/payer.ts';
import type { SandboxReceiverDeps } from '../recurrences/sandbox-receiver.ts';

/** What the console is built from: the app's dependencies and the services its routes share. */
export interface ConsoleDeps {
  readonly config: Config;
  readonly db: Db;
  readonly listDb?: Db | undefined;
  readonly clock: Clock;
  /** Real time, for the limits on wrong admin tokens and on resends (`clock` when absent). */
  readonly realClock?: Clock | undefined;
  readonly wakeWorker?: (() => void) | undefined;
  readonly lookups: DirectoryLookups;
  readonly resendSender: WebhookSender;
  readonly policy: DestinationPolicy;
  readonly resendLimiter: RateLimiter;
  /** Wrong admin tokens per source: the sign-in form counts against the same limit as the bearer token. */
  readonly adminFailures: RateLimiter;
  readonly trust: CertificateTrust;
  /** The test clock, faults and inbox (sandbox mode; absent in a process built without them). */
  readonly controls?: SandboxControls | undefined;
}

/** Each module's dependencies, as the console calls its services: the same ones its routes call. */
export interface ConsoleContext {
  readonly config: Config;
  readonly db: Db;
  readonly clock: Clock;
  readonly realClock: Clock;
  readonly lists: ListQueries;
  readonly sandbox: SandboxDeps;
  readonly payer: PayerDeps;
  readonly charges: ChargeListDeps;
  readonly transfers: TransfersDeps;
  readonly refunds: RefundsDeps;
  readonly meds: MedDeps;
  readonly webhooks: WebhooksDeps;
  /** The test clock, faults and inbox, when this process has them. */
  readonly controls: SandboxControls | undefined;
  /** Wakes this process's worker: what a clock advance made due runs at once. */
  readonly wakeWorker: () => void;
  /** QR images (data: URLs) by account, txid and BR Code: a live page is drawn again often. */
  readonly qrCodes: Lru<string, string>;
  /** Pix Automático's network steps: the clock's advances run them, the payer's answers take them. */
  readonly automatico: NetworkDeps;
  /** Pix Automático as the account holder's payer PSP: its authorizations and the recurring charges it pays. */
  readonly payerSide: PayerSideDeps;
  /** The sandbox as another institution's receiver of Pix Automático, asking and charging the account holders. */
  readonly sandboxReceiver: SandboxReceiverDeps;
}

/** Rows a console list shows at most: the newest. */
export const CONSOLE_ROWS = 50;
export const CONSOLE_CHARGES = 20;
const DAY_MS = 86_400_000;

export function consoleContext(deps: ConsoleDeps, connections: PayerConnections): ConsoleContext {
  const { config, db, clock } = deps;
  const ispb = config.pspIspb;
  const wake = deps.wakeWorker ? { onHighPriority: deps.wakeWorker } : {};
  // Lists of its own: a console on an account never takes that account's list slots.
  const lists = new ListQueries(deps.listDb ?? db, { perAccount: 2, queueTimeoutMs: 5_000 });
  const sandbox: SandboxDeps = { db, clock, ispb, settlementDelayMs: config.settlementDelayMs };
  const realClock = deps.realClock ?? clock;
  return {
    config,
    db,
    clock,
    realClock,
    lists,
    sandbox,
    payer: { ...sandbox, publicUrl: config.publicUrl, connections, signingRoots: signingRootsOf(config.qrSigning) },
    charges: { db, clock, ispb, publicUrl: config.publicUrl, lists },
    transfers: { db, clock, ispb, batcher: new TransferBatcher(db), lookups: deps.lookups, ...wake },
    refunds: { db, clock, ispb, ...wake },
    meds: { db, clock, ispb, ...wake },
    webhooks: { db, clock, realClock, sender: deps.resendSender, policy: deps.policy, resendLimiter: deps.resendLimiter, lists },
    controls: deps.controls,
    wakeWorker: () => deps.wakeWorker?.(),
    qrCodes: new Lru(256),
    automatico: networkDeps({ config, db, clock, controls: deps.controls }),
    payerSide: { db, clock, ispb, publicUrl: config.publicUrl, lists },
    sandboxReceiver: { db, clock, ispb, windowDays: config.automaticoWindowDays, lists },
  };
}

/** An account's Pix Automático as its receiver: recurrences (with the code of one a payer may still approve), solicitations, recurring charges with their attempts. */
export async function automaticoOf(ctx: ConsoleContext, accountId: bigint) {
  const [recs, solicitations, charges] = await Promise.all([
    selectRecurrences(ctx.db).where('recurrences.account_id', '=', accountId).orderBy('recurrences.created_at', 'desc').orderBy('recurrences.id', 'desc').limit(CONSOLE_CHARGES).execute(),
    ctx.db
      .selectFrom('rec_solicitations')
      .innerJoin('recurrences', 'recurrences.id', 'rec_solicitations.recurrence_id')
      .selectAll('rec_solicitations')
      .select('recurrences.id_rec')
      .where('rec_solicitations.account_id', '=', accountId)
      .orderBy('rec_solicitations.created_at', 'desc')
      .orderBy('rec_solicitations.id', 'desc')
      .limit(CONSOLE_CHARGES)
      .execute(),
    selectRecurringCharges(ctx.db).where('recurring_charges.account_id', '=', accountId).orderBy('recurring_charges.created_at', 'desc').orderBy('recurring_charges.id', 'desc').limit(CONSOLE_CHARGES).execute(),
  ]);
  const withCodes = await Promise.all(
    recs.map(async (row) => ({ row, code: row.status === 'CRIADA' ? await recurrenceCode({ db: ctx.db, publicUrl: ctx.config.publicUrl }, row) : undefined })),
  );
  return { recs: withCodes, solicitations, charges: await detailsOf(ctx.db, charges), ispb: ctx.config.pspIspb };
}

export type AutomaticoItems = Awaited<ReturnType<typeof automaticoOf>>;

/** An account's Pix Automático as its payer: the authorizations asked of it or held by it, and the recurring charges it pays, as its API shows them. */
export async function payerAutomaticoOf(ctx: ConsoleContext, accountId: bigint) {
  // One list at a time, as the console's lists run.
  const authorizations = await listAuthorizations(ctx.payerSide, accountId, { size: CONSOLE_CHARGES });
  const charges = await listPayerCharges(ctx.payerSide, accountId, { size: CONSOLE_CHARGES });
  return { accountId, authorizations: authorizations.data, charges: charges.data, ispb: ctx.config.pspIspb };
}

export type PayerAutomaticoItems = Awaited<ReturnType<typeof payerAutomaticoOf>>;

/** A page of every account with its balances. */
export async function accountsWithBalances(ctx: ConsoleContext, page: number) {
  const found = await listAccounts(ctx, page, CONSOLE_ROWS);
  const balances = await holdersBalances(ctx.db, found.rows.map((r) => r.id));
  const zero = { available: 0n, blocked: 0n };
  return { ...found, rows: found.rows.map((r) => ({ ...r, balances: balances.get(r.id) ?? zero })) };
}

export type AccountRow = Awaited<ReturnType<typeof accountsWithBalances>>['rows'][number];

/** One account, its balances and its keys (404 ACCOUNT_NOT_FOUND when there is none). */
export async function accountSummary(ctx: ConsoleContext, accountId: bigint) {
  const account = await requireAccount({ db: ctx.db, ispb: ctx.config.pspIspb, clock: ctx.clock }, accountId);
  const [balances, keys] = await Promise.all([holderBalances(ctx.db, accountId), listAccountKeys(ctx.db, accountId)]);
  return { account, balances: balances ?? { available: 0n, blocked: 0n }, keys };
}

export type AccountSummary = Awaited<ReturnType<typeof accountSummary>>;

export function transactionsOf(ctx: ConsoleContext, accountId: bigint) {
  return transactionsWithTimelines(ctx, accountId, CONSOLE_ROWS);
}

/** The QR image of the BR Code a charge's row holds (of either kind), as GET /cob/{txid}/qrcode draws it, made once per BR Code. */
async function qrImage(ctx: ConsoleContext, accountId: bigint, row: ChargeWithPayment): Promise<string> {
  const key = `${accountId}:${row.txid}:${row.br_code}`;
  let image = ctx.qrCodes.get(key);
  if (image === undefined) {
    image = await brCodeDataUri(row.br_code);
    ctx.qrCodes.set(key, image);
  }
  return image;
}

/** A due-date charge's days (YYYY-MM-DD, São Paulo) and what it asks today, when it can still be paid. */
export interface ChargeDue {
  readonly dueDate: string;
  readonly lastPayableDay: string;
  /** With its fine, interest, discount and rebate of today; null once it can no longer be paid. */
  readonly todayCentavos: bigint | null;
}

function dueOf(row: ChargeWithPayment, status: ChargeStatus, now: Date): ChargeDue | null {
  if (row.tipo_cob !== 'cobv' || row.due_date === null) return null;
  const today = cobvDueOn(row, saoPauloDay(now));
  return { dueDate: row.due_date, lastPayableDay: today.ultimoDiaPagavel, todayCentavos: status === 'ATIVA' && today.payable ? today.finalCentavos : null };
}

/**
 * The account's newest charges of the last 31 days, immediate (cob) and due-date (cobv) alike,
 * with their status now, their QR image and, for a cobv, its due date and what it asks today.
 */
export async function chargesOf(ctx: ConsoleContext, accountId: bigint) {
  const now = ctx.clock.now();
  const query = { inicio: new Date(now.getTime() - 31 * DAY_MS + 1000).toISOString(), fim: now.toISOString(), 'paginacao.itensPorPagina': CONSOLE_CHARGES };
  // Each kind's newest (one list at a time, as the console's lists run), then the newest of both in the lists' own order.
  const both: ChargeWithPayment[] = [];
  for (const tipoCob of ['cob', 'cobv'] as const) both.push(...((await listChargesOf(ctx.charges, accountId, query, { tipoCob })).rows as ChargeWithPayment[]));
  const rows = both
    .sort((a, b) => b.created_at.getTime() - a.created_at.getTime() || (b.id > a.id ? 1 : b.id < a.id ? -1 : 0))
    .slice(0, CONSOLE_CHARGES);
  const charges = [];
  for (const row of rows) {
    const status = effectiveStatus(row, now);
    charges.push({ row, status, due: dueOf(row, status, now), qr: await qrImage(ctx, accountId, row) });
  }
  return charges;
}

export type ChargeItem = Awaited<ReturnType<typeof chargesOf>>[number];

export async function medsOf(ctx: ConsoleContext, accountId: bigint) {
  return (await listAccountMeds(ctx, accountId, { size: CONSOLE_ROWS })).data;
}

export type MedItem = Awaited<ReturnType<typeof medsOf>>[number];

/**
 * The account's webhooks: the root dialect's registrations (POST /api/webhooks), BCB's webhooks
 * per key (PUT /v2/webhook/{chave}) with the URL their callbacks go to, and the latest attempts of
 * both (one delivery log).
 */
export async function webhooksOf(ctx: ConsoleContext, accountId: bigint) {
  const [registrations, perKey, deliveries] = await Promise.all([
    listWebhooks(ctx.webhooks, accountId).then((found) => found.webhooks),
    // One row per key of the account at most: read directly, as the registrations are.
    listKeyWebhooks(ctx.db, accountId, {}, 0, CONSOLE_ROWS),
    deliveryDetails(ctx, accountId, CONSOLE_ROWS),
  ]);
  const keyWebhooks = perKey.rows.map((w) => ({ ...w, callbackUrl: callbackUrl(w.webhook_url) }));
  return { registrations, keyWebhooks, keyWebhooksTotal: perKey.total, deliveries };
}

/** The test clock now (business time and its offset), or null in a process without the sandbox's controls. */
export function clockOf(ctx: ConsoleContext): { now: Date; offsetMs: number } | null {
  if (!ctx.controls) return null;
  return { now: ctx.controls.clock.now(), offsetMs: ctx.controls.clock.offsetMs };
}

export function faultsOf(ctx: ConsoleContext) {
  return ctx.controls ? ctx.controls.listFaults() : Promise.resolve(null);
}

/** The inbox `name`: the URL a webhook registers for it, and its newest arrivals. */
export async function inboxOf(ctx: ConsoleContext, name: string) {
  if (!ctx.controls) return null;
  return { name, url: ctx.controls.inboxUrl(name), arrivals: await ctx.controls.listArrivals(name, CONSOLE_ROWS) };
}
