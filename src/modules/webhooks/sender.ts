import { readFileSync } from 'node:fs';
import { createSecureContext, getCACertificates, type SecureContext } from 'node:tls';
import { Agent, buildConnector, request } from 'undici';
import { Webhook } from 'standardwebhooks';
import { systemClock, type Clock } from '../../lib/clock.ts';
import { Lru } from '../../lib/lru.ts';
import {
  DEFAULT_PORT,
  DestinationError,
  guardedLookup,
  isOwnInbox,
  parseDestination,
  SANDBOX_POLICY,
  STRICT_POLICY,
  toldFailure,
  type DestinationPolicy,
  type FailureClass,
} from './destination.ts';

/** A delivery succeeds on a 2xx answered within this time. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** At most this much of a receiver's answer is read (and dropped) so its connection can be reused. */
const MAX_ANSWER_BYTES = 1024;
/**
 * Connections to one receiving origin, per process. Above the bound per account (delivery.ts),
 * so that one account's slow receiver cannot take them all where several accounts share an
 * origin; the bench's 64 accounts all deliver to one.
 */
export const CONNECTIONS_PER_ORIGIN = 256;
export const USER_AGENT = 'pix-api-webhooks/1.0';

export interface Attempt {
  success: boolean;
  statusCode: number | null;
  durationMs: number;
  /**
   * The status (`HTTP 503`) or the class of failure, with the setting that changes it: never the
   * receiver's body or a socket's error text. In the sandbox, also the fault that touched the
   * attempt and what it did, even on a delivered one (`delayed 1500 ms by sandbox fault 3`).
   */
  error: string | null;
  /** Set when no answer came: why. */
  failure?: FailureClass | undefined;
  sentAt: Date;
  /** When the request went, signed (its webhook-timestamp), on the real clock; absent when none went. */
  signedAt?: Date | undefined;
  /** Sandbox `late` fault: nothing went; the delivery waits (in the queue) for the next one to its URL, `holdMs` at most. */
  held?: { readonly faultId: bigint; readonly holdMs: number } | undefined;
  /** Sandbox `duplicate` fault: the same message sent again right after this one, and what became of it. */
  duplicate?: Attempt | undefined;
}

export interface Message {
  url: string;
  /** The Standard Webhooks message id: the same for every attempt and resend of one notification. */
  messageId: string;
  body: string;
  /** The registration's custom headers. */
  headers: Record<string, string>;
  /** whsec_ secrets that sign: the current one, and the previous one for 24 h after a rotation. */
  secrets: readonly string[];
  /** Presents the service's client certificate (BCB's callbacks are mutual TLS). */
  mutualTls?: boolean;
  /** The queued delivery it is (absent on a resend): what the sandbox's delivery modes act on. */
  delivery?: { readonly id: bigint; readonly destinationId: bigint; readonly held: boolean };
}

/** A client certificate and its key (PEM), presented on mutual-TLS deliveries. */
export interface ClientCertificate {
  readonly cert: string;
  readonly key: string;
}

/** Signers by secret: making one decodes its secret, which every delivery would otherwise repeat. */
const signers = new Lru<string, Webhook>(1024);

function signer(secret: string): Webhook {
  let webhook = signers.get(secret);
  if (!webhook) {
    webhook = new Webhook(secret);
    signers.set(secret, webhook);
  }
  return webhook;
}

/** The Standard Webhooks signature header: one `v1,<base64>` per secret, space-separated. */
function signatureHeader(secrets: readonly string[], messageId: string, at: Date, body: string): string {
  return secrets.map((secret) => signer(secret).sign(messageId, at, body)).join(' ');
}

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|ERR_OSSL_|HOSTNAME_MISMATCH)/;

/** The class of a failed attempt, from the error undici or the socket gave; nothing of its text. */
export function classify(error: unknown): { failure: FailureClass; text: string } {
  const e = error as { name?: string; code?: string; cause?: unknown };
  const cause = (e.cause ?? {}) as { code?: string; name?: string };
  const found = [error, e.cause].find((x) => x instanceof DestinationError);
  if (found) return { failure: found.failure, text: found.message };
  const code = cause.code ?? e.code ?? '';
  const name = e.name ?? '';
  let failure: FailureClass;
  if (name === 'TimeoutError' || name === 'AbortError' || code.startsWith('UND_ERR_') && /TIMEOUT/.test(code) || code === 'ETIMEDOUT') failure = 'timeout';
  else if (code === 'ECONNREFUSED') failure = 'connection refused';
  else if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL' || code === 'EAI_NONAME') failure = 'DNS failure';
  else if (TLS_CODES.test(code) || /ssl|tls|cert/i.test(cause.name ?? '')) failure = 'TLS failure';
  else failure = 'connection failed';
  return { failure, text: FAILURE_TEXT[failure] };
}

const FAILURE_TEXT: Record<FailureClass, string> = {
  'invalid destination': 'invalid destination',
  'non-public address': 'non-public address (the operator allows those with WEBHOOK_ALLOW_PRIVATE)',
  'port not allowed': 'port not allowed (destinations use port 443 or a port the operator lists in WEBHOOK_ALLOWED_PORTS)',
  'DNS failure': 'DNS failure: the host name does not resolve',
  'connection refused': 'connection refused',
  'connection failed': 'connection failed',
  'TLS failure': "TLS failure: the destination's certificate is not trusted or the handshake failed (the operator adds trusted CAs with WEBHOOK_CA_FILE)",
  timeout: 'timeout: no answer in time',
  unreachable:
    "unreachable: a private address refused the connection, gave no answer in time, or presented a certificate that is not trusted (private addresses are not told apart; the operator adds trusted CAs with WEBHOOK_CA_FILE)",
};

const contexts = new Map<string, SecureContext>();

/**
 * Node's bundled CAs (with NODE_EXTRA_CA_CERTS), the operating system's store and
 * WEBHOOK_CA_FILE, in one TLS context: built once per process and CA file (the API's resend
 * sender and the worker's share it), not parsed again for every connection.
 */
function trustedCas(caFile: string | undefined): string[] {
  const ca = [...new Set([...getCACertificates('default'), ...getCACertificates('system')])];
  if (caFile) ca.push(readFileSync(caFile, 'utf8'));
  return ca;
}

function trustFor(caFile: string | undefined): SecureContext {
  const key = caFile ?? '';
  let context = contexts.get(key);
  if (!context) {
    context = createSecureContext({ ca: trustedCas(caFile) });
    contexts.set(key, context);
  }
  return context;
}

export interface SenderOptions {
  /** The operator's rules for destinations; `allowPrivate` alone stands for the strict or the sandbox policy. */
  policy?: DestinationPolicy;
  allowPrivate?: boolean;
  caFile?: string | undefined;
  /** The whole attempt's limit (10 s; tests make it short). */
  timeoutMs?: number;
  /**
   * The client certificate of mutual-TLS deliveries (BCB's callbacks), loaded on the first of
   * them (WEBHOOK_CLIENT_CERT_FILE and WEBHOOK_CLIENT_KEY_FILE, or the sandbox's own); null or
   * absent: they go without one.
   */
  clientCertificate?: () => Promise<ClientCertificate | null>;
  /** Told every attempt's outcome (the operator's metrics). */
  observe?: (attempt: Attempt) => void;
  /** The sandbox's webhook faults (modules/controls): the fault a delivery to `url` meets, if any. */
  faults?: (url: string, delivery?: Message['delivery']) => Promise<SenderFault | null>;
  /**
   * The time signatures carry (`webhook-timestamp`): the real time, never the test clock's, or a
   * receiver checking it against its own (Standard Webhooks allows 5 minutes) would refuse every
   * delivery once the clock moved. Tests give a clock of their own.
   */
  realClock?: Clock;
}

/** A fault a delivery meets instead of its receiver's answer (sandbox only). */
export interface SenderFault {
  readonly id: bigint;
  readonly effect: string;
  readonly status: number | null;
  readonly delayMs: number | null;
  /**
   * The destination is the service's own inbox, which applies the fault itself when the delivery
   * arrives: the sender sends as usual and only names the fault if the outcome shows it.
   */
  readonly atInbox?: boolean;
}

/** An attempt's outcome before its timing is added. */
type Outcome = Omit<Attempt, 'durationMs' | 'sentAt'>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The error an attempt that went out records when a fault touched it: the outcome, then the
 * fault and what it did (`HTTP 500 (delayed 1500 ms by sandbox fault 3)`, or the note alone on
 * a delivered attempt). At the service's own inbox the fault is named only when the outcome
 * shows it (a counted fault may have been used up by another delivery meanwhile). Null: untouched.
 */
function faultedError(fault: SenderFault, attempt: Attempt): string | null {
  const where = fault.atInbox ? ', at the inbox' : '';
  if (fault.effect === 'delay') {
    if (fault.atInbox && attempt.durationMs < fault.delayMs! && attempt.failure !== 'timeout') return null;
    const by = `delayed ${fault.delayMs} ms by sandbox fault ${fault.id}${where}`;
    return attempt.error === null ? by : `${attempt.error} (${by})`;
  }
  const met = fault.effect === 'status' ? attempt.statusCode === fault.status : attempt.failure === 'timeout';
  if (!fault.atInbox || !met) return null;
  return `${attempt.error ?? `HTTP ${attempt.statusCode}`} (sandbox fault ${fault.id}${where})`;
}

/**
 * POSTs webhooks: TLS with the system CAs plus WEBHOOK_CA_FILE, sockets that only reach the
 * addresses and ports the policy allows (destination.ts), no redirects followed (a 3xx is a
 * failed attempt), a 10 s limit.
 */
export class WebhookSender {
  readonly #agent: Agent;
  readonly #policy: DestinationPolicy;
  readonly #timeoutMs: number;
  readonly #caFile: string | undefined;
  readonly #clientCertificate: (() => Promise<ClientCertificate | null>) | undefined;
  readonly #faults: SenderOptions['faults'];
  readonly #observe: SenderOptions['observe'];
  readonly #realClock: Clock;
  #mutualAgent: Promise<Agent> | undefined;

  constructor(options: SenderOptions) {
    this.#policy = options.policy ?? (options.allowPrivate ? SANDBOX_POLICY : STRICT_POLICY);
    this.#timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
    this.#caFile = options.caFile;
    this.#clientCertificate = options.clientCertificate;
    this.#faults = options.faults;
    this.#observe = options.observe;
    this.#realClock = options.realClock ?? systemClock;
    this.#agent = this.#makeAgent(trustFor(options.caFile));
  }

  /** An agent whose sockets only reach what the policy allows, with the given TLS context. */
  #makeAgent(secureContext: SecureContext): Agent {
    // One connector per port rule: a port outside the list is allowed only for private
    // addresses (sandbox), so the look-up made when connecting must know the port.
    const connectors = new Map<number, buildConnector.connector>();
    const connectorFor = (port: number) => {
      let connector = connectors.get(port);
      if (!connector) {
        connector = buildConnector({ secureContext, lookup: guardedLookup(this.#policy, port), timeout: this.#timeoutMs } as buildConnector.BuildOptions);
        if (connectors.size < 64) connectors.set(port, connector);
      }
      return connector;
    };
    return new Agent({
      connect: (opts, callback) => connectorFor(opts.port === '' ? DEFAULT_PORT : Number(opts.port))(opts, callback),
      headersTimeout: this.#timeoutMs,
      bodyTimeout: this.#timeoutMs,
      connections: CONNECTIONS_PER_ORIGIN,
    });
  }

  /** The agent of mutual-TLS deliveries: made on the first one, with the client certificate when there is one. */
  #mutual(): Promise<Agent> {
    this.#mutualAgent ??= (async () => {
      const client = this.#clientCertificate ? await this.#clientCertificate() : null;
      if (!client) return this.#agent;
      return this.#makeAgent(createSecureContext({ ca: trustedCas(this.#caFile), cert: client.cert, key: client.key }));
    })();
    // A certificate that could not be loaded is tried again by the next delivery.
    this.#mutualAgent.catch(() => (this.#mutualAgent = undefined));
    return this.#mutualAgent;
  }

  get timeoutMs(): number {
    return this.#timeoutMs;
  }

  async send(message: Message, clock: () => Date): Promise<Attempt> {
    const attempt = await this.#attempt(message, clock);
    if (!attempt.held) this.#observe?.(attempt);
    if (attempt.duplicate) this.#observe?.(attempt.duplicate);
    return attempt;
  }

  /**
   * One attempt. A sandbox fault on the destination acts first: a status or a timeout instead of
   * the receiver's answer, or a delay before the request goes, counted in the attempt's duration
   * and its time limit. Every attempt a fault touched says so in its `error` (the delivery log),
   * naming the fault and what it did: on a delivered attempt too.
   */
  async #attempt(message: Message, clock: () => Date): Promise<Attempt> {
    const fault = this.#faults ? await this.#faults(message.url, message.delivery) : null;
    const sentAt = clock();
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const done = (result: Outcome): Attempt => ({ ...result, durationMs: elapsed(), sentAt });
    if (fault?.effect === 'late') return done({ success: false, statusCode: null, error: null, held: { faultId: fault.id, holdMs: fault.delayMs! } });
    if (fault?.effect === 'duplicate') return this.#twice(message, clock, fault.id);
    if (fault && !fault.atInbox) {
      if (fault.effect === 'status') {
        const success = fault.status! >= 200 && fault.status! < 300;
        return done({ success, statusCode: fault.status, error: `HTTP ${fault.status} (sandbox fault ${fault.id})` });
      }
      if (fault.effect !== 'delay' || fault.delayMs! >= this.#timeoutMs) {
        await sleep(this.#timeoutMs);
        const by = fault.effect === 'delay' ? `delayed ${fault.delayMs} ms by sandbox fault ${fault.id}` : `sandbox fault ${fault.id}`;
        return done({ success: false, statusCode: null, failure: 'timeout', error: `timeout: no answer within ${this.#timeoutMs} ms (${by})` });
      }
      // A slow answer: the request goes after the delay, within what is left of the limit.
      await sleep(fault.delayMs!);
    }
    const attempt = done(await this.#post(message, this.#timeoutMs - elapsed()));
    const error = fault ? faultedError(fault, attempt) : null;
    return error === null ? attempt : { ...attempt, error };
  }

  /**
   * A `duplicate` fault: the message goes, then goes again at once (the same body and
   * webhook-id, signed again), within what is left of the attempt's time limit, so that the
   * two stay inside the delivery's lease. The first decides the delivery's outcome; each is
   * logged, naming the fault.
   */
  async #twice(message: Message, clock: () => Date, faultId: bigint): Promise<Attempt> {
    const note = (attempt: Attempt, what: string): Attempt => ({ ...attempt, error: attempt.error === null ? what : `${attempt.error} (${what})` });
    const timed = async (budgetMs: number): Promise<Attempt> => {
      const sentAt = clock();
      const started = performance.now();
      const outcome = await this.#post(message, budgetMs);
      return { ...outcome, durationMs: Math.round(performance.now() - started), sentAt };
    };
    const first = await timed(this.#timeoutMs);
    const second = await timed(Math.max(1, this.#timeoutMs - first.durationMs));
    return { ...note(first, `sent twice by sandbox fault ${faultId}`), duplicate: note(second, `duplicate sent by sandbox fault ${faultId}`) };
  }

  /** The request itself, with `budgetMs` for the whole of it (connection, answer and its body). */
  async #post(message: Message, budgetMs: number): Promise<Outcome> {
    // The whole attempt (connection, answer and its body) within the limit. Not
    // AbortSignal.timeout: its timer and signal live the full timeout whatever the answer, so
    // under load a process held tens of thousands of them, promoted to the old generation and
    // collected in major pauses, which stalled every request of the process.
    // Why, and what was measured: docs/decisions/0021-webhook-delivery-lease.md.
    const abort = new AbortController();
    let signedAt: Date | undefined;
    const timer = setTimeout(() => abort.abort(new DOMException(`no answer within ${this.#timeoutMs} ms`, 'TimeoutError')), Math.max(1, budgetMs));
    try {
      // IP literals never reach the lookup, so they are judged here.
      parseDestination(message.url, this.#policy);
      // Signed at the real time; the payload and the log keep business time (the attempt's sentAt).
      signedAt = this.#realClock.now();
      const headers = {
        ...message.headers,
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'webhook-id': message.messageId,
        'webhook-timestamp': Math.floor(signedAt.getTime() / 1000).toString(),
        'webhook-signature': signatureHeader(message.secrets, message.messageId, signedAt, message.body),
      };
      const response = await request(message.url, {
        method: 'POST',
        headers,
        body: message.body,
        dispatcher: message.mutualTls ? await this.#mutual() : this.#agent,
        signal: abort.signal,
      });
      // Read to the end so the connection can carry the next delivery, but no further than the
      // limit (past it the connection is closed), and kept nowhere: what a destination answers
      // is never shown, so the service tells nobody what a service it can reach says.
      await response.body.dump({ limit: MAX_ANSWER_BYTES }).catch(() => undefined);
      const success = response.statusCode >= 200 && response.statusCode < 300;
      return { success, statusCode: response.statusCode, error: success ? null : `HTTP ${response.statusCode}`, signedAt };
    } catch (error) {
      const { failure: found, text } = classify(error);
      // The service's own inbox is no service of anyone's network: its failures are told (a fault's time-out is named by it).
      const failure = isOwnInbox(this.#policy, message.url) ? found : await toldFailure(message.url, found);
      if (failure !== found) return { success: false, statusCode: null, failure, error: FAILURE_TEXT.unreachable, signedAt };
      return { success: false, statusCode: null, failure, error: failure === 'timeout' ? `timeout: no answer within ${this.#timeoutMs} ms` : text, signedAt };
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    const mutual = await this.#mutualAgent?.catch(() => undefined);
    if (mutual && mutual !== this.#agent) await mutual.close();
    await this.#agent.close();
  }
}
