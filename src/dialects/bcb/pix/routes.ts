import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { getReceived, listReceived, type ReceivedDeps } from '../../../modules/refunds/received.ts';
import { BCB_REFUND_POLICY, getRefund, requestRefund, type RefundsDeps } from '../../../modules/refunds/service.ts';
import type { RouteApp } from '../../../http/route-app.ts';
import type { BcbDeps } from '../operations.ts';
import { bcbOperation } from '../operation.ts';
import { problem } from '../problems.ts';
import { Devolucao, DevolucaoParams, DevolucaoReadParams, DevolucaoSolicitada, paginacao, Pix, PixConsultados, PixQuery, PixReadParams } from './schemas.ts';
import { pixView } from './views.ts';

const TAGS = ['API Pix: pix'];
const CONSULT = { invalid: 'PixConsultaInvalida', notFound: 'PixNaoEncontrado' } as const;
const REFUND = { invalid: 'PixDevolucaoInvalida', notFound: 'PixNaoEncontrado' } as const;
/** BCB: a refund GET /pix/{e2eid}/devolucao/{id} does not find (for that e2eid) is PixDevolucaoNaoEncontrada. */
const REFUND_READ = { invalid: 'PixDevolucaoInvalida', notFound: 'PixDevolucaoNaoEncontrada' } as const;

function listPixRoute(app: RouteApp, core: ReceivedDeps): void {
  bcbOperation(
    app,
    {
      method: 'GET',
      url: '/pix',
      tags: TAGS,
      scope: 'pix.read',
      operationId: 'bcbListPix',
      summary: 'Consultar Pix recebidos',
      description: 'Os Pix recebidos entre `inicio` e `fim` (no máximo 31 dias), do mais antigo ao mais novo, com suas devoluções.',
      request: { querystring: PixQuery },
      answers: [200, PixConsultados],
      problems: [400, 403, 503],
      errors: CONSULT,
    },
    async (request) => {
      const q = request.query;
      if (q.cpf !== undefined && q.cnpj !== undefined) throw problem('PixConsultaInvalida', 'cpf e cnpj não podem ser usados juntos.');
      const page = q['paginacao.paginaAtual'] ?? 0;
      const size = q['paginacao.itensPorPagina'] ?? 100;
      const { items, total } = await listReceived(core, request.accountId, {
        from: q.inicio,
        to: q.fim,
        txid: q.txid,
        txidPresent: q.txIdPresente,
        refundPresent: q.devolucaoPresente,
        payerDocument: q.cpf ?? q.cnpj,
        page,
        size,
      });
      const { 'paginacao.paginaAtual': _p, 'paginacao.itensPorPagina': _s, ...filters } = q;
      return { parametros: { ...filters, paginacao: paginacao(page, size, total) }, pix: items.map((i) => pixView(i.row, i.refunds)) };
    },
  );
}

function getPixRoute(app: RouteApp, core: ReceivedDeps): void {
  bcbOperation(
    app,
    {
      method: 'GET',
      url: '/pix/:e2eid',
      tags: TAGS,
      scope: 'pix.read',
      operationId: 'bcbGetPix',
      summary: 'Consultar Pix',
      request: { params: PixReadParams },
      answers: [200, Pix],
      problems: [403, 404, 503],
      errors: CONSULT,
    },
    async (request) => {
      const { row, refunds: made } = await getReceived(core, request.accountId, request.params.e2eid);
      return pixView(row, made);
    },
  );
}

function requestDevolucaoRoute(app: RouteApp, core: RefundsDeps): void {
  bcbOperation(
    app,
    {
      method: 'PUT',
      url: '/pix/:e2eid/devolucao/:id',
      tags: TAGS,
      scope: 'pix.write',
      operationId: 'bcbRequestDevolucao',
      summary: 'Solicitar devolução',
      description:
        '201 com a devolução criada, ou com seu estado atual quando o mesmo id volta com a mesma requisição; o mesmo id com outra ' +
        'requisição é 400 PixDevolucaoInvalida. Até 90 dias depois do Pix; a soma das devoluções não passa do valor do Pix. ' +
        'RETIRADA só para Pix Saque ou Troco, até o valor do saque ou troco; ORIGINAL até o resto.',
      request: { params: DevolucaoParams, body: DevolucaoSolicitada },
      answers: [201, Devolucao],
      problems: [400, 403, 404, 503],
      errors: REFUND,
    },
    async (request, reply) => {
      const { e2eid, id } = request.params;
      const answer = await requestRefund(core, request.accountId, e2eid, id, request.body, BCB_REFUND_POLICY);
      return reply.status(201).send(answer.body);
    },
  );
}

function getDevolucaoRoute(app: RouteApp, core: RefundsDeps): void {
  bcbOperation(
    app,
    {
      method: 'GET',
      url: '/pix/:e2eid/devolucao/:id',
      tags: TAGS,
      scope: 'pix.read',
      operationId: 'bcbGetDevolucao',
      summary: 'Consultar devolução',
      request: { params: DevolucaoReadParams },
      answers: [200, Devolucao],
      problems: [403, 404, 503],
      errors: REFUND_READ,
    },
    async (request) => getRefund(core, request.accountId, request.params.e2eid, request.params.id),
  );
}

/** BCB's `pix` group: the Pix the account received, and their refunds (`devolucao`). */
export const pixOperations =
  (deps: BcbDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const received: ReceivedDeps = { db: deps.db, clock: deps.clock, lists: deps.lists };
    const refunds: RefundsDeps = { db: deps.db, clock: deps.clock, ispb: deps.config.pspIspb };
    listPixRoute(app, received);
    getPixRoute(app, received);
    requestDevolucaoRoute(app, refunds);
    getDevolucaoRoute(app, refunds);
  };
