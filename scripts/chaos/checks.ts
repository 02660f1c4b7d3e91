// The checks of npm run chaos: money conservation on snapshots while everything runs, then, at
// the end, every acknowledged answer reconciled against the database and every notification
// against what the local HTTPS receiver got. Each check prints one line, ok or FAIL.
import { Webhook } from 'standardwebhooks';
import type { WebhookReceiver } from '../../test/webhook-receiver.ts';
import { query } from '../lib/pg.ts';
import { sleep } from './common.ts';
import { definite, type Bank, type Storm } from './workload.ts';

export const failures: string[] = [];

export function check(ok: boolean, what: string): void {
  console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures.push(what);
}

/** Money that came in from outside less what left, in confirmed movements. */
const NET_IN = `(select coalesce(sum(case when type in ('PAYMENT', 'REFUND_OUT') then amount_centavos else -amount_centavos end), 0)
                   from transactions where counterpart_account_id is null and status = 'CONFIRMED')::text as net_in`;

/**
 * Every 2 s until `signal` aborts, in one snapshot: the ledger sums to zero, nothing is negative,
 * and the account holders hold what came in from outside less what left. Resolves with 'ok' or
 * what differed, one per snapshot taken (none while PostgreSQL restarts).
 */
export async function snapshots(url: string, signal: AbortSignal): Promise<string[]> {
  const taken: string[] = [];
  while (!signal.aborted) {
    await sleep(2000);
    try {
      const [s] = await query<{ total: string; negative: number; holders: string; net_in: string }>(
        url,
        `select (select sum(balance) from ledger_accounts)::text as total,
                (select count(*)::int from ledger_accounts where balance < 0 and not allow_negative) as negative,
                (select sum(balance) from ledger_accounts where account_id is not null)::text as holders,
                ${NET_IN}`,
      );
      const ok = s!.total === '0' && s!.negative === 0 && s!.holders === s!.net_in;
      taken.push(ok ? 'ok' : `total ${s!.total}, negative ${s!.negative}, holders ${s!.holders} vs net in ${s!.net_in}`);
    } catch {
      // PostgreSQL restarting
    }
  }
  return taken;
}

function checkRun(crashes: string[], taken: string[]): void {
  check(crashes.length === 0, `no process exited unless killed (${crashes.length})${crashes.length ? `: ${crashes[0]}` : ''}`);
  const bad = taken.filter((s) => s !== 'ok');
  check(taken.length > 0 && bad.length === 0, `${taken.length} snapshots during the run: ledger sums to 0, nothing negative, holders = money in - money out${bad.length ? ` (${bad[0]})` : ''}`);
}

async function checkLedger(url: string): Promise<void> {
  const [ledger] = await query<{ total: string; negative: number; mismatched: number }>(
    url,
    `select (select sum(balance) from ledger_accounts)::text as total,
            (select count(*)::int from ledger_accounts where balance < 0 and not allow_negative) as negative,
            (select count(*)::int from ledger_accounts a
              where a.balance <> coalesce((select sum(amount_centavos) from postings where credit_account_id = a.id), 0)
                               - coalesce((select sum(amount_centavos) from postings where debit_account_id = a.id), 0)) as mismatched`,
  );
  check(ledger!.total === '0', `sum of all balances is 0 (${ledger!.total})`);
  check(ledger!.negative === 0, `no negative balance (${ledger!.negative})`);
  check(ledger!.mismatched === 0, `every balance equals its postings (${ledger!.mismatched} differ)`);
  const [conservation] = await query<{ holders: string; net_in: string }>(
    url,
    `select (select sum(balance) from ledger_accounts where account_id is not null)::text as holders, ${NET_IN}`,
  );
  check(conservation!.holders === conservation!.net_in, `holders' money ${conservation!.holders} = what came in less what left ${conservation!.net_in}`);
  await checkDebitsInNetIn(url);
}

/**
 * The automatic debits of Pix Automático in that count: NET_IN takes a movement with no
 * counterpart account as money in or out. A debit to another institution's receiver has none and
 * counts as leaving: exactly what its posting paid to the network. One to a receiver here names
 * the receiver, and the receiver's credit names the payer: neither counts, as their posting moved
 * the money between two holders.
 */
async function checkDebitsInNetIn(url: string): Promise<void> {
  const [d] = await query<{ n: number; out_counted: string; out_posted: string; between_counted: string; between_posted: string; credits_counted: number }>(
    url,
    `with d as (select t.* from transactions t where t.id in (select debit_transaction_id from recurring_charge_attempts where debit_transaction_id is not null)),
          p as (select p.amount_centavos, c.account_id from d join postings p on p.reference = d.end_to_end_id and p.kind in ('transfer_settle', 'transfer_settle_internal')
                  join ledger_accounts c on c.id = p.credit_account_id)
     select (select count(*)::int from d) as n,
            (select coalesce(sum(amount_centavos), 0) from d where counterpart_account_id is null and status = 'CONFIRMED')::text as out_counted,
            (select coalesce(sum(amount_centavos), 0) from p where account_id is null)::text as out_posted,
            (select coalesce(sum(amount_centavos), 0) from d where counterpart_account_id is not null)::text as between_counted,
            (select coalesce(sum(amount_centavos), 0) from p where account_id is not null)::text as between_posted,
            (select count(*)::int from d join transactions r on r.end_to_end_id = d.end_to_end_id and r.type = 'PAYMENT' where r.counterpart_account_id is null) as credits_counted`,
  );
  check(
    d!.out_counted === d!.out_posted && d!.between_counted === d!.between_posted && d!.credits_counted === 0,
    `in it, ${d!.n} automatic debits: ${d!.out_counted} centavos to other institutions counted as leaving (posted to the network: ${d!.out_posted}), ` +
      `${d!.between_counted} between holders counted neither way (posted between them: ${d!.between_posted}; credits counted as coming in: ${d!.credits_counted})`,
  );
}

interface TransferRow {
  account_id: string;
  idempotency_key: string | null;
  n: number;
  status: string;
  amount: string;
  settles: number;
  receivers: number;
  /** Attempts of Pix Automático whose debit this is (recurring_charge_attempts.debit_transaction_id). */
  debit_attempts: number;
  /** Of those, PAGA with its end-to-end id. */
  paid_attempts: number;
}

/**
 * Every transfer (WITHDRAW) in the database: how many share its key, how often it settled, how
 * many received it, and whether it is an automatic debit of Pix Automático (the payer's PSP's, no
 * client asked for it) rather than a transfer.
 */
function transferRows(url: string): Promise<TransferRow[]> {
  return query<TransferRow>(
    url,
    `with settles as (
       select reference, count(*)::int as n from postings
        where kind in ('transfer_settle', 'transfer_settle_internal', 'transfer_void') group by reference)
     select t.account_id::text, t.idempotency_key, count(*) over (partition by t.account_id, t.idempotency_key)::int as n, t.status,
            t.amount_centavos::text as amount, coalesce(s.n, 0) as settles,
            (select count(*)::int from transactions r where r.end_to_end_id = t.end_to_end_id and r.type = 'PAYMENT') as receivers,
            (select count(*)::int from recurring_charge_attempts a where a.debit_transaction_id = t.id) as debit_attempts,
            (select count(*)::int from recurring_charge_attempts a
              where a.debit_transaction_id = t.id and a.status = 'PAGA' and a.end_to_end_id = t.end_to_end_id) as paid_attempts
       from transactions t left join settles s on s.reference = t.end_to_end_id
      where t.type = 'WITHDRAW'`,
  );
}

/**
 * The automatic debits among the transfers, apart: each the debit of one PAGA attempt with its
 * end-to-end id, no idempotency key (no client asked for it), CONFIRMED, settled once, its
 * receiver here credited at most once. Resolves with the transfers the clients may have asked for.
 */
function setDebitsApart(rows: TransferRow[]): TransferRow[] {
  const debits = rows.filter((r) => r.debit_attempts > 0);
  const bad = debits.filter((r) => r.debit_attempts !== 1 || r.paid_attempts !== 1 || r.idempotency_key !== null || r.status !== 'CONFIRMED' || r.settles !== 1 || r.receivers > 1);
  check(
    bad.length === 0,
    `${debits.length} automatic debits of Pix Automático set apart from the clients' transfers: each the WITHDRAW of one PAGA attempt with its end-to-end id, ` +
      `no idempotency key, CONFIRMED, settled once, credited at most once (${bad.length} not)`,
  );
  return rows.filter((r) => r.debit_attempts === 0);
}

/** Every transfer the clients sent, against the database. */
async function checkTransfers(url: string, bank: Bank, storm: Storm, retried: number): Promise<void> {
  const rows = setDebitsApart(await transferRows(url));
  const byKey = new Map(rows.map((r) => [`${r.account_id}:${r.idempotency_key}`, r]));
  const sentKeys = new Set([...bank.transfers.map((t) => `${t.account.accountId}:${t.key}`), `${storm.account.accountId}:${storm.key}`]);
  const acked = bank.transfers.filter((t) => t.answers.some((a) => a.status === 201));
  const lost = acked.filter((t) => !byKey.has(`${t.account.accountId}:${t.key}`));
  check(lost.length === 0, `${acked.length} acknowledged transfers (201), none lost (${lost.length} missing)`);
  const refused = bank.transfers.filter((t) => t.answers.at(-1)?.status === 422 && byKey.has(`${t.account.accountId}:${t.key}`));
  check(refused.length === 0, `transfers answered 422 left nothing behind (${refused.length} did)`);
  const unsettled = bank.transfers.filter((t) => !definite(t.answers.at(-1)));
  check(unsettled.length === 0, `every request got a definite answer in the end (${retried} resent; ${unsettled.length} still unknown)`);
  check(rows.every((r) => r.n === 1), 'each idempotency key made at most one transfer');
  const invented = rows.filter((r) => !sentKeys.has(`${r.account_id}:${r.idempotency_key}`));
  check(invented.length === 0, `no transfer the clients did not ask for (${invented.length})`);
  const answerMismatch = acked.filter((t) => {
    const answers = t.answers.filter((a) => a.status === 201);
    return answers.some((a) => JSON.stringify(a.body) !== JSON.stringify(answers[0]!.body));
  });
  check(answerMismatch.length === 0, `repeated requests got the same answer (${answerMismatch.length} differ)`);
  check(rows.every((r) => r.status !== 'PENDING'), `every transfer settled or failed (${rows.filter((r) => r.status === 'PENDING').length} pending)`);
  const twice = rows.filter((r) => r.settles !== 1);
  check(twice.length === 0, `each transfer settled (or voided) exactly once (${twice.length} not)`);
  const internal = rows.filter((r) => r.status === 'CONFIRMED' && r.receivers > 1);
  check(internal.length === 0, `no receiver credited twice (${internal.length})`);
}

async function checkRefundsAndIncoming(url: string, bank: Bank): Promise<void> {
  const refundsAcked = bank.refunds.filter((r) => r.answers.some((a) => a.status === 201 || a.status === 200));
  const refundRows = await query<{ refund_id: string; status: string }>(url, `select refund_id, status from refunds where refund_id not like 'MED-%'`);
  const refundIds = new Set(refundRows.map((r) => r.refund_id));
  check(refundsAcked.every((r) => refundIds.has(r.id)), `${refundsAcked.length} acknowledged refunds, none lost`);
  check(refundRows.every((r) => r.status !== 'EM_PROCESSAMENTO'), 'every refund settled or failed');
  const incomingAcked = bank.incoming.filter((i) => i.answer.status === 201);
  const [inRows] = await query<{ n: number }>(
    url,
    `select count(*)::int as n from transactions where type = 'PAYMENT' and end_to_end_id = any($1::text[])`,
    [incomingAcked.map((i) => i.answer.body.endToEndId as string)],
  );
  check(inRows!.n === incomingAcked.length, `${incomingAcked.length} acknowledged incoming PIX, each recorded once (${inRows!.n})`);
}

/** Notifications in the database: each finished movement has one, once. */
async function checkOutbox(url: string, accountIds: number[]): Promise<{ message_id: string }[]> {
  const outbox = await query<{ message_id: string }>(url, `select message_id from outbox where account_id = any($1::int8[])`, [accountIds]);
  const [withoutNotice] = await query<{ n: number }>(
    url,
    `select count(*)::int as n from transactions t where t.account_id = any($1::int8[]) and t.status <> 'PENDING'
        and not exists (select 1 from outbox o where o.transaction_id = t.id)`,
    [accountIds],
  );
  check(withoutNotice!.n === 0, `every finished movement of the accounts has its notification (${withoutNotice!.n} without)`);
  const [duplicateNotices] = await query<{ n: number }>(
    url,
    `select count(*)::int as n from (select transaction_id, event_type from outbox where transaction_id is not null
        group by 1, 2 having count(*) > 1) d`,
  );
  check(duplicateNotices!.n === 0, `no movement notified twice (${duplicateNotices!.n})`);
  return outbox;
}

/** Notifications against what the receiver got: all of them, nothing else, every signature valid. */
async function checkNotifications(url: string, bank: Bank, receiver: WebhookReceiver, pendingDeliveries: number): Promise<void> {
  const outbox = await checkOutbox(url, bank.accounts.map((a) => a.accountId));
  check(pendingDeliveries === 0, `every delivery finished (${pendingDeliveries} pending)`);
  const secrets = new Map(bank.accounts.map((a) => [String(a.accountId), new Webhook(a.secret)]));
  const seen = new Set<string>();
  let badSignatures = 0;
  for (const hook of receiver.received) {
    const account = hook.path.split('/')[1]!;
    try {
      secrets.get(account)!.verify(hook.body, hook.headers);
    } catch {
      badSignatures++;
    }
    seen.add(hook.headers['webhook-id']!);
  }
  const ids = new Set(outbox.map((o) => o.message_id));
  const undelivered = outbox.filter((o) => !seen.has(o.message_id));
  check(undelivered.length === 0, `all ${outbox.length} notifications reached the receiver at least once (${undelivered.length} did not)`);
  const strangers = [...seen].filter((id) => !ids.has(id));
  check(strangers.length === 0, `no webhook for a movement that did not happen (${strangers.length})`);
  check(badSignatures === 0, `${receiver.received.length} deliveries, every signature valid (${badSignatures} bad); ${receiver.received.length - seen.size} were repeats`);
}

async function checkStorm(url: string, storm: Storm): Promise<void> {
  const created = storm.answers.filter((a) => a.status === 201);
  const others = storm.answers.filter((a) => a.status !== 201 && a.status !== 409);
  const [rows] = await query<{ n: number }>(url, 'select count(*)::int as n from transactions where account_id = $1 and idempotency_key = $2', [storm.account.accountId, storm.key]);
  check(
    rows!.n === 1 && others.length === 0 && created.every((a) => JSON.stringify(a.body) === JSON.stringify(created[0]!.body)),
    `idempotency storm: 100 concurrent requests with one key -> ${rows!.n} transfer, ${created.length} x 201 (one answer), ${storm.answers.length - created.length - others.length} x 409, ${others.length} other`,
  );
}

export interface Outcome {
  url: string;
  bank: Bank;
  crashes: string[];
  snapshots: string[];
  storm: Storm;
  retried: number;
  pendingDeliveries: number;
  receiver: WebhookReceiver;
}

/** Every check, in order; failures are in `failures`. */
export async function runChecks(o: Outcome): Promise<void> {
  console.log('\nchecks');
  checkRun(o.crashes, o.snapshots);
  await checkLedger(o.url);
  await checkTransfers(o.url, o.bank, o.storm, o.retried);
  await checkRefundsAndIncoming(o.url, o.bank);
  await checkNotifications(o.url, o.bank, o.receiver, o.pendingDeliveries);
  await checkStorm(o.url, o.storm);
}
