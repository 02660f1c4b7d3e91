import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { presentedCertificate, requestSource, type CertificateTrust } from '../../http/client-certificate.ts';
import { errorResponses } from '../../http/schemas.ts';
import { FAILED_TOKEN_REQUESTS_PER_MINUTE } from './secret-checks.ts';
import { isOAuthRequest, oauthErrorHandler, readOAuthRequest, registerFormParser } from './oauth.ts';
import { issueToken, type TokenDeps } from './service.ts';

const TokenRequest = Type.Object(
  {
    clientId: Type.String({ minLength: 1, maxLength: 128 }),
    clientSecret: Type.String({ minLength: 1, maxLength: 256 }),
  },
  { additionalProperties: false },
);

const OAuthTokenForm = Type.Object(
  {
    grant_type: Type.Literal('client_credentials'),
    scope: Type.Optional(Type.String({ description: 'Space-separated scopes; absent: every scope the client holds' })),
    client_id: Type.Optional(Type.String({ description: 'With client_secret, instead of HTTP Basic' })),
    client_secret: Type.Optional(Type.String()),
  },
  { description: 'RFC 6749 §4.4 client-credentials request; the client authenticates with HTTP Basic or client_id and client_secret' },
);

const OAuthTokenResponse = Type.Object({
  access_token: Type.String({ description: 'JWT bound to the client certificate (cnf.x5t#S256), with its scopes (scope)' }),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'Seconds until the token expires (1800)' }),
  scope: Type.String({ description: 'The scopes granted, space-separated' }),
});

const OAuthTokenJson = Type.Object(
  { grant_type: Type.Literal('client_credentials'), scope: Type.Optional(Type.String()) },
  { description: 'The OAuth request as a JSON body, the client authenticated by HTTP Basic' },
);

const documentedBody = {
  content: {
    'application/json': { schema: Type.Union([TokenRequest, OAuthTokenJson]) },
    'application/x-www-form-urlencoded': { schema: OAuthTokenForm },
  },
};

const TokenResponse = Type.Object({
  access_token: Type.String({ description: 'JWT bound to the client certificate (cnf.x5t#S256)' }),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'Seconds until the token expires (1800)' }),
});

export const authRoutes =
  (deps: TokenDeps & { trust: CertificateTrust }): FastifyPluginAsyncTypebox =>
  async (app) => {
    registerFormParser(app);
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
              'leaves that minute; 503 when too many requests are being checked at once. ' +
              'It also takes the standard OAuth 2.0 client-credentials request (RFC 6749 §4.4): the form ' +
              '`grant_type=client_credentials[&scope=...]`, or a JSON body with `grant_type`, the client authenticated by HTTP Basic ' +
              '(or client_id and client_secret in the form). That request is answered 200 with the granted `scope`, and its errors ' +
              'are RFC 6749 §5.2 bodies `{error, error_description}` (invalid_request, invalid_client with WWW-Authenticate: Basic, ' +
              'unsupported_grant_type, invalid_scope; temporarily_unavailable for 429 and 503) with the statuses above.',
            headers: Type.Object({ 'x-ssl-client-cert': Type.Optional(Type.String({ description: 'URL-encoded PEM certificate' })) }),
            body: TokenRequest,
            response: { 200: OAuthTokenResponse, 201: TokenResponse, ...errorResponses(400, 401, 403, 415, 429, 503) },
          },
          // The OAuth forms are read by the hook below, not by the schema: documented only.
          config: { swaggerTransform: ({ schema, url }) => ({ url, schema: { ...schema, body: documentedBody } }) },
          errorHandler: oauthErrorHandler,
          // An OAuth request is answered here, before the seed request's schema is applied.
          preValidation: async (request, reply) => {
            if (!isOAuthRequest(request)) return;
            const asked = readOAuthRequest(request);
            const presented = presentedCertificate(request, deps.trust);
            const source = requestSource(request, deps.trust);
            const { token, scopes } = await issueToken(deps, presented, asked.clientId, asked.clientSecret, source, asked.scopes);
            return reply.status(200).header('cache-control', 'no-store').header('pragma', 'no-cache').send({ ...token, scope: scopes.join(' ') });
          },
        },
        async (request, reply) => {
          const presented = presentedCertificate(request, deps.trust);
          const { token } = await issueToken(deps, presented, request.body.clientId, request.body.clientSecret, requestSource(request, deps.trust));
          return reply.status(201).header('cache-control', 'no-store').send(token);
        },
      );
    }
  };
