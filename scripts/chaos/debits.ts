// Pix Automático's debits in the chaos run: this service as the payer's PSP of its own account
// holders. Payers here approve recurrences (journey 1) of the company of scripts/chaos/automatico.ts
// (both sides here) and of the sandbox's receiver at another institution; a charge of each is
// scheduled for the same morning slot as the company's other charges, so that kill -9 lands while
// their `available` is debited. Most payers hold the money; a few do not: they fail in the
// morning and wait for the evening's retry (18:00), which the clock then reaches under kills of
// its own, after some of them were funded in between (those pay in the evening, the others
// expire). At the end: each attempt debited at most once, each paid one debited exactly once and
// linked to its WITHDRAW, nothing debited for the others, none lost, the payers' balances.
import { randomUUID } from 'node:crypto';
import type { ApiClient } from '../lib/api-client.ts';
import { query } from '../lib/pg.ts';
import { OUTSIDE_PAYER, provisionAccount, type ProvisionedAccount } from '../lib/provision.ts';
import { addDays, moveClockTo, type Subscriptions } from './automatico.ts';
import { check } from './checks.ts';
import { log, sleep } from './common.ts';

/** This institution's ISPB in the run (PSP_ISPB of its processes): payers at it are its account holders. */
export const CHAOS_ISPB = '99999999';
const AMOUNT = '19.90';
const AMOUNT_CENTAVOS = 1990n;
/** What a payer that lacked the money in the morning receives before the evening's retry. */
const TOP_UP = '20.00';

/** When a payer has the money: from the start, only before the evening's retry, or never. */
type Plan = 'morning' | 'evening' | 'never';

export interface DebitPayer {
  account: ProvisionedAccount;
  plan: Plan;
  /** The receiver: the company here, or the sandbox's at another institution. */
  receiverHere: boolean;
  /** Money sent to the account from outside, in centavos, and in how many PIX. */
  fundedCentavos: bigint;
  fundings: number;
  txid: string;
}

interface AttemptState {
  txid: string;
  charge_status: string;
  attempt_status: string | null;
  step: string | null;
  next_step_ms: number | null;
  withdraws: number;
  settles: number;
  credits: number;
}

export interface Debits {
  payers: DebitPayer[];
  due: string;
  /** The evening's retry of `due` (18:00 in São Paulo), and the moment past its slot the clock moves to (21:05). */
  retryAt: string;
  eveningAt: string;
  /** The charges AGENDADA for the morning's slot before the faults began. */
  scheduled: number;
  /** What each charge was once the morning's slot had run. */
  morning: AttemptState[];
}

const centavos = (decimal: string) => BigInt(decimal.replace('.', ''));
const txidOf = () => `chaosd${randomUUID().replace(/-/g, '')}`.slice(0, 35);

/** The plan of payer i of n: a tenth (at least 2) lack the money, alternately funded before the evening or never. */
function planOf(i: number, n: number): { plan: Plan; fund: string | null } {
  const short = n < 4 ? 0 : Math.max(2, Math.round(n / 10));
  if (i < short) {
    // Some hold nothing, some a part (one centavo short, even): the morning fails for all.
    if (i % 2 === 0) return { plan: 'evening', fund: i % 4 === 0 ? null : '10.00' };
    return { plan: 'never', fund: i % 4 === 1 ? '19.89' : null };
  }
  // Some hold exactly the charge, most more.
  return { plan: 'morning', fund: i % 3 === 0 ? AMOUNT : '50.00' };
}

/** `items` through `work`, `width` at a time. */
async function inParallel<T, R>(items: readonly T[], width: number, work: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      for (let i = next++; i < items.length; i = next++) out[i] = await work(items[i]!, i);
    }),
  );
  return out;
}

/**
 * `count` payers here, each with a recurrence it approved (journey 1) and a charge of it
 * scheduled for the company's charges' day: to the company (both sides here) for half of them, to
 * the sandbox's receiver at another institution for the others. Right after openSubscriptions,
 * on the same day (D-2 of `subs.due`).
 */
export async function openDebits(client: ApiClient, adminToken: string, url: string, subs: Subscriptions, count: number): Promise<Debits> {
  const operator = client.operator(adminToken);
  const today = addDays(subs.due, -2);
  const clock = await operator.advanceClock(1);
  const expiry = new Date(Date.parse(clock.now) + 86_400_000).toISOString();
  const made = await inParallel(Array.from({ length: count }, (_, i) => i), 4, async (i) => {
    const { plan, fund } = planOf(i, count);
    const account = await provisionAccount(client, adminToken, { name: `Chaos Pagador ${i}`, commonName: `chaos-payer-${i}`, ...(fund ? { fund } : {}) });
    // Receivers alternate in pairs, so that each plan has payers of both.
    const payer: DebitPayer = { account, plan, receiverHere: Math.floor(i / 2) % 2 === 0, fundedCentavos: fund ? centavos(fund) : 0n, fundings: fund ? 1 : 0, txid: txidOf() };
    return { payer, idRec: await askApproval(client, operator, subs, payer, { i, today, expiry }) };
  });
  await operator.advanceClock(5);
  await inParallel(made, 4, ({ payer, idRec }) => payer.account.api.approveAuthorization(idRec));
  await inParallel(made, 4, ({ payer, idRec }) => sendCharge(client, operator, subs, payer, idRec));
  await operator.advanceClock(61);
  const payers = made.map((m) => m.payer);
  const [row] = await query<{ n: number }>(
    url,
    `select count(*)::int as n from recurring_charges c join recurring_charge_attempts a on a.charge_id = c.id
      where c.txid = any($1::text[]) and a.status = 'AGENDADA' and a.step = 'settle'`,
    [payers.map((p) => p.txid)],
  );
  const short = payers.filter((p) => p.plan !== 'morning').length;
  log(
    `${count} payers here with a recurring debit for ${subs.due} (${payers.filter((p) => p.receiverHere).length} to the company, ` +
      `${payers.filter((p) => !p.receiverHere).length} to another institution's receiver; ${short} without the money); ${row!.n} AGENDADA`,
  );
  return {
    payers,
    due: subs.due,
    retryAt: `${subs.due}T21:00:00.000Z`,
    eveningAt: `${addDays(subs.due, 1)}T00:05:00.000Z`,
    scheduled: row!.n,
    morning: [],
  };
}

/** The receiver asks the payer to approve a recurrence of 19.90 a month: the company by POST /v2/rec and /v2/solicrec, the sandbox's receiver by its route. */
async function askApproval(
  client: ApiClient,
  operator: ReturnType<ApiClient['operator']>,
  subs: Subscriptions,
  payer: DebitPayer,
  { i, today, expiry }: { i: number; today: string; expiry: string },
): Promise<string> {
  const contract = `CHAOS-PAYER-${i}`;
  if (!payer.receiverHere) {
    const rec = await operator.askAuthorization({ payerAccountId: payer.account.accountId, contract, frequency: 'MENSAL', startDate: today, fixedAmount: AMOUNT, retryPolicy: 'NAO_PERMITE' });
    return rec.idRec;
  }
  const v2 = (path: string, body: unknown) => client.send(subs.receiver.api.request('POST', `/v2${path}`, body));
  const cpf = payer.account.document;
  const rec = await v2('/rec', {
    vinculo: { contrato: contract, devedor: { cpf, nome: `Chaos Pagador ${i}` } },
    calendario: { dataInicial: today, periodicidade: 'MENSAL' },
    valor: { valorRec: AMOUNT },
    politicaRetentativa: 'NAO_PERMITE',
  });
  if (rec.status !== 201) throw new Error(`chaos: POST /v2/rec ${rec.status} ${JSON.stringify(rec.body)}`);
  const idRec = rec.body.idRec as string;
  const destinatario = { agencia: payer.account.branch, conta: payer.account.accountNumber, ispbParticipante: CHAOS_ISPB, cpf };
  const sent = await v2('/solicrec', { idRec, calendario: { dataExpiracaoSolicitacao: expiry }, destinatario });
  if (sent.status !== 201) throw new Error(`chaos: POST /v2/solicrec ${sent.status} ${JSON.stringify(sent.body)}`);
  return idRec;
}

/** The receiver's charge of the recurrence, due on the company's charges' day (no move to a business day). */
async function sendCharge(client: ApiClient, operator: ReturnType<ApiClient['operator']>, subs: Subscriptions, payer: DebitPayer, idRec: string): Promise<void> {
  const made = payer.receiverHere
    ? await client.send(
        subs.receiver.api.request('PUT', `/v2/cobr/${payer.txid}`, {
          idRec,
          calendario: { dataDeVencimento: subs.due },
          valor: { original: AMOUNT },
          ajusteDiaUtil: false,
          recebedor: { conta: subs.receiver.accountNumber, tipoConta: 'CORRENTE' },
        }),
      )
    : await client.send(
        operator.request('POST', `/sandbox/automatico/recurrences/${idRec}/charges`, { dueDate: subs.due, amount: AMOUNT, txid: payer.txid, adjustToBusinessDay: false }),
      );
  if (made.status !== 201) throw new Error(`chaos: the recurring charge of ${idRec}: ${made.status} ${JSON.stringify(made.body)}`);
}

/** Each charge's attempt, what it debited, posted and credited (by its end-to-end id). */
function attemptStates(url: string, debits: Debits): Promise<AttemptState[]> {
  return query<AttemptState>(
    url,
    `select c.txid, c.status as charge_status, a.status as attempt_status, a.step, (extract(epoch from a.next_step_at) * 1000)::float8 as next_step_ms,
            (select count(*)::int from transactions t where t.end_to_end_id = a.end_to_end_id and t.type = 'WITHDRAW') as withdraws,
            (select count(*)::int from postings p where p.reference = a.end_to_end_id and p.kind in ('transfer_settle', 'transfer_settle_internal')) as settles,
            (select count(*)::int from transactions t where t.end_to_end_id = a.end_to_end_id and t.type = 'PAYMENT') as credits
       from recurring_charges c left join recurring_charge_attempts a on a.charge_id = c.id
      where c.txid = any($1::text[])`,
    [debits.payers.map((p) => p.txid)],
  );
}

/** Polls until `done` holds of every attempt (or 60 s pass); resolves with the last states read. */
async function waitFor(url: string, debits: Debits, done: (s: AttemptState) => boolean): Promise<AttemptState[]> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const states = await attemptStates(url, debits);
    if (states.every(done) || Date.now() > deadline) return states;
    await sleep(500);
  }
}

/**
 * After the morning's slot: waits until every attempt either paid or waits for the evening's
 * retry, and keeps what each was; then the payers to be funded before the evening get the rest.
 */
export async function afterMorning(client: ApiClient, adminToken: string, url: string, debits: Debits): Promise<void> {
  debits.morning = await waitFor(url, debits, (s) => s.attempt_status === 'PAGA' || (s.attempt_status === 'AGENDADA' && s.step === 'retry'));
  const operator = client.operator(adminToken);
  const late = debits.payers.filter((p) => p.plan === 'evening');
  for (const p of late) {
    await operator.incomingPix({ pixKey: p.account.key!, amount: TOP_UP, payer: OUTSIDE_PAYER });
    p.fundedCentavos += centavos(TOP_UP);
    p.fundings++;
  }
  const paid = debits.morning.filter((s) => s.attempt_status === 'PAGA').length;
  log(`after the morning's slot: ${paid} debits paid, ${debits.morning.length - paid} waiting for the evening's retry; ${late.length} of those payers funded with ${TOP_UP}`);
}

/** The clock past the evening's retry slot of the charges' day (21:05 in São Paulo), through any process, again until one answers. */
export async function moveToEvening(any: () => ApiClient, adminToken: string, debits: Debits): Promise<void> {
  const took = await moveClockTo(any, adminToken, debits.eveningAt);
  log(`the clock moved to ${debits.eveningAt} (${took}): past the evening's retry of ${debits.due}`);
}

const ENDED = new Set(['CONCLUIDA', 'EXPIRADA', 'REJEITADA', 'CANCELADA']);

interface PaidFacts {
  txid: string;
  e2e: string;
  payer_id: string;
  receiver_id: string | null;
  charge_amount: string;
  paid_id: string | null;
  debit_id: string | null;
  withdraw_id: string | null;
  w_account: string | null;
  w_status: string | null;
  w_amount: string | null;
  w_txid: string | null;
  w_key: string | null;
  w_counterpart: string | null;
  payment_id: string | null;
  pay_account: string | null;
  pay_counterpart: string | null;
  pay_amount: string | null;
  kind: string | null;
  p_amount: string | null;
  debited_holder: string | null;
  debited_code: string | null;
  credited_holder: string | null;
  credited_code: string | null;
}

/** A paid attempt's WITHDRAW, its receiver's credit and its posting, as they should be; the first thing that differs, or null. */
function paidMismatch(f: PaidFacts): string | null {
  const here = f.receiver_id !== null;
  if (f.withdraw_id === null) return 'no WITHDRAW';
  if (f.debit_id !== f.withdraw_id) return `debit_transaction_id ${f.debit_id} is not its WITHDRAW ${f.withdraw_id}`;
  if (f.w_account !== f.payer_id) return `WITHDRAW of account ${f.w_account}, not the payer ${f.payer_id}`;
  if (f.w_status !== 'CONFIRMED') return `WITHDRAW ${f.w_status}`;
  if (f.w_amount !== f.charge_amount) return `WITHDRAW of ${f.w_amount}, the charge ${f.charge_amount}`;
  if (f.w_txid !== f.txid) return `WITHDRAW txid ${f.w_txid}`;
  if (f.w_key !== null) return `WITHDRAW with idempotency key ${f.w_key}`;
  // The counterpart decides whether the holders' money counts it as leaving (NET_IN): only when the receiver is elsewhere.
  if (f.w_counterpart !== f.receiver_id) return `WITHDRAW's counterpart account ${f.w_counterpart}, the receiver ${f.receiver_id}`;
  if (f.kind !== (here ? 'transfer_settle_internal' : 'transfer_settle')) return `posting ${f.kind}`;
  if (f.p_amount !== f.charge_amount) return `posting of ${f.p_amount}`;
  if (f.debited_holder !== f.payer_id || f.debited_code !== 'available') return `posting debits ${f.debited_holder}/${f.debited_code}`;
  if (here && (f.credited_holder !== f.receiver_id || f.credited_code !== 'available')) return `posting credits ${f.credited_holder}/${f.credited_code}`;
  if (!here && (f.credited_holder !== null || f.credited_code !== 'pix_network')) return `posting credits ${f.credited_holder}/${f.credited_code}, not the network`;
  if (!here) return f.payment_id === null && f.paid_id === null ? null : `a credit ${f.payment_id} here for a receiver elsewhere`;
  if (f.payment_id === null) return 'the receiver not credited';
  if (f.pay_account !== f.receiver_id || f.pay_amount !== f.charge_amount) return `credit of ${f.pay_amount} to ${f.pay_account}`;
  if (f.pay_counterpart !== f.payer_id) return `the receiver's credit's counterpart account ${f.pay_counterpart}, not the payer`;
  if (f.paid_id !== f.payment_id) return `paid_transaction_id ${f.paid_id}, its credit ${f.payment_id}`;
  return null;
}

const first = <T>(items: T[], say: (t: T) => string) => (items.length ? `: ${say(items[0]!)}` : '');

/** The debits' checks, after the evening's retry has run and every charge ended (or 60 s passed). */
export async function checkDebits(url: string, debits: Debits): Promise<void> {
  if (debits.payers.length === 0) return;
  const states = await waitFor(url, debits, (s) => ENDED.has(s.charge_status) && s.step === null);
  checkLifecycle(debits, states);
  await checkDebitedOnce(url, debits, states);
  await checkBalances(url, debits, states);
}

/** None lost; each scheduled; in the morning paid or waiting for the evening; in the end paid or expired, by whether the payer had the money. */
function checkLifecycle(debits: Debits, states: AttemptState[]): void {
  const { payers } = debits;
  const byTxid = new Map(payers.map((p) => [p.txid, p]));
  const seen = new Set(states.map((s) => s.txid));
  const lost = payers.filter((p) => !seen.has(p.txid));
  const here = payers.filter((p) => p.receiverHere).length;
  check(lost.length === 0, `${payers.length} acknowledged recurring debits of payers here (${here} to the company, ${payers.length - here} to another institution's receiver), none lost (${lost.length} missing)`);
  check(debits.scheduled === payers.length, `every one AGENDADA for ${debits.due}'s morning slot before the faults (${debits.scheduled} of ${payers.length})`);

  // The morning: every funded payer paid; every other one waits for 18:00, nothing debited.
  const morningOf = (plan: Plan) => debits.morning.filter((s) => byTxid.get(s.txid)?.plan === plan);
  const funded = morningOf('morning');
  const short = [...morningOf('evening'), ...morningOf('never')];
  const unpaidMorning = funded.filter((s) => s.attempt_status !== 'PAGA' || s.charge_status !== 'CONCLUIDA');
  const notWaiting = short.filter((s) => s.attempt_status !== 'AGENDADA' || s.step !== 'retry' || s.next_step_ms !== Date.parse(debits.retryAt) || s.withdraws + s.settles + s.credits > 0);
  check(
    unpaidMorning.length === 0 && notWaiting.length === 0 && debits.morning.length === payers.length,
    `in the morning's slot under kills: ${funded.length - unpaidMorning.length} of ${funded.length} funded payers' charges CONCLUIDA; ` +
      `${short.length - notWaiting.length} of ${short.length} without the money AGENDADA for the evening's retry at 18:00, nothing debited` +
      first([...unpaidMorning, ...notWaiting], (s) => `${s.txid} ${s.charge_status}/${s.attempt_status}/${s.step} at ${s.next_step_ms === null ? null : new Date(s.next_step_ms).toISOString()}`),
  );

  // The evening: those funded in between paid, the others expired; none still open.
  const expected = (p: DebitPayer) => (p.plan === 'never' ? 'EXPIRADA' : 'CONCLUIDA');
  const wrong = states.filter((s) => s.charge_status !== expected(byTxid.get(s.txid)!) || s.attempt_status !== (expected(byTxid.get(s.txid)!) === 'CONCLUIDA' ? 'PAGA' : 'EXPIRADA'));
  const evening = payers.filter((p) => p.plan === 'evening').length;
  const never = payers.filter((p) => p.plan === 'never').length;
  check(
    wrong.length === 0,
    `after the evening's retry under kills: every funded charge CONCLUIDA (attempt PAGA; ${evening} of them funded after the morning), ` +
      `the ${never} still without the money EXPIRADA (attempt EXPIRADA); none open (${wrong.length} not${first(wrong, (s) => `${s.txid} ${s.charge_status}/${s.attempt_status}/${s.step}`)})`,
  );
  const multiple = states.filter((s) => states.filter((o) => o.txid === s.txid).length > 1);
  check(multiple.length === 0, `one attempt per charge (${multiple.length} charges with more)`);
}

/** Each attempt debited at most once; each paid one exactly once, as it should be; the others not at all. */
async function checkDebitedOnce(url: string, debits: Debits, states: AttemptState[]): Promise<void> {
  const { payers } = debits;
  const twice = states.filter((s) => s.withdraws > 1 || s.settles > 1 || s.credits > 1);
  check(twice.length === 0, `each debit attempt debited at most once: per end-to-end id at most one WITHDRAW, one transfer_settle* posting, one credit (${twice.length} more${first(twice, (s) => `${s.txid} ${s.withdraws}/${s.settles}/${s.credits}`)})`);

  const paid = await query<PaidFacts>(
    url,
    `select c.txid, a.end_to_end_id as e2e, r.payer_account_id::text as payer_id, c.account_id::text as receiver_id, c.amount_centavos::text as charge_amount,
            c.paid_transaction_id::text as paid_id, a.debit_transaction_id::text as debit_id,
            w.id::text as withdraw_id, w.account_id::text as w_account, w.status as w_status, w.amount_centavos::text as w_amount, w.txid as w_txid,
            w.idempotency_key as w_key, w.counterpart_account_id::text as w_counterpart,
            pay.id::text as payment_id, pay.account_id::text as pay_account, pay.counterpart_account_id::text as pay_counterpart, pay.amount_centavos::text as pay_amount,
            p.kind, p.amount_centavos::text as p_amount, da.account_id::text as debited_holder, da.code as debited_code,
            ca.account_id::text as credited_holder, ca.code as credited_code
       from recurring_charge_attempts a
       join recurring_charges c on c.id = a.charge_id
       join recurrences r on r.id = c.recurrence_id
       left join transactions w on w.end_to_end_id = a.end_to_end_id and w.type = 'WITHDRAW'
       left join transactions pay on pay.end_to_end_id = a.end_to_end_id and pay.type = 'PAYMENT'
       left join postings p on p.reference = a.end_to_end_id and p.kind in ('transfer_settle', 'transfer_settle_internal')
       left join ledger_accounts da on da.id = p.debit_account_id
       left join ledger_accounts ca on ca.id = p.credit_account_id
      where c.txid = any($1::text[]) and a.status = 'PAGA'`,
    [payers.map((p) => p.txid)],
  );
  const bad = paid.map((f) => ({ f, why: paidMismatch(f) })).filter((x) => x.why !== null);
  check(
    bad.length === 0,
    `every PAGA attempt (${paid.length}) has exactly one WITHDRAW with its end-to-end id: the payer's, CONFIRMED, its amount and txid, no idempotency key, ` +
      `debit_transaction_id pointing to it, the receiver here credited (counterparts the two accounts, so the holders' money counts neither) ` +
      `or the network's ledger account (counterpart none: money out) (${bad.length} not${first(bad, (x) => `${x.f.txid}: ${x.why}`)})`,
  );

  const [untouched] = await query<{ attempts: number; linked: number; moved: number }>(
    url,
    `select count(*)::int as attempts, count(a.debit_transaction_id)::int as linked,
            coalesce(sum((select count(*) from transactions t where t.end_to_end_id = a.end_to_end_id)
                       + (select count(*) from postings p where p.reference = a.end_to_end_id)), 0)::int as moved
       from recurring_charge_attempts a join recurring_charges c on c.id = a.charge_id
      where c.txid = any($1::text[]) and a.status <> 'PAGA'`,
    [payers.map((p) => p.txid)],
  );
  check(
    untouched!.linked === 0 && untouched!.moved === 0,
    `nothing debited for the ${untouched!.attempts} attempts not PAGA: no debit_transaction_id (${untouched!.linked}), no movement or posting with their end-to-end ids (${untouched!.moved})`,
  );
}

/** Each payer holds what it was sent less what its paid charges cost, and nothing else moved its account. */
async function checkBalances(url: string, debits: Debits, states: AttemptState[]): Promise<void> {
  const { payers } = debits;
  const byTxid = new Map(payers.map((p) => [p.txid, p]));

  const balances = await query<{ id: string; balance: string; movements: number }>(
    url,
    `select a.id::text, coalesce((select sum(balance) from ledger_accounts l where l.account_id = a.id), 0)::text as balance,
            (select count(*)::int from transactions t where t.account_id = a.id) as movements
       from accounts a where a.id = any($1::int8[])`,
    [payers.map((p) => p.account.accountId)],
  );
  const paidBy = new Map<string, number>();
  for (const s of states.filter((s) => s.attempt_status === 'PAGA')) {
    const id = String(byTxid.get(s.txid)!.account.accountId);
    paidBy.set(id, (paidBy.get(id) ?? 0) + 1);
  }
  const byId = new Map(balances.map((b) => [b.id, b]));
  const off = payers.filter((p) => {
    const b = byId.get(String(p.account.accountId));
    const n = paidBy.get(String(p.account.accountId)) ?? 0;
    return !b || BigInt(b.balance) !== p.fundedCentavos - BigInt(n) * AMOUNT_CENTAVOS || b.movements !== p.fundings + n;
  });
  const total = payers.reduce((sum, p) => sum + p.fundedCentavos, 0n);
  const cost = BigInt([...paidBy.values()].reduce((a, b) => a + b, 0)) * AMOUNT_CENTAVOS;
  check(
    off.length === 0,
    `payers' balances = funding - what their paid charges cost (${total} - ${cost} centavos in all), and nothing else moved them (${off.length} differ${first(off, (p) => `${p.account.accountId}: ${byId.get(String(p.account.accountId))?.balance} of ${p.fundedCentavos}`)})`,
  );
}
