import { randomBytes } from 'node:crypto';
import type { Db, Trx } from '../../db/client.ts';
import { AppError, badRequest, notFound } from '../../http/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { deleteAutomaticoWebhook, findAutomaticoWebhook, putAutomaticoWebhook, type AutomaticoKind } from './automatico.ts';
import { destinationOrigin, LISTEN_PATH, type DestinationPolicy } from './destination.ts';
import { WEBHOOK_EVENT_TYPES } from './event-types.ts';
import { findKeyWebhook } from './pix-key-repo.ts';
import { deleteKeyWebhook, putKeyWebhook } from './pix-keys.ts';
import { deleteWebhook, ensureDestination, lockAccount } from './repo.ts';
import type { ClientCertificate } from './sender.ts';
import { DELIVERY_TIMEOUT_MS } from './sender.ts';

/**
 * `pix-api listen` (sandbox): a listener takes an account's deliveries to a developer's machine,
 * which opens no port. The service delivers to `{PUBLIC_URL}/sandbox/listen/{id}` as to any
 * receiver (signed, with BCB's callbacks over mutual TLS where the listener is reached by
 * HTTPS); what arrives waits in `webhook_forwards` until the listener takes it (a long poll),
 * forwards it to its local URL and tells what that answered, which is the delivery's answer.
 * When no listener asks, or none answers in time, the delivery fails like any other and stays
 * in its retry schedule. The database is where processes meet: the one a delivery arrives at
 * need not be the one the listener asks.
 */

/** The kinds a listener takes: the root's events, and BCB's callbacks. */
export const LISTEN_KINDS = ['events', 'pix', 'rec', 'cobr'] as const;
export type ListenKind = (typeof LISTEN_KINDS)[number];

/** A listener that has not asked for this long is not there: what arrives is answered 503 at once. */
export const LISTENER_ABSENT_MS = 15_000;
/** What arrives waits for the listener's answer this long, within the sender's time limit. */
const ANSWER_WAIT_MS = DELIVERY_TIMEOUT_MS - 1_000;
/** How often a waiting arrival and a waiting poll look again. */
const POLL_MS = 50;
/** A poll waits for arrivals at most this long. */
export const MAX_POLL_WAIT_MS = 25_000;
/** Arrivals handed over per poll, at most. */
const TAKE = 20;
/** Listeners per account. */
const MAX_LISTENERS = 5;

export interface ListenersDeps {
  readonly db: Db;
  /** Business time: registrations are stamped with it. */
  readonly clock: Clock;
  /** Real time: whether a listener is there, how long things wait. */
  readonly realClock: Clock;
  readonly policy: DestinationPolicy;
  readonly publicUrl: string;
  readonly clientCertificate: () => Promise<ClientCertificate | null>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const listenerUrl = (deps: Pick<ListenersDeps, 'publicUrl'>, id: string) => `${deps.publicUrl}${LISTEN_PATH}/${id}`;
const notConnected = () => new AppError(503, 'LISTENER_NOT_CONNECTED', `The listener is not connected: no pix-api listen asked for deliveries in the last ${LISTENER_ABSENT_MS / 1000} s`);
const noListener = () => notFound('LISTENER_NOT_FOUND', 'No such listener (stopped, or never started)');

export interface AttachInput {
  accountId: bigint;
  name: string;
  kinds: readonly ListenKind[];
  /** Hands the listener the client certificate BCB's callbacks present, to present it to the local receiver. */
  mutualTls: boolean;
}

/**
 * Starts (or resumes, by name) an account's listener: a registration of its own for every root
 * event, and BCB's registrations (each key's webhook, the rec and cobr ones) moved to it, their
 * URLs kept to give back. Resuming the listener of a `listen` that was killed takes what waited
 * for it, and what its retry schedule brings again.
 */
export async function attach(deps: ListenersDeps, input: AttachInput) {
  const kinds = [...new Set(input.kinds)];
  if (kinds.length === 0) throw badRequest('INVALID_REQUEST', 'kinds: at least one of events, pix, rec, cobr');
  const now = deps.clock.now();
  const seen = deps.realClock.now();
  const listener = await deps.db.transaction().execute(async (trx) => {
    if (!(await lockAccount(trx, input.accountId))) throw notFound('ACCOUNT_NOT_FOUND', 'Account not found');
    const existing = await trx.selectFrom('webhook_listeners').selectAll().where('account_id', '=', input.accountId).where('name', '=', input.name).executeTakeFirst();
    if (existing) {
      return trx
        .updateTable('webhook_listeners')
        .set({ kinds: [...new Set([...existing.kinds, ...kinds])], seen_at: seen })
        .where('id', '=', existing.id)
        .returningAll()
        .executeTakeFirstOrThrow();
    }
    const count = await trx.selectFrom('webhook_listeners').select((eb) => eb.fn.countAll<string>().as('n')).where('account_id', '=', input.accountId).executeTakeFirstOrThrow();
    if (Number(count.n) >= MAX_LISTENERS) throw new AppError(422, 'TOO_MANY_LISTENERS', `An account has at most ${MAX_LISTENERS} listeners: stop one first`);
    return trx
      .insertInto('webhook_listeners')
      .values({ id: randomBytes(16).toString('base64url'), account_id: input.accountId, name: input.name, kinds, replaced: '[]', created_at: now, seen_at: seen })
      .returningAll()
      .executeTakeFirstOrThrow();
  });
  const url = listenerUrl(deps, listener.id);
  if (kinds.includes('events')) await registerEvents(deps, listener.id, input.accountId, url);
  const replaced = [...listener.replaced];
  if (kinds.includes('pix')) {
    const keys = await deps.db.selectFrom('dict_keys').select('key').where('account_id', '=', input.accountId).orderBy('key').execute();
    for (const { key } of keys) {
      if (replaced.some((r) => r.kind === 'pix' && r.chave === key)) continue;
      const before = await findKeyWebhook(deps.db, input.accountId, key);
      if (before?.webhook_url === url) continue;
      replaced.push({ kind: 'pix', chave: key, url: before?.webhook_url ?? null });
      await putKeyWebhook(deps, input.accountId, key, url);
    }
  }
  for (const kind of ['rec', 'cobr'] as const) {
    if (!kinds.includes(kind) || replaced.some((r) => r.kind === kind)) continue;
    const before = await findAutomaticoWebhook(deps.db, input.accountId, kind);
    replaced.push({ kind, url: before?.webhook_url ?? null });
    await putAutomaticoWebhook(deps, input.accountId, kind, url);
  }
  await deps.db.updateTable('webhook_listeners').set({ replaced: JSON.stringify(replaced) }).where('id', '=', listener.id).execute();
  const certificate = input.mutualTls ? await deps.clientCertificate() : null;
  return { id: listener.id, name: listener.name, url, kinds: listener.kinds, replaced, clientCertificate: certificate };
}

/** A registration of the listener's own for each root event not yet registered to it. */
async function registerEvents(deps: ListenersDeps, listenerId: string, accountId: bigint, url: string) {
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const destinationId = await ensureDestination(trx, accountId, destinationOrigin(url), now);
    const have = new Set((await trx.selectFrom('webhooks').select('event_type').where('listener_id', '=', listenerId).execute()).map((r) => r.event_type));
    const rows = WEBHOOK_EVENT_TYPES.filter((t) => !have.has(t)).map((eventType) => ({
      account_id: accountId,
      event_type: eventType,
      url,
      destination_id: destinationId,
      headers: '{}',
      created_at: now,
      updated_at: now,
      listener_id: listenerId,
    }));
    if (rows.length > 0) await trx.insertInto('webhooks').values(rows).execute();
  });
}

/** A listener by its id; the sandbox's routes may name any account's. */
export async function findListener(db: Db | Trx, id: string) {
  const found = await db.selectFrom('webhook_listeners').selectAll().where('id', '=', id).executeTakeFirst();
  if (!found) throw noListener();
  return found;
}

/**
 * Stops a listener: its registrations go (their deliveries still to make end as FAILED, as a
 * removed registration's do), BCB's registrations it moved go back to their URLs (or away, where
 * there was none), and what waited for it is dropped.
 */
export async function detach(deps: ListenersDeps, id: string): Promise<void> {
  const listener = await findListener(deps.db, id);
  const accountId = listener.account_id;
  const url = listenerUrl(deps, id);
  for (const r of listener.replaced) {
    if (r.kind === 'pix') {
      const now = await findKeyWebhook(deps.db, accountId, r.chave!);
      if (now?.webhook_url !== url) continue;
      if (r.url) await putKeyWebhook(deps, accountId, r.chave!, r.url);
      else await deleteKeyWebhook(deps, accountId, r.chave!);
    } else {
      const kind: AutomaticoKind = r.kind;
      const now = await findAutomaticoWebhook(deps.db, accountId, kind);
      if (now?.webhook_url !== url) continue;
      if (r.url) await putAutomaticoWebhook(deps, accountId, kind, r.url);
      else await deleteAutomaticoWebhook(deps, accountId, kind);
    }
  }
  await deps.db.transaction().execute(async (trx) => {
    await lockAccount(trx, accountId);
    const own = await trx.selectFrom('webhooks').select('id').where('listener_id', '=', id).execute();
    for (const w of own) await deleteWebhook(trx, w.id);
    await trx.deleteFrom('webhook_listeners').where('id', '=', id).execute();
  });
}

/** An account's listeners, with whether each is there now. */
export async function listListeners(deps: ListenersDeps, accountId: bigint) {
  const rows = await deps.db.selectFrom('webhook_listeners').selectAll().where('account_id', '=', accountId).orderBy('created_at').execute();
  const now = deps.realClock.now().getTime();
  return rows.map((l) => ({
    id: l.id,
    name: l.name,
    url: listenerUrl(deps, l.id),
    kinds: l.kinds,
    connected: now - l.seen_at.getTime() < LISTENER_ABSENT_MS,
    seenAt: l.seen_at.toISOString(),
    createdAt: l.created_at.toISOString(),
  }));
}

export interface Arrival {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * A delivery arriving at a listener: handed to it and answered with what its local receiver
 * answered. 404 for no such listener, 503 at once when it is not there, 504 when it took it and
 * gave no answer in time (the seed's error body): each a failed attempt, retried on its schedule.
 */
export async function arrive(deps: ListenersDeps, id: string, arrival: Arrival): Promise<{ status: number; error: string | null }> {
  const listener = await deps.db.selectFrom('webhook_listeners').select(['id', 'seen_at']).where('id', '=', id).executeTakeFirst();
  if (!listener) throw noListener();
  const started = deps.realClock.now().getTime();
  if (started - listener.seen_at.getTime() >= LISTENER_ABSENT_MS) throw notConnected();
  const row = await deps.db
    .insertInto('webhook_forwards')
    .values({ listener_id: id, path: arrival.path, headers: JSON.stringify(arrival.headers), body: arrival.body, received_at: new Date(started) })
    .returning('id')
    .executeTakeFirstOrThrow();
  while (deps.realClock.now().getTime() - started < ANSWER_WAIT_MS) {
    await sleep(POLL_MS);
    const answer = await deps.db.selectFrom('webhook_forwards').select(['status', 'error', 'answered_at']).where('id', '=', row.id).executeTakeFirst();
    if (!answer) throw notConnected();
    if (answer.answered_at) {
      await deps.db.deleteFrom('webhook_forwards').where('id', '=', row.id).execute();
      return { status: answer.status ?? 502, error: answer.error };
    }
  }
  await deps.db.deleteFrom('webhook_forwards').where('id', '=', row.id).execute();
  throw new AppError(504, 'LISTENER_NO_ANSWER', `The listener took the delivery and gave no answer within ${ANSWER_WAIT_MS} ms`);
}

/**
 * What arrived for the listener and was not handed over yet, oldest first; waits up to `waitMs`
 * for something to arrive. Asking is what keeps the listener there.
 */
export async function take(deps: ListenersDeps, id: string, waitMs: number) {
  const started = deps.realClock.now().getTime();
  for (;;) {
    const now = deps.realClock.now();
    const seen = await deps.db.updateTable('webhook_listeners').set({ seen_at: now }).where('id', '=', id).returning('id').executeTakeFirst();
    if (!seen) throw noListener();
    const taken = await deps.db
      .updateTable('webhook_forwards')
      .set({ taken_at: now })
      .where('id', 'in', (eb) =>
        eb.selectFrom('webhook_forwards').select('id').where('listener_id', '=', id).where('taken_at', 'is', null).orderBy('id').limit(TAKE),
      )
      .returning(['id', 'path', 'headers', 'body', 'received_at'])
      .execute();
    if (taken.length > 0 || now.getTime() - started >= waitMs) {
      return taken
        .sort((a, b) => Number(a.id - b.id))
        .map((f) => ({ id: Number(f.id), path: f.path, headers: f.headers, body: f.body, receivedAt: f.received_at.toISOString() }));
    }
    await sleep(Math.min(POLL_MS * 4, waitMs));
  }
}

/** The listener's answer to what it took: its local receiver's status, or why there was none. */
export async function answer(deps: ListenersDeps, id: string, forwardId: bigint, result: { status: number; durationMs: number; error?: string | undefined }) {
  await findListener(deps.db, id);
  const done = await deps.db
    .updateTable('webhook_forwards')
    .set({ status: result.status, duration_ms: result.durationMs, error: result.error ?? null, answered_at: deps.realClock.now() })
    .where('id', '=', forwardId)
    .where('listener_id', '=', id)
    .where('answered_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  if (!done) throw notFound('FORWARD_NOT_FOUND', 'Nothing waits for this answer: it was answered, or the delivery gave up waiting');
}
