import assert from 'node:assert/strict';
import { STATUS_CODES } from 'node:http';
import type { LightMyRequestResponse } from 'fastify';

/**
 * Asserts the spec's error body and nothing else ({statusCode, message, error}, as JSON), and
 * returns its message; a 401 also says how to authenticate.
 */
export function errorMessage(res: LightMyRequestResponse, status: number): string {
  assert.equal(res.statusCode, status, res.body);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const body = res.json<Record<string, unknown>>();
  assert.deepEqual(Object.keys(body).sort(), ['error', 'message', 'statusCode']);
  assert.equal(body.statusCode, status);
  assert.equal(body.error, STATUS_CODES[status]);
  assert.equal(typeof body.message, 'string');
  if (status === 401) assert.match(String(res.headers['www-authenticate']), /^Bearer /);
  return body.message as string;
}

/** The same, with an expected message. */
export function assertError(res: LightMyRequestResponse, status: number, message?: RegExp): void {
  const text = errorMessage(res, status);
  if (message) assert.match(text, message);
}
