import { Webhook } from 'standardwebhooks';
import type { Db } from '../../db/client.ts';
import type { ListQueries } from '../../http/list-queries.ts';
import type { Clock } from '../../lib/clock.ts';
import { notificationsOf } from '../notifications/repo.ts';
import { interval, MAX_INTERVAL_DAYS } from '../transactions/service.ts';
import { notificationBody } from './delivery.ts';
import type { FailureClass } from './destination.ts';
import * as repo from './repo.ts';
import { signingSecrets } from './secrets.ts';
import { USER_AGENT } from './sender.ts';

/** The classes of failure an attempt without an answer records, as its error text begins. */
const FAILURE_CLASSES: readonly FailureClass[] = [
  'invalid destination',
  'non-public address',
  'port not allowed',
  'DNS failure',
  'connection refused',
  'connection failed',
  'TLS failure',
  'timeout',
];

/** What became of an attempt: delivered, the receiver's status, or the class of failure when no answer came. */
export function attemptOutcome(log: { success: boolean; status_code: number | null; error: string | null }): string {
  if (log.success) return 'delivered';
  if (log.status_code !== null) return `answered HTTP ${log.status_code}`;
  return FAILURE_CLASSES.find((c) => log.error?.startsWith(c)) ?? 'failed';
}

function signature(secrets: readonly string[], messageId: string, at: Date, body: string): string {
  return secrets.map((secret) => new Webhook(secret).sign(messageId, at, body)).join(' ');
}

/**
 * The secrets that signed at `at`: before the latest rotation, the one that was current then
 * (kept as the previous one); since, those that sign now. Older rotations are not kept.
 */
function secretsAt(account: Parameters<typeof signingSecrets>[0], at: Date): string[] {
  const rotated = account.webhook_secret_rotated_at;
  if (rotated !== null && at.getTime() < rotated.getTime() && account.webhook_secret_previous !== null) return [account.webhook_secret_previous];
  return signingSecrets(account, at);
}

export interface DeliveryDetailsDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly lists: ListQueries;
}

/**
 * An account's latest attempts (the last 31 days, newest first) as the operator inspects them:
 * each with the body its notification carried, the headers it went out with and its signature
 * (made again with the account's secrets of that moment: a rotation since changes it), and its
 * outcome. The answer's body is never kept (sender.ts), so it is not shown.
 */
export async function deliveryDetails(deps: DeliveryDetailsDeps, accountId: bigint, size: number) {
  const { from, to } = interval({}, deps.clock.now(), MAX_INTERVAL_DAYS);
  const { rows } = await deps.lists.run(accountId, (db) => repo.listLogs(db, accountId, { from, to }, 1, size));
  const transactionIds = [...new Set(rows.flatMap((r) => (r.transaction_id === null ? [] : [r.transaction_id])))];
  const [notifications, registrations, secrets] = await Promise.all([
    notificationsOf(deps.db, accountId, transactionIds),
    repo.listWebhooks(deps.db, accountId),
    repo.accountSecrets(deps.db, accountId),
  ]);
  const byMessage = new Map(notifications.map((n) => [n.message_id, n]));
  return rows.map((log) => {
    const notification = byMessage.get(log.message_id);
    // As deliveryMessage sends it: BCB's callback as it is, a root notification in its envelope.
    const body = notification ? notificationBody(log.event_type, notification.payload) : null;
    const registration = registrations.find((w) => w.url === log.url && w.event_type === log.event_type);
    // Signed at the real time it went (business time, created_at, may run ahead of it).
    const signedAt = log.signed_at ?? log.created_at;
    const headers: Record<string, string> = {
      ...(registration?.headers ?? {}),
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'webhook-id': log.message_id,
      'webhook-timestamp': Math.floor(signedAt.getTime() / 1000).toString(),
    };
    let verifies: boolean | null = null;
    if (body !== null && secrets) {
      headers['webhook-signature'] = signature(secretsAt(secrets, log.created_at), log.message_id, signedAt, body);
      // What a receiver holding the account's secret of today finds: the signature it checks is among those sent.
      verifies = headers['webhook-signature'].split(' ').includes(signature([secrets.webhook_secret], log.message_id, signedAt, body));
    }
    return { ...log, body, headers, verifies, outcome: attemptOutcome(log) };
  });
}

export type DeliveryDetail = Awaited<ReturnType<typeof deliveryDetails>>[number];
