// npm run bench:automatico: the morning of Pix Automático. BENCH_AUTOMATICO_CHARGES (10000)
// recurring charges of one company, scheduled (AGENDADA) for one day, are settled when the test
// clock moves to that day's 00:00 in São Paulo: the advancing request and the workers settle them
// while clients read balances. It prints the time to drain them, the charges settled a second,
// and the balance reads' p50 and p99 before and during the drain (and their ratio), measured in
// this one run; then the invariants: every charge paid once, the receiver's balance, the ledger.
//
//   BENCH_AUTOMATICO_CHARGES=10000 BENCH_AUTOMATICO_WORKERS=1 BENCH_AUTOMATICO_READERS=8 npm run bench:automatico
//
// The charges are written straight into the database (what the API would have made of 10,000
// recurrences approved and charged: no part of the settlement is skipped); everything after is the
// service's own, through its HTTP API and its processes.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { closedLoop, percentile } from './bench-load.ts';
import { ApiClient, fetchTransport, type ApiRequest } from './lib/api-client.ts';
import { DATABASE_SERVER, envNumber } from './lib/env.ts';
import { query } from './lib/pg.ts';
import { databaseUrl, freePort, ServiceProcess } from './lib/processes.ts';
import { provisionAccount, randomCnpj } from './lib/provision.ts';

const CHARGES = envNumber('BENCH_AUTOMATICO_CHARGES', 10_000);
const WORKERS = envNumber('BENCH_AUTOMATICO_WORKERS', 1);
const READERS = envNumber('BENCH_AUTOMATICO_READERS', 8);
const BASELINE_SECONDS = envNumber('BENCH_AUTOMATICO_BASELINE_SECONDS', 5);
const ADMIN = `bench-admin-${randomUUID()}`;
const ISPB = '99999999';
const PAYER_ISPB = '12345678';

const addDays = (day: string, n: number) => new Date(Date.parse(`${day}T12:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
const saoPauloDay = (at: string) => new Date(Date.parse(at) - 3 * 3_600_000).toISOString().slice(0, 10);

/** CHARGES recurrences of the receiver, APROVADA by the sandbox's payer, each with a charge AGENDADA for `due`, in a few statements. */
async function schedule(url: string, accountId: number, accountNumber: string, due: string, now: string): Promise<void> {
  const stamp = due.replaceAll('-', '');
  await query(
    url,
    `with r as (
       insert into recurrences (id_rec, account_id, status, contrato, devedor_document_type, devedor_document, devedor_nome, data_inicial,
                                periodicidade, valor_rec_centavos, politica_retentativa, jornada, pagador, history, created_at, updated_at)
       select 'RN' || $2 || $3 || lpad(g::text, 11, '0'), $1, 'APROVADA', 'BENCH-' || g, 'CPF', '52998224725', 'Pagador Bench', $4::date,
              'MENSAL', 1990, 'NAO_PERMITE', 'JORNADA_1', $5::jsonb,
              jsonb_build_array(jsonb_build_object('status', 'CRIADA', 'data', $6::text), jsonb_build_object('status', 'APROVADA', 'data', $6::text)),
              $6::timestamptz, $6::timestamptz
         from generate_series(1, $7::int) g
       returning id, id_rec),
     c as (
       insert into recurring_charges (account_id, recurrence_id, txid, status, due_date, settlement_date, cycle, ajuste_dia_util, amount_centavos,
                                      recebedor, history, next_step_at, created_at, updated_at)
       select $1, r.id, 'bench' || substr(r.id_rec, 3), 'ATIVA', $4::date, $4::date, 0, false, 1990,
              jsonb_build_object('conta', $8::text, 'tipoConta', 'CORRENTE'),
              jsonb_build_array(jsonb_build_object('status', 'CRIADA', 'data', $6::text), jsonb_build_object('status', 'ATIVA', 'data', $6::text)),
              ($4::date + 1)::timestamp at time zone 'America/Sao_Paulo', $6::timestamptz, $6::timestamptz
         from r
       returning id, txid)
     insert into recurring_charge_attempts (charge_id, position, tipo, data_liquidacao, status, end_to_end_id, history, step, next_step_at, created_at, updated_at)
     select c.id, 1, 'AGND', $4::date, 'AGENDADA', 'E' || $9 || $10 || '0300' || substr(c.txid, 22, 11),
            jsonb_build_array(jsonb_build_object('status', 'SOLICITADA', 'data', $6::text), jsonb_build_object('status', 'AGENDADA', 'data', $6::text)),
            'settle', $4::date::timestamp at time zone 'America/Sao_Paulo', $6::timestamptz, $6::timestamptz
       from c`,
    [accountId, ISPB, stamp, due, JSON.stringify({ cpf: '52998224725', ispbParticipante: PAYER_ISPB }), now, CHARGES, accountNumber, PAYER_ISPB, stamp],
  );
  await query(url, 'analyze recurrences, recurring_charges, recurring_charge_attempts');
}

/** Moves the clock to `due`'s settlement slot while READERS clients read a balance; prints the drain and the reads. */
async function drain(api: ApiClient, url: string, balance: () => ApiRequest, due: string): Promise<void> {
  const before = await closedLoop(api, READERS, BASELINE_SECONDS, balance, 200);
  const slot = `${due}T03:00:00.000Z`;
  const started = performance.now();
  const during: number[] = [];
  let drained = 0;
  const readers = Array.from({ length: READERS }, async () => {
    while (drained === 0) {
      const at = performance.now();
      const res = await api.send(balance());
      if (res.status === 200) during.push(performance.now() - at);
    }
  });
  const advancing = api.send(api.operator(ADMIN).request('POST', '/sandbox/clock/advance', { to: slot }));
  let paid = 0;
  while (paid < CHARGES) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const [row] = await query<{ n: number }>(url, `select count(*)::int as n from recurring_charge_attempts where status = 'PAGA'`);
    paid = row!.n;
    if (performance.now() - started > 600_000) break;
  }
  drained = performance.now() - started;
  const answer = await advancing;
  await Promise.all(readers);
  during.sort((a, b) => a - b);
  const seconds = drained / 1000;
  console.log(`drained ${paid} of ${CHARGES} in ${seconds.toFixed(2)} s: ${(paid / seconds).toFixed(0)} charges settled a second (the advance answered ${answer.status}, ${String((answer.body as { steps?: number }).steps)} steps of its own)`);
  const p99 = percentile(during, 99);
  console.log(`balance reads before: p50 ${before.p50.toFixed(1)} ms, p99 ${before.p99.toFixed(1)} ms (${before.ok} reads, ${READERS} clients)`);
  console.log(`balance reads during: p50 ${percentile(during, 50).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (${during.length} reads); p99 ratio during/before ${(p99 / before.p99).toFixed(2)}; target p99 < 50 ms: ${p99 < 50 ? 'met' : 'missed'}`);
}

async function main(): Promise<void> {
  const name = `pix_bench_automatico_${Date.now()}`;
  await query(DATABASE_SERVER, `create database ${name}`);
  const url = databaseUrl(DATABASE_SERVER, name);
  const port = await freePort();
  const env = { DATABASE_URL: url, ADMIN_TOKEN: ADMIN, PSP_ISPB: ISPB, LOG_LEVEL: 'error', DATA_DIR: `/tmp/${name}` };
  const serve = new ServiceProcess('serve', ['serve'], port);
  const workers = Array.from({ length: WORKERS }, (_, i) => new ServiceProcess(`worker-${i}`, ['worker'], null));
  try {
    await serve.start(env);
    for (const w of workers) await w.start(env);
    const api = new ApiClient(fetchTransport(`http://127.0.0.1:${port}`));
    const receiver = await provisionAccount(api, ADMIN, { name: 'Bench Academia', document: randomCnpj(), pixKey: false });
    const reader = await provisionAccount(api, ADMIN, { name: 'Bench Reader', fund: '100.00' });
    const clock = await api.operator(ADMIN).advanceClock(1);
    const due = addDays(saoPauloDay(clock.now), 3);
    const made = performance.now();
    await schedule(url, receiver.accountId, receiver.accountNumber, due, clock.now);
    console.log(`${CHARGES} recurring charges AGENDADA for ${due} (written in ${((performance.now() - made) / 1000).toFixed(1)} s); ${1 + WORKERS} processes with a worker`);

    await drain(api, url, () => reader.api.request('GET', '/accounts/balances'), due);
    const [facts] = await query<{ charges: number; concluded: number; credits: number; twice: number; balance: string; total: string }>(
      url,
      `select (select count(*)::int from recurring_charges) as charges,
              (select count(*)::int from recurring_charges where status = 'CONCLUIDA') as concluded,
              (select count(*)::int from transactions t join recurring_charge_attempts a on a.end_to_end_id = t.end_to_end_id) as credits,
              (select count(*)::int from (select end_to_end_id from transactions where end_to_end_id is not null group by end_to_end_id, account_id having count(*) > 1) x) as twice,
              (select sum(balance)::text from ledger_accounts where account_id = $1) as balance,
              (select sum(balance)::text from ledger_accounts) as total`,
      [receiver.accountId],
    );
    const ok = facts!.concluded === CHARGES && facts!.credits === CHARGES && facts!.twice === 0 && facts!.balance === String(CHARGES * 1990) && facts!.total === '0';
    console.log(`invariants: ${facts!.concluded} of ${facts!.charges} CONCLUIDA, ${facts!.credits} credits, ${facts!.twice} twice, receiver ${facts!.balance} centavos, ledger sum ${facts!.total}: ${ok ? 'held' : 'BROKEN'}`);
    if (!ok) process.exitCode = 1;
  } finally {
    for (const w of workers) await w.stop('SIGTERM');
    await serve.stop('SIGTERM');
    await query(DATABASE_SERVER, `drop database if exists ${name} with (force)`);
  }
}

await main();
