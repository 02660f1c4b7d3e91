import { sql, type ExpressionBuilder, type Selectable } from 'kysely';
import type { DbExecutor, Trx } from '../../db/client.ts';
import type { DB, WebhookEventType } from '../../db/schema.ts';

/** The event type of BCB's callbacks (`POST {webhookUrl}/pix`), whose deliveries name a pix_key_webhooks row. */
export const PIX_CALLBACK_EVENT = 'pix';
/** Pix Automático's callbacks (PUT /v2/webhookrec, /v2/webhookcobr): `POST {webhookUrl}/rec` and `/cobr`. */
export const REC_CALLBACK_EVENT = 'rec';
export const COBR_CALLBACK_EVENT = 'cobr';
/** BCB's callbacks: sent as they are (no envelope), over mutual TLS, each to its webhook's URL plus its sub-path. */
export const BCB_CALLBACK_EVENTS: ReadonlySet<string> = new Set([PIX_CALLBACK_EVENT, REC_CALLBACK_EVENT, COBR_CALLBACK_EVENT]);
export const isBcbCallback = (eventType: string | null): boolean => eventType !== null && BCB_CALLBACK_EVENTS.has(eventType);

/** Serialises the registrations of one account, so the 3-URL and 20-registration limits hold under concurrency. */
export async function lockAccount(trx: Trx, accountId: bigint): Promise<boolean> {
  const row = await trx.selectFrom('accounts').select('id').where('id', '=', accountId).forUpdate().executeTakeFirst();
  return row !== undefined;
}

/** The account's own registrations: not those a listener (`pix-api listen`) made for itself. */
const own = (db: DbExecutor) => db.selectFrom('webhooks').where('listener_id', 'is', null);

export function findByUrl(db: DbExecutor, accountId: bigint, eventType: WebhookEventType, url: string) {
  return own(db).selectAll().where('account_id', '=', accountId).where('event_type', '=', eventType).where('url', '=', url).executeTakeFirst();
}

export function findById(db: DbExecutor, accountId: bigint, id: bigint) {
  return own(db).selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
}

export type WebhookRow = NonNullable<Awaited<ReturnType<typeof findById>>>;

export async function countActive(db: DbExecutor, accountId: bigint, eventType: WebhookEventType): Promise<number> {
  const row = await own(db)
    .select(sql<number>`count(*)::int4`.as('n'))
    .where('account_id', '=', accountId)
    .where('event_type', '=', eventType)
    .where('is_active', '=', true)
    .executeTakeFirstOrThrow();
  return row.n;
}

export async function countAll(db: DbExecutor, accountId: bigint): Promise<number> {
  const row = await own(db).select(sql<number>`count(*)::int4`.as('n')).where('account_id', '=', accountId).executeTakeFirstOrThrow();
  return row.n;
}

/** The account's destination for a receiving origin, made on its first registration there. */
export async function ensureDestination(trx: Trx, accountId: bigint, origin: string, now: Date): Promise<bigint> {
  const row = await trx
    .insertInto('webhook_destinations')
    .values({ account_id: accountId, origin, created_at: now })
    .onConflict((oc) => oc.columns(['account_id', 'origin']).doUpdateSet({ origin }))
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export function insertWebhook(
  trx: Trx,
  w: { accountId: bigint; eventType: WebhookEventType; url: string; destinationId: bigint; headers: Record<string, string>; now: Date },
) {
  return trx
    .insertInto('webhooks')
    .values({
      account_id: w.accountId,
      event_type: w.eventType,
      url: w.url,
      destination_id: w.destinationId,
      headers: JSON.stringify(w.headers),
      created_at: w.now,
      updated_at: w.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function updateWebhook(trx: Trx, id: bigint, change: { headers?: Record<string, string>; isActive?: boolean; bumpVersion: boolean; now: Date }) {
  return trx
    .updateTable('webhooks')
    .set((eb) => ({
      ...(change.headers !== undefined ? { headers: JSON.stringify(change.headers) } : {}),
      ...(change.isActive !== undefined ? { is_active: change.isActive } : {}),
      ...(change.bumpVersion ? { version: eb('version', '+', 1) } : {}),
      updated_at: change.now,
    }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Removes a registration; its pending deliveries end as FAILED and keep their log. */
export async function deleteWebhook(trx: Trx, id: bigint): Promise<void> {
  // Deliveries of BCB's callbacks name a webhook per key (pix_key_webhooks) in webhook_id: not this one.
  const ours = (eb: ExpressionBuilder<DB, 'webhook_deliveries'>) => eb.or([eb('event_type', 'is', null), eb('event_type', 'not in', [...BCB_CALLBACK_EVENTS])]);
  await trx.updateTable('webhook_deliveries').set({ status: 'FAILED' }).where('webhook_id', '=', id).where('status', '=', 'PENDING').where(ours).execute();
  await trx.updateTable('webhook_deliveries').set({ webhook_id: null }).where('webhook_id', '=', id).where(ours).execute();
  await trx.deleteFrom('webhooks').where('id', '=', id).execute();
}

export function listWebhooks(db: DbExecutor, accountId: bigint) {
  return own(db).selectAll().where('account_id', '=', accountId).orderBy('event_type').orderBy('id').execute();
}

export function activeUrls(db: DbExecutor, accountId: bigint, eventType: string) {
  return db
    .selectFrom('webhooks')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('event_type', '=', eventType as WebhookEventType)
    .where('is_active', '=', true)
    .orderBy('id')
    .execute();
}

export function accountSecrets(db: DbExecutor, accountId: bigint) {
  return db
    .selectFrom('accounts')
    .select(['webhook_secret', 'webhook_secret_previous', 'webhook_secret_rotated_at'])
    .where('id', '=', accountId)
    .executeTakeFirst();
}

export function rotateSecret(db: DbExecutor, accountId: bigint, secret: string, now: Date) {
  return db
    .updateTable('accounts')
    .set((eb) => ({ webhook_secret_previous: eb.ref('webhook_secret'), webhook_secret: secret, webhook_secret_rotated_at: now }))
    .where('id', '=', accountId)
    .returning('webhook_secret')
    .executeTakeFirst();
}

/** The latest notification of a transaction for an event type, to resend. */
export function latestNotification(db: DbExecutor, accountId: bigint, transactionId: bigint, eventType: string) {
  return db
    .selectFrom('outbox')
    .select(['id', 'payload', 'message_id', 'event_type'])
    .where('account_id', '=', accountId)
    .where('transaction_id', '=', transactionId)
    .where('event_type', '=', eventType)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export interface LogFilter {
  eventType?: string | undefined;
  transactionId?: bigint | undefined;
  success?: boolean | undefined;
  from: Date;
  /** Exclusive. */
  to: Date;
}

/**
 * A page of the account's attempts of the interval, newest first, and how many match, in one
 * statement (one connection, one round trip): a range of the index (account_id, created_at).
 */
export async function listLogs(db: DbExecutor, accountId: bigint, filter: LogFilter, page: number, size: number) {
  let query = db.selectFrom('webhook_logs').where('account_id', '=', accountId).where('created_at', '>=', filter.from).where('created_at', '<', filter.to);
  if (filter.eventType !== undefined) query = query.where('event_type', '=', filter.eventType);
  if (filter.transactionId !== undefined) query = query.where('transaction_id', '=', filter.transactionId);
  if (filter.success !== undefined) query = query.where('success', '=', filter.success);
  const rows = query
    .selectAll()
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(size)
    .offset((page - 1) * size);
  const counted = query.select(sql<number>`count(*)::int4`.as('n'));
  const result = await sql<LogRow & { n: number }>`
    with page as (${rows}), counted as (${counted})
    select page.*, counted.n from counted left join page on true
     order by page.created_at desc, page.id desc`.execute(db);
  return {
    rows: result.rows.filter((r) => r.id !== null).map(({ n: _n, ...row }): LogRow => row),
    total: result.rows[0]?.n ?? 0,
  };
}

type LogRow = Selectable<DB['webhook_logs']>;

export function insertLog(
  db: DbExecutor,
  entry: {
    accountId: bigint;
    transactionId: bigint | null;
    eventType: string;
    url: string;
    messageId: string;
    statusCode: number | null;
    success: boolean;
    durationMs: number;
    error: string | null;
    at: Date;
    signedAt?: Date | undefined;
  },
) {
  return db
    .insertInto('webhook_logs')
    .values({
      account_id: entry.accountId,
      delivery_id: null,
      transaction_id: entry.transactionId,
      event_type: entry.eventType,
      url: entry.url,
      message_id: entry.messageId,
      attempt: 1,
      status_code: entry.statusCode,
      success: entry.success,
      duration_ms: entry.durationMs,
      error: entry.error,
      is_resend: true,
      created_at: entry.at,
      signed_at: entry.signedAt ?? null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
}

/** The attempts (deliveries and resends) of some of an account's transactions, oldest first. */
export function logsOfTransactions(db: DbExecutor, accountId: bigint, transactionIds: readonly bigint[]) {
  if (transactionIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('webhook_logs')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('transaction_id', 'in', [...transactionIds])
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** Changes with every attempt and every new or changed registration (a small table: its rows are few per account). */
export const changeMarkers = [
  (db: DbExecutor) => db.selectFrom('webhook_logs').select((eb) => eb.fn.max('id').as('marker')),
  (db: DbExecutor) => db.selectFrom('webhooks').select((eb) => eb.fn.max('updated_at').as('marker')),
] as const;
