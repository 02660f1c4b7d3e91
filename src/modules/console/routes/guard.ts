import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, badRequest, classifyError } from '../../../http/errors.ts';
import { cookieValue, SESSION_COOKIE, type ConsoleSessions, type Session } from '../session.ts';
import { errorPage } from '../views/layout.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The console's session, once the console's hook found a valid one. */
    consoleSession: Session | null;
  }
  interface FastifyContextConfig {
    /** A console route open without a session: the sign-in page and the static files. */
    consolePublic?: boolean;
  }
}

/** A form is small: a BR Code is the longest field. */
const FORM_BODY_LIMIT = 16 * 1024;

/** No page of the console loads anything from elsewhere, runs inline script, or is framed. */
export const CONTENT_SECURITY_POLICY =
  "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export const refused = (message: string) => new AppError(403, 'CONSOLE_REQUEST_REFUSED', message);

/** A request of the console's script (an action, or a page read again for its live parts), not a navigation. */
export const fromScript = (request: FastifyRequest) => request.headers['x-console-request'] !== undefined;

/** A console path to come back to; anything else is the console's home. */
export function safeReturn(path: unknown): string {
  return typeof path === 'string' && /^\/console(\/[A-Za-z0-9_-]+)*$/.test(path) ? path : '/console';
}

/** Form fields as an object of own properties (a field named `__proto__` included); a field given twice is refused. */
function formFields(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(text)) {
    if (Object.hasOwn(fields, name)) throw badRequest('INVALID_REQUEST', `The form field ${name.slice(0, 40)} is given twice`);
    Object.defineProperty(fields, name, { value, enumerable: true, writable: true, configurable: true });
  }
  return fields;
}

/**
 * A POST from a page of another site: the browser says so (Sec-Fetch-Site, Origin). The Origin's
 * host is compared, not its scheme: behind a proxy that ends TLS the request itself is plain HTTP.
 */
function crossSite(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site') return true;
  const origin = request.headers.origin;
  if (origin === undefined) return false;
  if (!URL.canParse(origin)) return true;
  const from = new URL(origin);
  // The request's host read with the Origin's scheme, so that a default port is dropped on both sides.
  return !URL.canParse(`${from.protocol}//${request.host}`) || new URL(`${from.protocol}//${request.host}`).host !== from.host;
}

function toSignIn(request: FastifyRequest, reply: FastifyReply) {
  if (fromScript(request) || request.url.startsWith('/console/events')) {
    return reply.status(401).type('text/plain; charset=utf-8').send('Signed out: sign in again');
  }
  const next = request.method === 'GET' ? request.url.split('?')[0] : '/console';
  return reply.redirect(`/console/sign-in?next=${encodeURIComponent(safeReturn(next))}`, 303);
}

function sendError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const { body, headers } = classifyError(error, request);
  if (headers) void reply.headers(headers);
  void reply.status(body.statusCode);
  if (fromScript(request)) return reply.type('text/plain; charset=utf-8').send(body.message);
  const back = safeReturn((request.body as { returnTo?: unknown } | undefined)?.returnTo);
  return reply.type('text/html; charset=utf-8').send(errorPage({ message: body.message, back }));
}

/**
 * The console's plumbing, in its own scope: form bodies, security headers on every answer, the
 * session on every route but the public ones, the session's token and the same site on every
 * POST, and errors as text (for the script) or a page (for a form sent without it).
 */
export function registerGuard(app: FastifyInstance, sessions: ConsoleSessions): void {
  app.decorateRequest('consoleSession', null);
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, (_request, body, done) => {
    try {
      done(null, formFields(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  app.addHook('onRequest', async (request, reply) => {
    void reply.headers({
      'content-security-policy': CONTENT_SECURITY_POLICY,
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'same-origin',
      'cross-origin-opener-policy': 'same-origin',
      'cache-control': 'no-store',
    });
    if (request.method === 'POST' && crossSite(request)) throw refused('The console takes forms from its own pages only');
    if (request.routeOptions.config.consolePublic) return;
    const session = sessions.verify(cookieValue(request.headers.cookie, SESSION_COOKIE));
    if (!session) return toSignIn(request, reply);
    request.consoleSession = session;
  });
  // Before validation: a request without the session's token learns nothing of the form's rules.
  app.addHook('preValidation', async (request) => {
    if (request.method !== 'POST' || request.routeOptions.config.consolePublic) return;
    const given = (request.body as { _csrf?: unknown } | undefined)?._csrf;
    if (!sessions.checkCsrf(request.consoleSession!, given)) throw refused("The form's session token is missing or out of date: reload the page");
  });
  app.setErrorHandler(sendError);
}
