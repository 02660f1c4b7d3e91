// The console's cost to the API, in scripts/bench.ts (BENCH_ONLY=console): closed loops of
// GET /accounts/balances and POST /dict/pix in alternating rounds, without a console, with one
// console open and updating live, and without again. The console is what a browser tab does:
// signed in through the sign-in form with the admin token, its page read, its event stream open,
// and the page read again (as the script does) on every change the stream tells.
import { performance } from 'node:perf_hooks';
import { request } from 'undici';
import type { Costs } from './bench-db.ts';
import { closedLoop, percentile, type LoadResult } from './bench-load.ts';
import type { Row } from './bench-report.ts';
import type { ApiClient, ApiRequest } from './lib/api-client.ts';

export interface ConsoleRound {
  /** Whether a console was open during the round. */
  open: boolean;
  balances: LoadResult & Costs;
  dictPix: LoadResult & Costs;
  /** With the console: changes its stream told, and the pages read again for them. */
  changes: number;
  pages: number;
}

export interface ConsoleResults {
  rounds: ConsoleRound[];
  /** The console's page read alone, one read at a time after the rounds: what each live update costs the service. */
  pageMs: { p50: number; max: number; reads: number };
  clients: number;
  /** The page the console showed. */
  page: string;
}

export interface ConsoleBenchOptions {
  api: ApiClient;
  /** The service's address, for the browser-like requests. */
  origin: string;
  admin: string;
  clients: number;
  seconds: number;
  /** Rounds with the console; one more is run without it (before, between and after them). */
  rounds: number;
  /** The console page kept open: an account's overview, whose balances and transactions the transfers change. */
  page: string;
  balancesGet: (worker: number, i: number) => ApiRequest;
  dictPix: (worker: number, i: number) => ApiRequest;
  /** Runs a load and adds what it cost each process (scripts/bench-db.ts, measured). */
  measure: <R extends LoadResult>(run: () => Promise<R>) => Promise<R & Costs>;
  /** Waits until the transfers of a round are settled, so that every round starts from an empty queue. */
  settle: () => Promise<unknown>;
}

/** Signs in as a person does: the sign-in page's form, posted with the admin token; returns the session cookie. */
export async function signIn(origin: string, admin: string): Promise<string> {
  const form = await request(`${origin}/console/sign-in`);
  const page = await form.body.text();
  if (form.statusCode !== 200 || !page.includes('name="token"')) throw new Error(`GET /console/sign-in answered ${form.statusCode} without its form`);
  const posted = await request(`${origin}/console/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: admin, next: '/console' }).toString(),
  });
  await posted.body.dump();
  const cookie = String(posted.headers['set-cookie'] ?? '').split(';')[0]!;
  if (posted.statusCode !== 303 || !cookie.startsWith('pix_console=')) throw new Error(`POST /console/sign-in answered ${posted.statusCode} without a session`);
  return cookie;
}

async function readPage(origin: string, page: string, cookie: string, refresh: boolean): Promise<string> {
  const answer = await request(`${origin}${page}`, { headers: { cookie, ...(refresh ? { 'x-console-request': 'refresh' } : {}) } });
  const text = await answer.body.text();
  if (answer.statusCode !== 200) throw new Error(`GET ${page} answered ${answer.statusCode}: ${text.slice(0, 200)}`);
  return text;
}

/**
 * One console tab: the page, its event stream from the page's marker, and the page read again on
 * each change (one read at a time; changes told meanwhile make one more, as console.js does).
 */
async function openConsole(o: ConsoleBenchOptions, cookie: string) {
  const first = await readPage(o.origin, o.page, cookie, false);
  const marker = /name="console-marker" content="([^"]*)"/.exec(first)?.[1] ?? '';
  const controller = new AbortController();
  const stream = await request(`${o.origin}/console/events?since=${encodeURIComponent(marker)}`, { headers: { cookie, accept: 'text/event-stream' }, signal: controller.signal });
  if (stream.statusCode !== 200) throw new Error(`GET /console/events answered ${stream.statusCode}`);
  const seen = { changes: 0, pages: 0 };
  let refreshing: Promise<void> | null = null;
  let again = false;
  const refresh = () => {
    if (refreshing) return void (again = true);
    refreshing = (async () => {
      do {
        again = false;
        await readPage(o.origin, o.page, cookie, true);
        seen.pages++;
      } while (again);
    })().finally(() => (refreshing = null));
  };
  const reading = (async () => {
    let buffer = '';
    for await (const chunk of stream.body) {
      buffer += chunk.toString();
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        if (/^event: change$/m.test(buffer.slice(0, end))) {
          seen.changes++;
          refresh();
        }
        buffer = buffer.slice(end + 2);
      }
    }
  })().catch((error: unknown) => {
    if (!controller.signal.aborted) throw error;
  });
  return {
    async close() {
      controller.abort();
      await reading;
      await refreshing;
      return seen;
    },
  };
}

/** One round: both closed loops, with a console open or not, then the transfers settled. */
async function round(o: ConsoleBenchOptions, cookie: string, open: boolean): Promise<ConsoleRound> {
  const tab = open ? await openConsole(o, cookie) : null;
  let seen = { changes: 0, pages: 0 };
  let loads: Pick<ConsoleRound, 'balances' | 'dictPix'>;
  try {
    const balances = await o.measure(() => closedLoop(o.api, o.clients, o.seconds, o.balancesGet, 200));
    loads = { balances, dictPix: await o.measure(() => closedLoop(o.api, o.clients, o.seconds, o.dictPix)) };
  } finally {
    if (tab) seen = await tab.close();
  }
  await o.settle();
  return { open, ...loads, ...seen };
}

/** Without, with, without, ...: `rounds` with the console, each between two without it. */
export async function consoleRuns(o: ConsoleBenchOptions): Promise<ConsoleResults> {
  const cookie = await signIn(o.origin, o.admin);
  await closedLoop(o.api, o.clients, 1, o.balancesGet, 200);
  await closedLoop(o.api, o.clients, 1, o.dictPix);
  await readPage(o.origin, o.page, cookie, true);
  await o.settle();
  const rounds: ConsoleRound[] = [await round(o, cookie, false)];
  for (let i = 0; i < o.rounds; i++) {
    rounds.push(await round(o, cookie, true));
    rounds.push(await round(o, cookie, false));
  }
  return { rounds, pageMs: await pageReads(o, cookie, 20), clients: o.clients, page: o.page };
}

/** `reads` reads of the console's page, one after the other, on an idle service. */
async function pageReads(o: ConsoleBenchOptions, cookie: string, reads: number): Promise<ConsoleResults['pageMs']> {
  const times: number[] = [];
  for (let i = 0; i < reads; i++) {
    const started = performance.now();
    await readPage(o.origin, o.page, cookie, true);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), max: times.at(-1)!, reads };
}

type Endpoint = 'balances' | 'dictPix';
const LABELS: Record<Endpoint, string> = { balances: 'GET /accounts/balances', dictPix: 'POST /dict/pix' };

/** The spread (min–max) of the rounds without the console, and where a round with it falls against it. */
function spread(r: ConsoleResults, endpoint: Endpoint) {
  const closed = r.rounds.filter((x) => !x.open).map((x) => x[endpoint]);
  const range = (values: number[]) => ({ min: Math.min(...values), max: Math.max(...values) });
  const rate = range(closed.map((x) => x.rate));
  const p99 = range(closed.map((x) => x.p99));
  // Upper case where the round with the console did worse than every round without it.
  const place = (v: number, { min, max }: { min: number; max: number }, worse: 'below' | 'above') => {
    if (v >= min && v <= max) return 'within';
    const side = v < min ? 'below' : 'above';
    return side === worse ? side.toUpperCase() : side;
  };
  const against = (run: LoadResult) => ({ rate: place(run.rate, rate, 'below'), p99: place(run.p99, p99, 'above') });
  return { rate, p99, against, open: r.rounds.filter((x) => x.open).map((x) => x[endpoint]) };
}

/** A round's rate against the mean of the rounds just before and after it (the machine drifts within minutes). */
function besideRatio(r: ConsoleResults, i: number, endpoint: Endpoint): string {
  const neighbours = [r.rounds[i - 1], r.rounds[i + 1]].filter((x) => x !== undefined).map((x) => x[endpoint].rate);
  if (neighbours.length === 0) return '';
  const mean = neighbours.reduce((a, b) => a + b, 0) / neighbours.length;
  return `${(r.rounds[i]![endpoint].rate / mean).toFixed(2)} × beside`;
}

function roundRows(r: ConsoleResults, endpoint: Endpoint, s: ReturnType<typeof spread>): Row[] {
  return r.rounds.map((x, i) => {
    const run = x[endpoint];
    const at = s.against(run);
    return {
      label: `${LABELS[endpoint]}, round ${i + 1}: ${x.open ? `console open (${x.changes} changes told, ${x.pages} pages read again)` : 'no console'}`,
      rate: run.rate,
      ratio: x.open ? besideRatio(r, i, endpoint) : '',
      target: x.open ? `rate ${at.rate}, p99 ${at.p99} the spread without` : '',
      p50: run.p50,
      p99: run.p99,
      costs: run,
      statuses: run.statuses,
    };
  });
}

/** A row per round and endpoint, then a line per endpoint: the spread without the console and where the rounds with it fall. */
export function consoleReport(r: ConsoleResults): { rows: Row[]; lines: string[] } {
  const rows: Row[] = [];
  const lines: string[] = [];
  for (const endpoint of ['balances', 'dictPix'] as const) {
    const s = spread(r, endpoint);
    rows.push(...roundRows(r, endpoint, s));
    const count = (key: 'rate' | 'p99') => s.open.filter((run) => s.against(run)[key] === 'within').length;
    const worse = s.open.filter((run) => s.against(run).rate === 'BELOW' || s.against(run).p99 === 'ABOVE').length;
    lines.push(
      `- ${LABELS[endpoint]}: without the console ${s.rate.min.toFixed(0)}–${s.rate.max.toFixed(0)}/s, p99 ${s.p99.min.toFixed(1)}–${s.p99.max.toFixed(1)} ms ` +
        `(${r.rounds.length - s.open.length} rounds); with one console open, ${count('rate')} of ${s.open.length} rounds within that spread of rate, ` +
        `${count('p99')} of ${s.open.length} within that of p99, ${worse} worse than every round without it`,
    );
  }
  lines.push(
    `- the console: ${r.page} open, its event stream connected, the page read again on each change it told (${r.clients} clients per loop); ` +
      `that page read alone, on the idle service: p50 ${r.pageMs.p50.toFixed(1)} ms, max ${r.pageMs.max.toFixed(1)} ms over ${r.pageMs.reads} reads`,
  );
  return { rows, lines };
}
