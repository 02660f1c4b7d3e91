import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';

/**
 * How the client commands (`listen`, `trigger`) reach a running sandbox, here or on another
 * machine: its address, and who they are there. Either an account's own credentials (the token
 * request and the certificate the token is bound to, as the demo's files hold them) or the
 * admin token with an account id.
 */
export interface Remote {
  /** The sandbox's base URL, without a trailing slash. */
  readonly url: string;
  /** The admin token: `/sandbox/*` routes, and the account's routes for `account` with it. */
  readonly adminToken: string | undefined;
  /** The account the command acts for. */
  readonly accountId: bigint;
  /** The account's credentials, when given: a token is asked for with them. */
  readonly credentials: { readonly tokenRequest: string; readonly certificate: string } | undefined;
}

export class RemoteError extends Error {
  override name = 'RemoteError';
}

/** The options every client command takes, for node:util parseArgs. */
export const REMOTE_OPTIONS = {
  url: { type: 'string' },
  'admin-token': { type: 'string' },
  account: { type: 'string' },
  dir: { type: 'string' },
} as const;

export const REMOTE_USAGE = `  --url URL            the sandbox (default PIX_API_URL, else http://127.0.0.1:8080)
  --admin-token TOKEN  the sandbox's ADMIN_TOKEN (default ADMIN_TOKEN, else DIR/admin-token)
  --account ID         the account (default: the one whose files DIR holds)
  --dir DIR            the demo's files: credentials, certificate, admin token (default data/current)`;

function readIfThere(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/**
 * Who the command is, from its options, the environment and the demo's files (`data/current`
 * by default): the admin token and account id when given, else the files' account.
 */
export function remoteFrom(values: Partial<Record<keyof typeof REMOTE_OPTIONS, string | boolean | undefined>>, env: NodeJS.ProcessEnv = process.env): Remote {
  const dir = typeof values.dir === 'string' ? values.dir : join('data', 'current');
  const url = (typeof values.url === 'string' ? values.url : env.PIX_API_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]+/.test(url)) throw new RemoteError(`--url must be an http(s) address: ${url}`);
  const adminToken = (typeof values['admin-token'] === 'string' ? values['admin-token'] : undefined) ?? env.ADMIN_TOKEN ?? readIfThere(join(dir, 'admin-token'));
  const tokenRequest = readIfThere(join(dir, 'token-request.json'));
  const certificate = readIfThere(join(dir, 'client.crt.urlencoded'));
  const credentials = readIfThere(join(dir, 'credentials.json'));
  const filesAccount = credentials ? (JSON.parse(credentials) as { accountId?: unknown }).accountId : undefined;
  const filesOf = filesAccount === undefined ? undefined : String(filesAccount);
  const account = typeof values.account === 'string' ? values.account : filesOf;
  if (account === undefined) throw new RemoteError(`--account is required (no account's files in ${dir})`);
  if (!/^[1-9]\d{0,17}$/.test(account)) throw new RemoteError('--account must be a numeric account id');
  // The files' credentials serve their own account, named or not.
  const ownFiles = account === filesOf && tokenRequest !== undefined && certificate !== undefined;
  if (!adminToken && !ownFiles) throw new RemoteError(`an admin token (--admin-token, ADMIN_TOKEN) or the account's files (--dir) are required`);
  return {
    url,
    adminToken,
    accountId: BigInt(account),
    credentials: ownFiles ? { tokenRequest: tokenRequest!, certificate: certificate! } : undefined,
  };
}

export interface Answer {
  status: number;
  body: unknown;
}

/** One request to the sandbox; the answer's JSON body (null when it has none). */
export async function call(
  remote: Pick<Remote, 'url'>,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  options: { headers?: Record<string, string>; body?: unknown; signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined;
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  const timeoutMs = options.timeoutMs ?? 30_000;
  let answer;
  try {
    answer = await request(`${remote.url}${path}`, {
      method,
      headers,
      body,
      signal: options.signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
  } catch (error) {
    if ((error as { name?: string }).name === 'AbortError') throw error;
    throw new RemoteError(`the sandbox at ${remote.url} did not answer ${method} ${path}: ${(error as Error).message}`);
  }
  const text = await answer.body.text();
  let parsed: unknown = null;
  if (text.length > 0) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  return { status: answer.statusCode, body: parsed };
}

/** The admin token's header, for `/sandbox/*`. */
export function adminHeaders(remote: Remote): Record<string, string> {
  if (!remote.adminToken) throw new RemoteError('this needs the admin token (--admin-token or ADMIN_TOKEN)');
  return { authorization: `Bearer ${remote.adminToken}` };
}

/** A failed answer, as one line: its status and the error body's code and message. */
export function answerError(what: string, answer: Answer): RemoteError {
  const b = answer.body as { code?: string; message?: string; title?: string; detail?: string } | null;
  const detail = typeof b === 'object' && b !== null ? [b.code ?? b.title, b.message ?? b.detail].filter(Boolean).join(': ') : String(answer.body ?? '');
  return new RemoteError(`${what}: HTTP ${answer.status}${detail ? ` ${detail}` : ''}`);
}
