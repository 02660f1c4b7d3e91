import { getCACertificates } from 'node:tls';
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
 * The connections of the payer: the default and system CAs (plus `extraCa`, PEM), a connect
 * timeout, no redirects (a 3xx is a failure: a payer follows only the address it was given).
 */
export function payerAgent(extraCa: readonly string[] = []): Agent {
  const ca = [...new Set([...getCACertificates('default'), ...getCACertificates('system')]), ...extraCa];
  return new Agent({ connect: { timeout: PAYER_FETCH_TIMEOUT_MS, ca }, connections: 16 });
}

function failureOf(error: unknown): FetchFailure {
  if (error instanceof FetchFailure) return error;
  const e = error as { name?: string; code?: string; cause?: { code?: string } };
  const code = e.cause?.code ?? e.code ?? '';
  if (e.name === 'TimeoutError' || e.name === 'AbortError' || /TIMEOUT/.test(code)) return new FetchFailure('no answer in time');
  if (code === 'ECONNREFUSED') return new FetchFailure('connection refused');
  if (code === 'ENOTFOUND' || code.startsWith('EAI_')) return new FetchFailure('the host name does not resolve');
  if (/^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH)/.test(code)) return new FetchFailure('TLS failure (certificate not trusted?)');
  return new FetchFailure('connection failed');
}

/** GET `url`: a 200 answer's text, read up to the size limit, within the time limit. */
export async function fetchText(agent: Agent, url: URL, accept: string): Promise<Fetched> {
  const signal = AbortSignal.timeout(PAYER_FETCH_TIMEOUT_MS);
  try {
    const answer = await request(url, { method: 'GET', dispatcher: agent, signal, headers: { accept, 'user-agent': 'pix-api-sandbox-payer/1.0' } });
    const contentType = answer.headers['content-type'];
    if (answer.statusCode !== 200) {
      // A refusal is read for its problem (what a payer tells its customer), within the same limits.
      const body = await bodyOf(answer.body).catch(() => '');
      throw new FetchFailure(`answered HTTP ${answer.statusCode}`, answer.statusCode, problemOf(body));
    }
    return { contentType: typeof contentType === 'string' ? contentType : '', body: await bodyOf(answer.body) };
  } catch (error) {
    throw failureOf(error);
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
