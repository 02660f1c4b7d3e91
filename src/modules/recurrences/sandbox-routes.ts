import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses, StringEnum, Timestamp } from '../../http/schemas.ts';
import { common } from '../sandbox/routes/schemas.ts';
import { answerSolicitationNow, type NetworkDeps } from './network.ts';

const Answered = Type.Object({
  idSolicRec: Type.String(),
  status: Type.String({ description: 'ACEITA or REJEITADA' }),
  atualizacao: Type.Array(Type.Object({ status: Type.String(), data: Timestamp() })),
});

/**
 * Sandbox: the sandbox's payer answers a solicitation of Pix Automático now (it answers one a
 * minute after receiving it otherwise), as the payer tapping accept or reject in their bank's app.
 */
export const automaticoSandboxRoutes =
  (deps: Pick<NetworkDeps, 'db' | 'clock' | 'ispb'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/sandbox/automatico/solicitations/:idSolicRec/answer',
      {
        schema: {
          ...common,
          operationId: 'sandboxAnswerSolicitation',
          summary: "The sandbox's payer accepts or rejects a solicitation of Pix Automático now",
          description:
            "A solicitation RECEBIDA by the sandbox's payer PSP: `accept` makes it ACEITA and its recurrence APROVADA by JORNADA_1; " +
            '`reject` makes both REJEITADA, with `reason` AP14 (rejected, the default) or AP13 (not recognised). One to an account holder of this ' +
            'institution is theirs to answer (422 SOLICITATION_NOT_ANSWERABLE), as is one not RECEBIDA.',
          params: Type.Object({ idSolicRec: Type.String({ pattern: '^SC[0-9A-Z]{8}[0-9]{8}[a-zA-Z0-9]{11}$' }) }),
          body: Type.Object(
            { decision: StringEnum(['accept', 'reject'] as const), reason: Type.Optional(StringEnum(['AP13', 'AP14'] as const)) },
            { additionalProperties: false },
          ),
          response: { 200: Answered, ...errorResponses(400, 404, 422) },
        },
      },
      async (request) => {
        const { decision, reason } = request.body;
        const row = await answerSolicitationNow(deps, request.params.idSolicRec, decision === 'accept' ? { accept: true } : { reject: reason ?? 'AP14' });
        return { idSolicRec: row.id_solic_rec, status: row.status, atualizacao: row.history };
      },
    );
  };
