import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyError } from 'fastify';
import { Type } from 'typebox';
import { chargeAtLocation, PAYLOAD_PATH } from '../../../modules/locations/service.ts';
import { JWK_SET_PATH } from '../../../modules/locations/signing/signer.ts';
import type { BcbDeps } from '../operations.ts';
import { problemResponses, sendProblem } from '../problems.ts';
import { toProblem } from '../scope.ts';
import { cobPayloadView } from './views.ts';

const TAGS = ['API Pix: payload'];
export const JOSE_CONTENT_TYPE = 'application/jose';

const JwkSet = Type.Object(
  { keys: Type.Array(Type.Object({}, { additionalProperties: true, description: 'Uma chave pública (JWK) com x5c, x5t e x5t#S256' })) },
  { description: 'O JWK Set das chaves que assinam os payloads' },
);

/**
 * The public payload location of immediate charges (`GET /qr/v2/{pixUrlAccessToken}`, no token,
 * no certificate) and the JWK Set its JWS names in `jku`. Their errors are BCB problems.
 */
export const cobPayloadRoutes =
  (deps: BcbDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.setErrorHandler((error: FastifyError, request, reply) => sendProblem(request, reply, toProblem(error, request)));

    app.get(
      `${PAYLOAD_PATH}/:pixUrlAccessToken`,
      {
        schema: {
          tags: TAGS,
          security: [],
          operationId: 'bcbGetCobPayload',
          summary: 'Recuperar o payload JSON que representa a cobrança imediata',
          description:
            'Um JWS compacto (application/jose) sobre o CobPayload, assinado com a chave do JWK Set em jku. Uma cobrança paga, removida ou ' +
            'expirada é servida com o seu status; uma location inexistente ou sem cobrança é 404 CobPayloadNaoEncontrado.',
          params: Type.Object({ pixUrlAccessToken: Type.String({ maxLength: 64 }) }),
          response: {
            200: { description: 'O JWS do CobPayload', content: { [JOSE_CONTENT_TYPE]: { schema: Type.String({ description: 'JWS compacto' }) } } },
            ...problemResponses(404, 503),
          },
        },
        config: { bcbProblems: { invalid: 'CobPayloadOperacaoInvalida', notFound: 'CobPayloadNaoEncontrado' } },
      },
      async (request, reply) => {
        const charge = await chargeAtLocation(deps.db, request.params.pixUrlAccessToken, 'cob');
        const jws = await (await deps.payloadSigner()).signPayload(cobPayloadView(charge, deps.clock.now()));
        return reply.header('cache-control', 'no-store').type(JOSE_CONTENT_TYPE).send(jws);
      },
    );

    app.get(
      JWK_SET_PATH,
      {
        schema: {
          tags: TAGS,
          security: [],
          operationId: 'bcbGetPayloadJwks',
          summary: 'O JWK Set das chaves que assinam os payloads (o jku dos JWS)',
          response: { 200: JwkSet, ...problemResponses(503) },
        },
      },
      async () => (await deps.payloadSigner()).jwkSet,
    );
  };
