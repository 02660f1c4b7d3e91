import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { Ajv, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, FastifySchema } from 'fastify';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: false, useDefaults: true, removeAdditional: false, ...options });
  addFormats(ajv);
  return ajv;
}

/**
 * Bodies are validated exactly as sent: "10" is not the number 10 and unknown fields of a
 * closed schema are refused. Query strings and paths are text by nature, so they are coerced.
 * The seed dialect reports the first violation; `allErrors` (the BCB dialect's scope) finds them all.
 */
export function registerValidation(app: FastifyInstance, options: { allErrors?: boolean } = {}): void {
  const allErrors = options.allErrors ?? false;
  // Listing every violation also says what each one broke: `verbose` gives an error its schema.
  const bodies = makeAjv({ coerceTypes: false, allErrors, verbose: allErrors });
  const text = makeAjv({ coerceTypes: 'array', allErrors, verbose: allErrors });
  app.setValidatorCompiler<FastifySchema>(({ schema, httpPart }) => lazyValidator(() => (httpPart === 'body' ? bodies : text).compile(schema as object)));
}

/**
 * A validator compiled when it is first used, not when its route is registered: compiling every
 * route's schemas at start took a second of every start, most of it for routes a run never
 * calls (docs/decisions/0044-start-up.md). Fastify reads the errors of a failed validation from
 * the function: they are copied there.
 */
function lazyValidator(compile: () => ValidateFunction): ValidateFunction {
  let compiled: ValidateFunction | undefined;
  const validate = ((data: unknown) => {
    compiled ??= compile();
    const valid = compiled(data);
    validate.errors = compiled.errors;
    return valid;
  }) as ValidateFunction;
  return validate;
}

type Serializer = (data: unknown) => string;
type SerializerFactory = (externalSchemas: unknown, options: unknown) => (route: { schema: unknown }) => Serializer;

/**
 * Fastify's own response serializers (fast-json-stringify), each built when its route first
 * answers with that status instead of at start (for the same reason as the validators).
 */
export const lazySerializers: SerializerFactory = (externalSchemas, options) => {
  const build = (SerializerSelector as unknown as () => SerializerFactory)()(externalSchemas, options);
  return (route) => {
    let serialize: Serializer | undefined;
    return (data) => (serialize ??= build(route))(data);
  };
};
