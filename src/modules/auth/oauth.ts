import { errorCodes, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { AppError } from '../../http/errors.ts';
import { isScope, type Scope } from './scopes.ts';

/** RFC 6749 §5.2 error codes, and `temporarily_unavailable` (its §4.1.2.1) for 429 and 503. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'temporarily_unavailable'
  | 'server_error';

/** A failure of an OAuth token request, answered as an RFC 6749 §5.2 body. */
export class OAuthError extends AppError {
  override name = 'OAuthError';
  readonly oauthError: OAuthErrorCode;
  constructor(status: number, error: OAuthErrorCode, description: string) {
    super(status, 'INVALID_REQUEST', description);
    this.oauthError = error;
  }
}

const FORM = 'application/x-www-form-urlencoded';
/** A token request is a few short fields. */
export const FORM_BODY_LIMIT = 8192;

const isForm = (request: FastifyRequest) => (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase() === FORM;

/** A request that carries `grant_type`, or any form, is an OAuth request, whatever its content type (registerFormParser). */
export function isOAuthRequest(request: FastifyRequest): boolean {
  const body = request.body;
  return isForm(request) || (typeof body === 'object' && body !== null && Object.hasOwn(body, 'grant_type'));
}

/** A form's fields, and the first parameter sent more than once, if any. */
function formFields(body: string): { fields: Record<string, string>; repeated: string | undefined } {
  const fields: Record<string, string> = {};
  let repeated: string | undefined;
  for (const [name, value] of new URLSearchParams(body)) {
    if (Object.hasOwn(fields, name)) repeated ??= name;
    else fields[name] = value;
  }
  return { fields, repeated };
}

/** RFC 6749 §3.2: a parameter sent twice is refused. */
const sentTwice = (name: string) => new OAuthError(400, 'invalid_request', `The parameter ${name} is sent more than once`);

/** The body as a JSON object; undefined when it is not one. */
function jsonObject(body: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A body of any other content type (or none) read as an OAuth request: the fields of a JSON
 * object or of a form that carries `grant_type`; null when it carries none (not an OAuth request).
 */
export function oauthFieldsOf(body: string): Record<string, unknown> | null {
  if (body.trimStart().startsWith('{')) {
    const parsed = jsonObject(body);
    if (parsed !== undefined) return Object.hasOwn(parsed, 'grant_type') ? parsed : null;
  }
  const { fields, repeated } = formFields(body);
  if (!Object.hasOwn(fields, 'grant_type')) return null;
  if (repeated !== undefined) throw sentTwice(repeated);
  return fields;
}

/**
 * The parsers of the token routes. The form (Fastify has none): a parameter sent twice is
 * refused (RFC 6749 §3.2). Any other content type, or none, that the service does not read
 * (JSON has its own parser): a body that carries `grant_type` is an OAuth request whatever its
 * content type, so one of at most FORM_BODY_LIMIT bytes is read as a form (or a JSON object);
 * anything else is the 415 every other route answers.
 */
export function registerFormParser(app: FastifyInstance): void {
  app.addContentTypeParser(FORM, { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, (_request, body, done) => {
    const { fields, repeated } = formFields(body as string);
    if (repeated !== undefined) return done(sentTwice(repeated), undefined);
    done(null, fields);
  });
  app.addContentTypeParser('*', (request, payload, done) => {
    const unsupported = () => new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE();
    if (Number(request.headers['content-length']) > FORM_BODY_LIMIT) return done(unsupported(), undefined);
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      payload.off('data', onData);
      payload.off('end', onEnd);
      payload.off('error', onError);
    };
    const onData = (chunk: Buffer | string) => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += bytes.length;
      if (size > FORM_BODY_LIMIT) {
        stop();
        done(unsupported(), undefined);
        return;
      }
      chunks.push(bytes);
    };
    const onEnd = () => {
      stop();
      let fields: Record<string, unknown> | null;
      try {
        fields = oauthFieldsOf(Buffer.concat(chunks, size).toString('utf8'));
      } catch (error) {
        return done(error as Error, undefined);
      }
      if (fields === null) done(unsupported(), undefined);
      else done(null, fields);
    };
    const onError = (error: Error & { statusCode?: number }) => {
      stop();
      error.statusCode ??= 400;
      done(error, undefined);
    };
    payload.on('data', onData);
    payload.on('end', onEnd);
    payload.on('error', onError);
    payload.resume();
  });
}

/** RFC 6749 §2.3.1: each part is form-urlencoded ("+" a space) before the pair is base64-encoded. */
const formDecode = (part: string) => decodeURIComponent(part.replaceAll('+', ' '));

function basicCredentials(header: string): { clientId: string; clientSecret: string } {
  const match = /^Basic +([A-Za-z0-9+/]+={0,2})$/i.exec(header.trim());
  const decoded = match ? Buffer.from(match[1]!, 'base64').toString('utf8') : '';
  const colon = decoded.indexOf(':');
  try {
    if (colon > 0) return { clientId: formDecode(decoded.slice(0, colon)), clientSecret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    // A bad percent-encoding: malformed as well.
  }
  throw new OAuthError(401, 'invalid_client', 'The Authorization header is not Basic base64(client_id:client_secret)');
}

export interface OAuthTokenRequest {
  readonly clientId: string;
  readonly clientSecret: string;
  /** The scopes asked for; null when no `scope` was sent (every scope the client holds). */
  readonly scopes: ReadonlySet<Scope> | null;
}

const text = (fields: Record<string, unknown>, name: string): string | undefined => {
  const value = fields[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new OAuthError(400, 'invalid_request', `${name} must be a string`);
  return value;
};

/**
 * Reads an RFC 6749 §4.4 client-credentials request: the grant type, the client's credentials
 * (HTTP Basic, or client_id and client_secret in the body, never both: §2.3) and the scopes.
 * Nothing here touches the database.
 */
export function readOAuthRequest(request: FastifyRequest): OAuthTokenRequest {
  const body = request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new OAuthError(400, 'invalid_request', 'The body must carry grant_type');
  const fields = body as Record<string, unknown>;
  const grantType = text(fields, 'grant_type');
  if (grantType === undefined || grantType === '') throw new OAuthError(400, 'invalid_request', 'grant_type is required');
  if (grantType !== 'client_credentials') throw new OAuthError(400, 'unsupported_grant_type', 'Only grant_type=client_credentials is supported');

  const formId = text(fields, 'client_id');
  const formSecret = text(fields, 'client_secret');
  const header = request.headers.authorization;
  let credentials: { clientId: string; clientSecret: string };
  if (header !== undefined) {
    if (formId !== undefined || formSecret !== undefined) {
      throw new OAuthError(400, 'invalid_request', 'Authenticate the client one way: HTTP Basic or client_id and client_secret in the body, not both');
    }
    credentials = basicCredentials(header);
  } else if (formId && formSecret) {
    credentials = { clientId: formId, clientSecret: formSecret };
  } else {
    throw new OAuthError(401, 'invalid_client', 'Client authentication is required: HTTP Basic, or client_id and client_secret in the body');
  }
  if (credentials.clientId.length > 128 || credentials.clientSecret.length > 256 || !credentials.clientSecret) {
    throw new OAuthError(401, 'invalid_client', 'Invalid client credentials');
  }

  const scope = text(fields, 'scope');
  let scopes: Set<Scope> | null = null;
  if (scope !== undefined && scope.trim() !== '') {
    scopes = new Set();
    for (const name of scope.split(' ').filter(Boolean)) {
      if (!isScope(name)) throw new OAuthError(400, 'invalid_scope', `Unknown scope ${JSON.stringify(name).slice(0, 80)}`);
      scopes.add(name);
    }
  }
  return { ...credentials, scopes };
}

function oauthErrorOf(error: FastifyError | AppError): OAuthErrorCode {
  if (error instanceof OAuthError) return error.oauthError;
  const status = error.statusCode ?? 500;
  if (status === 429 || status === 503) return 'temporarily_unavailable';
  if (status === 401 || status === 403) return 'invalid_client';
  if (status >= 500) return 'server_error';
  return 'invalid_request';
}

/**
 * The error handler of the token routes: an OAuth request's failures are RFC 6749 §5.2 bodies,
 * keeping the status (the certificate's 400, 401 and 403 of decisions.md; 429 and 503 with their
 * Retry-After); any other request goes on to the service's handler.
 */
export function oauthErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (!(error instanceof OAuthError) && !isOAuthRequest(request)) throw error;
  const status = error instanceof AppError ? error.statusCode : error.validation ? 400 : (error.statusCode ?? 500);
  const code = oauthErrorOf(error);
  if (status >= 500 && !(error instanceof AppError)) request.log.error({ err: error }, 'token request failed');
  if (error instanceof AppError && error.headers) void reply.headers(error.headers);
  if (status === 401) void reply.header('www-authenticate', 'Basic realm="pix-api"');
  const description = status >= 500 && !(error instanceof AppError) ? 'Internal server error' : error.message;
  return reply
    .status(status)
    .header('cache-control', 'no-store')
    .type('application/json; charset=utf-8')
    .send(JSON.stringify({ error: code, error_description: description }));
}
