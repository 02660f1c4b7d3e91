import type { FastifySchemaValidationError } from 'fastify/types/schema.js';
import type { AppError } from '../../http/errors.ts';
import { asText, ruleFieldsOf, valueAt, type RuleField, type Segment } from '../../http/rule-fields.ts';
import { emPortugues } from './portugues.ts';
import type { Violacao } from './problems.ts';

/** At most this many violations are listed. */
export const MAX_VIOLATIONS = 100;

/** A JSON Pointer (`/valor/original`, `/itens/0/valor`) as segments, array indices as numbers. */
function segments(pointer: string, data: unknown): Segment[] {
  if (pointer === '') return [];
  const out: Segment[] = [];
  let node = data;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    const index = Array.isArray(node) && /^\d+$/.test(key) ? Number(key) : null;
    out.push(index ?? key);
    node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined;
  }
  return out;
}

/** `valor.original`, `itens[0].valor`; a query name with dots (`paginacao.paginaAtual`) stays as it is. */
function dotted(path: readonly Segment[]): string {
  let out = '';
  for (const s of path) out += typeof s === 'number' ? `[${s}]` : out === '' ? s : `.${s}`;
  return out;
}

/** What is wrong, in BCB's words, from Ajv's keyword and parameters. */
function reason(error: FastifySchemaValidationError): string {
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'type': return `deve ser do tipo ${String(p.type)}`;
    case 'pattern': return `deve respeitar o padrão ${String(p.pattern)}`;
    case 'format': return `deve estar no formato ${String(p.format)}`;
    case 'minLength': return `deve ter no mínimo ${String(p.limit)} caracteres`;
    case 'maxLength': return `deve ter no máximo ${String(p.limit)} caracteres`;
    case 'minimum': case 'maximum': case 'exclusiveMinimum': case 'exclusiveMaximum':
      return `deve ser ${String(p.comparison)} ${String(p.limit)}`;
    case 'minItems': return `deve ter no mínimo ${String(p.limit)} itens`;
    case 'maxItems': return `deve ter no máximo ${String(p.limit)} itens`;
    case 'enum': return `deve ser um de: ${(p.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'not': {
      // A `not` of `required` (BCB's PessoaFisica or PessoaJuridica: cpf or cnpj, never both).
      const together = (error as { schema?: { required?: string[] } }).schema?.required;
      return together ? `não pode ter ${together.join(' e ')} ao mesmo tempo` : 'não respeita o schema';
    }
    default: return error.message ?? 'não respeita o schema';
  }
}

interface Found {
  readonly path: Segment[];
  readonly razoes: string[];
  /** The constants of a union of literals, each of which Ajv reports as its own `const` error. */
  readonly allowed: string[];
  readonly value: unknown;
  readonly missing: boolean;
}

function describe(error: FastifySchemaValidationError, data: unknown): { path: Segment[]; razao: string; missing: boolean } {
  const p = error.params as Record<string, unknown>;
  const at = segments(error.instancePath, data);
  if (error.keyword === 'required') return { path: [...at, String(p.missingProperty)], razao: 'é obrigatório', missing: true };
  if (error.keyword === 'additionalProperties') return { path: [...at, String(p.additionalProperty)], razao: 'não é permitido', missing: false };
  return { path: at, razao: reason(error), missing: false };
}

const within = (path: string, parent: string) => path === parent || path.startsWith(`${parent}/`);
const isUnion = (e: FastifySchemaValidationError) => e.keyword === 'anyOf' || e.keyword === 'oneOf';

/**
 * Every violation Ajv found (`allErrors`), one per property: reasons on the same property are
 * joined, and a union's own "must match a schema in anyOf" is dropped when its branches said more.
 */
export function violationsOf(errors: readonly FastifySchemaValidationError[], data: unknown, part: string): Violacao[] {
  const byPath = new Map<string, Found>();
  for (const error of errors) {
    if (isUnion(error) && errors.some((e) => !isUnion(e) && within(e.instancePath, error.instancePath))) continue;
    const { path, razao, missing } = describe(error, data);
    const key = dotted(path);
    const found = byPath.get(key) ?? { path, razoes: [], allowed: [], value: missing ? undefined : valueAt(data, path), missing };
    if (error.keyword === 'const') found.allowed.push(String((error.params as { allowedValue: unknown }).allowedValue));
    else if (!found.razoes.includes(razao)) found.razoes.push(razao);
    byPath.set(key, found);
  }
  const out: Violacao[] = [];
  for (const [key, found] of byPath) {
    if (out.length === MAX_VIOLATIONS) break;
    const valor = asText(found.value);
    const subject = key === '' ? `O ${part === 'body' ? 'corpo da requisição' : part}` : `O campo ${key}`;
    out.push({
      razao: `${subject} ${joinReasons(found)}.`,
      ...(key === '' ? {} : { propriedade: key }),
      ...(valor === undefined ? {} : { valor }),
    });
  }
  return out;
}

/** The reasons of one property; a union of constants reads as one list of the allowed values. */
function joinReasons({ razoes, allowed }: Found): string {
  const constants = allowed.length === 0 ? [] : [allowed.length === 1 ? `deve ser ${allowed[0]}` : `deve ser um de: ${allowed.join(', ')}`];
  return [...constants, ...razoes].join('; ');
}

/** A field a rule of the core refused, as a violation (`prefix` before its name: `cobv.` for a batch's charge). */
export function violationOfField(found: RuleField, prefix = ''): Violacao {
  return { razao: emPortugues(found.message), propriedade: prefix + found.field, ...(found.value === undefined ? {} : { valor: found.value }) };
}

/** Every field a refusal of the core names, as violations. */
export function violationsOfRules(error: AppError, data: unknown): Violacao[] {
  return ruleFieldsOf(error, data).map((found) => violationOfField(found));
}
