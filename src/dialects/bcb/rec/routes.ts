import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RouteApp } from '../../../http/route-app.ts';
import {
  createRecurrence,
  getRecurrence,
  listRecurrencesOf,
  recurrenceCode,
  reviseRecurrence,
  type RecurrenceDeps,
} from '../../../modules/recurrences/service.ts';
import { bcbOperation } from '../operation.ts';
import type { BcbDeps } from '../operations.ts';
import { bcbPaginacao } from '../schemas.ts';
import { IdRecParams, RecCompleta, RecGerada, RecListQuery, RecQuery, RecRevisada, RecsConsultadas, RecSolicitada } from './schemas.ts';
import { recCompletaView, recView } from './views.ts';

const TAGS = ['API Pix: rec (Pix Automático)'];
const WRITE = { invalid: 'RecOperacaoInvalida', notFound: 'RecNaoEncontrada' } as const;
const READ = { invalid: 'RecConsultaInvalida', notFound: 'RecNaoEncontrada' } as const;

type Deps = RecurrenceDeps & { publicUrl: string };

function postRec(app: RouteApp, deps: Deps) {
  bcbOperation(
    app,
    {
      method: 'POST',
      url: '/rec',
      tags: TAGS,
      scope: 'rec.write',
      operationId: 'bcbPostRec',
      summary: 'Criar recorrência',
      description:
        'Uma recorrência CRIADA, cobrada pela conta (uma empresa: recebedor.cnpj) ao devedor. calendario.dataInicial não antes de hoje, dataFinal não antes dela; ' +
        'valorRec (valor fixo) ou valorMinimoRecebedor, não os dois; loc, uma location de recorrência livre da conta.',
      request: { body: RecSolicitada },
      answers: [201, RecGerada],
      problems: [400, 403, 503],
      errors: WRITE,
    },
    async (request, reply) => reply.status(201).send(recView(await createRecurrence(deps, request.accountId, request.body), deps.publicUrl)),
  );
}

function getRec(app: RouteApp, deps: Deps) {
  bcbOperation(
    app,
    {
      method: 'GET',
      url: '/rec/:idRec',
      tags: TAGS,
      scope: 'rec.read',
      operationId: 'bcbGetRec',
      summary: 'Consultar recorrência',
      description:
        'dadosQR: sem txid, o QR da recorrência (JORNADA_2); com o txid de uma cob, o QR composto da cob e da recorrência (JORNADA_3), de uma cobv (JORNADA_4). ' +
        'Só quando as locations existem.',
      request: { params: IdRecParams, querystring: RecQuery },
      answers: [200, RecCompleta],
      problems: [400, 403, 404, 503],
      errors: READ,
    },
    async (request) => {
      const row = await getRecurrence(deps.db, request.accountId, request.params.idRec);
      return recCompletaView(row, deps.publicUrl, await recurrenceCode(deps, row, request.query.txid));
    },
  );
}

function patchRec(app: RouteApp, deps: Deps) {
  bcbOperation(
    app,
    {
      method: 'PATCH',
      url: '/rec/:idRec',
      tags: TAGS,
      scope: 'rec.write',
      operationId: 'bcbPatchRec',
      summary: 'Revisar recorrência',
      description:
        'status CANCELADA cancela (solicitante USUARIO_RECEBEDOR, código SLCR); loc e calendario.dataInicial mudam só enquanto CRIADA; ' +
        'uma recorrência CANCELADA, REJEITADA ou EXPIRADA não muda mais.',
      request: { params: IdRecParams, body: RecRevisada },
      answers: [200, RecGerada],
      problems: [400, 403, 404, 503],
      errors: WRITE,
    },
    async (request) => recView(await reviseRecurrence(deps, request.accountId, request.params.idRec, request.body), deps.publicUrl),
  );
}

function listRecs(app: RouteApp, deps: Deps) {
  bcbOperation(
    app,
    {
      method: 'GET',
      url: '/rec',
      tags: TAGS,
      scope: 'rec.read',
      operationId: 'bcbListRec',
      summary: 'Consultar lista de recorrências',
      description: 'Recorrências criadas entre inicio e fim (no máximo 31 dias), mais novas primeiro.',
      request: { querystring: RecListQuery },
      answers: [200, RecsConsultadas],
      problems: [400, 403, 503],
      errors: READ,
    },
    async (request) => {
      const { parametros, rows } = await listRecurrencesOf(deps, request.accountId, request.query);
      return { parametros: { ...parametros, paginacao: bcbPaginacao(parametros.paginacao) }, recs: rows.map((row) => recCompletaView(row, deps.publicUrl)) };
    },
  );
}

/** BCB's recurrences of Pix Automático (`rec`), on the receiver's side. */
export const recOperations =
  (bcb: BcbDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const deps: Deps = { db: bcb.db, clock: bcb.clock, ispb: bcb.config.pspIspb, lists: bcb.lists, publicUrl: bcb.config.publicUrl };
    postRec(app, deps);
    listRecs(app, deps);
    getRec(app, deps);
    patchRec(app, deps);
  };
