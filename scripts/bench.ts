// npm run bench: the service on PostgreSQL under load, beside two references measured in the same
// run on the same machine: pgbench TPC-B (the database) and a bare Fastify hello-world (HTTP).
// Prints one table with every figure and its target, then a line per extra figure; the figures
// that matter are ratios, the machine being shared and noisy. Exit code 1 if an invariant breaks.
//
//   BENCH_SECONDS=10 BENCH_CLIENTS=32 BENCH_ACCOUNTS=64 BENCH_RATE=2500 BENCH_HIGH_FRACTION=0.1 \
//   BENCH_OPEN_SHARE=0.6 BENCH_BURST=3000 BENCH_ROUNDS=3 BENCH_SETTLEMENT_DELAY_MS=250 DATABASE_SERVER=postgres://postgres@127.0.0.1:5432/postgres npm run bench
//
// Runs, in order: GET /accounts/balances closed loop (three rounds, with the hello-world before,
// between and after them); POST /dict/pix closed loop over all accounts (three rounds, with
// pgbench before, between and after them), from one hot payer,
// between the accounts (each paying the others), and to one hot receiving account of the service; an open loop (after a second of warm-up) at a fixed offered rate with a share of
// HIGH transfers and cash_out webhooks to a local HTTPS receiver, then the same at 0.6 × the
// closed-loop spread rate (below the machine's capacity); a burst far above capacity; the
// invariants; lists over 1M rows; one account's balance reads while another runs heavy lists
// (scripts/bench-lists.ts; BENCH_ONLY=isolation runs that alone, BENCH_ONLY=lists the lists too);
// one account flooding a slow receiver while another's webhooks are timed (scripts/bench-fairness.ts).
//
// `npm run bench -- --write docs/performance.md` also writes that page: its fixed text, then what
// was printed, under the run's date and machine (scripts/bench-page.ts).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem, type as osType } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { drained, highLags, invariants, measured, pgbenchDatabase, type PgbenchDatabase, queued, seedTransactions, settledBetween, settlementTimes } from './bench-db.ts';
import { listIsolation, seedCharges } from './bench-lists.ts';
import { bcbRuns } from './bench-bcb.ts';
import { clusterBench } from './bench-cluster.ts';
import { consoleRuns } from './bench-console.ts';
import { burst, closedLoop, openLoop } from './bench-load.ts';
import { fairnessRun, SLOW_RECEIVER_DELAY_MS } from './bench-fairness.ts';
import { performancePage, type Machine } from './bench-page.ts';
import { printBcb, printConsole, printFairness, report, reportIsolation, type Results } from './bench-report.ts';
import { ApiClient, undiciTransport, type AccountApi, type ApiRequest } from './lib/api-client.ts';
import { withClient } from './lib/pg.ts';
import { databaseUrl, SERVICE_MAIN as MAIN, startChild, stopChild } from './lib/processes.ts';
import { provisionAccount } from './lib/provision.ts';
import { arrivals, startReceiver, type Receiver } from './lib/receivers.ts';
import { DATABASE_SERVER, envNumber } from './lib/env.ts';

const SECONDS = envNumber('BENCH_SECONDS', 10);
const CLIENTS = envNumber('BENCH_CLIENTS', 32);
const ACCOUNTS = envNumber('BENCH_ACCOUNTS', 64);
const PORT = envNumber('BENCH_PORT', 18080);
/** Short enough that most transfers of a run settle during it. */
const SETTLEMENT_DELAY_MS = envNumber('BENCH_SETTLEMENT_DELAY_MS', 250);
/** Open loop: transfers offered per second, and how many may be outstanding before the next ones are not sent. */
const RATE = envNumber('BENCH_RATE', 2500);
const OPEN_CAP = envNumber('BENCH_OPEN_CAP', 2000);
/** The second open loop offers this share of the median closed-loop spread rate. */
const OPEN_SHARE = envNumber('BENCH_OPEN_SHARE', 0.6);
/** Share of the open loop's transfers sent with priority HIGH. */
const HIGH_FRACTION = envNumber('BENCH_HIGH_FRACTION', 0.1);
/** BENCH_WEBHOOKS=0 runs the open loop without webhooks (to tell what they cost). */
const WEBHOOKS = process.env.BENCH_WEBHOOKS !== '0';
/** How long to wait, once the open loop's transfers are settled, for their webhooks. */
const WEBHOOK_WAIT_MS = envNumber('BENCH_WEBHOOK_WAIT_SECONDS', 20) * 1000;
/** Overload: this many transfers at the same moment. */
const BURST = envNumber('BENCH_BURST', 3000);
/**
 * BENCH_ONLY=fairness provisions the accounts and runs the fairness scenario alone
 * (scripts/bench-fairness.ts); BENCH_ONLY=open, the open loop at BENCH_RATE with webhooks alone;
 * BENCH_ONLY=bcb, BCB's dialect alone (scripts/bench-bcb.ts); BENCH_ONLY=console, the balance and
 * transfer loops with and without a console open (scripts/bench-console.ts); BENCH_ONLY=cluster,
 * the replicated PostgreSQL against the single server, and its failovers (scripts/bench-cluster.ts).
 */
const ONLY = process.env.BENCH_ONLY;
/** `--write <file>`: the page (docs/performance.md) to write the run to. */
const WRITE = parseArgs({ options: { write: { type: 'string' } } }).values.write;
if (WRITE !== undefined && ONLY !== undefined) throw new Error(`--write needs the full run: BENCH_ONLY=${ONLY} runs a part of it`);
/** Token requests with wrong credentials at once. */
const TOKEN_FLOOD = envNumber('BENCH_TOKEN_FLOOD', 400);
const LIST_ROWS = envNumber('BENCH_LIST_ROWS', 1_000_000);
const LIST_CLIENTS = envNumber('BENCH_LIST_CLIENTS', 8);
/** List isolation: the listing account's charges, other accounts' charges, parallel lists, the other account's balance reads per second. */
const ISOLATION = {
  charges: envNumber('BENCH_ISOLATION_CHARGES', 300_000),
  otherCharges: envNumber('BENCH_ISOLATION_OTHER_CHARGES', 100_000),
  listClients: envNumber('BENCH_ISOLATION_CLIENTS', 20),
  victimRate: envNumber('BENCH_ISOLATION_RATE', 200),
};
/** Spread transfer runs (each between two pgbench runs) and balance runs (each between two hello-world runs); the median is reported. */
const ROUNDS = Math.max(1, envNumber('BENCH_ROUNDS', 3));
const ADMIN = 'bench-admin-token-0123456789';
/** A key at another institution, with its owner's document (HIGH needs it). */
const EXTERNAL_KEY = 'bench-receiver@example.com';
const EXTERNAL_DOCUMENT = '11222333000181';
const HELLO = new URL('./bench-hello.ts', import.meta.url).pathname;

function startService(url: string, caFile: string) {
  return startChild([...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []), MAIN, 'serve'], {
    DATABASE_URL: url,
    PORT: String(PORT),
    ADMIN_TOKEN: ADMIN,
    LOG_LEVEL: 'warn',
    SETTLEMENT_DELAY_MS: String(SETTLEMENT_DELAY_MS),
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_CA_FILE: caFile,
  });
}

interface Account {
  accountId: number;
  /** Its EVP key. */
  key: string;
  headers: Record<string, string>;
  api: AccountApi;
  /** What it asks for a token with. */
  tokenRequest: ApiRequest;
}

/** An account with a linked certificate, an EVP key, R$ 100,000,000.00 and (unless told not to) a token. */
async function provision(http: ApiClient, n: number, withToken = true): Promise<Account> {
  const a = await provisionAccount(http, ADMIN, { name: `Bench ${n}`, commonName: `bench-${n}`, fund: '100000000.00', token: withToken });
  return { accountId: a.accountId, key: a.key!, headers: a.headers, api: a.api, tokenRequest: http.tokenRequest(a, a.cert.header) };
}

function transfer(from: Account, pixKey = EXTERNAL_KEY, high = false): ApiRequest {
  return from.api.transferRequest({ pixKey, payment: { currency: 'BRL', amount: 1.23 }, ...(high ? { priority: 'HIGH', creditorDocument: EXTERNAL_DOCUMENT } : {}) });
}

/** A client over a pool of `connections` to the service (or to `origin`), and how to close it. */
function pool(connections: number, origin = `http://127.0.0.1:${PORT}`): { api: ApiClient; close: () => Promise<void> } {
  const http = new Pool(origin, { connections, pipelining: 1 });
  return { api: new ApiClient(undiciTransport(http)), close: () => http.close() };
}

interface Bench {
  url: string;
  /** The service's process id, whose CPU is counted. */
  pid: number;
  http: ApiClient;
  accounts: Account[];
}

/** Which account a closed-loop client sends its i-th request from. */
const spreadIndex = (b: Bench, worker: number, i: number) => (worker * 7919 + i) % b.accounts.length;
const spreadPick = (b: Bench) => (worker: number, i: number) => b.accounts[spreadIndex(b, worker, i)]!;
/** GET /accounts/balances of the account a closed-loop client's i-th request is from. */
function balancesGetOf(b: Bench) {
  const pick = spreadPick(b);
  return (worker: number, i: number): ApiRequest => ({ method: 'GET', path: '/accounts/balances', headers: pick(worker, i).headers });
}

/** A run measured against a reference taken right beside it: the mean rate of the reference runs just before and just after. */
interface Round<R, F> {
  run: R;
  reference: number;
  referenceRuns: [F, F];
}

/**
 * `rounds` runs of `subject` with `reference` before, between and after them (on a shared
 * machine the reference drifts within a minute, so each run is compared with the two beside it):
 * every round, and the one with the median ratio (for an even count the lower of the middle two,
 * never the flattering one).
 */
async function roundsBeside<R extends { rate: number }, F extends { rate: number }>(
  rounds: number,
  reference: () => F | Promise<F>,
  subject: () => Promise<R>,
) {
  const all: Round<R, F>[] = [];
  let before = await reference();
  for (let round = 0; round < rounds; round++) {
    const run = await subject();
    const after = await reference();
    all.push({ run, reference: (before.rate + after.rate) / 2, referenceRuns: [before, after] });
    before = after;
  }
  const ratio = (r: Round<R, F>) => r.run.rate / r.reference;
  const median = [...all].sort((x, y) => ratio(x) - ratio(y))[Math.floor((all.length - 1) / 2)]!;
  return {
    median,
    /** The median round's two reference rates, as the report prints them. */
    referenceRates: [median.referenceRuns[0].rate, median.referenceRuns[1].rate] as [number, number],
    rounds: all.map((r) => ({ rate: r.run.rate, reference: r.reference })),
  };
}

/**
 * 1. The bare hello-world and the authenticated balance read, with the same pool and clients,
 * each after a second of warm-up: ROUNDS balance runs, each against the hello-world runs beside it.
 */
async function httpRuns(b: Bench) {
  const hello = await startChild([HELLO], { PORT: '0' });
  const helloPool = pool(CLIENTS + 4, `http://127.0.0.1:${hello.port}`);
  const helloHttp = helloPool.api;
  const helloGet = (): ApiRequest => ({ method: 'GET', path: '/', headers: {} });
  const balancesGet = balancesGetOf(b);
  try {
    await closedLoop(helloHttp, CLIENTS, 1, helloGet, 200);
    await closedLoop(b.http, CLIENTS, 1, balancesGet, 200);
    const { median, referenceRates, rounds } = await roundsBeside(
      ROUNDS,
      () => measured(b.url, hello.child.pid!, () => closedLoop(helloHttp, CLIENTS, SECONDS, helloGet, 200)),
      () => measured(b.url, b.pid, () => closedLoop(b.http, CLIENTS, SECONDS, balancesGet, 200)),
    );
    const balancesOpen = await readsAtRate(b, Math.round(OPEN_SHARE * median.run.rate), balancesGet);
    // The hello-world run just before the median round stands for its latencies and costs.
    return { hello: { ...median.referenceRuns[0], reference: median.reference, referenceRuns: referenceRates, rounds }, balances: median.run, balancesOpen };
  } finally {
    await helloPool.close();
    await stopChild(hello.child);
  }
}

/**
 * GET requests offered at a fixed `rate` (an open loop, after a second of warm-up at that rate):
 * the latency of reads when the machine is not saturated, beside the closed loop's, which is
 * mostly queueing on two cores. Each request is sent as client i % CLIENTS would.
 */
async function readsAtRate(b: Bench, rate: number, request: (worker: number, i: number) => ApiRequest, seconds = SECONDS) {
  const offer = (i: number) => request(i % CLIENTS, Math.floor(i / CLIENTS));
  const open = pool(OPEN_CAP);
  try {
    await openLoop(open.api, { rate, seconds: 1, cap: OPEN_CAP }, offer, undefined, 200);
    return { offeredRate: rate, ...(await measured(b.url, b.pid, () => openLoop(open.api, { rate, seconds, cap: OPEN_CAP }, offer, undefined, 200))) };
  } finally {
    await open.close();
  }
}

/**
 * TOKEN_FLOOD token requests with made-up credentials at once, each from an address of its own
 * (X-Forwarded-For through the local proxy, as a distributed flood: no address reaches the
 * limit on failures), and 200 ms into it one account asking for a token again with its right
 * credentials, and another asking for its first (its secret never verified in this process).
 */
async function tokenFlood(b: Bench, fresh: Account) {
  const flood = burst(`http://127.0.0.1:${PORT}`, TOKEN_FLOOD, (i) => {
    const r = b.accounts[i % b.accounts.length]!.tokenRequest;
    return { ...r, headers: { ...r.headers, 'x-forwarded-for': `198.18.${i >> 8}.${i & 255}` }, body: { ...(r.body as object), clientSecret: `wrong-${i}` } };
  }, '/health');
  await new Promise((resolve) => setTimeout(resolve, 200));
  const timed = async (r: ApiRequest) => {
    const started = performance.now();
    const answer = await b.http.send(r);
    return { status: answer.status, ms: performance.now() - started };
  };
  const [again, first] = await Promise.all([timed(b.accounts[0]!.tokenRequest), timed(fresh.tokenRequest)]);
  return { ...(await flood), again, first };
}

/** Transfers settled per second between the start of a run and its last answer. */
async function settledPerSecond(url: string, run: { startedAt: Date; endedAt: Date }): Promise<number> {
  return (await settledBetween(url, run.startedAt, run.endedAt)) / ((run.endedAt.getTime() - run.startedAt.getTime()) / 1000);
}

/** A closed-loop transfer run, then how many settled during it, the queue at its end and the time to empty it. */
async function transferRun(b: Bench, pick: (worker: number, i: number) => ApiRequest) {
  const run = await measured(b.url, b.pid, () => closedLoop(b.http, CLIENTS, SECONDS, pick));
  const backlog = await queued(b.url);
  const settled = await settledPerSecond(b.url, run);
  return { ...run, settled, backlog, drain: await drained(b.url) };
}

/**
 * 2. Transfers, closed loop: spread over the accounts, one hot payer, spread between the accounts
 * and to one hot receiver (both internal). The spread run is made ROUNDS times against the pgbench
 * runs beside it; the round with the median ratio is the one reported, and every round's ratio is
 * listed.
 */
async function transferRuns(b: Bench, hotReceiver: Account, reference: PgbenchDatabase) {
  const pick = spreadPick(b);
  await closedLoop(b.http, CLIENTS, 3, (worker, i) => transfer(pick(worker, i)));
  await drained(b.url);
  const { median, referenceRates, rounds } = await roundsBeside(
    ROUNDS,
    () => ({ rate: reference.run(SECONDS) }),
    () => transferRun(b, (worker, i) => transfer(pick(worker, i))),
  );
  const hot = await transferRun(b, () => transfer(b.accounts[0]!));
  // Transfers between accounts of this service do more than transfers out (the receiver's row,
  // its credit, its notification): the hot receiver is compared with the same transfers spread
  // over every account as receiver, so that what it measures is the one hot row.
  const spreadIn = await transferRun(b, (worker, i) => {
    const from = spreadIndex(b, worker, i);
    return transfer(b.accounts[from]!, b.accounts[(from + 1 + (i % (b.accounts.length - 1))) % b.accounts.length]!.key);
  });
  const hotIn = await transferRun(b, (worker, i) => transfer(pick(worker, i), hotReceiver.key));
  return { spread: median.run, reference: median.reference, referenceRuns: referenceRates, spreadRounds: rounds, hot, spreadIn, hotIn };
}

/** A cash_out webhook to the receiver for every paying account while `fn` runs (none with BENCH_WEBHOOKS=0). */
async function withWebhooks<T>(b: Bench, receiver: Receiver, fn: (registered: number) => Promise<T>): Promise<T> {
  const registrations: { account: Account; id: number }[] = [];
  try {
    for (const account of WEBHOOKS ? b.accounts : []) {
      const { id } = await account.api.registerWebhook({ url: `${receiver.origin}/cash_out`, eventType: 'cash_out' });
      registrations.push({ account, id });
    }
    return await fn(registrations.length);
  } finally {
    for (const r of registrations) await b.http.send(r.account.api.request('PATCH', `/api/webhooks/${r.id}`, { isActive: false }));
  }
}

/**
 * 3-5. The open loop at `rate` transfers/s, a share of it HIGH, with the cash_out webhooks on;
 * costs counted until settled and delivered.
 */
async function openRun(b: Bench, receiver: Receiver, rate: number, registered: number) {
  const openPool = pool(OPEN_CAP);
  const openHttp = openPool.api;
  const isHigh = (i: number) => HIGH_FRACTION > 0 && i % Math.max(1, Math.round(1 / HIGH_FRACTION)) === 0;
  const offer = (i: number) => transfer(b.accounts[i % b.accounts.length]!, EXTERNAL_KEY, isHigh(i));
  // A second of warm-up at the same rate, as the closed loops have, settled and delivered before
  // the measured run: the first webhooks of a process open its TLS connections to the receiver
  // and compile the delivery path.
  const warmed = new Set<string>();
  await openLoop(openHttp, { rate, seconds: 1, cap: OPEN_CAP }, offer, (_i, answer) => {
    if (answer.status === 201) warmed.add(answer.body.endToEndId as string);
  });
  await drained(b.url);
  const since = WEBHOOKS ? (await arrivals(receiver, warmed, WEBHOOK_WAIT_MS)).total : 0;
  const accepted = new Set<string>();
  const highAnswered = new Map<string, number>();
  const open = await measured(b.url, b.pid, async () => {
    const run = await openLoop(
      openHttp,
      { rate, seconds: SECONDS, cap: OPEN_CAP },
      offer,
      (i, answer) => {
        if (answer.status !== 201) return;
        accepted.add(answer.body.endToEndId as string);
        if (isHigh(i)) highAnswered.set(answer.body.endToEndId as string, Date.now());
      },
    );
    const backlog = await queued(b.url);
    const settled = await settledPerSecond(b.url, run);
    const drain = await drained(b.url);
    const delivered = WEBHOOKS ? await arrivals(receiver, accepted, WEBHOOK_WAIT_MS, since) : { first: new Map<string, number>(), waitedMs: 0, received: 0 };
    return { ...run, backlog, settled, drain, delivered };
  });
  await openPool.close();

  const times = await settlementTimes(b.url, [...accepted]);
  const processed = (e2e: string) => times.get(e2e)?.processedMs ?? null;
  const ascending = (values: number[]) => values.sort((x, y) => x - y);
  const webhookLags = ascending(
    [...accepted].map((e2e) => {
      const at = open.delivered.first.get(e2e);
      const settledAt = processed(e2e);
      return at === undefined || settledAt === null ? Infinity : at - settledAt;
    }),
  );
  const highFrom201 = ascending(
    [...highAnswered].map(([e2e, answeredAt]) => {
      const settledAt = processed(e2e);
      return settledAt === null ? Infinity : settledAt - answeredAt;
    }),
  );
  return {
    open,
    high: ascending(await highLags(b.url, open.startedAt)),
    highFrom201,
    webhookLags,
    webhooks: { registered, delivered: open.delivered.first.size, received: open.delivered.received, waitedMs: open.delivered.waitedMs },
  };
}

/** A new account with ISOLATION.charges charges lists them heavily while accounts[2] reads its balance. */
async function isolationRun(b: Bench) {
  const lister = await provision(b.http, ACCOUNTS + 3);
  await seedCharges(b.url, lister.accountId, ISOLATION.charges, ISOLATION.otherCharges);
  const open = pool(OPEN_CAP);
  try {
    return await listIsolation(b.http, open.api, b.accounts[2 % b.accounts.length]!, lister, { ...ISOLATION, seconds: SECONDS });
  } finally {
    await open.close();
  }
}

/** GET /api/transactions of one account with LIST_ROWS more rows in the table: closed loop, then at a fixed rate. */
async function listRuns(b: Bench) {
  await seedTransactions(b.url, b.accounts[1]!.accountId, LIST_ROWS);
  const listGet = (): ApiRequest => ({ method: 'GET', path: '/api/transactions?size=20', headers: b.accounts[1]!.headers });
  const listSeconds = Math.min(SECONDS, 5);
  await closedLoop(b.http, LIST_CLIENTS, 1, listGet, 200);
  const lists = await measured(b.url, b.pid, () => closedLoop(b.http, LIST_CLIENTS, listSeconds, listGet, 200));
  const listsOpen = await readsAtRate(b, Math.round(OPEN_SHARE * lists.rate), listGet, listSeconds);
  return { lists, listsOpen, clients: LIST_CLIENTS, rows: LIST_ROWS, share: OPEN_SHARE };
}

/** The open loop's own figures, when it runs alone. */
function printOpen(rate: number, r: Awaited<ReturnType<typeof openRun>>): void {
  const p = (values: number[], q: number) => values[Math.min(values.length - 1, Math.ceil((values.length * q) / 100) - 1)] ?? NaN;
  console.log(
    `open loop at ${rate}/s: ${r.open.ok} accepted of ${r.open.offered}, p50 ${r.open.p50.toFixed(1)} ms, p99 ${r.open.p99.toFixed(1)} ms; ` +
      `HIGH settlement lag p50 ${p(r.high, 50)} ms, p99 ${p(r.high, 99)} ms; webhook lag p50 ${p(r.webhookLags, 50)} ms, ` +
      `p99 ${p(r.webhookLags, 99)} ms (${r.webhooks.delivered} of ${r.webhookLags.length} delivered)`,
  );
}

async function withPgbench<T>(fn: (reference: PgbenchDatabase) => Promise<T>): Promise<T> {
  const reference = pgbenchDatabase();
  try {
    return await fn(reference);
  } finally {
    reference.drop();
  }
}

/** The fairness scenario: the first account floods the slow receiver, the second one's lag is measured. */
function fairness(b: Bench, fast: Receiver, slow: Receiver) {
  const [attacker, victim] = b.accounts as [Account, Account];
  return fairnessRun({ http: b.http, operator: b.http.operator(ADMIN), attacker, victim, fast, slow });
}

interface Receivers {
  receiver: Receiver;
  /** Answers each webhook SLOW_RECEIVER_DELAY_MS late (the fairness scenario's). */
  slow: Receiver;
  /** Both receivers' CAs, in the one file the service trusts. */
  caFile: string;
  close(): Promise<void>;
}

async function startReceivers(): Promise<Receivers> {
  const receiver = await startReceiver();
  const slow = await startReceiver(SLOW_RECEIVER_DELAY_MS);
  const caDir = mkdtempSync(join(tmpdir(), 'pix-bench-'));
  const caFile = join(caDir, 'receivers.pem');
  writeFileSync(caFile, readFileSync(receiver.caFile, 'utf8') + readFileSync(slow.caFile, 'utf8'));
  const close = async () => {
    await receiver.close();
    await slow.close();
    rmSync(caDir, { recursive: true, force: true });
  };
  return { receiver, slow, caFile, close };
}

/** The scenario BENCH_ONLY names, alone; false when it names none. */
async function runOnly(b: Bench, { receiver, slow }: Receivers): Promise<boolean> {
  if (ONLY === 'isolation' || ONLY === 'lists') {
    const only = ONLY === 'lists' ? await listRuns(b) : null;
    reportIsolation(await isolationRun(b), only);
  } else if (ONLY === 'fairness') {
    printFairness(await fairness(b, receiver, slow));
  } else if (ONLY === 'bcb') {
    printBcb(await bcbRun(b));
  } else if (ONLY === 'console') {
    printConsole(await consoleRun(b));
  } else if (ONLY === 'open') {
    const [open] = await withWebhooks(b, receiver, async (registered) => [await openRun(b, receiver, RATE, registered)]);
    printOpen(RATE, open!);
  } else return false;
  return true;
}

const settings = (url: string) => ({
  clients: CLIENTS,
  seconds: SECONDS,
  accounts: ACCOUNTS,
  settlementDelayMs: SETTLEMENT_DELAY_MS,
  rate: RATE,
  openCap: OPEN_CAP,
  highFraction: HIGH_FRACTION,
  burst: BURST,
  tokenFlood: TOKEN_FLOOD,
  webhooks: WEBHOOKS,
  listRows: LIST_ROWS,
  listClients: LIST_CLIENTS,
  openShare: OPEN_SHARE,
  database: url.replace(/\/\/.*@/, '//'),
});

/** Every run, in order, then the report; exit code 1 if an invariant breaks. */
/** What the run was measured on, for the written page. */
async function machine(url: string, loadAtStart: number): Promise<Machine> {
  const postgres = await withClient(url, (c) => c.query<{ server_version: string }>('show server_version'));
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    memoryBytes: totalmem(),
    system: `${osType()} ${release()}`,
    node: process.version,
    postgres: postgres.rows[0]!.server_version,
    loadAverage: [loadAtStart, loadavg()[0]!],
  };
}

/** Prints the report and, with --write, writes the page; a broken ledger fails the run. */
async function finish(b: Bench, results: Results, startedAt: Date, loadAtStart: number): Promise<void> {
  report(results);
  if (WRITE !== undefined) {
    writeFileSync(WRITE, performancePage({ startedAt, endedAt: new Date(), machine: await machine(b.url, loadAtStart), results }));
    console.log(`\nwritten to ${WRITE}`);
  }
  const { check } = results;
  if (check.sum !== '0' || check.mismatched !== 0 || check.negative !== 0 || check.unreconciled !== 0) process.exitCode = 1;
}

/** BCB's dialect: payload locations beside node:crypto, PUT /v2/cob beside POST /dict/pix, the payer (scripts/bench-bcb.ts). */
async function bcbRun(b: Bench) {
  const pick = spreadPick(b);
  return bcbRuns(b.http, {
    accounts: b.accounts,
    pick,
    admin: ADMIN,
    clients: CLIENTS,
    seconds: SECONDS,
    dictPix: (worker, i) => transfer(pick(worker, i)),
    measure: (run) => measured(b.url, b.pid, run),
  });
}

/** The console's cost: the balance and transfer loops in rounds without and with a console open (scripts/bench-console.ts). */
async function consoleRun(b: Bench) {
  const pick = spreadPick(b);
  return consoleRuns({
    api: b.http,
    origin: `http://127.0.0.1:${PORT}`,
    admin: ADMIN,
    clients: CLIENTS,
    seconds: SECONDS,
    rounds: ROUNDS,
    page: `/console/accounts/${b.accounts[0]!.accountId}`,
    balancesGet: balancesGetOf(b),
    dictPix: (worker, i) => transfer(pick(worker, i)),
    measure: (run) => measured(b.url, b.pid, run),
    settle: () => drained(b.url),
  });
}

async function runAll(b: Bench, { receiver, slow }: Receivers, hotReceiver: Account, startedAt: Date, loadAtStart: number): Promise<void> {
  const web = await httpRuns(b);
  const transfers = await withPgbench((reference) => transferRuns(b, hotReceiver, reference));
  // The open loop at the target rate, then at a share of what the machine did closed-loop: on a
  // machine whose capacity is near (or under) the target rate, the first measures queueing, the
  // second what the service's latency is when it is not saturated.
  const belowRate = Math.round(OPEN_SHARE * transfers.spread.rate);
  const [open, below] = await withWebhooks(b, receiver, async (registered) => [
    await openRun(b, receiver, RATE, registered),
    await openRun(b, receiver, belowRate, registered),
  ]);
  const unfair = await fairness(b, receiver, slow);

  // 6. Overload: a burst far above capacity.
  const overload = await burst(`http://127.0.0.1:${PORT}`, BURST, (i) => transfer(b.accounts[i % b.accounts.length]!), '/health');
  const overloadDrain = await drained(b.url);
  const tokens = await tokenFlood(b, await provision(b.http, ACCOUNTS + 2, false));

  // The ledger invariants, then lists over a large table.
  const check = await invariants(b.url);
  const { lists, listsOpen } = await listRuns(b);
  const isolation = await isolationRun(b);
  const bcb = await bcbRun(b);

  await finish(b, {
    settings: settings(b.url),
    ...web,
    ...transfers,
    ...open,
    below: { rate: belowRate, share: OPEN_SHARE, open: below.open, high: below.high, webhookLags: below.webhookLags },
    overload: { ...overload, drain: overloadDrain },
    tokens,
    lists,
    listsOpen,
    isolation,
    fairness: unfair,
    bcb,
    check,
  }, startedAt, loadAtStart);
}

async function main() {
  // The cluster bench runs services of its own, on a cluster of its own and on the single server.
  if (ONLY === 'cluster') return clusterBench();
  const startedAt = new Date();
  const loadAtStart = loadavg()[0]!;
  const receivers = await startReceivers();
  const name = `pix_bench_${Date.now()}`;
  await withClient(DATABASE_SERVER, (c) => c.query(`create database ${name}`));
  const url = databaseUrl(DATABASE_SERVER, name);
  const { child: service } = await startService(url, receivers.caFile).catch(async (error: unknown) => {
    await receivers.close();
    throw error;
  });
  const http = pool(CLIENTS + 4);
  try {
    await http.api.operator(ADMIN).registerExternalKey({ key: EXTERNAL_KEY, name: 'Bench Receiver', document: EXTERNAL_DOCUMENT, ispb: '60746948' });
    const accounts: Account[] = [];
    for (let i = 0; i < ACCOUNTS; i++) accounts.push(await provision(http.api, i + 1));
    const hotReceiver = await provision(http.api, ACCOUNTS + 1);
    const b: Bench = { url, pid: service.pid!, http: http.api, accounts };
    if (!(await runOnly(b, receivers))) await runAll(b, receivers, hotReceiver, startedAt, loadAtStart);
  } finally {
    await http.close();
    await stopChild(service);
    await receivers.close();
    await withClient(DATABASE_SERVER, (c) => c.query(`drop database if exists ${name} with (force)`));
  }
}

await main();
