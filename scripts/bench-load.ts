// Load generators of scripts/bench.ts: a closed loop (N clients, each sends its next request when
// the previous one is answered), an open loop (requests leave on a schedule whatever the answers)
// and a burst (N requests at the same moment, each on a connection of its own).
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { Client } from 'undici';
import { ApiClient, undiciTransport, type ApiAnswer, type ApiRequest } from './lib/api-client.ts';

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
  api: ApiClient,
  workers: number,
  seconds: number,
  request: (worker: number, i: number) => ApiRequest,
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
          const res = await api.send(request(worker, i));
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

interface Offered {
  /** Latencies from the scheduled send, ms: of the answers with the expected status, and of all. */
  okLatencies: number[];
  all: number[];
  statuses: Map<string, number>;
  notSent: number;
  /** performance.now() of the start and of the last answer. */
  start: number;
  lastAnswer: number;
}

/** Sends request i at start + i / rate whatever the answers (up to `cap` outstanding), recording each answer. */
function offer(
  api: ApiClient,
  options: { rate: number; seconds: number; cap: number },
  request: (i: number) => ApiRequest,
  onAnswer: ((i: number, answer: ApiAnswer) => void) | undefined,
  okStatus: number,
): Promise<Offered> {
  const { rate, seconds, cap } = options;
  const total = Math.round(rate * seconds);
  const start = performance.now();
  const o: Offered = { okLatencies: [], all: [], statuses: new Map(), notSent: 0, start, lastAnswer: start };
  let next = 0;
  let outstanding = 0;
  return new Promise<Offered>((resolve) => {
    const send = (i: number, scheduled: number) => {
      outstanding++;
      api
        .send(request(i))
        .then(
          (answer) => {
            o.lastAnswer = performance.now();
            o.all.push(o.lastAnswer - scheduled);
            if (answer.status === okStatus) o.okLatencies.push(o.lastAnswer - scheduled);
            count(o.statuses, answer.status);
            onAnswer?.(i, answer);
          },
          (error: unknown) => count(o.statuses, (error as { code?: string }).code ?? 'error'),
        )
        .finally(() => {
          outstanding--;
          if (next >= total && outstanding === 0) resolve(o);
        });
    };
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - start) * rate) / 1000) + 1);
      while (next < due) {
        const i = next++;
        if (outstanding >= cap) o.notSent++;
        else send(i, start + (i * 1000) / rate);
      }
      if (next < total) setTimeout(tick, 1);
      else if (outstanding === 0) resolve(o);
    };
    tick();
  });
}

/**
 * Offers `rate` requests per second for `seconds`: request i leaves at start + i / rate whatever
 * the answers (up to `cap` outstanding; beyond, it is counted as not sent). Latency runs from the
 * scheduled time, not the actual send, so a stalled server is not hidden by a client that waited
 * for it (coordinated omission).
 */
export async function openLoop(
  api: ApiClient,
  options: { rate: number; seconds: number; cap: number },
  request: (i: number) => ApiRequest,
  onAnswer?: (i: number, answer: ApiAnswer) => void,
  okStatus = 201,
): Promise<OpenLoopResult> {
  const startedAt = new Date();
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const o = await offer(api, options, request, onAnswer, okStatus);
  delay.disable();
  const endedAt = new Date();
  o.okLatencies.sort((a, b) => a - b);
  o.all.sort((a, b) => a - b);
  const elapsed = Math.max(options.seconds, (o.lastAnswer - o.start) / 1000);
  return {
    ok: o.okLatencies.length,
    seconds: options.seconds,
    rate: o.okLatencies.length / elapsed,
    p50: percentile(o.okLatencies, 50),
    p99: percentile(o.okLatencies, 99),
    statuses: Object.fromEntries(o.statuses),
    startedAt,
    endedAt,
    offered: Math.round(options.rate * options.seconds),
    notSent: o.notSent,
    elapsed,
    p99All: percentile(o.all, 99),
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
export async function burst(origin: string, n: number, request: (i: number) => ApiRequest, warmPath: string, timeoutMs = 30_000): Promise<BurstResult> {
  const connections = Array.from({ length: n }, () => new Client(origin, { pipelining: 1, headersTimeout: timeoutMs, bodyTimeout: timeoutMs }));
  const clients = connections.map((c) => new ApiClient(undiciTransport(c)));
  try {
    for (let i = 0; i < n; i += 100) {
      await Promise.all(clients.slice(i, i + 100).map((c) => c.send({ method: 'GET', path: warmPath })));
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
          const answer = await c.send(requests[i]!);
          const ms = performance.now() - start;
          last = Math.max(last, ms);
          count(statuses, answer.status);
          if (answer.status === 503) {
            refused.push(ms);
            if (answer.headers['retry-after'] !== undefined) withRetryAfter++;
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
    await Promise.all(connections.map((c) => c.close()));
  }
}
