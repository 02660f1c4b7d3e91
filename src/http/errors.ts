import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorCode } from './error-codes.ts';

/**
 * Every expected failure is an AppError: a stable code, the HTTP status, a public message and
 * private context that is logged but never sent. One handler turns everything into the spec's
 * body `{statusCode, message, error}`.
 */
export class AppError extends Error {
  override name = 'AppError';
  readonly statusCode: number;
  readonly code: ErrorCode;
  readonly context: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;
  /** The level the context is logged at: info, or warn for what the operator should see. */
  readonly logLevel: 'info' | 'warn';
  /**
   * The field of the request the error is about (`valor.original`, `webhookUrl`), when it is
   * about one and its message does not start with its name in the dialect's words.
   */
  readonly field: string | undefined;

  constructor(
    statusCode: number,
    code: ErrorCode,
    message: string,
    options: { context?: Record<string, unknown>; headers?: Record<string, string>; logLevel?: 'info' | 'warn'; field?: string } = {},
  ) {
    super(message);
    this.statusCode = statusCode;
    this.code = code;
    this.context = options.context;
    this.headers = options.headers;
    this.logLevel = options.logLevel ?? 'info';
    this.field = options.field;
  }
}

/**
 * Several rules of one request that failed together. The first speaks for all (its status, code,
 * message and field: the root dialect shows one error); a dialect that lists every field at fault
 * (BCB's `violacoes`) lists each of `failures`.
 */
export class RuleFailures extends AppError {
  override name = 'RuleFailures';
  readonly failures: readonly AppError[];
  constructor(failures: readonly AppError[]) {
    const first = failures[0]!;
    super(first.statusCode, first.code, first.message, { ...(first.field ? { field: first.field } : {}), ...(first.headers ? { headers: first.headers } : {}) });
    this.failures = failures;
  }
}

/** The request's rule failures (400, 409, 422) that `checkEach` gathers; anything else ends it at once. */
const isRuleFailure = (error: unknown): error is AppError => error instanceof AppError && [400, 409, 422].includes(error.statusCode);

type Results<T extends readonly (() => unknown)[]> = { -readonly [K in keyof T]: Awaited<ReturnType<T[K]>> };

/**
 * Runs every check of a request in turn, going on after one fails, so that every field at fault
 * is told at once; throws the one failure, or all of them as RuleFailures (in the checks' order).
 */
export async function checkEach<T extends readonly (() => unknown)[]>(...checks: T): Promise<Results<T>> {
  const results: unknown[] = [];
  const failures: AppError[] = [];
  for (const check of checks) {
    try {
      results.push(await check());
    } catch (error) {
      if (!isRuleFailure(error)) throw error;
      failures.push(...(error instanceof RuleFailures ? error.failures : [error]));
      results.push(undefined);
    }
  }
  if (failures.length === 1) throw failures[0]!;
  if (failures.length > 1) throw new RuleFailures(failures);
  return results as Results<T>;
}

export const badRequest = (code: ErrorCode, message: string) => new AppError(400, code, message);
/** 401 with the RFC 6750 challenge; no error code when no token was sent at all. */
export const unauthorized = (code: ErrorCode, message: string, challenge = 'Bearer realm="pix-api", error="invalid_token"') =>
  new AppError(401, code, message, { headers: { 'www-authenticate': challenge } });
export const forbidden = (code: ErrorCode, message: string) => new AppError(403, code, message);
export const notFound = (code: ErrorCode, message: string) => new AppError(404, code, message);
export const conflict = (code: ErrorCode, message: string) => new AppError(409, code, message);
export const unprocessable = (code: ErrorCode, message: string) => new AppError(422, code, message);
/** A bounded queue is full: 503, to be sent again in a second. */
export const overloaded = (message: string) => new AppError(503, 'OVERLOADED', message, { headers: { 'retry-after': '1' } });

export interface ErrorBody {
  statusCode: number;
  message: string;
  error: string;
  code: ErrorCode;
}

export function errorBody(statusCode: number, message: string, code: ErrorCode): ErrorBody {
  return { statusCode, message, error: STATUS_CODES[statusCode] ?? 'Error', code };
}

/** Fastify's own client errors (bad JSON, media type, size) keep their status and message. */
function frameworkClientError(error: FastifyError): ErrorBody | null {
  const status = error.statusCode;
  if (typeof status !== 'number' || status < 400 || status >= 500) return null;
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return errorBody(415, 'Unsupported media type: send the body as application/json', 'UNSUPPORTED_MEDIA_TYPE');
  }
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return errorBody(413, 'Request body is too large', 'BODY_TOO_LARGE');
  if (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
    return errorBody(400, error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ? 'Body is empty but content-type is application/json' : 'Body is not valid JSON', 'INVALID_JSON');
  }
  return errorBody(status, error.message, status === 413 ? 'BODY_TOO_LARGE' : status === 415 ? 'UNSUPPORTED_MEDIA_TYPE' : 'INVALID_REQUEST');
}

/** "body/payment/amount must be number" -> "payment.amount must be number". */
function validationMessage(error: FastifyError): string {
  const first = error.validation?.[0];
  if (!first) return error.message;
  const where = error.validationContext ?? 'request';
  const path = first.instancePath.replace(/^\//, '').replaceAll('/', '.');
  const params = first.params as Record<string, unknown>;
  if (first.keyword === 'required') return `${where}: ${path ? `${path}.` : ''}${String(params.missingProperty)} is required`;
  if (first.keyword === 'additionalProperties') {
    return `${where}: ${path ? `${path}.` : ''}${String(params.additionalProperty)} is not an allowed property`;
  }
  // A union of literals fails once per literal: name them all.
  const allowed = (error.validation ?? [])
    .filter((e) => e.keyword === 'const' && e.instancePath === first.instancePath)
    .map((e) => String((e.params as { allowedValue: unknown }).allowedValue));
  if (allowed.length > 1) return `${where}: ${path || where} must be one of: ${allowed.join(', ')}`;
  return `${where}: ${path || where} ${first.message ?? 'is invalid'}`;
}

/**
 * The database restarting, failing over, unreachable, out of connections, or a transaction chosen
 * as a deadlock or serialization victim: nothing was committed for the request, or what was is
 * found again by its idempotency key, so the same request can simply be sent again: 503 with
 * Retry-After, not 500. A failover shows as connections ended (57P01 admin shutdown, 57P02, a
 * socket closed), servers refusing them while they start or recover (57P03), a write meeting a
 * server that is now read-only (25006), and no read-write server among the hosts (08001).
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const e = (typeof error === 'object' && error !== null ? error : {}) as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  if (/^(08|57P0|53300|40001|40P01|25006$)/.test(code)) return true;
  if (UNREACHABLE.has(code)) return true;
  const message = typeof e.message === 'string' ? e.message : '';
  return /Connection terminated|connection error|not queryable|^timeout expired$/i.test(message) || POOL_WAIT.test(message);
}

/** Node's errors for a server that cannot be reached, or went away under a connection. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN', 'EHOSTDOWN']);

/** pg-pool's error for a caller that waited too long for a connection (DATABASE_QUEUE_TIMEOUT_MS). */
const POOL_WAIT = /timeout exceeded when trying to connect/i;
const isPoolWait = (error: unknown) => error instanceof Error && POOL_WAIT.test(error.message);

/**
 * Under an overload every refused request would log a warning with its stack, and the logging
 * would add to the overload: refusals for a busy pool are summed into one line a second. So are
 * those of a database that is down or failing over (every request meets it for seconds): the
 * first of each second is logged with its error, and the line counts the others since.
 */
const busyLog = { count: 0, lastMs: -Infinity };
const downLog = { count: 0, lastMs: -Infinity };
function logUnavailable(request: FastifyRequest, error: unknown): void {
  const busy = isPoolWait(error);
  const counter = busy ? busyLog : downLog;
  counter.count++;
  const now = performance.now();
  if (now - counter.lastMs < 1000) return;
  if (busy) request.log.warn({ refused: busyLog.count }, 'no database connection free in time: requests answered 503 (DATABASE_POOL_SIZE, DATABASE_QUEUE_TIMEOUT_MS)');
  else request.log.warn({ err: error, refused: downLog.count }, 'database unavailable: requests answered 503');
  counter.count = 0;
  counter.lastMs = now;
}

/** What an error answers, whatever the dialect writes it as: the seed's body and any headers. */
export interface ClassifiedError {
  readonly body: ErrorBody;
  readonly headers: Record<string, string> | undefined;
  /** Fastify's validation errors and the part they were found in, when validation refused the request. */
  readonly validation?: { readonly errors: NonNullable<FastifyError['validation']>; readonly context: string };
}

/**
 * The one mapping from a thrown error to a status, code and message, with the logging each kind
 * needs; each dialect's error handler writes the result in its own shape.
 */
export function classifyError(error: FastifyError, request: FastifyRequest): ClassifiedError {
  if (error instanceof AppError) {
    if (error.context) request.log[error.logLevel]({ code: error.code, context: error.context }, error.message);
    return { body: errorBody(error.statusCode, error.message, error.code), headers: error.headers };
  }
  if (error.validation) {
    const validation = { errors: error.validation, context: error.validationContext ?? 'request' };
    return { body: errorBody(400, validationMessage(error), 'VALIDATION_FAILED'), headers: undefined, validation };
  }
  const client = frameworkClientError(error);
  if (client) return { body: client, headers: undefined };
  // SQLSTATE class 22 (data exception) comes from a value the database could not take: input
  // that got past validation. A safety net: answer 400, and log it so validation can be mended.
  if (typeof (error as { code?: unknown }).code === 'string' && /^22[0-9A-Z]{3}$/.test((error as { code: string }).code)) {
    request.log.warn({ err: error }, 'database refused a value from the request');
    return { body: errorBody(400, 'A value in the request is not acceptable', 'VALUE_NOT_ACCEPTED'), headers: undefined };
  }
  if (isDatabaseUnavailable(error)) {
    logUnavailable(request, error);
    const message = 'The service is briefly unavailable; retry (with the same x-idempotency-key)';
    return { body: errorBody(503, message, 'SERVICE_UNAVAILABLE'), headers: { 'retry-after': '1' } };
  }
  request.log.error({ err: error }, 'unhandled error');
  return { body: errorBody(500, 'Internal server error', 'INTERNAL_ERROR'), headers: undefined };
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const { body, headers } = classifyError(error, request);
    if (headers) void reply.headers(headers);
    return reply.status(body.statusCode).send(body);
  });

  app.setNotFoundHandler((request, reply) => {
    void reply.status(404).send(routeNotFound(request));
  });
}

export const routeNotFound = (request: FastifyRequest) =>
  errorBody(404, `Route ${request.method} ${request.url.split('?')[0]} not found`, 'ROUTE_NOT_FOUND');

/** PostgreSQL text cannot hold NUL characters: refused up front, naming where they were found. */
/** NUL, and lone UTF-16 surrogates ("\ud800" in JSON), which no text column can store. */
const unstorable = (text: string) => text.includes('\u0000') || !text.isWellFormed();

/** No request nests deeper; a deeper body (`[[[[...` fits 32,000 levels in 64 KiB) is 400 before anything walks it recursively. */
export const MAX_NESTING = 32;
class TooDeep extends Error {}

function findNul(value: unknown, path: string, depth = 0): string | null {
  if (typeof value === 'string') return unstorable(value) ? path : null;
  if (value && typeof value === 'object') {
    if (depth >= MAX_NESTING) throw new TooDeep();
    for (const [key, inner] of Object.entries(value)) {
      if (unstorable(key)) return path;
      const found = findNul(inner, path ? `${path}.${key}` : key, depth + 1);
      if (found) return found;
    }
  }
  return null;
}

export function registerNulGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    for (const [part, value] of [['body', request.body], ['querystring', request.query], ['params', request.params]] as const) {
      let found: string | null;
      try {
        found = findNul(value, '');
      } catch (error) {
        if (error instanceof TooDeep) throw badRequest('NESTING_TOO_DEEP', `${part} must not nest more than ${MAX_NESTING} levels deep`);
        throw error;
      }
      if (found !== null) throw badRequest('NUL_CHARACTER', `${part}${found ? `: ${found}` : ''} must not contain NUL characters or unpaired surrogates`);
    }
  });
}
