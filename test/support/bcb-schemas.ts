/**
 * BCB's API Pix 2.9 schemas (test/fixtures/bcb-api-pix.json, written by scripts/bcb-schemas.ts
 * from the specification with its errata applied): `/v2` answers are validated against them.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

interface Fixture {
  version: string;
  definitions: Record<string, unknown>;
  operations: Record<string, { request?: unknown; responses: Record<string, { contentType: string; schema: unknown }> }>;
}

const fixture = JSON.parse(readFileSync(new URL('../fixtures/bcb-api-pix.json', import.meta.url), 'utf8')) as Fixture;
const ajv = new Ajv({ allErrors: true, strict: false });
(addFormats as unknown as (a: Ajv) => void)(ajv);
ajv.addSchema({ $id: 'bcb', definitions: fixture.definitions });
const compiled = new Map<string, ValidateFunction>();

function validator(key: string, schema: unknown): ValidateFunction {
  let v = compiled.get(key);
  if (!v) {
    v = ajv.compile(schema as object);
    compiled.set(key, v);
  }
  return v;
}

/** The operations of BCB's specification in this service's scope, as `METHOD /path` (BCB's paths, without /v2). */
export const BCB_OPERATIONS = Object.keys(fixture.operations);

/**
 * Asserts that an answer of `/v2` is what BCB's specification says for that operation and status:
 * the status is one the operation declares, the content type is its, and the body validates.
 * `operation` is BCB's `METHOD /path` (`PUT /cob/{txid}`).
 */
export function assertBcbAnswer(operation: string, answer: { statusCode: number; headers: Record<string, unknown>; body: string }): void {
  const op = fixture.operations[operation];
  assert.ok(op, `${operation} is not an operation of BCB's specification`);
  const declared = op.responses[String(answer.statusCode)];
  assert.ok(declared, `${operation} answered ${answer.statusCode}, which BCB's specification does not declare (${Object.keys(op.responses).join(', ')}): ${answer.body.slice(0, 300)}`);
  const contentType = String(answer.headers['content-type'] ?? '');
  assert.ok(contentType.startsWith(declared.contentType), `${operation} ${answer.statusCode}: content-type ${contentType}, BCB says ${declared.contentType}`);
  if (declared.contentType.includes('json')) assertBcbSchema(`${operation} ${answer.statusCode}`, declared.schema, JSON.parse(answer.body));
}

/** Asserts that a request body is valid for the operation as BCB's specification says. */
export function assertBcbRequest(operation: string, body: unknown): void {
  const op = fixture.operations[operation];
  assert.ok(op?.request, `${operation} takes no request body in BCB's specification`);
  assertBcbSchema(`${operation} request`, op.request, body);
}

/** Asserts that a value validates against one of BCB's component schemas (`CobCompleta`). */
export function assertBcbDefinition(name: string, value: unknown): void {
  assert.ok(name in fixture.definitions, `${name} is not a schema of BCB's specification`);
  assertBcbSchema(name, { $ref: `bcb#/definitions/${name}` }, value);
}

function assertBcbSchema(key: string, schema: unknown, value: unknown): void {
  const validate = validator(key, schema);
  if (!validate(value)) {
    assert.fail(`${key} does not match BCB's schema: ${ajv.errorsText(validate.errors, { separator: '; ' })}\n${JSON.stringify(value).slice(0, 600)}`);
  }
}

/** BCB's `Problema`, as the tests read it. */
export interface BcbProblem {
  type: string;
  title: string;
  status: number;
  detail?: string;
  correlationId?: string;
  violacoes?: { razao?: string; propriedade?: string; valor?: string }[];
  [other: string]: unknown;
}

/**
 * Asserts that an answer of `/v2` is BCB's problem `name` with `status`: the problem content
 * type, a body valid as BCB's `Problema`, and its type. Returns the body.
 */
export function assertBcbProblem(res: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number, name: string): BcbProblem {
  assert.equal(res.statusCode, status, res.body);
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
  const body = JSON.parse(res.body) as BcbProblem;
  assertBcbDefinition('Problema', body);
  assert.equal(body.type, `https://pix.bcb.gov.br/api/v2/error/${name}`, res.body);
  return body;
}
