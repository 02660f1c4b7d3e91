import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { paymentsOf, type ChargeListDeps } from '../../../modules/charges/service.ts';
import { getCobv, listCobv, putCobv, reviseCobv } from '../../../modules/cobv/service.ts';
import type { BcbDeps } from '../operations.ts';
import { modalidadesAsIntegers } from './modalidades.ts';
import { problemResponses } from '../problems.ts';
import { BcbTxidParams, bcbPaginacao } from '../schemas.ts';
import { CobsVConsultadas, CobV, CobVListQuery, CobVRevisada, CobVSolicitada } from './schemas.ts';
import { cobvView } from './views.ts';

const tags = ['CobV'];
const write = { security: [{ oauth2: ['cobv.write'] }] };
const read = { security: [{ oauth2: ['cobv.read'] }] };
const problems = { bcbProblems: { invalid: 'CobVOperacaoInvalida', notFound: 'CobVNaoEncontrada' } } as const;
const queryProblems = { bcbProblems: { invalid: 'CobVConsultaInvalida', notFound: 'CobVNaoEncontrada' } } as const;

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

/** BCB's `cobv` operations: PUT, PATCH and GET /cobv/{txid}, GET /cobv. */
export const cobvOperations =
  (bcb: BcbDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const deps = chargeDeps(bcb);
    const shown = (accountId: bigint, txid: string, revisao?: number) => shownCobv(deps, accountId, txid, revisao);

    app.put('/cobv/:txid', {
      schema: {
        tags, ...write, operationId: 'bcbPutCobv', summary: 'Criar cobrança com vencimento',
        description: 'Cria a cobrança; a de mesmo txid ATIVA é substituída por inteiro (revisao + 1). Um txid de uma cob da conta é 400.',
        params: BcbTxidParams, body: CobVSolicitada, response: { 201: CobV, ...problemResponses(400, 403, 404, 503) },
      },
      config: problems,
      preValidation: modalidadesAsIntegers,
    }, async (request, reply) => {
      const row = await putCobv(deps, request.accountId, request.params.txid, request.body);
      return reply.status(201).send(await shown(request.accountId, row.txid));
    });

    app.patch('/cobv/:txid', {
      schema: {
        tags, ...write, operationId: 'bcbPatchCobv', summary: 'Revisar cobrança com vencimento',
        description: 'Altera os campos dados de uma cobrança ATIVA (revisao + 1), ou a remove com status REMOVIDA_PELO_USUARIO_RECEBEDOR sozinho.',
        params: BcbTxidParams, body: CobVRevisada, response: { 200: CobV, ...problemResponses(400, 403, 404, 503) },
      },
      config: problems,
      preValidation: modalidadesAsIntegers,
    }, async (request) => {
      const row = await reviseCobv(deps, request.accountId, request.params.txid, request.body);
      return shown(request.accountId, row.txid);
    });

    app.get('/cobv/:txid', {
      schema: {
        tags, ...read, operationId: 'bcbGetCobv', summary: 'Consultar cobrança com vencimento',
        params: BcbTxidParams,
        querystring: Type.Object({ revisao: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647 })) }, { additionalProperties: false }),
        response: { 200: CobV, ...problemResponses(400, 403, 404, 503) },
      },
      config: queryProblems,
    }, async (request) => shown(request.accountId, request.params.txid, request.query.revisao));

    app.get('/cobv', {
      schema: {
        tags, ...read, operationId: 'bcbListCobv', summary: 'Consultar lista de cobranças com vencimento',
        description: 'As cobranças criadas entre inicio e fim (no máximo 31 dias), das mais novas às mais antigas.',
        querystring: CobVListQuery, response: { 200: CobsVConsultadas, ...problemResponses(400, 403, 503) },
      },
      config: queryProblems,
    }, async (request) => {
      const { parametros, rows, now } = await listCobv(deps, request.accountId, request.query);
      const payments = await paymentsOf(deps.db, rows);
      const cobs = rows.map((row) => cobvView(row, row, { now, publicUrl: deps.publicUrl, payment: payments.get(row.id) }));
      return { parametros: { ...parametros, paginacao: bcbPaginacao(parametros.paginacao) }, cobs };
    });
  };
