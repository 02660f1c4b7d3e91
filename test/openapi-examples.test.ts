/**
 * Every operation of openapi.json carries request and answer examples, and every example is
 * valid against the schema the service validates requests with or serializes answers by: an
 * example that drifts from the API fails here. Error examples carry a documented code.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { ERROR_CODES } from '../src/http/error-codes.ts';
import { BCB_EXAMPLES } from '../src/dialects/bcb/examples.ts';
import { PROBLEM_TYPE_BASE, PROBLEM_TYPES } from '../src/dialects/bcb/problems.ts';
import { OPERATION_EXAMPLES as ROOT_EXAMPLES } from '../src/http/openapi-examples.ts';

/** Both dialects' examples, each operationId once. */
const OPERATION_EXAMPLES = { ...ROOT_EXAMPLES, ...BCB_EXAMPLES };

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

interface Media {
  schema?: object;
  example?: unknown;
}
interface Operation {
  operationId: string;
  parameters?: { name: string; in: string; required?: boolean; schema: object; example?: unknown }[];
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, object> };
}

const doc = JSON.parse(readFileSync(new URL('../openapi.json', import.meta.url), 'utf8')) as Document;
const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path} (${op.operationId})`, op })),
);

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addFormat('binary', true);
for (const [name, schema] of Object.entries(doc.components.schemas)) ajv.addSchema(schema, `#/components/schemas/${name}`);

function check(schema: object | undefined, value: unknown, where: string): void {
  assert.ok(schema, `${where}: no schema`);
  const validate = ajv.compile(schema);
  assert.ok(validate(value), `${where}: the example does not match the schema: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(value)}`);
}

describe('OpenAPI examples', () => {
  it('cover exactly the operations of the document', () => {
    const documented = new Set(operations.map((o) => o.op.operationId));
    assert.deepEqual([...documented].filter((id) => !Object.hasOwn(OPERATION_EXAMPLES, id)), [], 'operations without examples');
    assert.deepEqual(Object.keys(OPERATION_EXAMPLES).filter((id) => !documented.has(id)), [], 'examples of no operation');
  });

  for (const { name, op } of operations) {
    describe(name, () => {
      it('a request example: the body and every path parameter, valid against their schemas', () => {
        for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) {
          assert.notEqual(media.example, undefined, `${type} body has no example`);
          check(media.schema, media.example, `${type} body`);
        }
        for (const parameter of op.parameters ?? []) {
          if (parameter.in === 'path' || parameter.required) assert.notEqual(parameter.example, undefined, `${parameter.in} parameter ${parameter.name} has no example`);
          if (parameter.example !== undefined) check(parameter.schema, parameter.example, `${parameter.in} parameter ${parameter.name}`);
        }
        const given = OPERATION_EXAMPLES[op.operationId]?.params ?? {};
        const known = new Set((op.parameters ?? []).map((p) => p.name));
        assert.deepEqual(Object.keys(given).filter((p) => !known.has(p)), [], 'examples of parameters the operation does not take');
      });

      it('an answer example for every status with a body, valid against its schema', () => {
        for (const [status, response] of Object.entries(op.responses)) {
          for (const [type, media] of Object.entries(response.content ?? {})) {
            if (type === 'image/png') continue;
            assert.notEqual(media.example, undefined, `${status} ${type} has no example`);
            check(media.schema, media.example, `${status} ${type}`);
            if (Number(status) >= 400 && type === 'application/problem+json') {
              const problem = media.example as { status: number; type: string };
              assert.equal(problem.status, Number(status));
              assert.ok(Object.hasOwn(PROBLEM_TYPES, problem.type.slice(PROBLEM_TYPE_BASE.length)), `${status}: ${problem.type} is not a problem type`);
            } else if (Number(status) >= 400) {
              const body = media.example as { statusCode: number; code: string };
              assert.equal(body.statusCode, Number(status));
              assert.ok(Object.hasOwn(ERROR_CODES, body.code), `${status}: ${body.code} is not a documented code`);
            }
          }
        }
      });
    });
  }
});
