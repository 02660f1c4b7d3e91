import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { StringEnum } from '../../../http/schemas.ts';
import type { RouteApp } from '../../../http/route-app.ts';
import { cancelSolicitation, createSolicitation, getSolicitation, type SolicitationDeps, type SolicitationWithRec } from '../../../modules/recurrences/solicitations.ts';
import { bcbOperation } from '../operation.ts';
import type { BcbDeps } from '../operations.ts';
import { recPayload } from '../rec/payload.ts';
import { BcbCnpj, BcbCpf, BcbTimestamp } from '../schemas.ts';

const TAGS = ['API Pix: solicrec (Pix Automático)'];
const ERRORS = { invalid: 'SolicRecOperacaoInvalida', notFound: 'SolicRecNaoEncontrada' } as const;

const Status = StringEnum(['CRIADA', 'ENVIADA', 'RECEBIDA', 'REJEITADA', 'ACEITA', 'EXPIRADA', 'CANCELADA'] as const);
const IdParams = Type.Object({ idSolicRec: Type.String({ maxLength: 29, description: 'Id da solicitação de confirmação da recorrência (idSolicRec)' }) });

/** BCB's SolicRecSolicitada. */
const SolicRecSolicitada = Type.Object(
  {
    idRec: Type.String({ pattern: '^[a-zA-Z0-9]{29}$', description: 'A recorrência CRIADA da conta que o pagador deve aprovar' }),
    calendario: Type.Object(
      { dataExpiracaoSolicitacao: Type.String({ format: 'date-time', description: 'Até quando o pagador pode responder (RFC 3339; no máximo 30 dias)' }) },
      { additionalProperties: false },
    ),
    destinatario: Type.Object(
      {
        agencia: Type.Optional(Type.String({ maxLength: 4, description: 'Agência do usuário pagador' })),
        conta: Type.String({ minLength: 1, maxLength: 20, description: 'Conta do usuário pagador' }),
        ispbParticipante: Type.String({ pattern: '^[0-9A-Z]{8}$', description: 'ISPB do PSP do usuário pagador' }),
        cpf: Type.Optional(BcbCpf),
        cnpj: Type.Optional(BcbCnpj),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

const SolicRecRevisada = Type.Object({ status: Type.Literal('CANCELADA', { description: 'Cancela a solicitação' }) }, { additionalProperties: false });

/** BCB's SolicRecCompleta: the solicitation, its history and the recurrence's payload. */
const SolicRecCompleta = Type.Object({
  idSolicRec: Type.String(),
  idRec: Type.String(),
  calendario: Type.Object({ dataExpiracaoSolicitacao: BcbTimestamp('Expiração da solicitação') }),
  status: Status,
  destinatario: Type.Record(Type.String(), Type.String()),
  atualizacao: Type.Array(Type.Object({ status: Status, data: BcbTimestamp('Quando') })),
  recPayload: Type.Record(Type.String(), Type.Unknown(), { description: 'O RecPayload da recorrência, como a location o serve' }),
});

function solicRecView(deps: { ispb: string; publicUrl: string }, { solicitation, rec }: SolicitationWithRec) {
  return {
    idSolicRec: solicitation.id_solic_rec,
    idRec: rec.id_rec,
    calendario: { dataExpiracaoSolicitacao: solicitation.expires_at.toISOString() },
    status: solicitation.status,
    destinatario: solicitation.destinatario,
    atualizacao: solicitation.history,
    recPayload: recPayload(rec, deps.ispb, deps.publicUrl),
  };
}

type Deps = SolicitationDeps & { publicUrl: string };

function postSolicRec(app: RouteApp, deps: Deps) {
  bcbOperation(
    app,
    {
      method: 'POST',
      url: '/solicrec',
      tags: TAGS,
      scope: 'solicrec.write',
      operationId: 'bcbPostSolicRec',
      summary: 'Criar solicitação de confirmação de recorrência',
      description:
        'Pede ao pagador (destinatario, no seu PSP) que aprove uma recorrência CRIADA da conta (JORNADA_1): CRIADA, enviada ao PSP do pagador (ENVIADA), ' +
        'recebida por ele (RECEBIDA), e então ACEITA (a recorrência APROVADA) ou REJEITADA, ou EXPIRADA em dataExpiracaoSolicitacao (no máximo 30 dias). ' +
        'Uma solicitação em andamento por recorrência. No sandbox, o PSP pagador de outra instituição a aceita um minuto depois de recebê-la, ' +
        'salvo uma falha automatico de stage solicitation.',
      request: { body: SolicRecSolicitada },
      answers: [201, SolicRecCompleta],
      problems: [400, 403, 404, 503],
      errors: ERRORS,
    },
    async (request, reply) => reply.status(201).send(solicRecView(deps, await createSolicitation(deps, request.accountId, request.body))),
  );
}

function getSolicRec(app: RouteApp, deps: Deps) {
  bcbOperation(
    app,
    {
      method: 'GET',
      url: '/solicrec/:idSolicRec',
      tags: TAGS,
      scope: 'solicrec.read',
      operationId: 'bcbGetSolicRec',
      summary: 'Consultar solicitação de confirmação de recorrência',
      request: { params: IdParams },
      answers: [200, SolicRecCompleta],
      problems: [403, 404, 503],
      errors: ERRORS,
    },
    async (request) => solicRecView(deps, await getSolicitation(deps.db, request.accountId, request.params.idSolicRec)),
  );
}

function patchSolicRec(app: RouteApp, deps: Deps) {
  bcbOperation(
    app,
    {
      method: 'PATCH',
      url: '/solicrec/:idSolicRec',
      tags: TAGS,
      scope: 'solicrec.write',
      operationId: 'bcbPatchSolicRec',
      summary: 'Revisar solicitação de confirmação de recorrência',
      description: 'status CANCELADA cancela a solicitação enquanto ela está CRIADA, ENVIADA ou RECEBIDA; a recorrência continua CRIADA.',
      request: { params: IdParams, body: SolicRecRevisada },
      answers: [201, SolicRecCompleta],
      problems: [400, 403, 404, 503],
      errors: ERRORS,
    },
    async (request, reply) => reply.status(201).send(solicRecView(deps, await cancelSolicitation(deps, request.accountId, request.params.idSolicRec))),
  );
}

/** BCB's solicitations of a payer's approval of a recurrence (`solicrec`, journey 1). */
export const solicrecOperations =
  (bcb: BcbDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const deps: Deps = { db: bcb.db, clock: bcb.clock, ispb: bcb.config.pspIspb, publicUrl: bcb.config.publicUrl };
    postSolicRec(app, deps);
    getSolicRec(app, deps);
    patchSolicRec(app, deps);
  };
