// Load generators of scripts/bench.ts: a closed loop (N clients, each sends its next request when
// the previous one is answered), an open loop (requests leave on a schedule whatever the answers)
// and a burst (N requests at the same moment, each on a connection of its own).
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { Client, type Dispatcher } from 'undici';

export interface Request {
  method: 'GET' | 'POST' | 'PATCH';
  path: string;
  headers: Record<string, string>;
  body?: unknown;
}

export interface Answer {
  status: number;
  body: Record<string, unknown>;
  /** Retry-After of the answer, if any. */
  retryAfter: string | undefined;
}

export async function call(http: Dispatcher, req: Request): Promise<Answer> {
  const res = await http.request({
    method: req.method,
    path: req.path,
    headers: { ...req.headers, ...(req.body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(req.body === undefined ? {} : { body: JSON.stringify(req.body) }),
  });
  const text = await res.body.text();
  const retryAfter = res.headers['retry-after'];
  let body: Record<string, unknown> | undefined;
  return {
    status: res.statusCode,
    // Parsed when read: most loads only count statuses, and the generator's CPU is the machine's.
    get body() {
      body ??= text ? (JSON.parse(text) as Record<string, unknown>) : {};
      return body;
    },
    retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
  };
}

/** The p-th percentile of ascending values (Infinity stands for "never arrived"). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export interface LoadResult {
  /** Answers with the expected status. */
  ok: number;
  seconds: number;
  /** ok per second of the run. */
  rate: number;
  /** Latency of the answers with the expected status, ms. */
  p50: number;
  p99: number;
  statuses: Record<string, number>;
  startedAt: Date;
  endedAt: Date;
}

function count(statuses: Map<string, number>, key: string | number): void {
  statuses.set(String(key), (statuses.get(String(key)) ?? 0) + 1);
}

/** `workers` clients, each sending its next request as soon as the previous one is answered. */
export async function closedLoop(
  http: Dispatcher,
  workers: number,
  seconds: number,
  request: (worker: number, i: number) => Request,
  okStatus = 201,
): Promise<LoadResult> {
  const latencies: number[] = [];
  const statuses = new Map<string, number>();
  const startedAt = new Date();
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      for (let i = 0; performance.now() < deadline; i++) {
        const started = performance.now();
        try {
          const res = await call(http, request(worker, i));
          if (res.status === okStatus) latencies.push(performance.now() - started);
          count(statuses, res.status);
        } catch (error) {
          count(statuses, (error as { code?: string }).code ?? 'error');
        }
      }
    }),
  );
  const endedAt = new Date();
  latencies.sort((a, b) => a - b);
  const ok = latencies.length;
  return { ok, seconds, rate: ok / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), statuses: Object.fromEntries(statuses), startedAt, endedAt };
}

export interface OpenLoopResult extends LoadResult {
  offered: number;
  /** Requests due while `cap` were already outstanding: not sent. */
  notSent: number;
  /** From the first scheduled send to the last answer, s. */
  elapsed: number;
  /** Latency of every answer, whatever its status, ms. */
  p99All: number;
  /**
   * This process's own event-loop delay during the run, ms (p99 and max): a send or an answer it
   * held up counts in the latencies above (they run from the scheduled send), so this bounds how
   * much of them is the load generator's.
   */
  generatorDelayP99: number;
  generatorDelayMax: number;
}

/**
 * Offers `rate` requests per second for `seconds`: request i leaves at start + i / rate whatever
 * the answers (up to `cap` outstanding; beyond, it is counted as not sent). Latency runs from the
 * scheduled time, not the actual send, so a stalled server is not hidden by a client that waited
 * for it (coordinated omission).
 */
export async function openLoop(
  http: Dispatcher,
  options: { rate: number; seconds: number; cap: number },
  request: (i: number) => Request,
  onAnswer?: (i: number, answer: Answer) => void,
  okStatus = 201,
): Promise<OpenLoopResult> {
  const { rate, seconds, cap } = options;
  const total = Math.round(rate * seconds);
  const okLatencies: number[] = [];
  const all: number[] = [];
  const statuses = new Map<string, number>();
  let next = 0;
  let outstanding = 0;
  let notSent = 0;
  const startedAt = new Date();
  const start = performance.now();
  let lastAnswer = start;
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  await new Promise<void>((resolve) => {
    const send = (i: number, scheduled: number) => {
      outstanding++;
      call(http, request(i))
        .then(
          (answer) => {
            lastAnswer = performance.now();
            all.push(lastAnswer - scheduled);
            if (answer.status === okStatus) okLatencies.push(lastAnswer - scheduled);
            count(statuses, answer.status);
            onAnswer?.(i, answer);
          },
          (error: unknown) => count(statuses, (error as { code?: string }).code ?? 'error'),
        )
        .finally(() => {
          outstanding--;
          if (next >= total && outstanding === 0) resolve();
        });
    };
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - start) * rate) / 1000) + 1);
      while (next < due) {
        const i = next++;
        if (outstanding >= cap) notSent++;
        else send(i, start + (i * 1000) / rate);
      }
      if (next < total) setTimeout(tick, 1);
      else if (outstanding === 0) resolve();
    };
    tick();
  });
  delay.disable();
  const endedAt = new Date();
  okLatencies.sort((a, b) => a - b);
  all.sort((a, b) => a - b);
  const elapsed = Math.max(seconds, (lastAnswer - start) / 1000);
  return {
    ok: okLatencies.length,
    seconds,
    rate: okLatencies.length / elapsed,
    p50: percentile(okLatencies, 50),
    p99: percentile(okLatencies, 99),
    statuses: Object.fromEntries(statuses),
    startedAt,
    endedAt,
    offered: total,
    notSent,
    elapsed,
    p99All: percentile(all, 99),
    generatorDelayP99: delay.percentile(99) / 1e6,
    generatorDelayMax: delay.max / 1e6,
  };
}

export interface BurstResult {
  sent: number;
  statuses: Record<string, number>;
  /** Latency of the 503 answers, ms from the moment the burst left. */
  refusedP50: number;
  refusedP99: number;
  /** Latency of the accepted ones. */
  acceptedP99: number;
  /** From the burst to its last answer, ms. */
  lastAnswerMs: number;
  /** 503s that said when to come back. */
  withRetryAfter: number;
}

/**
 * `n` requests at the same moment, each on a connection of its own opened beforehand (with a
 * GET of `warmPath`), so that what is measured is the service's answer to the burst and not the
 * kernel's accept queue. Each request gives up after `timeoutMs`.
 */
export async function burst(origin: string, n: number, request: (i: number) => Request, warmPath: string, timeoutMs = 30_000): Promise<BurstResult> {
  const clients = Array.from({ length: n }, () => new Client(origin, { pipelining: 1, headersTimeout: timeoutMs, bodyTimeout: timeoutMs }));
  try {
    for (let i = 0; i < n; i += 100) {
      await Promise.all(clients.slice(i, i + 100).map((c) => call(c, { method: 'GET', path: warmPath, headers: {} })));
    }
    const statuses = new Map<string, number>();
    const refused: number[] = [];
    const accepted: number[] = [];
    let withRetryAfter = 0;
    let last = 0;
    const requests = clients.map((_, i) => request(i));
    const start = performance.now();
    await Promise.all(
      clients.map(async (c, i) => {
        try {
          const answer = await call(c, requests[i]!);
          const ms = performance.now() - start;
          last = Math.max(last, ms);
          count(statuses, answer.status);
          if (answer.status === 503) {
            refused.push(ms);
            if (answer.retryAfter !== undefined) withRetryAfter++;
          } else if (answer.status === 201) accepted.push(ms);
        } catch (error) {
          count(statuses, (error as { code?: string }).code ?? 'error');
        }
      }),
    );
    refused.sort((a, b) => a - b);
    accepted.sort((a, b) => a - b);
    return {
      sent: n,
      statuses: Object.fromEntries(statuses),
      refusedP50: percentile(refused, 50),
      refusedP99: percentile(refused, 99),
      acceptedP99: percentile(accepted, 99),
      lastAnswerMs: last,
      withRetryAfter,
    };
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}
