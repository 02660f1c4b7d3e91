import { SCOPE_DESCRIPTIONS } from '../modules/auth/scopes.ts';
import type { SwaggerOptions } from '@fastify/swagger';
import { withExamples } from './openapi-examples.ts';

export function openApiOptions(): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Pix account API',
        version: '0.1.0',
        description:
          'Instant-payment (Pix) account API: certificate-bound tokens, balances, transfers, charges, refunds, ' +
          'transaction views and webhooks. Amounts are BRL with 2 decimals. Errors are {statusCode, message, error, code}; `code` is stable (docs/errors.md lists every one).',
      },
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: 'Token from POST /api/auth/token (or /oauth/token); the role each operation lists is the OAuth scope it requires (the oauth2 scheme describes each one)',
          },
          adminToken: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN of the operator' },
          oauth2: {
            type: 'oauth2',
            description:
              "OAuth 2.0 client credentials at POST /oauth/token, with the client certificate (BCB's API Pix, /v2). Every account route requires a scope, " +
              "named in its security entry: BCB's where one fits, the service's own for the rest; a token from POST /api/auth/token carries every scope the client holds",
            flows: { clientCredentials: { tokenUrl: '/oauth/token', scopes: { ...SCOPE_DESCRIPTIONS } } },
          },
        },
      },
      tags: [
        { name: 'Authentication' },
        { name: 'Balance' },
        { name: 'Transfers' },
        { name: 'Directory', description: 'PIX keys (DICT), looked up on the account holder’s behalf' },
        { name: 'Transactions' },
        { name: 'Charges', description: 'Immediate charges (cob) with a copy-and-paste BR Code and QR code' },
        { name: 'Refunds', description: 'Refunds (devolucao) of received PIX' },
        { name: 'MED', description: 'MED disputes (Mecanismo Especial de Devolução) opened against PIX the account received' },
        { name: 'Webhooks', description: 'Registrations, signing secret, delivery log and resend' },
        { name: 'Operator', description: 'Provisioning, with ADMIN_TOKEN' },
        { name: 'Sandbox', description: 'The rest of the Pix network, simulated (sandbox mode only), with ADMIN_TOKEN' },
        { name: 'Operations' },
        { name: 'API Pix: cob', description: "BCB's API Pix 2.9 under /v2: immediate charges" },
        { name: 'API Pix: cobv', description: 'Due-date charges' },
        { name: 'API Pix: lotecobv', description: 'Batches of due-date charges' },
        { name: 'API Pix: loc', description: 'Payload locations' },
        { name: 'API Pix: pix', description: 'Received Pix and their refunds' },
        { name: 'API Pix: webhook', description: 'Webhooks per key' },
        { name: 'API Pix: payload', description: 'Public payload locations (JWS) and their JWK Set, fetched by payers' },
      ],
    },
    transformObject: (document) => withExamples('openapiObject' in document ? document.openapiObject : document.swaggerObject),
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  };
}

/**
 * The parts /docs shows the document in, each one of its own: a browser renders a third of an
 * OpenAPI 3.1 document of 350 KB in a third of the time (the whole took 5 s on a 2-core machine,
 * docs/decisions/0044-start-up.md). /docs/json stays the whole document.
 */
export const DOC_PARTS = {
  account: { name: 'Account API (root paths)', has: (path: string) => !isBcb(path) && !isOperator(path) },
  'api-pix': { name: "BCB's API Pix (/v2 and payload locations)", has: (path: string) => isBcb(path) },
  operator: { name: 'Operator and sandbox (/admin, /sandbox, /metrics)', has: (path: string) => isOperator(path) },
} as const;

export type DocPart = keyof typeof DOC_PARTS;

const isBcb = (path: string) => path.startsWith('/v2') || path.startsWith('/qr/');
const isOperator = (path: string) => path.startsWith('/admin') || path.startsWith('/sandbox') || path === '/metrics';

/**
 * The document with only the paths of `part` (its components and tags kept whole), written as
 * OpenAPI 3.0 for the page: Swagger UI reads a 3.1 document through a resolver several times
 * slower, and the only 3.1 the service writes is nullable types (`type: [t, "null"]`, a `null`
 * branch of `anyOf`) and `const`, which 3.0 says as `nullable` and a one-value `enum`.
 * /docs/json and openapi.json stay 3.1.
 */
export function documentPart(document: { paths?: Record<string, unknown> }, part: DocPart): Record<string, unknown> {
  const paths = Object.fromEntries(Object.entries(document.paths ?? {}).filter(([path]) => DOC_PARTS[part].has(path)));
  return { ...(asOpenApi30({ ...document, paths }) as Record<string, unknown>), openapi: '3.0.3' };
}

const isNullType = (node: unknown) => typeof node === 'object' && node !== null && (node as { type?: unknown }).type === 'null' && Object.keys(node).length === 1;

function asOpenApi30(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(asOpenApi30);
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) out[key] = asOpenApi30(value);
  if (Array.isArray(out.type)) {
    const types = (out.type as string[]).filter((t) => t !== 'null');
    if (types.length < out.type.length) out.nullable = true;
    out.type = types.length === 1 ? types[0] : types;
  }
  for (const union of ['anyOf', 'oneOf'] as const) {
    const branches = out[union];
    if (Array.isArray(branches) && branches.some(isNullType)) {
      out.nullable = true;
      const rest = branches.filter((b) => !isNullType(b));
      if (rest.length === 1 && Object.keys(out).length === 2) return { ...(rest[0] as object), nullable: true };
      out[union] = rest;
    }
  }
  if ('const' in out) {
    out.enum = [out.const];
    delete out.const;
  }
  return out;
}

/** What /docs's page shows: a part at a time, the account API first; operations folded. */
export function docsPageOptions() {
  return {
    routePrefix: '/docs',
    uiConfig: {
      urls: Object.entries(DOC_PARTS).map(([part, { name }]) => ({ url: `/docs/parts/${part}`, name })),
      'urls.primaryName': DOC_PARTS.account.name,
      docExpansion: 'none' as const,
      defaultModelsExpandDepth: -1,
      deepLinking: true,
      filter: true,
    },
  };
}
