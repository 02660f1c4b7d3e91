import { Type, type Static, type TSchema } from 'typebox';
import { ERROR_CODE_NAMES } from './error-codes.ts';

export const ErrorBodySchema = Type.Object(
  {
    statusCode: Type.Integer({ description: 'HTTP status code' }),
    message: Type.String({ description: 'Human-readable explanation; may be reworded' }),
    error: Type.String({ description: 'HTTP status name, such as Bad Request' }),
    code: Type.Unsafe<string>({
      type: 'string',
      enum: ERROR_CODE_NAMES,
      description: 'Stable machine-readable cause (docs/errors.md lists each one)',
    }),
  },
  { $id: 'ErrorBody', title: 'Error', required: ['statusCode', 'message', 'error', 'code'] },
);

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid input',
  401: 'Missing, invalid or expired credentials or token',
  403: 'Certificate not linked to any account',
  404: 'Not found',
  409: 'Conflict',
  413: 'Body too large',
  415: 'Unsupported media type',
  422: 'Business rule refused the request',
  429: 'Rate limit exceeded',
  503: 'Not ready',
};

/** The error responses of a route, all in the one error shape. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const status of statuses) out[status] = Type.Ref('ErrorBody', { description: ERROR_DESCRIPTIONS[status] ?? 'Error' });
  return out;
}

/** An ISO 8601 timestamp on the wire. */
/**
 * A scalar or null, as one JSON Schema type list (`"type": ["string", "null"]`) rather than an
 * anyOf: the response serializer (fast-json-stringify) writes a type list after a typeof check,
 * but an anyOf by running a validator per branch on every value, which made list pages, with
 * their many nullable fields, slow to write.
 * Why, and what was measured: docs/decisions/0024-request-path-costs.md.
 */
export const Nullable = <T extends TSchema & { type: 'string' | 'integer' | 'number' | 'boolean' }>(schema: T) =>
  Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type, 'null'] });

/** One of some strings, as a JSON Schema enum (an anyOf of constants costs the serializer as above). */
export const StringEnum = <const T extends readonly string[]>(values: T, options: { description?: string } = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });

export const Timestamp = (description?: string) => Type.String({ format: 'date-time', ...(description ? { description } : {}) });

/** Numeric ids in paths: digits only, within bigint range. */
export const IdParam = (description: string) => Type.String({ pattern: '^[1-9][0-9]{0,17}$', description });

export const ADMIN_SECURITY = [{ adminToken: [] }];
