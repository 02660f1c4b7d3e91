import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { systemClock } from '../lib/clock.ts';
import { adminHeaders, answerError, call, REMOTE_OPTIONS, REMOTE_USAGE, RemoteError, remoteFrom, type Remote } from './connection.ts';

/**
 * `pix-api listen`: forwards a running sandbox's deliveries of an account to URLs on this
 * machine, which opens no port: it asks the sandbox for what arrived (a long poll), posts each to
 * its local URL with the same body and headers (signed with the account's secret), and tells the
 * sandbox what the local receiver answered, which is the delivery's answer in its log. Ctrl-C
 * stops it and leaves nothing registered.
 */

export const LISTEN_USAGE = `Usage: pix-api listen --forward-to URL [options]
Forwards the deliveries of an account in a running sandbox (here or on another machine) to URLs here.
  --forward-to URL       the root's events (cash_in, cash_out, refund_*, med_*, authorization_*, recurring_charge_*)
  --forward-pix-to URL   BCB's /v2 callbacks of received Pix: URL/pix, as a webhookUrl gets them (each key's webhook moves to the listener meanwhile)
  --forward-rec-to URL   BCB's callbacks of recurrences: URL/rec
  --forward-cobr-to URL  BCB's callbacks of recurring charges: URL/cobr
  --mtls                 present the sandbox's client certificate to https local URLs, as its BCB callbacks do
  --ca FILE              trust this CA (PEM) for https local URLs
  --name NAME            the listener's name (default "default"): starting again with it resumes
${REMOTE_USAGE}`;

const OPTIONS = {
  ...REMOTE_OPTIONS,
  'forward-to': { type: 'string' },
  'forward-pix-to': { type: 'string' },
  'forward-rec-to': { type: 'string' },
  'forward-cobr-to': { type: 'string' },
  mtls: { type: 'boolean' },
  ca: { type: 'string' },
  name: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** A local receiver gets this long to answer: the sandbox's delivery waits 9 s in all. */
const LOCAL_TIMEOUT_MS = 8_000;
const POLL_WAIT_MS = 20_000;

type Kind = 'events' | 'pix' | 'rec' | 'cobr';

interface Arrival {
  id: number;
  path: string;
  headers: Record<string, string>;
  body: string;
  receivedAt: string;
}

interface Started {
  id: string;
  url: string;
  kinds: string[];
  clientCertificate: { cert: string; key: string } | null;
}

function localUrl(raw: string, option: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new RemoteError(`--${option} must be an http(s) URL: ${raw}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new RemoteError(`--${option} must be an http(s) URL: ${raw}`);
  return url.href;
}

/** Where an arrival goes: the events' URL as it is, a BCB callback's to `{URL}/pix` (or /rec, /cobr). */
export function targetOf(forwards: Partial<Record<Kind, string>>, path: string): string | undefined {
  if (path === '') return forwards.events;
  const kind = path.slice(1) as Kind;
  const base = forwards[kind];
  return base === undefined ? undefined : `${base.replace(/\/+$/, '')}${path}`;
}

/** One line per delivery: when, what, its webhook-id, where it went, and what the receiver said. */
export function deliveryLine(arrival: Arrival, target: string, result: { status: number; durationMs: number; error?: string | undefined }): string {
  let event = arrival.path === '' ? 'event' : arrival.path.slice(1);
  try {
    const body = JSON.parse(arrival.body) as { type?: unknown; data?: { eventType?: unknown } };
    if (arrival.path === '' && typeof body.type === 'string') event = body.type;
  } catch {
    // A body that is not JSON is forwarded as it is; the line names it by its path.
  }
  const outcome = result.error ? `${result.status} (${result.error})` : String(result.status);
  return `${systemClock.now().toISOString()}  ${event.padEnd(16)} ${arrival.headers['webhook-id'] ?? '-'}  → ${target}  ${outcome}  ${result.durationMs} ms`;
}

async function forward(arrival: Arrival, target: string, agent: Agent): Promise<{ status: number; durationMs: number; error?: string }> {
  const started = performance.now();
  try {
    const answer = await request(target, {
      method: 'POST',
      headers: arrival.headers,
      body: arrival.body,
      dispatcher: agent,
      headersTimeout: LOCAL_TIMEOUT_MS,
      bodyTimeout: LOCAL_TIMEOUT_MS,
      signal: AbortSignal.timeout(LOCAL_TIMEOUT_MS),
    });
    await answer.body.dump({ limit: 1024 }).catch(() => undefined);
    return { status: answer.statusCode, durationMs: Math.round(performance.now() - started) };
  } catch (error) {
    const e = error as { code?: string; cause?: { code?: string }; name?: string };
    const code = e.cause?.code ?? e.code ?? e.name ?? 'failed';
    const why = code === 'ECONNREFUSED' ? 'connection refused' : /TIMEOUT|AbortError|TimeoutError/.test(code) ? 'timeout' : /CERT|TLS|SSL/.test(code) ? `TLS failure (${code})` : code;
    return { status: 502, durationMs: Math.round(performance.now() - started), error: why };
  }
}

/** Asks for what arrived until stopped, handing each arrival over; a sandbox that does not answer is asked again, later. */
async function poll(remote: Remote, id: string, stop: AbortSignal, handle: (arrival: Arrival) => void, out: (line: string) => void): Promise<void> {
  const headers = adminHeaders(remote);
  let failures = 0;
  const later = async (why: string) => {
    failures += 1;
    out(`${why}; trying again`);
    await new Promise((resolve) => setTimeout(resolve, Math.min(5_000, 250 * 2 ** failures)));
  };
  while (!stop.aborted) {
    let polled;
    try {
      polled = await call(remote, 'GET', `/sandbox/listeners/${id}/arrivals?waitMs=${POLL_WAIT_MS}`, { headers, signal: stop, timeoutMs: POLL_WAIT_MS + 10_000 });
    } catch (error) {
      if (stop.aborted) return;
      await later(`the sandbox did not answer (${(error as Error).message})`);
      continue;
    }
    if (polled.status === 404) throw new RemoteError(`the listener ${id} was stopped elsewhere`);
    if (polled.status !== 200) {
      await later(`the sandbox answered HTTP ${polled.status}`);
      continue;
    }
    failures = 0;
    for (const arrival of (polled.body as { data: Arrival[] }).data) handle(arrival);
  }
}

export interface ListenOptions {
  /** Where lines go (stdout). */
  readonly out?: (line: string) => void;
  /** Stops the listener when aborted (Ctrl-C otherwise). */
  readonly signal?: AbortSignal;
}

/** Runs a listener until stopped; resolves once it is stopped and nothing is left registered. */
export async function listen(remote: Remote, forwards: Partial<Record<Kind, string>>, options: { name: string; mtls: boolean; ca?: string | undefined }, run: ListenOptions = {}): Promise<void> {
  const out = run.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const headers = adminHeaders(remote);
  const kinds = Object.keys(forwards) as Kind[];
  const start = await call(remote, 'POST', '/sandbox/listeners', { headers, body: { accountId: Number(remote.accountId), name: options.name, kinds, mutualTls: options.mtls } });
  if (start.status !== 201) throw answerError('the listener could not start', start);
  const started = start.body as Started;
  // The root's events go as the service sends them, with no client certificate; BCB's callbacks with it (--mtls).
  const ca = options.ca ? { ca: readFileSync(options.ca, 'utf8') } : {};
  const plain = new Agent({ connect: ca });
  const mutual = options.mtls && started.clientCertificate ? new Agent({ connect: { ...ca, ...started.clientCertificate } }) : plain;
  for (const kind of kinds) out(`forwarding ${kind === 'events' ? "the root's events" : `BCB's ${kind} callbacks`} of account ${remote.accountId} to ${kind === 'events' ? forwards[kind] : `${forwards[kind]!.replace(/\/+$/, '')}/${kind}`}`);
  out(`ready: listener ${started.id} on ${remote.url} (Ctrl-C stops it)`);

  const stopping = new AbortController();
  const onSignal = () => stopping.abort();
  if (run.signal) run.signal.addEventListener('abort', onSignal, { once: true });
  else {
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  }
  const inFlight = new Set<Promise<void>>();
  const handle = (arrival: Arrival) => {
    const target = targetOf(forwards, arrival.path);
    const done = (async () => {
      const result = target === undefined ? { status: 404, durationMs: 0, error: `no --forward-${arrival.path.slice(1)}-to` } : await forward(arrival, target, arrival.path === '' ? plain : mutual);
      out(deliveryLine(arrival, target ?? '-', result));
      const told = await call(remote, 'POST', `/sandbox/listeners/${started.id}/arrivals/${arrival.id}/answer`, { headers, body: result }).catch((e: unknown) => ({ status: 0, body: String(e) }));
      if (told.status !== 204 && told.status !== 404) out(`  the sandbox did not take the answer: HTTP ${told.status}`);
    })();
    inFlight.add(done);
    void done.finally(() => inFlight.delete(done));
  };

  try {
    await poll(remote, started.id, stopping.signal, handle, out);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await Promise.race([Promise.all(inFlight), new Promise((resolve) => setTimeout(resolve, LOCAL_TIMEOUT_MS))]);
    await Promise.all([...new Set([plain, mutual])].map((a) => a.close()));
  }
  const stop = await call(remote, 'DELETE', `/sandbox/listeners/${started.id}`, { headers });
  if (stop.status !== 204 && stop.status !== 404) throw answerError('the listener could not stop', stop);
  out('stopped: nothing is left registered');
}

/** `pix-api listen` from its arguments. */
export async function runListen(args: string[]): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({ args, options: OPTIONS, allowPositionals: false });
  } catch (error) {
    throw new RemoteError(`${(error as Error).message} (pix-api listen --help)`);
  }
  const { values } = parsed;
  if (values.help) {
    process.stdout.write(`${LISTEN_USAGE}\n`);
    return;
  }
  const forwards: Partial<Record<Kind, string>> = {};
  if (values['forward-to']) forwards.events = localUrl(values['forward-to'], 'forward-to');
  for (const kind of ['pix', 'rec', 'cobr'] as const) {
    const raw = values[`forward-${kind}-to`];
    if (raw) forwards[kind] = localUrl(raw, `forward-${kind}-to`);
  }
  if (Object.keys(forwards).length === 0) throw new RemoteError('say where to forward: --forward-to URL, or --forward-pix-to, --forward-rec-to, --forward-cobr-to (pix-api listen --help)');
  const name = values.name ?? 'default';
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(name)) throw new RemoteError('--name: letters, digits, _ and -, 64 at most');
  await listen(remoteFrom(values), forwards, { name, mtls: values.mtls ?? false, ca: values.ca });
}
