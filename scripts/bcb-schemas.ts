/**
 * Writes BCB's API Pix 2.9 schemas, as the tests validate `/v2` answers against them, into
 * test/fixtures/bcb-api-pix.json: every component schema and, per operation in scope, the schema
 * of its request body and of each answer. It reads the specification kept beside the project
 * (../shared/reference/bcb-api-pix/openapi.yaml) and applies the errata that file's SOURCE.md
 * lists, read as BCB means them, and no looser: its patterns are anchored as BCB's text means
 * them (WHOLE_VALUE_PATTERNS) and its `oneOf`s stand but where branches overlap
 * (ONE_OF_READ_AS_ANY_OF). A fresh clone has no ../shared: the fixture is committed, and
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

/** The paths of this service's /v2 scope: every group served so far (Pix Automático's as they come). */
const IN_SCOPE = /^\/(cob|cobv|lotecobv|loc|locrec|rec|solicrec|cobr|pix|webhook|webhookrec|webhookcobr)(\/|$)|^\/\{pixUrlAccessToken\}$|^\/cobv\/\{pixUrlAccessToken\}$/;

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

/**
 * The patterns BCB writes without `^...$`. A JSON Schema pattern matches anywhere in the value
 * (`[a-zA-Z0-9]{26,35}` accepts a 41-character txid, or one with a dash, around 26 good ones),
 * while each of these describes a whole value: the generator anchors every one, and fails on a
 * pattern it has not been told about, so a new version of the file is read, not guessed.
 */
const WHOLE_VALUE_PATTERNS: Record<string, string> = {
  // TxId: a charge's txid, 26 to 35 letters and digits, is the value (a path parameter, the
  // charge's own field, the txid a cob's Pix carries), never a part of it.
  '[a-zA-Z0-9]{26,35}': 'TxId, 26 to 35 letters and digits',
  // The txid of a received Pix and of GET /pix's filter (BCB's changelog, #269: "{1,35} porque
  // pode haver a presença de pagamentos de QRs estáticos"), and DevolucaoId, the refund's id
  // the receiver chooses: at most 35 letters and digits.
  '[a-zA-Z0-9]{1,35}': 'a received Pix\'s txid and DevolucaoId, 1 to 35 letters and digits',
  // EndToEndId and rtrId: 32 characters (their minLength and maxLength say it too).
  '[a-zA-Z0-9]{32}': 'EndToEndId and rtrId, 32 letters and digits',
  // idRec and idSolicRec: "29 caracteres" by their rule of formation (Pix Automático, out of scope).
  '[a-zA-Z0-9]{29}': 'idRec and idSolicRec, 29 letters and digits',
  // Money and percentages: "Todos os campos que indicam valores monetários obedecem ao pattern
  // \d{1,10}\.\d{2}. [...] Não é aplicável utilizar separador de milhar. Exemplos [...]: 1.00,
  // 123.99, 123456789.23": the whole value, no sign, no separator, two decimals.
  '\\d{1,10}\\.\\d{2}': 'money and percentages, 1 to 10 digits, a point and 2 decimals',
};

/**
 * The `oneOf`s read as `anyOf`, each because its branches overlap, so a value BCB means as valid
 * matches more than one and `oneOf` would refuse it. Every other `oneOf` stands: a devedor or
 * recebedor is a PessoaFisica or a PessoaJuridica, and one with both cpf and cnpj is neither
 * ("Não é permitido que o campo `devedor.cpf` e campo `devedor.cnpj` estejam preenchidos ao
 * mesmo tempo").
 */
const ONE_OF_READ_AS_ANY_OF: Record<string, string> = {
  // SOURCE.md: "the two branches of `valor.retirada` (`oneOf`) overlap"; neither branch requires
  // its property, so `{ saque: {...} }` matches both. The same `retirada` is the payload's.
  '/CobValor/properties/retirada': 'retirada: its saque and troco branches overlap',
  '/CobPayloadValor/properties/retirada': 'retirada: its saque and troco branches overlap',
  // SOURCE.md: "the discount `oneOf` of `CobVValor` overlaps like `retirada`'s"; the first branch
  // requires nothing, so `{ modalidade: 3, valorPerc: "0.05" }` matches both.
  '/CobVValor/properties/desconto': 'desconto: its descontoDataFixa and valorPerc branches overlap',
  // Pix Automático's (out of scope, its schemas kept whole): BCB's own examples match more than
  // one branch. The rejeicao and cancelamento branches of an encerramento each require nothing,
  // so recResponse5's and cobRResponse4's `encerramento: { cancelamento: {...} }` match both; the
  // two branches of RecRevisada's devedor are the same `{ nome }`, which recBody3's matches twice.
  '/RecEncerramento/properties/encerramento': "encerramento: its branches overlap (BCB's recResponse5)",
  '/CobRAtualizacao/properties/encerramento': "encerramento: its branches overlap (BCB's cobRResponse4)",
  '/RecRevisada/allOf/1/properties/vinculo/properties/devedor': "devedor: its two branches are the same (BCB's recBody3)",
};

/**
 * A received Pix's txid (Pix, PixAutomatico, GET /pix's parametros) is written as both a TxId (26
 * to 35) and 1 to 35, which together mean 26 to 35; BCB means 1 to 35 (SOURCE.md, and the
 * changelog's #269: a static code's payment carries any txid the receiver chose).
 */
function isReceivedPixTxid(n: Json): boolean {
  if (!Array.isArray(n.allOf) || n.allOf.length !== 2) return false;
  const [ref, override] = n.allOf as Json[];
  return ref?.$ref === 'bcb#/definitions/TxId' && override?.pattern === '[a-zA-Z0-9]{1,35}' && Object.keys(override).length === 1;
}

/** Pix Automático's defects of the same kind, read as BCB evidently means them. */
function recErrata(schemas: Record<string, Json>): string[] {
  const applied: string[] = [];
  // RecBase requires `retentativa`, a property no schema defines: the retry policy it means is
  // `politicaRetentativa`, which RecConfiguracao defines and requires beside it.
  const recBase = schemas.RecBase;
  if (recBase && Array.isArray(recBase.required) && recBase.required.includes('retentativa')) {
    recBase.required = recBase.required.filter((r) => r !== 'retentativa');
    applied.push('RecBase: retentativa (undefined) not required; RecConfiguracao requires politicaRetentativa');
  }
  // DadosPagadorRec requires `ispbParticipante` beside `pagador`, where it defines it inside:
  // a recurrence shows no payer before one approves it, and the payer it shows has its PSP.
  const pagadorRec = schemas.DadosPagadorRec as { required?: string[]; properties?: { pagador?: Json } } | undefined;
  if (pagadorRec?.required?.includes('ispbParticipante') && pagadorRec.properties?.pagador) {
    delete pagadorRec.required;
    pagadorRec.properties.pagador.required = ['ispbParticipante'];
    applied.push('DadosPagadorRec: ispbParticipante is required of pagador, not beside it');
  }
  // SolicRecBase requires `pagador`, which it does not define: the payer it goes to is its
  // `destinatario`, which it defines and requires beside it (BCB's solicRecBody1 has no pagador).
  const solicBase = schemas.SolicRecBase as { required?: string[] } | undefined;
  if (solicBase?.required?.includes('pagador')) {
    solicBase.required = solicBase.required.filter((r) => r !== 'pagador');
    applied.push('SolicRecBase: pagador (undefined) not required; destinatario is');
  }
  // SolicRecCompleta requires `rec`, which no part of it defines: what it carries of the
  // recurrence is `recPayload` (BCB's solicRecResponse1, 2 and 3 have it, and no `rec`).
  const solicCompleta = schemas.SolicRecCompleta as { required?: string[] } | undefined;
  if (solicCompleta?.required?.includes('rec')) {
    solicCompleta.required = solicCompleta.required.filter((r) => r !== 'rec');
    applied.push('SolicRecCompleta: rec (undefined) not required; it carries recPayload');
  }
  // RecNotification's required list is written `["idRec","status",atualizacao"]`: YAML reads the
  // last name with its stray quote, a property nothing has; it means atualizacao.
  const notification = schemas.RecNotification as { required?: string[] } | undefined;
  if (notification?.required?.includes('atualizacao"')) {
    notification.required = notification.required.map((r) => (r === 'atualizacao"' ? 'atualizacao' : r));
    applied.push('RecNotification: requires atualizacao (written atualizacao" with a stray quote)');
  }
  // PixAutomatico.valor is a string with an `anyOf` of objects (PixValorOriginal, ...), which no
  // value can match: those objects are a Pix's componentesValor (as in Pix), not its valor.
  const pixAuto = schemas.PixAutomatico as { properties?: { valor?: Json } } | undefined;
  if (pixAuto?.properties?.valor?.type === 'string' && Array.isArray(pixAuto.properties.valor.anyOf)) {
    delete pixAuto.properties.valor.anyOf;
    applied.push("PixAutomatico.valor: a string, without the anyOf of componentesValor's objects");
  }
  return applied;
}

/** The errata of SOURCE.md and the anchors and `anyOf`s above, applied to the component schemas. */
function applyErrata(schemas: Record<string, Json>): string[] {
  const applied: string[] = [];
  const anchored = new Map<string, number>();
  const readAsAnyOf = new Set<string>();
  const walk = (node: unknown, path: string, visit: (n: Json, path: string) => void) => {
    if (Array.isArray(node)) node.forEach((n, i) => walk(n, `${path}/${i}`, visit));
    else if (node !== null && typeof node === 'object') {
      visit(node as Json, path);
      for (const [k, v] of Object.entries(node as Json)) walk(v, `${path}/${k}`, visit);
    }
  };
  walk(schemas, '', (n, path) => {
    if (isReceivedPixTxid(n)) {
      delete n.allOf;
      Object.assign(n, { type: 'string', pattern: '[a-zA-Z0-9]{1,35}' });
      applied.push(`${path}: a txid of 1 to 35 characters, not a TxId of 26 to 35`);
    }
    // The CPF pattern written /^\d{11}$/ with literal slashes (and codMun's /^\d{7}$/).
    if (typeof n.pattern === 'string' && n.pattern.startsWith('/') && n.pattern.endsWith('/')) {
      n.pattern = n.pattern.slice(1, -1);
      applied.push(`${path}: pattern without slashes`);
    }
    // Every pattern meant of the whole value, as BCB's text says (WHOLE_VALUE_PATTERNS).
    if (typeof n.pattern === 'string' && !(n.pattern.startsWith('^') && n.pattern.endsWith('$'))) {
      if (!(n.pattern in WHOLE_VALUE_PATTERNS)) throw new Error(`bcb-schemas: ${path} has the unanchored pattern ${n.pattern}: decide whether BCB means the whole value`);
      anchored.set(n.pattern, (anchored.get(n.pattern) ?? 0) + 1);
      n.pattern = `^${n.pattern}$`;
    }
    // Overlapping oneOf branches only (ONE_OF_READ_AS_ANY_OF): every other oneOf stands.
    if (Array.isArray(n.oneOf) && path in ONE_OF_READ_AS_ANY_OF) {
      n.anyOf = n.oneOf;
      delete n.oneOf;
      readAsAnyOf.add(path);
      applied.push(`${path}: oneOf read as anyOf (${ONE_OF_READ_AS_ANY_OF[path]})`);
    }
    // List items require `idCob`, never defined.
    if (Array.isArray(n.required) && n.required.includes('idCob')) {
      n.required = n.required.filter((r) => r !== 'idCob');
      applied.push(`${path}: idCob not required`);
    }
  });
  for (const path of Object.keys(ONE_OF_READ_AS_ANY_OF)) {
    if (!readAsAnyOf.has(path)) throw new Error(`bcb-schemas: ${path} has no oneOf to read as anyOf`);
  }
  for (const [pattern, count] of anchored) applied.push(`pattern ^${pattern}$ where BCB writes ${pattern} (${WHOLE_VALUE_PATTERNS[pattern]}): ${count} places`);
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
  applied.push(...recErrata(schemas));
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
