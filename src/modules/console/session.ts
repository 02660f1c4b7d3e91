import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Console sessions without a store: the cookie holds a random session id, its expiry and an
 * HMAC of both under a key derived from ADMIN_TOKEN. It carries nothing of the token (a MAC
 * cannot be turned back into it), every process that shares the token accepts it, and a new
 * ADMIN_TOKEN ends every session. Signing out forgets the id in this process until it expires.
 */
export const SESSION_COOKIE = 'pix_console';
export const COOKIE_PATH = '/console';
/** How long a sign-in lasts (real time: the test clock does not end sessions). */
export const SESSION_TTL_MS = 12 * 3_600_000;
/** Signed-out ids remembered at most (each until its expiry); beyond, the oldest go first. */
const MAX_REVOKED = 10_000;

export interface Session {
  readonly id: string;
  readonly expiresAtMs: number;
}

const mac = (key: Buffer, text: string) => createHmac('sha256', key).update(text).digest('base64url');

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

export class ConsoleSessions {
  readonly #key: Buffer;
  readonly #revoked = new Map<string, number>();
  readonly #nowMs: () => number;

  /** `nowMs`: real time (the real clock), not the test clock. */
  constructor(adminToken: string, nowMs: () => number) {
    this.#key = createHmac('sha256', adminToken).update('pix-api console sessions').digest();
    this.#nowMs = nowMs;
  }

  /** A new session and the cookie value that carries it. */
  issue(): { session: Session; value: string } {
    const session = { id: randomBytes(18).toString('base64url'), expiresAtMs: this.#nowMs() + SESSION_TTL_MS };
    const signed = `${session.id}.${session.expiresAtMs.toString(36)}`;
    return { session, value: `${signed}.${mac(this.#key, signed)}` };
  }

  /** The session a cookie value carries, if it is ours, unexpired and not signed out. */
  verify(value: string | undefined): Session | null {
    if (!value || value.length > 200) return null;
    const match = /^([A-Za-z0-9_-]{24})\.([0-9a-z]{1,12})\.([A-Za-z0-9_-]{43})$/.exec(value);
    if (!match) return null;
    const [, id, expiry, given] = match as unknown as [string, string, string, string];
    if (!sameText(mac(this.#key, `${id}.${expiry}`), given)) return null;
    const expiresAtMs = parseInt(expiry, 36);
    if (expiresAtMs <= this.#nowMs() || this.#revoked.has(id)) return null;
    return { id, expiresAtMs };
  }

  revoke(session: Session): void {
    const now = this.#nowMs();
    for (const [id, expires] of this.#revoked) if (expires <= now) this.#revoked.delete(id);
    while (this.#revoked.size >= MAX_REVOKED) this.#revoked.delete(this.#revoked.keys().next().value!);
    this.#revoked.set(session.id, session.expiresAtMs);
  }

  /** The session's token against cross-site requests: every form and fetch of the console sends it back. */
  csrfToken(session: Session): string {
    return mac(this.#key, `csrf.${session.id}`);
  }

  checkCsrf(session: Session, given: unknown): boolean {
    return typeof given === 'string' && sameText(this.csrfToken(session), given);
  }

  /** A notice carried by a redirect's query string, signed: no link from elsewhere puts words on a console page. */
  noticeSignature(session: Session, text: string): string {
    return mac(this.#key, `notice.${session.id}.${text}`);
  }

  checkNotice(session: Session, text: string, signature: string | undefined): boolean {
    return signature !== undefined && sameText(this.noticeSignature(session, text), signature);
  }

  /** The Set-Cookie value of a session (or of its end, with `value` empty). */
  static cookie(value: string, options: { secure: boolean; maxAgeSeconds: number }): string {
    const attributes = [`${SESSION_COOKIE}=${value}`, `Path=${COOKIE_PATH}`, 'HttpOnly', 'SameSite=Strict', `Max-Age=${options.maxAgeSeconds}`];
    if (options.secure) attributes.push('Secure');
    return attributes.join('; ');
  }
}

/** One cookie of a Cookie header, if sent once. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header || header.length > 8192) return undefined;
  const found = header
    .split(';')
    .map((part) => part.trim())
    .filter((part) => part.startsWith(`${name}=`));
  return found.length === 1 ? found[0]!.slice(name.length + 1) : undefined;
}
