import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyError } from 'fastify';
import { Type } from 'typebox';
import { PAYLOAD_PATH } from '../../../modules/locations/service.ts';
import { ENDED_RECURRENCE_STATUSES, recurrenceAtLocation, type RecurrenceRow } from '../../../modules/recurrences/service.ts';
import type { BcbDeps } from '../operations.ts';
import { problem, problemResponses, sendProblem } from '../problems.ts';
import { toProblem } from '../scope.ts';
import { recView } from './views.ts';

/** BCB's RecPayload: what a payer's PSP reads to show the recurrence it would approve. */
export function recPayload(row: RecurrenceRow, ispb: string, publicUrl: string) {
  const { idRec, vinculo, calendario, valor, politicaRetentativa, recebedor, atualizacao } = recView(row, publicUrl);
  return { idRec, vinculo, calendario, ...(valor === undefined ? {} : { valor }), politicaRetentativa, recebedor: { cnpj: recebedor.cnpj, nome: recebedor.nome, ispbParticipante: ispb }, atualizacao };
}

/**
 * The public payload location of recurrences (`GET /qr/v2/rec/{recUrlAccessToken}`, no token,
 * no certificate): a JWS over the RecPayload, signed as the charges' payloads are. A location
 * serving no recurrence is 404; a recurrence that ended (cancelled, rejected, expired) is 400.
 */
export const recPayloadRoute =
  (deps: BcbDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.setErrorHandler((error: FastifyError, request, reply) => sendProblem(request, reply, toProblem(error, request)));
    app.get(
      `${PAYLOAD_PATH}/rec/:recUrlAccessToken`,
      {
        schema: {
          tags: ['API Pix: payload'],
          security: [],
          operationId: 'bcbGetRecPayload',
          summary: 'Recuperar o payload JSON que representa a recorrência',
          description: 'Um JWS compacto (application/jose) sobre o RecPayload, assinado com a chave do JWK Set em jku, como os payloads das cobranças.',
          params: Type.Object({ recUrlAccessToken: Type.String({ maxLength: 64 }) }),
          response: {
            200: { description: 'O JWS do RecPayload', content: { 'application/jose': { schema: Type.String({ description: 'JWS compacto' }) } } },
            ...problemResponses(400, 404, 503),
          },
        },
        config: { bcbProblems: { invalid: 'RecPayloadOperacaoInvalida', notFound: 'RecPayloadNaoEncontrado' } },
      },
      async (request, reply) => {
        const row = await recurrenceAtLocation(deps.db, request.params.recUrlAccessToken);
        if (!row) throw problem('RecPayloadNaoEncontrado', 'A recorrência em questão não foi encontrada para a location requisitada.');
        if (ENDED_RECURRENCE_STATUSES.has(row.status)) throw problem('RecPayloadOperacaoInvalida', `A recorrência em questão encontra-se ${row.status}.`);
        const jws = await (await deps.payloadSigner()).signPayload(recPayload(row, deps.config.pspIspb, deps.config.publicUrl));
        return reply.header('cache-control', 'no-store').type('application/jose').serializer((body: unknown) => body as string).send(jws);
      },
    );
  };
