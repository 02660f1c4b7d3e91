import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { getCACertificates } from 'node:tls';
import { pemChain } from '../locations/signing/files.ts';
import { isNonPublicHost } from '../webhooks/destination.ts';
import { Agent, request, type Dispatcher } from 'undici';

/** Every fetch of the payer (location, JWK Set) answers within this time, or counts as unreachable. */
export const PAYER_FETCH_TIMEOUT_MS = 5_000;
/** At most this much of an answer is read: a payload JWS or a JWK Set is a few KiB. */
export const PAYER_MAX_ANSWER_BYTES = 64 * 1024;

/** An RFC 7807 problem a server answered with (BCB's: `type` ends with the problem's name). */
export interface Problem {
  /** The last segment of `type`: `CobPayloadNaoEncontrado` for `https://pix.bcb.gov.br/api/v2/error/CobPayloadNaoEncontrado`. */
  name: string;
  detail: string | null;
}

/** Why a fetch gave no usable answer, in words safe to show (no socket error text). */
export class FetchFailure extends Error {
  override readonly name = 'FetchFailure';
  /** The HTTP status when the server answered, else null. */
  readonly status: number | null;
  /** The problem the server's answer carried, if it was one. */
  readonly problem: Problem | null;
  constructor(message: string, status: number | null = null, problem: Problem | null = null) {
    super(message);
    this.status = status;
    this.problem = problem;
  }
}

/** The problem in an answer's body (JSON with a string `type`), or null. */
function problemOf(body: string): Problem | null {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return null;
  }
  const { type, detail } = (value ?? {}) as { type?: unknown; detail?: unknown };
  if (typeof type !== 'string' || type === '') return null;
  return { name: type.split('/').at(-1) ?? type, detail: typeof detail === 'string' ? detail : null };
}

export interface Fetched {
  contentType: string;
  body: string;
}

/**
 * The connections of the payer: the default CAs (Node's, with NODE_EXTRA_CA_CERTS) and the
 * system's, a connect timeout, no redirects (a 3xx is a failure: a payer follows only the
 * address it was given). The service's own address (PUBLIC_URL, when it terminates TLS itself
 * with TLS_CERT_FILE) is reached trusting that file's certificates too, whoever issued them: a
 * local set-up's private CA need not be in any store for the payer to read the service's own
 * locations.
 */
export class PayerConnections {
  readonly #general: Agent;
  readonly #own: { readonly origin: string; readonly agent: Agent } | null;
  readonly #ownOrigin: string | null;

  constructor(own: { publicUrl: string; tlsCertFile: string | undefined } | null = null) {
    const ca = [...new Set([...getCACertificates('default'), ...getCACertificates('system')])];
    this.#general = new Agent({ connect: { timeout: PAYER_FETCH_TIMEOUT_MS, ca }, connections: 16 });
    const origin = own ? new URL(own.publicUrl) : null;
    this.#ownOrigin = origin?.origin ?? null;
    if (own?.tlsCertFile && origin?.protocol === 'https:') {
      const chain = pemChain(readFileSync(own.tlsCertFile, 'utf8')).map((der) => new X509Certificate(der).toString());
      // The file's own certificates are anchors even when their issuer is not there (a leaf of a
      // private CA): a partial chain ending at one of them is trusted, for this origin only.
      const connect = { timeout: PAYER_FETCH_TIMEOUT_MS, ca: [...ca, ...chain], allowPartialTrustChain: true };
      this.#own = { origin: origin.origin, agent: new Agent({ connect, connections: 4 }) };
    } else {
      this.#own = null;
    }
  }

  /** Whether `url` is the service's own address (PUBLIC_URL). */
  isOwn(url: URL): boolean {
    return url.origin === this.#ownOrigin;
  }

  /** The agent that fetches `url`. */
  for(url: URL): Agent {
    return this.#own && url.origin === this.#own.origin ? this.#own.agent : this.#general;
  }

  async close(): Promise<void> {
    await Promise.all([this.#general.close(), this.#own?.agent.close()]);
  }
}

/** What a private address's failures are told as: one class, whatever happened (webhooks/destination.ts toldFailure). */
export const UNREACHABLE = 'unreachable: a private address refused the connection, gave no answer in time, or presented a certificate that is not trusted (not told apart)';

function failureOf(error: unknown): { failure: FetchFailure; local: boolean } {
  if (error instanceof FetchFailure) return { failure: error, local: false };
  const e = error as { name?: string; code?: string; cause?: { code?: string } };
  const code = e.cause?.code ?? e.code ?? '';
  const local = (message: string) => ({ failure: new FetchFailure(message), local: true });
  if (e.name === 'TimeoutError' || e.name === 'AbortError' || /TIMEOUT/.test(code)) return local('no answer in time');
  if (code === 'ECONNREFUSED') return local('connection refused');
  if (code === 'ENOTFOUND' || code.startsWith('EAI_')) return { failure: new FetchFailure('the host name does not resolve'), local: false };
  if (/^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH)/.test(code)) return local('TLS failure (certificate not trusted?)');
  return local('connection failed');
}

/** GET `url`: a 200 answer's text, read up to the size limit, within the time limit. */
export async function fetchText(connections: PayerConnections, url: URL, accept: string): Promise<Fetched> {
  const signal = AbortSignal.timeout(PAYER_FETCH_TIMEOUT_MS);
  try {
    const answer = await request(url, { method: 'GET', dispatcher: connections.for(url), signal, headers: { accept, 'user-agent': 'pix-api-sandbox-payer/1.0' } });
    const contentType = answer.headers['content-type'];
    if (answer.statusCode !== 200) {
      // A refusal is read for its problem (what a payer tells its customer), within the same limits.
      const body = await bodyOf(answer.body).catch(() => '');
      throw new FetchFailure(`answered HTTP ${answer.statusCode}`, answer.statusCode, problemOf(body));
    }
    return { contentType: typeof contentType === 'string' ? contentType : '', body: await bodyOf(answer.body) };
  } catch (error) {
    const { failure, local } = failureOf(error);
    // At a private address other than the service's own, the failures are one class: the payer
    // must not map the services of the sandbox's network.
    if (local && !connections.isOwn(url) && (await isNonPublicHost(url.hostname))) throw new FetchFailure(UNREACHABLE);
    throw failure;
  }
}

/** An answer's text, up to the size limit. */
async function bodyOf(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > PAYER_MAX_ANSWER_BYTES) {
      body.destroy();
      throw new FetchFailure(`answered more than ${PAYER_MAX_ANSWER_BYTES} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
