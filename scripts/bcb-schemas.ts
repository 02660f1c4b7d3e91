/**
 * Writes BCB's API Pix 2.9 schemas, as the tests validate `/v2` answers against them, into
 * test/fixtures/bcb-api-pix.json: every component schema and, per operation in scope, the schema
 * of its request body and of each answer. It reads the specification kept beside the project
 * (../shared/reference/bcb-api-pix/openapi.yaml) and applies the errata that file's SOURCE.md
 * lists, read as BCB means them. A fresh clone has no ../shared: the fixture is committed, and
 * `--check` (CI, when the specification is present) fails when it is not what this script writes.
 *
 *   node scripts/bcb-schemas.ts [--check]
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SPEC = join(ROOT, '..', 'shared', 'reference', 'bcb-api-pix', 'openapi.yaml');
export const FIXTURE = join(ROOT, 'test', 'fixtures', 'bcb-api-pix.json');

/** The paths of this service's /v2 scope: everything but Pix Automático. */
const IN_SCOPE = /^\/(cob|cobv|lotecobv|loc|pix|webhook)(\/|$)|^\/\{pixUrlAccessToken\}$|^\/cobv\/\{pixUrlAccessToken\}$/;

type Json = Record<string, unknown>;

/** `#/components/schemas/X` -> `bcb#/definitions/X`, and OpenAPI-only keywords read as JSON Schema. */
function toJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node as Json)) {
    if (key === '$ref' && typeof value === 'string') out.$ref = value.replace('#/components/schemas/', 'bcb#/definitions/');
    else if (key === 'example' || key === 'examples' || key === 'xml' || key === 'discriminator' || key === 'externalDocs') continue;
    else if (key === 'nullable') continue;
    else if (key === 'format' && (value === 'int32' || value === 'int64' || value === 'uri')) continue;
    else out[key] = toJsonSchema(value);
  }
  if ((node as Json).nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  return out;
}

/** The errata of SOURCE.md, applied to the component schemas (each named there). */
function applyErrata(schemas: Record<string, Json>): string[] {
  const applied: string[] = [];
  const walk = (node: unknown, path: string, visit: (n: Json, path: string) => void) => {
    if (Array.isArray(node)) node.forEach((n, i) => walk(n, `${path}/${i}`, visit));
    else if (node !== null && typeof node === 'object') {
      visit(node as Json, path);
      for (const [k, v] of Object.entries(node as Json)) walk(v, `${path}/${k}`, visit);
    }
  };
  walk(schemas, '', (n, path) => {
    // The CPF pattern written /^\d{11}$/ with literal slashes.
    if (typeof n.pattern === 'string' && n.pattern.startsWith('/') && n.pattern.endsWith('/')) {
      n.pattern = n.pattern.slice(1, -1);
      applied.push(`${path}: pattern without slashes`);
    }
    // Overlapping oneOf branches (retirada, the discounts): valid when either matches.
    if (Array.isArray(n.oneOf)) {
      n.anyOf = n.oneOf;
      delete n.oneOf;
      applied.push(`${path}: oneOf read as anyOf`);
    }
    // List items require `idCob`, never defined.
    if (Array.isArray(n.required) && n.required.includes('idCob')) {
      n.required = n.required.filter((r) => r !== 'idCob');
      applied.push(`${path}: idCob not required`);
    }
  });
  const pixConsultados = JSON.stringify(schemas.PixConsultados);
  if (pixConsultados?.includes('"cobs"')) {
    schemas.PixConsultados = JSON.parse(pixConsultados.replace(/"required":\["parametros","cobs"\]/, '"required":["parametros","pix"]')) as Json;
    applied.push('PixConsultados: requires pix, not cobs');
  }
  const webhook = JSON.stringify(schemas.WebhookCompleto);
  if (webhook?.includes('"cnpj"')) {
    schemas.WebhookCompleto = JSON.parse(webhook.replace(/"required":\[([^\]]*)"cnpj"/, '"required":[$1"chave"')) as Json;
    applied.push('WebhookCompleto: requires chave, not cnpj');
  }
  // DadosRecebedor requires the address at the top of the charge, beside `recebedor`, where
  // BCB's own examples (cobResponse4, cobPayload2) carry it inside: its `recebedor` requires it.
  const recebedor = schemas.DadosRecebedor;
  if (recebedor && Array.isArray(recebedor.required)) {
    delete recebedor.required;
    applied.push('DadosRecebedor: the address is required of recebedor, not beside it');
  }
  return applied;
}

interface Operation {
  request?: string;
  responses: Record<string, { contentType: string; schema: unknown }>;
}

function refOf(node: unknown, components: Json): unknown {
  let current = node as Json | undefined;
  while (current && typeof current.$ref === 'string') {
    const [, section, name] = /^#\/components\/(\w+)\/(.+)$/.exec(current.$ref) ?? [];
    current = (components[section!] as Json | undefined)?.[name!] as Json | undefined;
  }
  return current;
}

export function generate(specText: string): Json {
  const spec = parse(specText) as { info: { version: string }; paths: Record<string, Record<string, Json>>; components: Json };
  const schemas = toJsonSchema(spec.components.schemas) as Record<string, Json>;
  const errata = applyErrata(schemas);
  const operations: Record<string, Operation> = {};
  for (const [path, methods] of Object.entries(spec.paths)) {
    if (!IN_SCOPE.test(path)) continue;
    for (const [method, raw] of Object.entries(methods)) {
      if (!['get', 'put', 'post', 'patch', 'delete'].includes(method)) continue;
      const operation: Operation = { responses: {} };
      const body = refOf(raw.requestBody, spec.components) as { content?: Record<string, { schema: unknown }> } | undefined;
      const bodySchema = body?.content?.['application/json']?.schema;
      if (bodySchema) operation.request = JSON.stringify(toJsonSchema(bodySchema));
      for (const [status, response] of Object.entries((raw.responses ?? {}) as Json)) {
        const resolved = refOf(response, spec.components) as { content?: Record<string, { schema: unknown }> } | undefined;
        // An answer without a body (202 of PUT /lotecobv/{id}): its status, no media type.
        if (!resolved?.content) operation.responses[status] = { contentType: '', schema: null };
        for (const [contentType, content] of Object.entries(resolved?.content ?? {})) {
          operation.responses[status] = { contentType, schema: toJsonSchema(content.schema) };
        }
      }
      operations[`${method.toUpperCase()} ${path}`] = {
        ...(operation.request ? { request: JSON.parse(operation.request) as string } : {}),
        responses: operation.responses,
      };
    }
  }
  return { version: spec.info.version, errata, definitions: schemas, operations };
}

function main(): void {
  const check = process.argv.includes('--check');
  if (!existsSync(SPEC)) {
    console.log(`bcb-schemas: ${SPEC} is not here; the committed fixture stands`);
    return;
  }
  const text = `${JSON.stringify(generate(readFileSync(SPEC, 'utf8')), null, 1)}\n`;
  if (check) {
    if (!existsSync(FIXTURE) || readFileSync(FIXTURE, 'utf8') !== text) {
      console.error('bcb-schemas: test/fixtures/bcb-api-pix.json is not what the specification gives: run node scripts/bcb-schemas.ts');
      process.exit(1);
    }
    console.log('bcb-schemas: test/fixtures/bcb-api-pix.json is current');
    return;
  }
  writeFileSync(FIXTURE, text);
  console.log(`bcb-schemas: wrote ${FIXTURE}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
