import assert from 'node:assert/strict';
import { STATUS_CODES } from 'node:http';
import type { LightMyRequestResponse } from 'fastify';
import { ERROR_CODES, type ErrorCode } from '../src/http/error-codes.ts';

export interface ErrorBody {
  statusCode: number;
  message: string;
  error: string;
  code: ErrorCode;
}

/**
 * The error body and nothing else: {statusCode, message, error, code}, `statusCode` the HTTP
 * status, `error` its name, `code` one of the documented codes (decisions.md).
 */
export function assertErrorShape(body: unknown, status: number, context = ''): ErrorBody {
  const b = body as Record<string, unknown>;
  assert.deepEqual(Object.keys(b).sort(), ['code', 'error', 'message', 'statusCode'], `error body keys${context}`);
  assert.equal(b.statusCode, status, `statusCode${context}`);
  assert.equal(b.error, STATUS_CODES[status], `error name${context}`);
  assert.ok(typeof b.message === 'string' && b.message.length > 0, `message${context}`);
  assert.ok(typeof b.code === 'string' && Object.hasOwn(ERROR_CODES, b.code), `code ${String(b.code)} is not in ERROR_CODES${context}`);
  return b as unknown as ErrorBody;
}

/**
 * Asserts the error body (as JSON) and returns its message; a 401 also says how to
 * authenticate. With `code`, the body's code must be that one.
 */
export function errorMessage(res: LightMyRequestResponse, status: number, code?: ErrorCode): string {
  assert.equal(res.statusCode, status, res.body);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const body = assertErrorShape(res.json(), status);
  if (code !== undefined) assert.equal(body.code, code, res.body);
  if (status === 401) assert.match(String(res.headers['www-authenticate']), /^Bearer /);
  return body.message;
}

/** The same, with an expected message (and code). */
export function assertError(res: LightMyRequestResponse, status: number, message?: RegExp, code?: ErrorCode): void {
  const text = errorMessage(res, status, code);
  if (message) assert.match(text, message);
}
