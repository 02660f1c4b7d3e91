import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { presentedCertificate, requestSource, type CertificateTrust } from '../../http/client-certificate.ts';
import { errorResponses } from '../../http/schemas.ts';
import { FAILED_TOKEN_REQUESTS_PER_MINUTE } from './secret-checks.ts';
import { issueToken, type TokenDeps } from './service.ts';

const TokenRequest = Type.Object(
  {
    clientId: Type.String({ minLength: 1, maxLength: 128 }),
    clientSecret: Type.String({ minLength: 1, maxLength: 256 }),
  },
  { additionalProperties: false },
);

const TokenResponse = Type.Object({
  access_token: Type.String({ description: 'JWT bound to the client certificate (cnf.x5t#S256)' }),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'Seconds until the token expires (1800)' }),
});

export const authRoutes =
  (deps: TokenDeps & { trust: CertificateTrust }): FastifyPluginAsyncTypebox =>
  async (app) => {
    for (const [url, operationId, summary] of [
      ['/api/auth/token', 'createToken', 'Get an access token'],
      ['/oauth/token', 'createOAuthToken', 'Get an access token (alias of /api/auth/token)'],
    ] as const) {
      app.post(
        url,
        {
          schema: {
            operationId,
            tags: ['Authentication'],
            summary,
            description:
              'Exchanges client credentials plus the URL-encoded PEM client certificate (header X-SSL-Client-Cert, ' +
              'or the mutual-TLS peer certificate) for a JWT valid for 1800 seconds. The certificate must be linked to the ' +
              "client id's account (403 when linked to none, 401 when linked to another). Failed requests are counted per " +
              `address (an IPv6 /64; ${FAILED_TOKEN_REQUESTS_PER_MINUTE.source} a minute), per certificate (${FAILED_TOKEN_REQUESTS_PER_MINUTE.certificate}) ` +
              `and per client id (${FAILED_TOKEN_REQUESTS_PER_MINUTE.client}, only those made with its own certificates): beyond, 429 until the oldest ` +
              'leaves that minute; 503 when too many requests are being checked at once.',
            headers: Type.Object({ 'x-ssl-client-cert': Type.Optional(Type.String({ description: 'URL-encoded PEM certificate' })) }),
            body: TokenRequest,
            response: { 201: TokenResponse, ...errorResponses(400, 401, 403, 415, 429, 503) },
          },
        },
        async (request, reply) => {
          const presented = presentedCertificate(request, deps.trust);
          const token = await issueToken(deps, presented, request.body.clientId, request.body.clientSecret, requestSource(request, deps.trust));
          return reply.status(201).header('cache-control', 'no-store').send(token);
        },
      );
    }
  };
