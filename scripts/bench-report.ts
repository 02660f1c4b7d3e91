// The printed result of scripts/bench.ts: one table with every figure and its target, then a line
// per extra figure, then the invariants.
import type { Costs, Invariants } from './bench-db.ts';
import type { IsolationResult } from './bench-lists.ts';
import type { BcbResults } from './bench-bcb.ts';
import { consoleReport, type ConsoleResults } from './bench-console.ts';
import type { FairnessResult } from './bench-fairness.ts';
import { percentile, type BurstResult, type LoadResult, type OpenLoopResult } from './bench-load.ts';

/** A ratio to two decimals, rounded down: 0.997 × is printed 0.99, not the 1.00 a target of 1.0 would not call met. */
const ratio = (x: number) => (Math.floor(x * 100) / 100).toFixed(2);

export interface Drain {
  left: number;
  ms: number;
}

/** A transfer run, with what settled during it, the queue at its end and the time to empty it. */
export interface Settling {
  settled: number;
  backlog: number;
  drain: Drain;
}

export interface Results {
  settings: {
    clients: number;
    seconds: number;
    accounts: number;
    settlementDelayMs: number;
    rate: number;
    openCap: number;
    highFraction: number;
    burst: number;
    tokenFlood: number;
    webhooks: boolean;
    listRows: number;
    listClients: number;
    /** The fixed-rate runs offer this share of the closed-loop rate. */
    openShare: number;
    database: string;
  };
  /** pgbench tps: the mean of the runs right before and right after the reported spread run. */
  reference: number;
  referenceRuns: [number, number];
  /** Every spread round: its rate and its reference (the reported one is the median ratio). */
  spreadRounds: { rate: number; reference: number }[];
  /**
   * The hello-world run just before the reported balance round (its latencies and costs), with the
   * reference that round is compared with (the mean of the runs before and after it) and every balance round.
   */
  hello: LoadResult & Costs & { reference: number; referenceRuns: [number, number]; rounds: { rate: number; reference: number }[] };
  balances: LoadResult & Costs;
  /** Balance reads offered at a fixed rate (openShare × the reported balance round's rate). */
  balancesOpen: ReadsAtRate;
  spread: LoadResult & Costs & Settling;
  hot: LoadResult & Costs & Settling;
  /** Transfers between the accounts of the service, each paying the others: the hot receiver's baseline. */
  spreadIn: LoadResult & Costs & Settling;
  hotIn: LoadResult & Costs & Settling;
  open: OpenLoopResult & Costs & Settling;
  /** The same open loop at a share of the closed-loop spread rate (below the machine's capacity). */
  below: { rate: number; share: number; open: OpenLoopResult & Costs & Settling; high: number[]; webhookLags: number[] };
  /** Ascending lags, ms (Infinity: never). */
  high: number[];
  highFrom201: number[];
  webhookLags: number[];
  webhooks: { registered: number; delivered: number; received: number; waitedMs: number };
  overload: BurstResult & { drain: Drain };
  /** Token requests with wrong credentials at once, and two right ones 200 ms into the flood. */
  tokens: BurstResult & { again: TimedAnswer; first: TimedAnswer };
  lists: LoadResult & Costs;
  /** Lists offered at a fixed rate (openShare × the closed loop's). */
  listsOpen: ReadsAtRate;
  /** Another account's balance reads while one account runs heavy lists. */
  isolation: IsolationResult;
  /** One account floods a slow receiver; another account's webhook lag (scripts/bench-fairness.ts). */
  fairness: FairnessResult;
  /** BCB's dialect: payload locations, PUT /v2/cob, the payer (scripts/bench-bcb.ts). */
  bcb: BcbResults;
  check: Invariants;
}

export interface TimedAnswer {
  status: number;
  ms: number;
}

export type ReadsAtRate = OpenLoopResult & Costs & { offeredRate: number };

export interface Row {
  label: string;
  rate?: number;
  ratio?: string;
  target?: string;
  p50?: number;
  p99?: number;
  costs?: Costs;
  /** Only the serving process's CPU is the row's (PostgreSQL does nothing for it). */
  noDatabase?: boolean;
  /** WAL columns are for transfers only. */
  transfers?: boolean;
  settled?: number;
  backlog?: number;
  statuses?: Record<string, number>;
}

const ms = (v: number) => (Number.isNaN(v) ? '' : v === Infinity ? 'never' : v.toFixed(1));
const num = (v: number | undefined, digits = 0) => (v === undefined || Number.isNaN(v) ? '' : v.toFixed(digits));
const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');

/** The table of `rows`, one Markdown line each: the same on the terminal and in docs/performance.md. */
function tableLines(rows: Row[]): string[] {
  const out = [
    '| figure | per s | ratio | target | p50 ms | p99 ms | PostgreSQL CPU ms/op | service CPU ms/op | load generator CPU ms/op | transfers/commit | ' +
      'transfers/WAL flush | WAL bytes/transfer | settled/s | backlog at end | statuses |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    const c = r.costs;
    const wal = c && r.transfers ? [num(c.perCommit, 1), num(c.perSync, 1), num(c.walBytes)] : ['', '', ''];
    const cells = [
      r.label,
      num(r.rate),
      r.ratio ?? '',
      r.target ?? '',
      r.p50 === undefined ? '' : ms(r.p50),
      r.p99 === undefined ? '' : ms(r.p99),
      c && !r.noDatabase ? num(c.pgMs, 2) : '',
      c ? num(c.procMs, 2) : '',
      c ? num(c.loadMs, 2) : '',
      ...wal,
      num(r.settled),
      num(r.backlog),
      r.statuses ? JSON.stringify(r.statuses) : '',
    ];
    out.push(`| ${cells.join(' | ')} |`);
  }
  return out;
}

function printTable(rows: Row[]): void {
  for (const line of tableLines(rows)) console.log(line);
}

const transferRow = (label: string, r: LoadResult & Costs & Settling, ratio: string, target = ''): Row => ({
  label,
  rate: r.rate,
  ratio,
  target,
  p50: r.p50,
  p99: r.p99,
  costs: r,
  transfers: true,
  settled: r.settled,
  backlog: r.backlog,
  statuses: r.statuses,
});

/** An open loop's statuses, with the requests it did not send (too many outstanding). */
const openStatuses = (o: OpenLoopResult) => ({ ...o.statuses, ...(o.notSent > 0 ? { 'not sent': o.notSent } : {}) });

/** Reads offered at a fixed rate: latency from the scheduled send. */
const openRow = (label: string, o: OpenLoopResult, offeredRate: number): Row => ({
  label: `${label} (${offeredRate}/s; latency from the scheduled send)`,
  rate: o.rate,
  ratio: `${ratio(o.rate / offeredRate)} × offered`,
  p50: o.p50,
  p99: o.p99,
  statuses: openStatuses(o),
});
const atRate = (label: string, r: ReadsAtRate): Row => ({ ...openRow(label, r, r.offeredRate), costs: r });

/** The two references and the balance reads compared with the HTTP one. */
function referenceRows(r: Results): Row[] {
  const s = r.settings;
  const balanceRatio = r.balances.rate / r.hello.reference;
  return [
    {
      label:
        `pgbench TPC-B (prepared, 16 clients, scale 16; mean of ${Math.round(r.referenceRuns[0])} just before and ` +
        `${Math.round(r.referenceRuns[1])} just after the spread run${r.spreadRounds.length > 1 ? ` with the median of ${r.spreadRounds.length} ratios` : ''})`,
      rate: r.reference,
      ratio: '1.00 (database reference)',
    },
    {
      label:
        `GET / bare Fastify hello-world (child process; its CPU in the service column; mean of ${Math.round(r.hello.referenceRuns[0])} just before and ` +
        `${Math.round(r.hello.referenceRuns[1])} just after the balance run${r.hello.rounds.length > 1 ? ` with the median of ${r.hello.rounds.length} ratios` : ''}; latencies and CPU of the run before)`,
      rate: r.hello.reference,
      ratio: '1.00 (HTTP reference)',
      p50: r.hello.p50,
      p99: r.hello.p99,
      costs: r.hello,
      noDatabase: true,
      statuses: r.hello.statuses,
    },
    {
      label: 'GET /accounts/balances (authenticated)',
      rate: r.balances.rate,
      ratio: `${ratio(balanceRatio)} × hello-world`,
      target: `≥ 0.5 × hello-world: ${verdict(balanceRatio >= 0.5)}`,
      p50: r.balances.p50,
      p99: r.balances.p99,
      costs: r.balances,
      statuses: r.balances.statuses,
    },
    atRate(`the same reads offered at a fixed rate, ${s.openShare} × the closed loop's`, r.balancesOpen),
  ];
}

/** The closed-loop transfer runs, against pgbench and against each other. */
function closedTransferRows(r: Results): Row[] {
  const s = r.settings;
  const spreadRatio = r.spread.rate / r.reference;
  const hotInRatio = r.hotIn.rate / r.spreadIn.rate;
  const hotInSettledRatio = r.hotIn.settled / r.spreadIn.settled;
  return [
    transferRow(
      `POST /dict/pix over ${s.accounts} accounts`,
      r.spread,
      `${ratio(spreadRatio)} × pgbench`,
      `≥ 0.75 × pgbench: ${verdict(spreadRatio >= 0.75)}; ≥ 1.0 ×: ${verdict(spreadRatio >= 1)}`,
    ),
    transferRow('POST /dict/pix, one hot paying account', r.hot, `${ratio(r.hot.rate / r.reference)} × pgbench`),
    transferRow(
      `POST /dict/pix between the ${s.accounts} accounts, each paying the others (internal)`,
      r.spreadIn,
      `${ratio(r.spreadIn.rate / r.spread.rate)} × spread out`,
    ),
    transferRow(
      `POST /dict/pix, ${s.accounts} payers to one hot receiving account (internal)`,
      r.hotIn,
      `${ratio(hotInRatio)} × internal spread (settled ${ratio(hotInSettledRatio)} ×)`,
      `≥ 0.8 × internal spread, accepted and settled: ${verdict(Math.min(hotInRatio, hotInSettledRatio) >= 0.8)}`,
    ),
  ];
}

/** The open loops of transfers, then the lags of HIGH settlement and of webhooks. */
function openTransferRows(r: Results): Row[] {
  const s = r.settings;
  const highP99 = percentile(r.high, 99);
  const webhookP99 = percentile(r.webhookLags, 99);
  return [
    {
      ...transferRow(
        `POST /dict/pix, open loop, ${s.rate}/s offered, ${Math.round(s.highFraction * 100)}% HIGH, webhooks ${s.webhooks ? 'on' : 'off'} ` +
          '(latency from the scheduled send; costs until settled and delivered)',
        r.open,
        `${ratio(r.open.rate / s.rate)} × offered (settled ${ratio(r.open.settled / s.rate)} ×)`,
        `p99 ≤ 50 ms, every offered one accepted: ${verdict(r.open.p99 <= 50 && r.open.ok === r.open.offered)}`,
      ),
      statuses: openStatuses(r.open),
    },
    {
      ...transferRow(
        `the same open loop at ${r.below.rate}/s, ${r.below.share} × the closed-loop spread rate (HIGH settlement lag p99 ` +
          `${ms(percentile(r.below.high, 99))} ms${s.webhooks ? `, webhook lag p99 ${ms(percentile(r.below.webhookLags, 99))} ms` : ''})`,
        r.below.open,
        `${ratio(r.below.open.rate / r.below.rate)} × offered (settled ${ratio(r.below.open.settled / r.below.rate)} ×)`,
      ),
      statuses: openStatuses(r.below.open),
    },
    {
      label: `HIGH settlement lag: processed_at − created_at (${r.high.length} transfers)`,
      p50: percentile(r.high, 50),
      p99: highP99,
      target: `p99 < 1000 ms: ${verdict(highP99 < 1000)}`,
    },
    s.webhooks
      ? {
          label: `webhook lag: settlement (processed_at) → receiver (${r.webhookLags.length} cash_out)`,
          p50: percentile(r.webhookLags, 50),
          p99: webhookP99,
          target: `p99 < 1000 ms: ${verdict(webhookP99 < 1000)}`,
        }
      : { label: 'webhook lag: not measured (BENCH_WEBHOOKS=0)' },
  ];
}

/** The burst of transfers and the flood of token requests. */
function overloadRows(r: Results): Row[] {
  const s = r.settings;
  const refused = r.overload.statuses['503'] ?? 0;
  const onlyStatuses = Object.keys(r.overload.statuses).every((k) => /^\d+$/.test(k));
  return [
    {
      label: `overload: ${s.burst} POST /dict/pix at once (latency of the 503s)`,
      ratio: `${refused} × 503 of ${s.burst}`,
      target: `quick 503s (p99 < 1000 ms), no timeouts: ${verdict(refused > 0 && r.overload.refusedP99 < 1000 && onlyStatuses)}`,
      p50: r.overload.refusedP50,
      p99: r.overload.refusedP99,
      statuses: r.overload.statuses,
    },
    {
      label: `token flood: ${s.tokenFlood} POST /api/auth/token with wrong credentials at once, each from its own address (latency of the 503s)`,
      ratio: `${r.tokens.statuses['503'] ?? 0} × 503 of ${s.tokenFlood}`,
      target: `quick 503s, a known client still served: ${verdict(
        (r.tokens.statuses['503'] ?? 0) > 0 && r.tokens.refusedP99 < 1000 && r.tokens.again.status === 201 && r.tokens.again.ms < 1000,
      )}`,
      p50: r.tokens.refusedP50,
      p99: r.tokens.refusedP99,
      statuses: r.tokens.statuses,
    },
  ];
}

function rows(r: Results): Row[] {
  const s = r.settings;
  return [
    ...referenceRows(r),
    ...closedTransferRows(r),
    ...openTransferRows(r),
    fairnessRow(r.fairness),
    ...listRows({ lists: r.lists, listsOpen: r.listsOpen, clients: s.listClients, rows: s.listRows, share: s.openShare }),
    ...isolationRows(r.isolation),
    ...bcbReport(r.bcb).rows,
    ...overloadRows(r),
  ];
}

/** One account's transaction list, closed loop and at a fixed rate. */
export interface ListRuns {
  lists: LoadResult & Costs;
  listsOpen: ReadsAtRate;
  clients: number;
  /** Rows added to the table, 1 in 1000 of them the listing account's. */
  rows: number;
  share: number;
}

function listRows(l: ListRuns): Row[] {
  return [
    {
      label: `GET /api/transactions (size 20, ${l.clients} clients) with ${l.rows} more rows in the table (${l.rows / 1000} for this account)`,
      rate: l.lists.rate,
      target: `p99 < 10 ms: ${verdict(l.lists.p99 < 10)}`,
      p50: l.lists.p50,
      p99: l.lists.p99,
      costs: l.lists,
      statuses: l.lists.statuses,
    },
    {
      ...atRate(`the same lists offered at a fixed rate, ${l.share} × the closed loop's`, l.listsOpen),
      target: `p99 < 10 ms: ${verdict(l.listsOpen.p99 < 10 && l.listsOpen.ok === l.listsOpen.offered)}`,
    },
  ];
}

/** The victim's balance reads alone and during the heavy lists, and the lists themselves. */
function isolationRows(i: IsolationResult): Row[] {
  const s = i.settings;
  const refused = i.victim.statuses['503'] ?? 0;
  const met = i.victim.p99 < 50 && refused === 0 && i.victim.ok === i.victim.offered;
  return [
    openRow('GET /balance of one account, nobody listing', i.alone, s.victimRate),
    {
      ...openRow(`the same while another account runs ${s.listClients} heavy lists at once`, i.victim, s.victimRate),
      target: `p99 < 50 ms, no 503: ${verdict(met)}`,
    },
    {
      label:
        `GET /cob of that account (${s.charges} charges over 30 days, ${s.otherCharges} of other accounts; 1000 a page, ` +
        `a 30-day interval, pages spread over all; ${s.listClients} clients)`,
      rate: i.lists.rate,
      p50: i.lists.p50,
      p99: i.lists.p99,
      statuses: i.lists.statuses,
    },
  ];
}

/** BENCH_ONLY=isolation: the isolation rows alone (BENCH_ONLY=lists: after the list rows). */
export function reportIsolation(i: IsolationResult, lists: ListRuns | null): void {
  printTable([...(lists ? listRows(lists) : []), ...isolationRows(i)]);
  console.log(`\n- the load generator's own event-loop delay (p99 / max, ms) during the victim's run: ${ms(i.victim.generatorDelayP99)} / ${ms(i.victim.generatorDelayMax)}`);
}

function lines(r: Results): string[] {
  const s = r.settings;
  const drains = [r.spread.drain, r.hot.drain, r.spreadIn.drain, r.hotIn.drain, r.open.drain, r.below.open.drain, r.overload.drain];
  const rounds = (all: { rate: number; reference: number }[]) =>
    all.map((x) => `${ratio(x.rate / x.reference)} (${x.rate.toFixed(0)}/s against ${x.reference.toFixed(0)})`).join(', ');
  return [
    `- balance rounds, each against the mean of the hello-world runs right before and after it: ${rounds(r.hello.rounds)}`,
    `- spread rounds, each against the mean of the pgbench runs right before and after it: ${rounds(r.spreadRounds)}`,
    `- settlement queue at the end of each run / time to empty it afterwards: spread ${r.spread.backlog} / ${r.spread.drain.ms} ms, ` +
      `hot payer ${r.hot.backlog} / ${r.hot.drain.ms} ms, internal spread ${r.spreadIn.backlog} / ${r.spreadIn.drain.ms} ms, ` +
      `hot receiver ${r.hotIn.backlog} / ${r.hotIn.drain.ms} ms, ` +
      `open loop ${r.open.backlog} / ${r.open.drain.ms} ms, open loop below capacity ${r.below.open.backlog} / ${r.below.open.drain.ms} ms, overload burst ${r.overload.drain.ms} ms` +
      (drains.some((d) => d.left > 0) ? ' (NOT emptied within 60 s)' : ''),
    `- open loop: ${r.open.offered} offered over ${s.seconds} s, ${r.open.offered - r.open.notSent} sent, ${r.open.notSent} not sent ` +
      `(at most ${s.openCap} outstanding); last answer after ${r.open.elapsed.toFixed(1)} s; p99 of every answer (201 or not) ` +
      `${ms(r.open.p99All)} ms; refused with 503: ${r.open.statuses['503'] ?? 0}`,
    `- the load generator's own event-loop delay (p99 / max, ms) in the fixed-rate runs, part of their latencies: ` +
      (
        [
          ['balances', r.balancesOpen],
          ['transfers at the target rate', r.open],
          ['transfers below capacity', r.below.open],
          ['lists', r.listsOpen],
        ] as [string, OpenLoopResult][]
      )
        .map(([name, o]) => `${name} ${ms(o.generatorDelayP99)} / ${ms(o.generatorDelayMax)}`)
        .join(', '),
    `- HIGH: from the 201 as the client saw it to processed_at p50 ${ms(percentile(r.highFrom201, 50))} ms, ` +
      `p99 ${ms(percentile(r.highFrom201, 99))} ms (negative: settled before the answer arrived); ` +
      `not settled: ${r.high.filter((v) => v === Infinity).length}`,
    s.webhooks
      ? `- webhooks: cash_out registered for ${r.webhooks.registered} accounts; ${r.webhooks.delivered} of ${r.webhookLags.length} ` +
        `transfers delivered by ${(r.webhooks.waitedMs / 1000).toFixed(1)} s after the settlement queue emptied ` +
        `(${r.webhooks.received} requests received; the receiver runs in a process of its own)`
      : '- webhooks: off',
    fairnessLine(r.fairness),
    ...bcbReport(r.bcb).lines,
    `- overload: ${r.overload.withRetryAfter} of the 503s carried Retry-After; the accepted ones p99 ${ms(r.overload.acceptedP99)} ms; ` +
      `last answer ${ms(r.overload.lastAnswerMs)} ms after the burst`,
    `- token flood: last answer ${ms(r.tokens.lastAnswerMs)} ms after it left; 200 ms into it, a client that had a token before asked again: ` +
      `${r.tokens.again.status} in ${ms(r.tokens.again.ms)} ms; a client asking for its first: ${r.tokens.first.status} in ${ms(r.tokens.first.ms)} ms`,
  ];
}

function fairnessRow(f: FairnessResult): Row {
  const p99 = percentile(f.victimLags, 99);
  return {
    label: `webhook lag of an account while another floods a slow receiver: Pix received → receiver (${f.victimLags.length} cash_in)`,
    p50: percentile(f.victimLags, 50),
    p99,
    target: `p99 < 1000 ms: ${verdict(p99 < 1000)}`,
  };
}

function fairnessLine(f: FairnessResult): string {
  return (
    `- fairness: one account received ${f.floodPix} Pix with ${f.floodUrls} cash_in URLs on a receiver answering after ${f.slowDelayMs} ms ` +
    `(${f.floodRequests} requests reached it; ${f.floodAttempts} cash_in attempts logged, the last 100 ${JSON.stringify(f.floodErrors)}); another account received ${f.victimSent} Pix meanwhile: its webhook lag p50 ` +
    `${ms(percentile(f.victimLags, 50))} ms, p99 ${ms(percentile(f.victimLags, 99))} ms, max ${ms(f.victimLags.at(-1) ?? NaN)} ms` +
    `${f.victimLags.includes(Infinity) ? `, ${f.victimLags.filter((x) => x === Infinity).length} never arrived` : ''}`
  );
}

/** The rows and lines the report prints of these runs. */
function bcbReport(r: BcbResults): { rows: Row[]; lines: string[] } {
  const dictPix = (r.dictPix[0].rate + r.dictPix[1].rate) / 2;
  const qrShare = r.qr.rate / r.signing.rate;
  const cobShare = r.cob.rate / dictPix;
  return {
    rows: [
      { label: `node:crypto alone: PS256 signatures of the same bytes, RSA-2048, ${r.clients} in flight (the physical limit)`, rate: r.signing.rate, p50: r.signing.p50, p99: r.signing.p99 },
      { label: 'GET /qr/v2/{token}: the signed payload a QR scan fetches', rate: r.qr.rate, ratio: `${ratio(qrShare)} × signing`, target: `≥ 0.8: ${verdict(qrShare >= 0.8)}`, p50: r.qr.p50, p99: r.qr.p99, costs: r.qr, statuses: r.qr.statuses },
      { label: 'POST /dict/pix beside it (before and after)', rate: dictPix, p50: r.dictPix[0].p50, p99: r.dictPix[0].p99, costs: r.dictPix[0] },
      { label: 'PUT /v2/cob/{txid}: a charge with its location and dynamic BR Code', rate: r.cob.rate, ratio: `${ratio(cobShare)} × POST /dict/pix`, target: `≥ 0.5: ${verdict(cobShare >= 0.5)}`, p50: r.cob.p50, p99: r.cob.p99, costs: r.cob, statuses: r.cob.statuses },
      { label: 'POST /sandbox/payer/pay: fetch the location, verify the JWS and its chain, pay', rate: r.payer.rate, p50: r.payer.p50, p99: r.payer.p99, costs: r.payer, statuses: r.payer.statuses },
    ],
    lines: [
      `- API Pix: POST /dict/pix beside PUT /v2/cob, before and after it: ${r.dictPix[0].rate.toFixed(0)}/s and ${r.dictPix[1].rate.toFixed(0)}/s; ` +
        `the payer's run: ${r.payer.ok} codes paid, p99 ${ms(r.payer.p99)} ms`,
    ],
  };
}

/** BCB's dialect alone (BENCH_ONLY=bcb). */
export function printBcb(r: BcbResults): void {
  const { rows: bcbRows, lines } = bcbReport(r);
  printTable(bcbRows);
  for (const line of lines) console.log(line);
}

/** The console's cost alone (BENCH_ONLY=console): a row per round, then the spreads (scripts/bench-console.ts). */
export function printConsole(r: ConsoleResults): void {
  const { rows: consoleRows, lines } = consoleReport(r);
  printTable(consoleRows);
  for (const line of lines) console.log(line);
}

/** The fairness scenario alone (BENCH_ONLY=fairness). */
export function printFairness(f: FairnessResult): void {
  printTable([fairnessRow(f)]);
  console.log(fairnessLine(f));
}

/** The settings of the run in a sentence. */
export function settingsLine(r: Results): string {
  const s = r.settings;
  return (
    `${s.clients} concurrent clients per closed loop, ${s.seconds} s per run, ${s.accounts} paying accounts, ` +
    `NORM settles ${s.settlementDelayMs} ms after arrival; PostgreSQL ${s.database}; "op" is a request (GET rows) or an accepted transfer`
  );
}

export function invariantsLine(r: Results): string {
  return (
    `invariants: sum of all balances = ${r.check.sum} (must be 0), balances not equal to their postings = ${r.check.mismatched}, ` +
    `negative balances = ${r.check.negative}, accounts whose balance is not what their transactions say = ${r.check.unreconciled}`
  );
}

/** What the full run reports: its settings, the table, a line per extra figure, the invariants. */
export function reportParts(r: Results): { settings: string; table: string[]; lines: string[]; invariants: string } {
  return { settings: settingsLine(r), table: tableLines(rows(r)), lines: lines(r), invariants: invariantsLine(r) };
}

export function report(r: Results): void {
  const p = reportParts(r);
  console.log(['', p.settings, ...p.table, '', ...p.lines, '', p.invariants].join('\n'));
}
