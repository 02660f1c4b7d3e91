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
