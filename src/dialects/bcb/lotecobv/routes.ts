import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { RouteApp } from '../../../http/route-app.ts';
import type { BatchItemRow, BatchRow } from '../../../modules/cobv/batch-repo.ts';
import { getBatch, listBatchesOf, MAX_BATCH_ITEMS, MAX_BATCHES_PER_PAGE, putBatch, reviseBatch } from '../../../modules/cobv/batches.ts';
import type { ChargeListDeps } from '../../../modules/charges/service.ts';
import { chargeDeps } from '../cobv/routes.ts';
import { CobVRevisada, CobVSolicitada, Timestamp } from '../cobv/schemas.ts';
import { modalidadesAsIntegers } from '../cobv/modalidades.ts';
import { bcbOperation } from '../operation.ts';
import type { BcbDeps } from '../operations.ts';
import { PROBLEM_TYPE_BASE, PROBLEM_TYPES, type Problema, type ProblemName } from '../problems.ts';
import { BcbPaginacao, BcbTxid } from '../schemas.ts';
import { emPortugues } from '../portugues.ts';
import { violationOfField } from '../violations.ts';

const TAGS = ['LoteCobV'];
const WRITE = { invalid: 'LoteCobVOperacaoInvalida', notFound: 'LoteCobVNaoEncontrado' } as const;
/** BCB: a query of GET /lotecobv or GET /lotecobv/{id} that does not match the schema is LoteCobVConsultaInvalida. */
const READ = { invalid: 'LoteCobVConsultaInvalida', notFound: 'LoteCobVNaoEncontrado' } as const;
/** A batch's body can hold MAX_BATCH_ITEMS charges of about 1 KiB each. */
const BATCH_BODY_LIMIT_BYTES = 1024 * 1024;
const ACCEPTED = Type.Null({ description: 'Lote recebido: cada cobrança já foi processada (GET /lotecobv/{id} mostra o resultado)' });

const IdParams = Type.Object({ id: Type.String({ pattern: '^[0-9]{1,18}$', description: 'Id do lote, um número dado pelo recebedor' }) });
const withTxid = <T extends typeof CobVSolicitada | typeof CobVRevisada>(schema: T) =>
  Type.Object({ txid: BcbTxid, ...schema.properties }, { additionalProperties: false });
const LoteBody = Type.Object(
  { descricao: Type.String({ minLength: 1, maxLength: 200 }), cobsv: Type.Array(withTxid(CobVSolicitada), { minItems: 1, maxItems: MAX_BATCH_ITEMS }) },
  { additionalProperties: false },
);
const LoteRevisado = Type.Object(
  { descricao: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), cobsv: Type.Optional(Type.Array(withTxid(CobVRevisada), { maxItems: MAX_BATCH_ITEMS })) },
  { additionalProperties: false, minProperties: 1 },
);
const Item = Type.Object({
  txid: Type.String(),
  status: Type.Union([Type.Literal('EM_PROCESSAMENTO'), Type.Literal('CRIADA'), Type.Literal('NEGADA')]),
  problema: Type.Optional(Type.Ref('Problema')),
  criacao: Type.Optional(Timestamp('Criação da cobrança')),
});
const Lote = Type.Object({ id: Type.Integer(), descricao: Type.String(), criacao: Timestamp('Criação do lote'), cobsv: Type.Array(Item) });
const Lotes = Type.Object({ parametros: Type.Object({ inicio: Timestamp('Início'), fim: Timestamp('Fim'), paginacao: BcbPaginacao }), lotes: Type.Array(Lote) });
const ListQuery = Type.Object(
  {
    inicio: Timestamp('Lotes criados a partir deste instante'),
    fim: Timestamp('Lotes criados até este instante'),
    'paginacao.paginaAtual': Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
    'paginacao.itensPorPagina': Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: `No máximo ${MAX_BATCHES_PER_PAGE} lotes por página` })),
  },
  { additionalProperties: false },
);

/**
 * A refused charge's problem, as PUT|PATCH /cobv/{txid} would have answered it; its violations
 * name the fields as BCB's example does, under `cobv.`.
 */
function problemaOf(p: NonNullable<BatchItemRow['problema']>): Problema {
  const name: ProblemName = p.status === 404 ? 'CobVNaoEncontrada' : 'CobVOperacaoInvalida';
  const status = PROBLEM_TYPES[name].status;
  const violacoes = (p.fields ?? []).map((found) => violationOfField(found, 'cobv.'));
  return { type: PROBLEM_TYPE_BASE + name, title: PROBLEM_TYPES[name].title, status, detail: emPortugues(p.detail, p.code), ...(violacoes.length > 0 ? { violacoes } : {}) };
}

export function loteView(batch: BatchRow, items: readonly BatchItemRow[]) {
  return {
    id: Number(batch.id),
    descricao: batch.descricao,
    criacao: batch.created_at.toISOString(),
    cobsv: items.map((i) => ({
      txid: i.txid,
      status: i.status,
      ...(i.status === 'NEGADA' && i.problema ? { problema: problemaOf(i.problema) } : {}),
      ...(i.status === 'CRIADA' && i.charge_created_at ? { criacao: i.charge_created_at.toISOString() } : {}),
    })),
  };
}

function putLoteRoute(app: RouteApp, deps: ChargeListDeps) {
  bcbOperation(
    app,
    {
      method: 'PUT',
      url: '/lotecobv/:id',
      tags: TAGS,
      scope: 'lotecobv.write',
      operationId: 'bcbPutLoteCobv',
      summary: 'Criar/Alterar lote de cobranças com vencimento',
      description: `Cria o lote e suas cobranças (até ${MAX_BATCH_ITEMS}); reenviado com exatamente as mesmas cobranças, substitui cada uma.`,
      request: { params: IdParams, body: LoteBody },
      answers: [202, ACCEPTED],
      problems: [400, 403, 404, 503],
      errors: WRITE,
      bodyLimit: BATCH_BODY_LIMIT_BYTES,
      preValidation: modalidadesAsIntegers,
    },
    async (request, reply) => {
      await putBatch(deps, request.accountId, BigInt(request.params.id), request.body);
      return reply.status(202).serializer(() => '').send(null);
    },
  );
}

function patchLoteRoute(app: RouteApp, deps: ChargeListDeps) {
  bcbOperation(
    app,
    {
      method: 'PATCH',
      url: '/lotecobv/:id',
      tags: TAGS,
      scope: 'lotecobv.write',
      operationId: 'bcbPatchLoteCobv',
      summary: 'Revisar cobranças específicas de um lote',
      request: { params: IdParams, body: LoteRevisado },
      answers: [202, ACCEPTED],
      problems: [400, 403, 404, 503],
      errors: WRITE,
      bodyLimit: BATCH_BODY_LIMIT_BYTES,
      preValidation: modalidadesAsIntegers,
    },
    async (request, reply) => {
      await reviseBatch(deps, request.accountId, BigInt(request.params.id), request.body);
      return reply.status(202).serializer(() => '').send(null);
    },
  );
}

function getLoteRoute(app: RouteApp, deps: ChargeListDeps) {
  bcbOperation(
    app,
    {
      method: 'GET',
      url: '/lotecobv/:id',
      tags: TAGS,
      scope: 'lotecobv.read',
      operationId: 'bcbGetLoteCobv',
      summary: 'Consultar um lote de cobranças com vencimento',
      request: { params: IdParams },
      answers: [200, Lote],
      problems: [403, 404, 503],
      errors: READ,
    },
    async (request) => {
      const { batch, items } = await getBatch(deps, request.accountId, BigInt(request.params.id));
      return loteView(batch, items);
    },
  );
}

function listLotesRoute(app: RouteApp, deps: ChargeListDeps) {
  bcbOperation(
    app,
    {
      method: 'GET',
      url: '/lotecobv',
      tags: TAGS,
      scope: 'lotecobv.read',
      operationId: 'bcbListLoteCobv',
      summary: 'Consultar lotes de cobranças com vencimento',
      request: { querystring: ListQuery },
      answers: [200, Lotes],
      problems: [400, 403, 503],
      errors: READ,
    },
    async (request) => {
      const { parametros, batches } = await listBatchesOf(deps, request.accountId, request.query);
      return { parametros, lotes: batches.map(({ batch, items }) => loteView(batch, items)) };
    },
  );
}

/** BCB's `lotecobv` operations: PUT, PATCH and GET /lotecobv/{id}, GET /lotecobv. */
export const lotecobvOperations =
  (bcb: BcbDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const deps = chargeDeps(bcb);
    putLoteRoute(app, deps);
    patchLoteRoute(app, deps);
    getLoteRoute(app, deps);
    listLotesRoute(app, deps);
  };
