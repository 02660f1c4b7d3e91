import { parseDecimal } from '../../lib/money.ts';
import type { MedDeps } from '../meds/service.ts';
import { listAccountMeds } from '../meds/service.ts';
import { notificationsOf } from '../notifications/repo.ts';
import { chargesPaidBy } from '../charges/repo.ts';
import { refundsOf } from '../refunds/repo.ts';
import type { TransactionRow } from '../transactions/repo.ts';
import { listForAccount } from '../transactions/service.ts';
import { attemptOutcome } from '../webhooks/log-details.ts';
import { logsOfTransactions } from '../webhooks/repo.ts';
import type { ListQueries } from '../../http/list-queries.ts';

/** One event in a transaction's life, as the console's timeline shows it. */
export interface TimelineEvent {
  readonly at: Date;
  readonly what: string;
  readonly tone: 'ok' | 'error' | 'info';
  /** An amount the event moved, in centavos (formatted by the view). */
  readonly amountCentavos?: bigint;
}

const CREATED: Record<TransactionRow['type'], string> = {
  PAYMENT: 'Received from the network',
  WITHDRAW: 'Transfer requested',
  REFUND_IN: 'Refund sent requested',
  REFUND_OUT: 'Refund received from the network',
};

type Context = Pick<MedDeps, 'db' | 'clock'> & { lists: ListQueries };
type Parts = Awaited<ReturnType<typeof timelineParts>>;

async function timelineParts(ctx: Context, accountId: bigint, ids: bigint[]) {
  // One after the other: the MED list runs within the console's list slots of the account.
  const meds = (await listAccountMeds(ctx, accountId, { size: 100 })).data;
  const [refunds, notifications, logs, charges] = await Promise.all([
    refundsOf(ctx.db, ids),
    notificationsOf(ctx.db, accountId, ids),
    logsOfTransactions(ctx.db, accountId, ids),
    chargesPaidBy(ctx.db, accountId, ids),
  ]);
  return { meds, refunds, notifications, logs, charges };
}

function ownEvents(t: TransactionRow): TimelineEvent[] {
  const events: TimelineEvent[] = [{ at: t.created_at, what: `${CREATED[t.type]} (${t.status})`, tone: 'info', amountCentavos: t.amount_centavos }];
  if (t.processed_at && t.status === 'CONFIRMED') events.push({ at: t.processed_at, what: 'Settled', tone: 'ok' });
  if (t.status === 'ERROR') events.push({ at: t.processed_at ?? t.updated_at, what: `Failed: ${t.error_reason ?? 'no reason given'}`, tone: 'error' });
  return events;
}

function relatedEvents(t: TransactionRow, parts: Parts): TimelineEvent[] {
  const events: TimelineEvent[] = [];
  // A received Pix names what it paid: a charge of the account, or a txid no charge has.
  const paid = parts.charges.find((c) => c.paid_transaction_id === t.id);
  if (paid) events.push({ at: t.created_at, what: `Paid the charge ${paid.txid} (${paid.tipo_cob})`, tone: 'ok' });
  else if (t.type === 'PAYMENT' && t.external_id) events.push({ at: t.created_at, what: `Carried the txid ${t.external_id} (no charge of the account has it)`, tone: 'info' });
  for (const r of parts.refunds.filter((x) => x.original_transaction_id === t.id)) {
    events.push({ at: r.requested_at, what: `Refund ${r.refund_id} requested (${r.natureza}, rtrId ${r.rtr_id})`, tone: 'info', amountCentavos: r.amount_centavos });
    if (r.status !== 'EM_PROCESSAMENTO') {
      events.push({ at: r.updated_at, what: `Refund ${r.refund_id} ${r.status}${r.motivo ? `: ${r.motivo}` : ''}`, tone: r.status === 'DEVOLVIDO' ? 'ok' : 'error' });
    }
  }
  for (const m of parts.meds.filter((x) => BigInt(x.transactionId) === t.id)) {
    events.push({ at: new Date(m.createdAt), what: `MED ${m.id} opened (${m.reason})`, tone: 'info', amountCentavos: parseDecimal(m.amount) ?? 0n });
    if (m.closedAt) events.push({ at: new Date(m.closedAt), what: `MED ${m.id} ${m.status}`, tone: m.status === 'ACCEPTED' ? 'ok' : 'info' });
  }
  for (const n of parts.notifications.filter((x) => x.transaction_id === t.id)) {
    events.push({ at: n.created_at, what: `Notification ${n.event_type} (webhook-id ${n.message_id})`, tone: 'info' });
  }
  for (const l of parts.logs.filter((x) => x.transaction_id === t.id)) {
    const outcome = attemptOutcome(l);
    const what = `${l.is_resend ? 'Resend' : `Delivery attempt ${l.attempt}`} of ${l.event_type} to ${l.url}: ${outcome}`;
    events.push({ at: l.created_at, what, tone: l.success ? 'ok' : 'error' });
  }
  return events;
}

/** Events sorted by time; those at the same instant keep the order of the story (created before settled). */
function sorted(events: TimelineEvent[]): TimelineEvent[] {
  return events.map((e, i) => ({ e, i })).sort((a, b) => a.e.at.getTime() - b.e.at.getTime() || a.i - b.i).map(({ e }) => e);
}

/**
 * The account's newest transactions (the last 31 days), each with its timeline: created,
 * settled or failed with its reason, its refunds, MEDs, notifications and their deliveries.
 */
export async function transactionsWithTimelines(ctx: Context, accountId: bigint, size: number) {
  const { rows, metadata } = await listForAccount(ctx, accountId, { size });
  const parts = await timelineParts(ctx, accountId, rows.map((r) => r.id));
  const transactions = rows.map((t) => ({ row: t, timeline: sorted([...ownEvents(t), ...relatedEvents(t, parts)]) }));
  return { transactions, total: metadata.total };
}

export type TransactionItem = Awaited<ReturnType<typeof transactionsWithTimelines>>['transactions'][number];

