import { Ajv, type Options } from 'ajv';
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
  app.setValidatorCompiler<FastifySchema>(({ schema, httpPart }) =>
    (httpPart === 'body' ? bodies : text).compile(schema as object),
  );
}
