// Pix Automático in the chaos run: a company with recurrences approved by the sandbox's payer
// and a recurring charge of each, scheduled before the faults begin; while processes are killed,
// the test clock moves to the charges' settlement slot, so that kill -9 lands while workers and
// the advancing request settle them. At the end: each attempt paid at most once, none lost.
import { randomUUID } from 'node:crypto';
import type { ApiClient } from '../lib/api-client.ts';
import { provisionAccount, randomCnpj, randomCpf, type ProvisionedAccount } from '../lib/provision.ts';
import { query } from '../lib/pg.ts';
import { check } from './checks.ts';
import { log } from './common.ts';

const SANDBOX_PAYER_ISPB = '12345678';
const AMOUNT = '19.90';

export interface Subscriptions {
  receiver: ProvisionedAccount;
  /** The charges acknowledged (201), by txid. */
  txids: string[];
  /** The day they settle (São Paulo), and the moment the clock is moved to. */
  due: string;
  settleAt: string;
}

export const addDays = (day: string, n: number) => new Date(Date.parse(`${day}T12:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
const saoPauloDay = (at: string) => new Date(Date.parse(at) - 3 * 3_600_000).toISOString().slice(0, 10);

/** A request that must succeed in the end: tried again while processes restart. */
export async function until<T>(what: string, attempt: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 200; i++) {
    try {
      const done = await attempt();
      if (done !== undefined) return done;
    } catch {
      // a process killed mid-request
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`chaos: ${what} did not succeed`);
}

/** The company, `count` recurrences approved by journey 1, and a charge of each due in two days, scheduled. */
export async function openSubscriptions(client: ApiClient, adminToken: string, count: number): Promise<Subscriptions> {
  const receiver = await provisionAccount(client, adminToken, { name: 'Chaos Academia', document: randomCnpj(), commonName: 'chaos-academia', pixKey: false });
  const operator = client.operator(adminToken);
  const clock = await operator.advanceClock(1);
  const today = saoPauloDay(clock.now);
  const v2 = (method: 'POST' | 'PUT', path: string, body: unknown) => client.send(receiver.api.request(method, `/v2${path}`, body));
  const recs: string[] = [];
  for (let i = 0; i < count; i++) {
    const cpf = randomCpf();
    const rec = await v2('POST', '/rec', {
      vinculo: { contrato: `CHAOS-${i}`, devedor: { cpf, nome: 'Chaos Pagador' } },
      calendario: { dataInicial: today, periodicidade: 'MENSAL' },
      valor: { valorRec: AMOUNT },
      politicaRetentativa: 'NAO_PERMITE',
    });
    if (rec.status !== 201) throw new Error(`chaos: POST /v2/rec ${rec.status}`);
    const idRec = rec.body.idRec as string;
    const expiry = new Date(Date.parse(clock.now) + 86_400_000).toISOString();
    const sent = await v2('POST', '/solicrec', { idRec, calendario: { dataExpiracaoSolicitacao: expiry }, destinatario: { conta: '1', ispbParticipante: SANDBOX_PAYER_ISPB, cpf } });
    if (sent.status !== 201) throw new Error(`chaos: POST /v2/solicrec ${sent.status}`);
    recs.push(idRec);
  }
  await operator.advanceClock(200);
  const due = addDays(today, 2);
  const txids: string[] = [];
  for (const idRec of recs) {
    const txid = `chaos${randomUUID().replace(/-/g, '')}`.slice(0, 35);
    const made = await v2('PUT', `/cobr/${txid}`, { idRec, calendario: { dataDeVencimento: due }, valor: { original: AMOUNT }, ajusteDiaUtil: false, recebedor: { conta: receiver.accountNumber, tipoConta: 'CORRENTE' } });
    if (made.status !== 201) throw new Error(`chaos: PUT /v2/cobr ${made.status} ${JSON.stringify(made.body)}`);
    txids.push(txid);
  }
  await operator.advanceClock(61);
  log(`${count} recurrences approved by the sandbox's payer, each with a recurring charge scheduled for ${due}`);
  return { receiver, txids, due, settleAt: `${due}T03:05:00.000Z` };
}

/**
 * The test clock to `at`, through any process, again until one answers (a later clock: an earlier
 * try moved it); the answer comes once the steps that fell due ran. Resolves with how long it took
 * and how many tries.
 */
export async function moveClockTo(any: () => ApiClient, adminToken: string, at: string): Promise<string> {
  const started = performance.now();
  let tries = 0;
  await until(`the advance to ${at}`, async () => {
    tries++;
    const answer = await any().send(any().operator(adminToken).request('POST', '/sandbox/clock/advance', { to: at }));
    return answer.status === 200 || (answer.status === 400 && JSON.stringify(answer.body).includes('CLOCK_BACKWARDS')) ? true : undefined;
  });
  return `in ${Math.round(performance.now() - started)} ms, ${tries} ${tries === 1 ? 'try' : 'tries'}`;
}

/** The clock to the charges' morning slot, through any process, again until one answers. */
export async function moveToSettlement(any: () => ApiClient, adminToken: string, subs: Subscriptions): Promise<void> {
  const took = await moveClockTo(any, adminToken, subs.settleAt);
  log(`the clock moved to ${subs.settleAt} (${took}): the morning's slot of ${subs.due}`);
}

interface AttemptFacts {
  txid: string;
  charge_status: string;
  attempts: number;
  paid_attempts: number;
  credits: number;
  postings: number;
}

/**
 * Each charge settled, each paid attempt credited exactly once, none lost. The receiver's other
 * charges, those its payers here pay (scripts/chaos/debits.ts), count in what it was credited and
 * holds; whether they end CONCLUIDA is theirs to check (some payers lack the money).
 */
export async function checkSubscriptions(url: string, subs: Subscriptions): Promise<void> {
  const deadline = Date.now() + 60_000;
  let open = -1;
  while (Date.now() < deadline) {
    const [row] = await query<{ n: number }>(
      url,
      `select count(*)::int as n from recurring_charges where account_id = $1 and txid = any($2::text[]) and status in ('CRIADA', 'ATIVA')`,
      [subs.receiver.accountId, subs.txids],
    );
    open = row!.n;
    if (open === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const facts = await query<AttemptFacts>(
    url,
    `select c.txid, c.status as charge_status,
            (select count(*)::int from recurring_charge_attempts a where a.charge_id = c.id) as attempts,
            (select count(*)::int from recurring_charge_attempts a where a.charge_id = c.id and a.status = 'PAGA') as paid_attempts,
            (select count(*)::int from transactions t join recurring_charge_attempts a on a.end_to_end_id = t.end_to_end_id
              where a.charge_id = c.id and t.type = 'PAYMENT') as credits,
            (select count(*)::int from postings p join recurring_charge_attempts a on a.end_to_end_id = p.reference
              where a.charge_id = c.id) as postings
       from recurring_charges c where c.account_id = $1`,
    [subs.receiver.accountId],
  );
  const byTxid = new Map(facts.map((f) => [f.txid, f]));
  const lost = subs.txids.filter((t) => !byTxid.has(t));
  check(lost.length === 0, `${subs.txids.length} acknowledged recurring charges, none lost (${lost.length} missing)`);
  check(open === 0, `every recurring charge settled once its slot came (${open} still open)`);
  const mine = new Set(subs.txids);
  const unpaid = facts.filter((f) => mine.has(f.txid) && f.charge_status !== 'CONCLUIDA');
  check(unpaid.length === 0, `every recurring charge CONCLUIDA (${unpaid.length} not${unpaid.length ? `: ${unpaid[0]!.txid} ${unpaid[0]!.charge_status}` : ''})`);
  const twice = facts.filter((f) => f.paid_attempts > 1 || f.credits > 1 || f.postings > 1);
  const others = facts.length - facts.filter((f) => mine.has(f.txid)).length;
  check(twice.length === 0, `each attempt paid at most once: one credit and one posting per paid attempt, of these and its ${others} charges to payers here (${twice.length} charges more)`);
  const uncredited = facts.filter((f) => f.paid_attempts !== f.credits || f.credits !== f.postings);
  check(uncredited.length === 0, `each paid attempt credited, and nothing credited that no attempt paid (${uncredited.length} differ)`);
  const [balance] = await query<{ balance: string }>(url, `select coalesce(sum(balance), 0)::text as balance from ledger_accounts where account_id = $1 and code = 'available'`, [subs.receiver.accountId]);
  const expected = (BigInt(facts.filter((f) => f.charge_status === 'CONCLUIDA').length) * 1990n).toString();
  check(balance!.balance === expected, `the receiver holds what its charges paid (${balance!.balance} of ${expected} centavos)`);
}
