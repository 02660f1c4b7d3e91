import { getCACertificates } from 'node:tls';
import { Agent, request } from 'undici';

/** Every fetch of the payer (location, JWK Set) answers within this time, or counts as unreachable. */
export const PAYER_FETCH_TIMEOUT_MS = 5_000;
/** At most this much of an answer is read: a payload JWS or a JWK Set is a few KiB. */
export const PAYER_MAX_ANSWER_BYTES = 64 * 1024;

/** Why a fetch gave no usable answer, in words safe to show (no socket error text). */
export class FetchFailure extends Error {
  override readonly name = 'FetchFailure';
  /** The HTTP status when the server answered, else null. */
  readonly status: number | null;
  constructor(message: string, status: number | null = null) {
    super(message);
    this.status = status;
  }
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
    if (answer.statusCode !== 200) {
      await answer.body.dump().catch(() => undefined);
      throw new FetchFailure(`answered HTTP ${answer.statusCode}`, answer.statusCode);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of answer.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > PAYER_MAX_ANSWER_BYTES) {
        answer.body.destroy();
        throw new FetchFailure(`answered more than ${PAYER_MAX_ANSWER_BYTES} bytes`);
      }
      chunks.push(chunk);
    }
    const contentType = answer.headers['content-type'];
    return { contentType: typeof contentType === 'string' ? contentType : '', body: Buffer.concat(chunks).toString('utf8') };
  } catch (error) {
    throw failureOf(error);
  }
}
