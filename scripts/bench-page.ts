// docs/performance.md as the bench writes it (`npm run bench -- --write docs/performance.md`):
// the fixed text below, then the run's table as the terminal shows it, under the date of the run
// and a summary of the machine. A pure function of the run, so that a test can render it.
import { reportParts, type Results } from './bench-report.ts';

/** What the run was measured on. */
export interface Machine {
  /** os.cpus(): how many, and the first one's model. */
  cpus: number;
  cpuModel: string;
  memoryBytes: number;
  /** os.type() and os.release(). */
  system: string;
  /** process.version of the bench (the service runs on the same Node). */
  node: string;
  /** The server's server_version. */
  postgres: string;
  /** The one-minute load average when the run started and when it ended. */
  loadAverage: [number, number];
}

export interface BenchRun {
  startedAt: Date;
  endedAt: Date;
  machine: Machine;
  results: Results;
}

/** Everything above the run's heading: how to run the bench, what it measures, how to read it. */
export const PAGE_TEXT = `# Performance

What \`npm run bench\` measures, how to read its table, and the table of its last run. The bench
writes this page whole (\`scripts/bench-page.ts\`), so it is not edited by hand. The decisions the
figures led to, with the alternatives measured, are in the [decision records](decisions/); why
the bench works the way it does is [decision 0026](decisions/0026-bench-method.md).

## Running the bench

<!-- readme-test: not run (it needs the local PostgreSQL and pgbench, and takes minutes) -->
\`\`\`sh
BENCH_SECONDS=5 npm run bench                                  # prints the table
BENCH_SECONDS=5 npm run bench -- --write docs/performance.md   # and writes this page with it
\`\`\`

\`npm run bench\` needs the local PostgreSQL and \`pgbench\`, and takes several minutes. It prints
its settings, the table, a line per extra figure and the ledger invariants; with \`--write\` it
also writes this page: the text above the run's heading as it is in \`scripts/bench-page.ts\`,
then what it printed, under the date of the run and a summary of the machine. \`--write\` needs the
full run (no \`BENCH_ONLY\`). The exit code is 1 when an invariant breaks.

Knobs: \`BENCH_SECONDS\` (10), \`BENCH_CLIENTS\` (32), \`BENCH_ACCOUNTS\` (64), \`BENCH_RATE\` (2500),
\`BENCH_OPEN_CAP\` (2000 outstanding), \`BENCH_OPEN_SHARE\` (0.6), \`BENCH_HIGH_FRACTION\` (0.1),
\`BENCH_BURST\` (3000), \`BENCH_TOKEN_FLOOD\` (400), \`BENCH_WEBHOOKS=0\`, \`BENCH_WEBHOOK_WAIT_SECONDS\`
(20), \`BENCH_LIST_ROWS\` (1000000), \`BENCH_LIST_CLIENTS\` (8), \`BENCH_ROUNDS\` (3),
\`BENCH_SETTLEMENT_DELAY_MS\` (250), \`BENCH_NODE_ARGS\` (for example
\`--cpu-prof --cpu-prof-dir=/tmp/prof\`), \`BENCH_ISOLATION_CHARGES\` (300000),
\`BENCH_ISOLATION_OTHER_CHARGES\` (100000), \`BENCH_ISOLATION_CLIENTS\` (20), \`BENCH_ISOLATION_RATE\`
(200), \`BENCH_ONLY=isolation\` (provisioning and that scenario alone; \`BENCH_ONLY=lists\` with the
transaction list's runs before it), \`BENCH_ONLY=fairness\` (the webhook fairness scenario alone;
\`BENCH_SLOW_RECEIVER_MS\`, \`BENCH_FLOOD_RATE\` and \`BENCH_FLOOD_SECONDS\` change it),
\`BENCH_ONLY=open\` (the open loop alone), \`BENCH_PORT\` (18080), \`DATABASE_SERVER\`
(\`postgres://postgres@127.0.0.1:5432/postgres\`).

## What the bench measures

The bench creates a fresh database, starts the service on it (API and worker in one process,
\`SETTLEMENT_DELAY_MS=250\`), provisions 64 paying accounts with certificates and money, and
measures every figure in the same run beside the machine's references: pgbench TPC-B (prepared,
16 clients, scale 16) for the database and a bare Fastify hello-world for HTTP. It measures:

- closed loops of 32 clients: \`GET /accounts/balances\`; \`POST /dict/pix\` over the 64 accounts,
  from one hot paying account, between the accounts (each paying the others), and from all of
  them to one hot receiving account of this service (settled internally);
- an open loop offering 2,500 transfers/s (10% HIGH, a webhook registered for every payer,
  latency counted from the scheduled send), with the HIGH settlement lag and the webhook
  delivery lag; it runs a second time at 0.6 × the closed-loop spread rate, below the machine's
  capacity: where the target rate is near what the machine can do (or above it), the first run
  measures queueing, and the second shows the service's latency when it is not saturated;
- a burst of 3,000 transfers at once (admission control);
- \`GET /api/transactions\` with 1M more rows in the table;
- balance reads and lists also offered at a fixed rate, the same share of their own closed-loop
  rate: a closed loop of 8 or 32 clients measures its own queue as much as the service;
- a flood of 400 token requests with wrong credentials, each from an address of its own (none
  reaches the limit on failures), against the limits on token requests; 200 ms into it, a client
  that had a token before asks again, and another asks for its first;
- one account's \`GET /balance\` offered at a fixed rate, alone and while another account runs 20
  heavy lists at once (\`GET /cob\` of its 300,000 charges, 1000 a page; \`scripts/bench-lists.ts\`),
  target p99 < 50 ms and no 503;
- one account receiving 150 Pix at 10/s with three \`cash_in\` URLs on a receiver that answers
  after 12 s, while another account's webhooks go to the fast receiver
  (\`scripts/bench-fairness.ts\`): that account's webhook lag, target p99 < 1 s;
- BCB's dialect (\`scripts/bench-bcb.ts\`): \`GET /qr/v2/{token}\`, the signed payload every QR
  scan fetches, against node:crypto alone signing the same bytes with an RSA-2048 key and PS256,
  as many at once as there are clients (signing is the physical limit; target ≥ 0.8 ×);
  \`PUT /v2/cob/{txid}\` against \`POST /dict/pix\` run right before and after it (target
  ≥ 0.5 ×); and the sandbox payer's whole dynamic path (fetch the location, verify the JWS and its
  chain, pay), its rate and p99;
- the ledger invariants, after everything.

For each load it also reports the CPU per operation of PostgreSQL, of the service and of the
load generator (the bench process; the webhook receiver runs in a process of its own, so that it
does not delay the open loop's sends), transfers per commit and per WAL flush (\`pg_stat_wal\`),
and WAL bytes per transfer, and the load generator's own event-loop delay during each fixed-rate
run, since it counts in their latencies.

## Reading the table

The machine is named under the run's heading. The development machine is a shared VM whose speed
drifts within minutes, where a rate alone says as much about the neighbours as about the
service. So the spread run is made three times, with pgbench right before, between and after the
rounds, and each round is compared with the mean of the two pgbench runs beside it. The balance
read is measured the same way against the hello-world. The round with the median ratio is the
one in the table (\`BENCH_ROUNDS\`, default 3; every round's ratio is printed under it). The hot
receiving account is compared with the same transfers between the service's accounts, spread
over all of them as receivers: a transfer between two of our accounts does more than a transfer
out (the receiver's row, credit and notification). Ratios are printed rounded down, so that
0.997 × against a target of 1.0 is not printed 1.00.

The columns: \`per s\` is answers with the expected status per second; \`ratio\` sets that rate
against the row's reference (pgbench, the hello-world, another row, or the rate offered);
\`target\` gives each target with its verdict, \`met\` or \`NOT met\`; \`p50 ms\` and \`p99 ms\` are
latencies, from the scheduled send in the fixed-rate runs (a stall of the service is not hidden
by a client that waited for it); the CPU columns are milliseconds of CPU per operation; the WAL
columns, for transfers only, are transfers per commit of the database and per WAL flush of the
server, and WAL bytes per transfer; \`settled/s\` is what settled during the run, \`backlog at end\`
the settlement queue at the end of the run; \`statuses\` counts every answer by status. The
lines under the table give every round's ratio, the time each settlement queue took to empty,
the load generator's event-loop delay, and what the table has no column for.

The survival checks (chaos with every process killed in turn and PostgreSQL restarted, the
idempotency storm, soak, the hostile-input and SSRF tests) are not the bench's: they run in CI
([operations](operations.md#survival-tests)).

## What the figures rest on

Requests that arrive together go to the database as one batch, one batch in flight per process
([0010](decisions/0010-transfer-batching.md)); the blocked money of an account is spread over 8
shards, NORM and HIGH in separate halves ([0011](decisions/0011-sharded-blocked-money.md));
settlement is set-based, HIGH before NORM, to other institutions and between two accounts of
this service alike ([0012](decisions/0012-set-based-settlement.md)), in rounds at most every 50
ms ([0013](decisions/0013-settlement-round-interval.md)); the worker keeps planner statistics
fresh where autovacuum does not run, with a sample of 3,000 rows per table
([0014](decisions/0014-table-maintenance-without-autovacuum.md)); queries go through
node-postgres's callback form ([0015](decisions/0015-node-postgres-callback-form.md)); the hot
statements are prepared ([0016](decisions/0016-prepared-hot-statements.md)); one-column rules
are domains ([0017](decisions/0017-column-rules-as-domains.md)); balance reads are coalesced
([0018](decisions/0018-balance-reads-coalesced.md)); deliveries are leases claimed in chunks
([0021](decisions/0021-webhook-delivery-lease.md)); the hot tables have no foreign keys and few
indexes ([0022](decisions/0022-hot-tables-without-foreign-keys.md)); a list page is one
statement ([0023](decisions/0023-list-pages-built-in-typescript.md)); and the request path lost
what its profiles showed ([0024](decisions/0024-request-path-costs.md)). Webhook delivery is fair
between accounts ([0001](decisions/0001-fair-webhook-delivery.md)), one account's lists cannot
take the database from the others ([0002](decisions/0002-list-isolation.md)), and V8's compiler
threads are left at Node's default ([0025](decisions/0025-v8-compiler-threads-left-alone.md)).
`;

const utc = (d: Date) => `${d.toISOString().slice(0, 10)}, ${d.toISOString().slice(11, 16)} UTC`;

function duration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/** The machine and the run's length in a sentence. */
export function machineLine(run: BenchRun): string {
  const m = run.machine;
  return (
    `Machine: ${m.cpus} × ${m.cpuModel}, ${(m.memoryBytes / 2 ** 30).toFixed(1)} GiB of memory, ${m.system}; Node ${m.node}; ` +
    `PostgreSQL ${m.postgres}. Load average (1 minute) ${m.loadAverage[0].toFixed(2)} at the start and ` +
    `${m.loadAverage[1].toFixed(2)} at the end; the run took ${duration(run.endedAt.getTime() - run.startedAt.getTime())}.`
  );
}

/** The whole of docs/performance.md for one run: what the terminal shows, with Markdown's blank lines. */
export function performancePage(run: BenchRun): string {
  const p = reportParts(run.results);
  return [PAGE_TEXT, `## The run of ${utc(run.startedAt)}`, '', machineLine(run), '', p.settings, '', ...p.table, '', ...p.lines, '', p.invariants, ''].join('\n');
}
