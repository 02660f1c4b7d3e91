import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { RouteApp } from '../../../http/route-app.ts';
import { paymentsOf, type ChargeListDeps } from '../../../modules/charges/service.ts';
import { getCobv, listCobv, putCobv, reviseCobv } from '../../../modules/cobv/service.ts';
import { bcbOperation } from '../operation.ts';
import type { BcbDeps } from '../operations.ts';
import { modalidadesAsIntegers } from './modalidades.ts';
import { chargesPage } from '../cob/views.ts';
import { BcbTxidParams } from '../schemas.ts';
import { CobsVConsultadas, CobV, CobVListQuery, CobVRevisada, CobVSolicitada } from './schemas.ts';
import { cobvView } from './views.ts';

const TAGS = ['CobV'];
const WRITE = { invalid: 'CobVOperacaoInvalida', notFound: 'CobVNaoEncontrada' } as const;
const READ = { invalid: 'CobVConsultaInvalida', notFound: 'CobVNaoEncontrada' } as const;

export const chargeDeps = (deps: BcbDeps): ChargeListDeps => ({
  db: deps.db,
  clock: deps.clock,
  ispb: deps.config.pspIspb,
  publicUrl: deps.config.publicUrl,
  lists: deps.lists,
});

/** The cobv as BCB shows it: its current revision with the Pix that concluded it, or an earlier one. */
async function shownCobv(deps: ChargeListDeps, accountId: bigint, txid: string, revisao?: number) {
  const current = await getCobv(deps, accountId, txid);
  const now = deps.clock.now();
  if (revisao !== undefined && revisao !== current.revisao) {
    return cobvView(await getCobv(deps, accountId, txid, revisao), current, { now, publicUrl: deps.publicUrl });
  }
  const payment = (await paymentsOf(deps.db, [current])).get(current.id);
  return cobvView(current, current, { now, publicUrl: deps.publicUrl, payment });
}

function putCobvRoute(app: RouteApp, deps: ChargeListDeps) {
  bcbOperation(
    app,
    {
      method: 'PUT',
      url: '/cobv/:txid',
      tags: TAGS,
      scope: 'cobv.write',
      operationId: 'bcbPutCobv',
      summary: 'Criar cobrança com vencimento',
      description: 'Cria a cobrança; a de mesmo txid ATIVA é substituída por inteiro (revisao + 1). Um txid de uma cob da conta é 400.',
      request: { params: BcbTxidParams, body: CobVSolicitada },
      answers: [201, CobV],
      problems: [400, 403, 404, 503],
      errors: WRITE,
      preValidation: modalidadesAsIntegers,
    },
    async (request, reply) => {
      const row = await putCobv(deps, request.accountId, request.params.txid, request.body);
      return reply.status(201).send(await shownCobv(deps, request.accountId, row.txid));
    },
  );
}

function patchCobvRoute(app: RouteApp, deps: ChargeListDeps) {
  bcbOperation(
    app,
    {
      method: 'PATCH',
      url: '/cobv/:txid',
      tags: TAGS,
      scope: 'cobv.write',
      operationId: 'bcbPatchCobv',
      summary: 'Revisar cobrança com vencimento',
      description: 'Altera os campos dados de uma cobrança ATIVA (revisao + 1), ou a remove com status REMOVIDA_PELO_USUARIO_RECEBEDOR sozinho.',
      request: { params: BcbTxidParams, body: CobVRevisada },
      answers: [200, CobV],
      problems: [400, 403, 404, 503],
      errors: WRITE,
      preValidation: modalidadesAsIntegers,
    },
    async (request) => {
      const row = await reviseCobv(deps, request.accountId, request.params.txid, request.body);
      return shownCobv(deps, request.accountId, row.txid);
    },
  );
}

function getCobvRoute(app: RouteApp, deps: ChargeListDeps) {
  bcbOperation(
    app,
    {
      method: 'GET',
      url: '/cobv/:txid',
      tags: TAGS,
      scope: 'cobv.read',
      operationId: 'bcbGetCobv',
      summary: 'Consultar cobrança com vencimento',
      request: {
        params: BcbTxidParams,
        querystring: Type.Object({ revisao: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647 })) }, { additionalProperties: false }),
      },
      answers: [200, CobV],
      problems: [400, 403, 404, 503],
      errors: READ,
    },
    async (request) => shownCobv(deps, request.accountId, request.params.txid, request.query.revisao),
  );
}

function listCobvRoute(app: RouteApp, deps: ChargeListDeps) {
  bcbOperation(
    app,
    {
      method: 'GET',
      url: '/cobv',
      tags: TAGS,
      scope: 'cobv.read',
      operationId: 'bcbListCobv',
      summary: 'Consultar lista de cobranças com vencimento',
      description: 'As cobranças criadas entre inicio e fim (no máximo 31 dias), das mais novas às mais antigas.',
      request: { querystring: CobVListQuery },
      answers: [200, CobsVConsultadas],
      problems: [400, 403, 503],
      errors: READ,
    },
    async (request) => chargesPage(deps, await listCobv(deps, request.accountId, request.query), cobvView),
  );
}

/** BCB's `cobv` operations: PUT, PATCH and GET /cobv/{txid}, GET /cobv. */
export const cobvOperations =
  (bcb: BcbDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const deps = chargeDeps(bcb);
    putCobvRoute(app, deps);
    patchCobvRoute(app, deps);
    getCobvRoute(app, deps);
    listCobvRoute(app, deps);
  };
