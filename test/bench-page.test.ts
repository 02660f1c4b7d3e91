import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { PAGE_TEXT, performancePage, type BenchRun } from '../scripts/bench-page.ts';
import type { Costs } from '../scripts/bench-db.ts';
import type { LoadResult, OpenLoopResult } from '../scripts/bench-load.ts';
import type { Results } from '../scripts/bench-report.ts';

/**
 * docs/performance.md is written by `npm run bench -- --write docs/performance.md`: rendered here
 * from a fixed run, the page has its sections in order and the run's figures in its table, and
 * the committed page is the bench's text above its run.
 */

const startedAt = new Date('2026-11-24T14:03:27Z');

const load = (rate: number, p50: number, p99: number, status = 201): LoadResult => ({
  ok: rate * 5,
  seconds: 5,
  rate,
  p50,
  p99,
  statuses: { [String(status)]: rate * 5 },
  startedAt,
  endedAt: new Date(startedAt.getTime() + 5000),
});

const costs: Costs = { pgMs: 0.123, procMs: 0.0456, loadMs: 0.0789, perCommit: 17.25, perSync: 18.5, walBytes: 3100 };

const open = (rate: number, offered: number, p50: number, p99: number, status = 201): OpenLoopResult => ({
  ...load(rate, p50, p99, status),
  offered: offered * 5,
  notSent: 0,
  elapsed: 5.2,
  p99All: p99,
  generatorDelayP99: 3.1,
  generatorDelayMax: 12.4,
});

const settling = { settled: 3900, backlog: 120, drain: { left: 0, ms: 850 } };
const lags = (...values: number[]) => values.sort((a, b) => a - b);

const results: Results = {
  settings: {
    clients: 32,
    seconds: 5,
    accounts: 64,
    settlementDelayMs: 250,
    rate: 2500,
    openCap: 2000,
    highFraction: 0.1,
    burst: 3000,
    tokenFlood: 400,
    webhooks: true,
    listRows: 1_000_000,
    listClients: 8,
    openShare: 0.6,
    database: 'postgres://127.0.0.1:5432/pix_bench_1',
  },
  reference: 5000,
  referenceRuns: [4900, 5100],
  spreadRounds: [
    { rate: 4600, reference: 5000 },
    { rate: 5100, reference: 5000 },
    { rate: 5300, reference: 5000 },
  ],
  hello: { ...load(41_000, 0.6, 2.1, 200), ...costs, reference: 41_000, referenceRuns: [40_000, 42_000], rounds: [{ rate: 20_000, reference: 41_000 }] },
  // 20,000 against 41,000 is 0.4878: printed 0.48, rounded down.
  balances: { ...load(20_000, 1.4, 5.2, 200), ...costs },
  balancesOpen: { ...open(12_000, 12_000, 1.8, 20.2, 200), ...costs, offeredRate: 12_000 },
  spread: { ...load(5100, 6.8, 21.9), ...costs, ...settling },
  hot: { ...load(5500, 6.1, 13.9), ...costs, ...settling },
  spreadIn: { ...load(4200, 6.2, 36.1), ...costs, ...settling },
  hotIn: { ...load(4600, 6.8, 20.1), ...costs, ...settling },
  open: { ...open(2500, 2500, 4.1, 48.9), ...costs, ...settling },
  below: { rate: 3060, share: 0.6, open: { ...open(3060, 3060, 3.9, 23.1), ...costs, ...settling }, high: lags(20, 40, 56), webhookLags: lags(30, 50, 64) },
  high: lags(10, 30, 65),
  highFrom201: lags(-2, 5, 40),
  webhookLags: lags(15, 35, 67),
  webhooks: { registered: 64, delivered: 3, received: 3, waitedMs: 1200 },
  overload: { sent: 3000, statuses: { '201': 2241, '503': 759 }, refusedP50: 150, refusedP99: 224, acceptedP99: 900, lastAnswerMs: 1100, withRetryAfter: 759, drain: { left: 0, ms: 600 } },
  tokens: {
    sent: 400,
    statuses: { '401': 18, '503': 382 },
    refusedP50: 40,
    refusedP99: 89,
    acceptedP99: 0,
    lastAnswerMs: 700,
    withRetryAfter: 382,
    again: { status: 201, ms: 3.5 },
    first: { status: 201, ms: 550 },
  },
  lists: { ...load(2000, 3.8, 8.0, 200), ...costs },
  listsOpen: { ...open(1200, 1200, 1.8, 22.3, 200), ...costs, offeredRate: 1200 },
  isolation: {
    settings: { charges: 300_000, otherCharges: 100_000, listClients: 20, victimRate: 200, seconds: 5 },
    alone: open(200, 200, 1.5, 5.9, 200),
    victim: open(200, 200, 1.8, 41, 200),
    lists: load(12, 900, 1600, 200),
  },
  fairness: {
    floodPix: 150,
    floodUrls: 3,
    slowDelayMs: 12_000,
    floodRequests: 16,
    floodAttempts: 20,
    floodErrors: { timeout: 16 },
    victimSent: 75,
    victimLags: lags(90, 110, 250),
  },
  bcb: {
    signing: { rate: 1800, p50: 17.2, p99: 30.1 },
    qr: { ...load(1500, 19.5, 44, 200), ...costs },
    dictPix: [
      { ...load(3900, 7.2, 21), ...costs },
      { ...load(3800, 7.4, 22), ...costs },
    ],
    cob: { ...load(2600, 11.2, 30), ...costs },
    payer: { ...load(180, 160, 320), ...costs },
    clients: 32,
  },
  check: { sum: '0', mismatched: 0, negative: 0, unreconciled: 0 },
};

const run: BenchRun = {
  startedAt,
  endedAt: new Date(startedAt.getTime() + 552_000),
  machine: {
    cpus: 2,
    cpuModel: 'Test CPU @ 2.20GHz',
    memoryBytes: 8 * 2 ** 30,
    system: 'Linux 6.8.0',
    node: 'v24.11.1',
    postgres: '15.14',
    loadAverage: [1.5, 4.25],
  },
  results,
};

const headings = (page: string) => page.split('\n').filter((line) => line.startsWith('#'));
const row = (page: string, label: string) => page.split('\n').find((line) => line.startsWith(`| ${label}`));

describe('docs/performance.md as the bench writes it', () => {
  const page = performancePage(run);

  it('has the fixed sections, then the run under its date', () => {
    assert.deepEqual(headings(page), [
      '# Performance',
      '## Running the bench',
      '## What the bench measures',
      '## Reading the table',
      '## What the figures rest on',
      '## The run of 2026-11-24, 14:03 UTC',
    ]);
    assert.ok(page.startsWith(PAGE_TEXT));
    assert.match(PAGE_TEXT, /npm run bench -- --write docs\/performance\.md/);
    assert.ok(page.endsWith('\n') && !page.endsWith('\n\n'));
  });

  it('summarises the machine and the run', () => {
    assert.match(
      page,
      /\nMachine: 2 × Test CPU @ 2\.20GHz, 8\.0 GiB of memory, Linux 6\.8\.0; Node v24\.11\.1; PostgreSQL 15\.14\. Load average \(1 minute\) 1\.50 at the start and 4\.25 at the end; the run took 9 min 12 s\.\n/,
    );
    assert.match(page, /\n32 concurrent clients per closed loop, 5 s per run, 64 paying accounts, NORM settles 250 ms after arrival/);
  });

  it('puts every figure in a table of 15 columns, with its ratio and verdict', () => {
    const table = page.split('\n').filter((line) => line.startsWith('|'));
    assert.ok(table.length > 20, `only ${table.length} table lines`);
    for (const line of table) assert.equal(line.split('|').length - 2, 15, line);
    assert.match(row(page, 'pgbench TPC-B')!, /^\| pgbench TPC-B .* \| 5000 \| 1\.00 \(database reference\) \|/);
    assert.match(row(page, 'GET /accounts/balances')!, /\| 20000 \| 0\.48 × hello-world \| ≥ 0\.5 × hello-world: NOT met \| 1\.4 \| 5\.2 \| 0\.12 \| 0\.05 \| 0\.08 \|/);
    assert.match(row(page, 'POST /dict/pix over 64 accounts')!, /\| 5100 \| 1\.02 × pgbench \| ≥ 0\.75 × pgbench: met; ≥ 1\.0 ×: met \|.* \| 17\.3 \| 18\.5 \| 3100 \| 3900 \| 120 \| \{"201":25500\} \|$/);
    assert.match(row(page, 'overload')!, /\| 759 × 503 of 3000 \| quick 503s \(p99 < 1000 ms\), no timeouts: met \| 150\.0 \| 224\.0 \|/);
  });

  it("shows BCB's dialect against its references, with their ratios", () => {
    assert.match(row(page, 'GET /qr/v2/{token}') ?? '', /0\.83 × signing .*≥ 0\.8: met/);
    assert.match(row(page, 'PUT /v2/cob/{txid}') ?? '', /0\.67 × POST \/dict\/pix .*≥ 0\.5: met/);
    assert.ok(row(page, 'POST /sandbox/payer/pay'), 'the payer has its row');
  });

  it('ends with the lines under the table and the invariants', () => {
    assert.match(page, /\n- spread rounds, each against the mean of the pgbench runs right before and after it: 0\.92 \(4600\/s against 5000\), 1\.02/);
    assert.match(page, /\n- token flood: .* a client that had a token before asked again: 201 in 3\.5 ms/);
    assert.match(page, /\ninvariants: sum of all balances = 0 \(must be 0\), balances not equal to their postings = 0, negative balances = 0, .* = 0\n$/);
  });

  it('is a function of the run alone', () => {
    assert.equal(performancePage(run), page);
  });

  it('the committed docs/performance.md is the bench text above its run', () => {
    const committed = readFileSync(new URL('../docs/performance.md', import.meta.url), 'utf8');
    assert.ok(committed.startsWith(PAGE_TEXT), 'docs/performance.md does not start with the text of scripts/bench-page.ts: write it with the bench, or copy the text');
    assert.match(committed.slice(PAGE_TEXT.length), /^\n## The runs? of /);
  });
});
