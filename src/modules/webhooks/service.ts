import type { Db } from '../../db/client.ts';
import type { WebhookEventType } from '../../db/schema.ts';
import { AppError, badRequest, notFound } from '../../http/errors.ts';
import type { ListQueries } from '../../http/list-queries.ts';
import type { RateLimiter } from '../../http/rate-limit.ts';
import type { Clock } from '../../lib/clock.ts';
import { findByIdentifier } from '../transactions/repo.ts';
import { interval, MAX_INTERVAL_DAYS, pageMetadata } from '../transactions/service.ts';
import { notificationBody } from './delivery.ts';
import { checkResolvedDestination, DestinationError, destinationOrigin, parseDestination, type DestinationPolicy } from './destination.ts';
import { automaticoCallbackToResend } from './automatico.ts';
import { callbackToResend, callbackUrl } from './pix-callbacks.ts';
import * as repo from './repo.ts';
import { newWebhookSecret, signingSecrets } from './secrets.ts';
import type { WebhookSender } from './sender.ts';

export interface WebhooksDeps {
  readonly db: Db;
  readonly clock: Clock;
  /** Real time, for the resend limit (`clock` when absent). */
  readonly realClock?: Clock;
  readonly sender: WebhookSender;
  /** Which destinations webhooks may go to (WEBHOOK_ALLOW_PRIVATE, WEBHOOK_ALLOWED_PORTS, PIX_MODE). */
  readonly policy: DestinationPolicy;
  /** POST /api/resend-webhook: 60 per minute per account, shared through Redis when configured. */
  readonly resendLimiter: RateLimiter;
  /** The account lists' connections and limits (GET /api/webhooks/logs). */
  readonly lists: ListQueries;
}

export const MAX_ACTIVE_PER_EVENT = 3;
/** Registrations per account, active or not (decisions.md). */
export const MAX_REGISTRATIONS = 20;
export const MAX_HEADERS = 5;
export const RESEND_LIMIT_PER_MINUTE = 60;

/** Header names a registration may not set: the spec's list, hop-by-hop ones and webhook-*. */
const BLOCKED_HEADERS = new Set([
  'host',
  'content-length',
  'connection',
  'transfer-encoding',
  'content-type',
  'user-agent',
  'keep-alive',
  'upgrade',
  'expect',
  'te',
  'trailer',
  'proxy-connection',
]);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
const HEADER_VALUE = /^[\t\x20-\x7e]{0,1024}$/;

/** Transaction type -> the event type its notification goes out under. */
export const EVENT_OF_TYPE = { PAYMENT: 'cash_in', WITHDRAW: 'cash_out', REFUND_IN: 'refund_in', REFUND_OUT: 'refund_out' } as const;

export interface HeaderInput {
  key: string;
  value: string;
}

/** Headers as the spec gives them ([{key, value}]), or as the listing returns them ({name: value}). */
export type HeadersInput = readonly HeaderInput[] | Readonly<Record<string, string>>;

export function validHeaders(input: HeadersInput): Record<string, string> {
  const list: readonly HeaderInput[] = Array.isArray(input)
    ? (input as readonly HeaderInput[])
    : Object.entries(input as Record<string, string>).map(([key, value]) => ({ key, value }));
  if (list.length > MAX_HEADERS) throw badRequest('TOO_MANY_HEADERS', `headers must have at most ${MAX_HEADERS} items`);
  const out: Record<string, string> = {};
  const seen = new Set<string>();
  for (const [i, { key, value }] of list.entries()) {
    const lower = key.toLowerCase();
    if (!TOKEN.test(key)) throw badRequest('INVALID_HEADER', `headers/${i}/key is not a valid header name`);
    if (BLOCKED_HEADERS.has(lower) || lower.startsWith('webhook-')) {
      throw badRequest('BLOCKED_HEADER', `headers/${i}/key: the header ${key} cannot be set (reserved)`);
    }
    if (!HEADER_VALUE.test(value)) throw badRequest('INVALID_HEADER', `headers/${i}/value must be printable ASCII, at most 1024 characters`);
    if (seen.has(lower)) throw badRequest('DUPLICATE_HEADER', `headers/${i}/key: ${key} is given twice`);
    seen.add(lower);
    out[key] = value;
  }
  return out;
}

/**
 * A destination URL by the service's rules (HTTPS, ports, addresses), normalised; 400
 * INVALID_WEBHOOK_URL otherwise, about `field`, the request's name for the URL.
 */
export async function destination(raw: string, policy: DestinationPolicy, field = 'url'): Promise<string> {
  try {
    const url = parseDestination(raw, policy);
    await checkResolvedDestination(url, policy);
    return url.href;
  } catch (error) {
    if (error instanceof DestinationError) throw new AppError(400, 'INVALID_WEBHOOK_URL', error.message.replace(/^url\b/, field), { field });
    throw error;
  }
}

const tooManyRegistrations = () =>
  badRequest('TOO_MANY_WEBHOOKS', `at most ${MAX_REGISTRATIONS} registrations per account, active or not: delete one first`);

const tooMany = (eventType: string) =>
  badRequest('TOO_MANY_WEBHOOKS', `at most ${MAX_ACTIVE_PER_EVENT} active URLs per event type (${eventType}): switch one off or delete it first`);

export function registrationView(w: repo.WebhookRow) {
  return {
    id: Number(w.id),
    type: w.event_type,
    url: w.url,
    headers: w.headers,
    isActive: w.is_active,
    version: w.version,
    createdAt: w.created_at.toISOString(),
    updatedAt: w.updated_at.toISOString(),
  };
}

/** POST /api/webhooks: a new URL for an event type, or new headers (and version) for a known one. */
export async function register(deps: WebhooksDeps, accountId: bigint, input: { url: string; eventType: WebhookEventType; headers?: HeadersInput | undefined }) {
  const headers = validHeaders(input.headers ?? []);
  const url = await destination(input.url, deps.policy);
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    if (!(await repo.lockAccount(trx, accountId))) throw notFound('ACCOUNT_NOT_FOUND', 'Account not found');
    const existing = await repo.findByUrl(trx, accountId, input.eventType, url);
    if (existing) {
      if (!existing.is_active && (await repo.countActive(trx, accountId, input.eventType)) >= MAX_ACTIVE_PER_EVENT) throw tooMany(input.eventType);
      const updated = await repo.updateWebhook(trx, existing.id, { headers, isActive: true, bumpVersion: true, now });
      return { success: true, message: 'Webhook updated', id: Number(updated.id), version: updated.version };
    }
    if ((await repo.countAll(trx, accountId)) >= MAX_REGISTRATIONS) throw tooManyRegistrations();
    if ((await repo.countActive(trx, accountId, input.eventType)) >= MAX_ACTIVE_PER_EVENT) throw tooMany(input.eventType);
    const destinationId = await repo.ensureDestination(trx, accountId, destinationOrigin(url), now);
    const created = await repo.insertWebhook(trx, { accountId, eventType: input.eventType, url, destinationId, headers, now });
    return { success: true, message: 'Webhook registered', id: Number(created.id), version: created.version };
  });
}

export async function list(deps: WebhooksDeps, accountId: bigint) {
  const rows = await repo.listWebhooks(deps.db, accountId);
  return { accountId: Number(accountId), webhooks: rows.map(registrationView), total: rows.length };
}

const webhookNotFound = () => notFound('WEBHOOK_NOT_FOUND', 'Webhook not found');

/** PATCH /api/webhooks/{id}: switch on or off, or replace the headers (a new version). */
export async function update(deps: WebhooksDeps, accountId: bigint, id: bigint, change: { isActive?: boolean | undefined; headers?: HeadersInput | undefined }) {
  const headers = change.headers === undefined ? undefined : validHeaders(change.headers);
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    await repo.lockAccount(trx, accountId);
    const existing = await repo.findById(trx, accountId, id);
    if (!existing) throw webhookNotFound();
    if (change.isActive === true && !existing.is_active && (await repo.countActive(trx, accountId, existing.event_type)) >= MAX_ACTIVE_PER_EVENT) {
      throw tooMany(existing.event_type);
    }
    const updated = await repo.updateWebhook(trx, id, {
      ...(headers !== undefined ? { headers } : {}),
      ...(change.isActive !== undefined ? { isActive: change.isActive } : {}),
      bumpVersion: headers !== undefined,
      now,
    });
    return registrationView(updated);
  });
}

export async function remove(deps: WebhooksDeps, accountId: bigint, id: bigint): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    await repo.lockAccount(trx, accountId);
    if (!(await repo.findById(trx, accountId, id))) throw webhookNotFound();
    await repo.deleteWebhook(trx, id);
  });
}

export async function signingSecret(deps: WebhooksDeps, accountId: bigint) {
  const found = await repo.accountSecrets(deps.db, accountId);
  if (!found) throw notFound('ACCOUNT_NOT_FOUND', 'Account not found');
  return { secret: found.webhook_secret };
}

export async function rotateSigningSecret(deps: WebhooksDeps, accountId: bigint) {
  const rotated = await repo.rotateSecret(deps.db, accountId, newWebhookSecret(), deps.clock.now());
  if (!rotated) throw notFound('ACCOUNT_NOT_FOUND', 'Account not found');
  return { secret: rotated.webhook_secret };
}

export interface LogQuery {
  page?: number | undefined;
  size?: number | undefined;
  eventType?: string | undefined;
  transactionId?: string | undefined;
  success?: boolean | undefined;
  startDate?: string | undefined;
  endDate?: string | undefined;
}

/**
 * GET /api/webhooks/logs: the attempts of an interval of at most 31 days (the last 31 by
 * default), bounded and read like the transaction list.
 */
export async function logs(deps: WebhooksDeps, accountId: bigint, query: LogQuery) {
  const page = query.page ?? 1;
  const size = query.size ?? 20;
  const { from, to } = interval(query, deps.clock.now(), MAX_INTERVAL_DAYS);
  const filter = {
    eventType: query.eventType,
    transactionId: query.transactionId === undefined ? undefined : BigInt(query.transactionId),
    success: query.success,
    from,
    to,
  };
  const { rows, total } = await deps.lists.run(accountId, (db) => repo.listLogs(db, accountId, filter, page, size));
  return {
    data: rows.map((r) => ({
      webhookLogId: Number(r.id),
      eventType: r.event_type,
      transactionId: r.transaction_id === null ? null : Number(r.transaction_id),
      url: r.url,
      webhookId: r.message_id,
      attempt: r.attempt,
      statusCode: r.status_code,
      success: r.success,
      durationMs: r.duration_ms,
      error: r.error,
      isResend: r.is_resend,
      createdAt: r.created_at.toISOString(),
    })),
    metadata: pageMetadata(page, size, total),
  };
}

/** One delivery of a resend. */
interface ResendTarget {
  url: string;
  eventType: string;
  messageId: string;
  body: string;
  headers: Record<string, string>;
  mutualTls: boolean;
}

type Resendable = NonNullable<Awaited<ReturnType<typeof repo.latestNotification>>>;

/**
 * Where a resend goes: the root notification to the body's `url` or to every active URL of its
 * event type, then BCB's callback, if there is one, to `{url}/pix` or to its key's webhook.
 */
async function resendTargets(
  deps: WebhooksDeps,
  accountId: bigint,
  eventType: string,
  found: { notification: Resendable | undefined; callback: Awaited<ReturnType<typeof callbackToResend>> },
  once: string | undefined,
): Promise<ResendTarget[]> {
  const { notification, callback } = found;
  const roots = !notification
    ? []
    : (once !== undefined ? [{ url: once, headers: {} as Record<string, string> }] : await repo.activeUrls(deps.db, accountId, eventType)).map((w) => ({
        url: w.url,
        eventType,
        messageId: notification.message_id,
        body: notificationBody(eventType, notification.payload),
        headers: w.headers,
        mutualTls: false,
      }));
  if (!callback) return roots;
  const { notification: sent, webhookUrl } = callback;
  return [
    ...roots,
    {
      url: callbackUrl(once ?? webhookUrl),
      eventType: repo.PIX_CALLBACK_EVENT,
      messageId: sent.message_id,
      body: notificationBody(repo.PIX_CALLBACK_EVENT, sent.payload),
      headers: {},
      mutualTls: true,
    },
  ];
}

/** Sends one delivery of a resend and logs it (as a resend). */
async function deliverResend(deps: WebhooksDeps, accountId: bigint, transactionId: bigint | null, target: ResendTarget, secrets: readonly string[]) {
  const { url, messageId, body, headers } = target;
  const attempt = await deps.sender.send({ url, messageId, body, headers, secrets, ...(target.mutualTls ? { mutualTls: true } : {}) }, () => deps.clock.now());
  const log = await repo.insertLog(deps.db, {
    accountId,
    transactionId,
    eventType: target.eventType,
    url,
    messageId,
    statusCode: attempt.statusCode,
    success: attempt.success,
    durationMs: attempt.durationMs,
    error: attempt.error,
    at: attempt.sentAt,
    signedAt: attempt.signedAt,
  });
  return {
    url,
    webhookLogId: Number(log.id),
    sentAt: attempt.sentAt.toISOString(),
    statusCode: attempt.statusCode ?? 0,
    success: attempt.success,
    error: attempt.error,
  };
}

/**
 * POST /api/resend-webhook/{identifier}: the transaction's latest notification again, with its
 * own webhook-id, to the body's `url` (not stored) or to every active URL of its event type.
 * A received PIX whose key has a webhook per key (PUT /v2/webhook/{chave}) also has its latest
 * BCB callback resent, after those: the same `{"pix": [...]}` and webhook-id, over mutual TLS,
 * to `{webhookUrl}/pix`, or to `{url}/pix` when the body names a `url`.
 */
export async function resend(deps: WebhooksDeps, accountId: bigint, identifier: string, body: { url?: string | undefined }) {
  const decision = await deps.resendLimiter.hit(accountId.toString(), (deps.realClock ?? deps.clock).now().getTime());
  if (!decision.allowed) {
    throw new AppError(429, 'RATE_LIMITED', `At most ${RESEND_LIMIT_PER_MINUTE} resends per minute`, {
      headers: { 'retry-after': String(decision.retryAfterSeconds) },
    });
  }
  const transaction = await findByIdentifier(deps.db, accountId, identifier);
  if (!transaction) return resendAutomatico(deps, accountId, identifier, body);
  const eventType = EVENT_OF_TYPE[transaction.type];
  const notification = await repo.latestNotification(deps.db, accountId, transaction.id, eventType);
  const paid = transaction.type === 'PAYMENT';
  const callback = paid ? await callbackToResend(deps.db, accountId, transaction.id) : null;
  // A Pix that paid a recurring charge (its txid): the charge's latest callback too.
  const charge = paid && transaction.external_id !== null ? await automaticoCallbackToResend(deps.db, accountId, transaction.external_id, ['cobr']) : null;
  if (!notification && !callback && !charge) throw badRequest('NOTHING_TO_RESEND', 'This transaction has no notification yet (it is still pending)');
  const once = body.url !== undefined ? await destination(body.url, deps.policy) : undefined;
  const targets = await resendTargets(deps, accountId, eventType, { notification, callback }, once);
  const chargeTarget = charge ? automaticoTarget(charge, once) : null;
  if (chargeTarget) targets.push(chargeTarget);
  if (targets.length === 0) throw badRequest('NO_WEBHOOK_URL', `No active webhook URL for ${eventType} and no url in the body`);
  const secrets = signingSecrets((await repo.accountSecrets(deps.db, accountId))!, deps.clock.now());
  const deliveries = await Promise.all(targets.map((target) => deliverResend(deps, accountId, transaction.id, target, secrets)));
  return resendAnswer(targets, deliveries);
}

type AutomaticoResendable = NonNullable<Awaited<ReturnType<typeof automaticoCallbackToResend>>>;

/** A Pix Automático callback's resend: as it was sent, to `{webhookUrl}/rec` or `/cobr`, or under the body's `url`; none without either. */
function automaticoTarget(found: AutomaticoResendable, once: string | undefined): ResendTarget | null {
  const base = once ?? found.webhookUrl;
  if (base === null) return null;
  return {
    url: callbackUrl(base, found.kind),
    eventType: found.kind,
    messageId: found.notification.message_id,
    body: notificationBody(found.kind, found.notification.payload),
    headers: {},
    mutualTls: true,
  };
}

/**
 * A resend of Pix Automático's latest callback about a recurrence (by its idRec) or a recurring
 * charge (by its txid), for one no Pix has paid yet.
 */
async function resendAutomatico(deps: WebhooksDeps, accountId: bigint, identifier: string, body: { url?: string | undefined }) {
  const found = await automaticoCallbackToResend(deps.db, accountId, identifier);
  if (!found) throw notFound('TRANSACTION_NOT_FOUND', 'Transaction not found');
  const target = automaticoTarget(found, body.url !== undefined ? await destination(body.url, deps.policy) : undefined);
  if (!target) throw badRequest('NO_WEBHOOK_URL', `No webhook of ${found.kind} (PUT /v2/webhook${found.kind}) and no url in the body`);
  const secrets = signingSecrets((await repo.accountSecrets(deps.db, accountId))!, deps.clock.now());
  return resendAnswer([target], [await deliverResend(deps, accountId, null, target, secrets)]);
}

function resendAnswer(targets: readonly ResendTarget[], deliveries: Awaited<ReturnType<typeof deliverResend>>[]) {
  const first = deliveries[0]!;
  return {
    message: first.success ? 'Webhook resent' : `Webhook resend failed: ${first.error ?? 'no answer'}`,
    webhookLogId: first.webhookLogId,
    sentAt: first.sentAt,
    statusCode: first.statusCode,
    webhookId: targets[0]!.messageId,
    deliveries,
  };
}
