import { readFileSync } from 'node:fs';
import { createSecureContext, getCACertificates, type SecureContext } from 'node:tls';
import { Agent, request } from 'undici';
import { Webhook } from 'standardwebhooks';
import { Lru } from '../../lib/lru.ts';
import { DestinationError, guardedLookup, parseDestination } from './destination.ts';

/** A delivery succeeds on a 2xx answered within this time. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** At most this much of a receiver's answer is read (and kept, as the error, when it failed). */
const MAX_ANSWER_BYTES = 1024;
export const USER_AGENT = 'pix-api-webhooks/1.0';

export interface Attempt {
  success: boolean;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  sentAt: Date;
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

function describe(error: unknown, timeoutMs: number): string {
  if (error instanceof DestinationError) return error.message;
  const e = error as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError' || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT') {
    return `no answer within ${timeoutMs} ms`;
  }
  const cause = e.cause?.code === 'EADDRNOTPUBLIC' ? e.cause : e;
  if (cause.code === 'EADDRNOTPUBLIC') return cause.message ?? 'destination resolves to a non-public address';
  return [e.code ?? e.cause?.code, e.message ?? e.cause?.message].filter(Boolean).join(': ') || 'delivery failed';
}

/**
 * POSTs webhooks: TLS with the system CAs plus WEBHOOK_CA_FILE, sockets that only reach public
 * addresses (unless allowed), no redirects followed (a 3xx is a failed attempt), a 10 s limit.
 */
const contexts = new Map<string, SecureContext>();

/**
 * Node's bundled CAs (with NODE_EXTRA_CA_CERTS), the operating system's store and
 * WEBHOOK_CA_FILE, in one TLS context: built once per process and CA file (the API's resend
 * sender and the worker's share it), not parsed again for every connection.
 */
function trustFor(caFile: string | undefined): SecureContext {
  const key = caFile ?? '';
  let context = contexts.get(key);
  if (!context) {
    const ca = [...new Set([...getCACertificates('default'), ...getCACertificates('system')])];
    if (caFile) ca.push(readFileSync(caFile, 'utf8'));
    context = createSecureContext({ ca });
    contexts.set(key, context);
  }
  return context;
}

export class WebhookSender {
  readonly #agent: Agent;
  readonly #allowPrivate: boolean;
  readonly #timeoutMs: number;

  constructor(options: { allowPrivate: boolean; caFile?: string | undefined; timeoutMs?: number }) {
    this.#allowPrivate = options.allowPrivate;
    this.#timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
    const secureContext = trustFor(options.caFile);
    this.#agent = new Agent({
      connect: {
        secureContext,
        lookup: guardedLookup(options.allowPrivate),
        timeout: this.#timeoutMs,
      },
      headersTimeout: this.#timeoutMs,
      bodyTimeout: this.#timeoutMs,
      // Per receiving origin: most deliveries of a busy account go to one URL.
      connections: 64,
    });
  }

  async send(message: Message, now: () => Date): Promise<Attempt> {
    const sentAt = now();
    const started = performance.now();
    const done = (result: Omit<Attempt, 'durationMs' | 'sentAt'>): Attempt => ({
      ...result,
      durationMs: Math.round(performance.now() - started),
      sentAt,
    });
    // The whole attempt (connection, answer and its body) within the limit. Not
    // AbortSignal.timeout: its timer and signal live the full 10 s whatever the answer, so at
    // 2,500 deliveries/s a process held 25,000 of them, promoted to the old generation and
    // collected in 20-30 ms major pauses, which stalled every request of the process.
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(new DOMException(`no answer within ${this.#timeoutMs} ms`, 'TimeoutError')), this.#timeoutMs);
    try {
      // IP literals never reach the lookup, so they are judged here.
      parseDestination(message.url, this.#allowPrivate);
      const headers = {
        ...message.headers,
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'webhook-id': message.messageId,
        'webhook-timestamp': Math.floor(sentAt.getTime() / 1000).toString(),
        'webhook-signature': signatureHeader(message.secrets, message.messageId, sentAt, message.body),
      };
      const response = await request(message.url, {
        method: 'POST',
        headers,
        body: message.body,
        dispatcher: this.#agent,
        signal: abort.signal,
      });
      const success = response.statusCode >= 200 && response.statusCode < 300;
      if (success) {
        // Read to the end so the connection can carry the next delivery, but no further than
        // the limit (past it the connection is closed): a receiver cannot make us read megabytes.
        await response.body.dump({ limit: MAX_ANSWER_BYTES });
        return done({ success, statusCode: response.statusCode, error: null });
      }
      let answer = '';
      // Leaving the loop early destroys the stream, as above.
      for await (const chunk of response.body) {
        answer += (chunk as Buffer).toString('utf8');
        if (answer.length >= MAX_ANSWER_BYTES) break;
      }
      return done({
        success,
        statusCode: response.statusCode,
        error: `HTTP ${response.statusCode}${answer ? `: ${answer.slice(0, MAX_ANSWER_BYTES)}` : ''}`,
      });
    } catch (error) {
      return done({ success: false, statusCode: null, error: describe(error, this.#timeoutMs) });
    } finally {
      clearTimeout(timer);
    }
  }

  close(): Promise<void> {
    return this.#agent.close();
  }
}
