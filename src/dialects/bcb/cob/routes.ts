import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RouteApp } from '../../../http/route-app.ts';
import {
  chargeAtRevision,
  createCharge,
  getCharge,
  listChargesOf,
  paymentsOf,
  putCharge,
  reviseCharge,
  type ChargeListDeps,
} from '../../../modules/charges/service.ts';
import type { BcbDeps } from '../operations.ts';
import { bcbOperation } from '../operation.ts';
import { problem } from '../problems.ts';
import { BcbTxidParams } from '../schemas.ts';
import { CobCompleta, CobListQuery, CobQuery, CobRevisada, CobSolicitada, CobsConsultadas } from './schemas.ts';
import { chargesPage, cobView } from './views.ts';

const TAGS = ['API Pix: cob'];
const WRITE = { invalid: 'CobOperacaoInvalida', notFound: 'CobNaoEncontrado' } as const;
const READ = { invalid: 'CobConsultaInvalida', notFound: 'CobNaoEncontrado' } as const;

/** The charge as BCB shows it: the current revision (with its Pix) or an earlier one. */
async function shownCob(deps: ChargeListDeps, accountId: bigint, txid: string, revisao?: number) {
  const current = await getCharge(deps, accountId, txid);
  const shown = await chargeAtRevision(deps.db, current, revisao);
  const now = deps.clock.now();
  if (shown !== current) return cobView(shown, current, { now, publicUrl: deps.publicUrl });
  const payment = (await paymentsOf(deps.db, [current])).get(current.id);
  return cobView(current, current, { now, publicUrl: deps.publicUrl, payment });
}

function putCob(app: RouteApp, deps: ChargeListDeps) {
  bcbOperation(
    app,
    {
      method: 'PUT',
      url: '/cob/:txid',
      tags: TAGS,
      scope: 'cob.write',
      operationId: 'bcbPutCob',
      summary: 'Criar cobrança imediata (txid do recebedor)',
      description:
        'Cria a cobrança; a cobrança ATIVA da conta com esse txid é substituída por inteiro (revisao + 1 quando algum campo muda, como no PATCH), ' +
        'e uma que não está ATIVA é 400 CobOperacaoInvalida. Sem loc.id, uma location nova é criada para a cobrança.',
      request: { params: BcbTxidParams, body: CobSolicitada },
      answers: [201, CobCompleta],
      problems: [400, 403, 404, 503],
      errors: WRITE,
    },
    async (request, reply) => {
      const row = await putCharge(deps, request.accountId, request.params.txid, request.body);
      // An ATIVA charge, new or replaced: no payment yet.
      return reply.status(201).send(cobView(row, row, { now: deps.clock.now(), publicUrl: deps.publicUrl }));
    },
  );
}

function postCob(app: RouteApp, deps: ChargeListDeps) {
  bcbOperation(
    app,
    {
      method: 'POST',
      url: '/cob',
      tags: TAGS,
      scope: 'cob.write',
      operationId: 'bcbPostCob',
      summary: 'Criar cobrança imediata (txid definido pelo PSP)',
      request: { body: CobSolicitada },
      answers: [201, CobCompleta],
      problems: [400, 403, 503],
      errors: WRITE,
    },
    async (request, reply) => {
      const row = await createCharge(deps, request.accountId, request.body, undefined, 'bcb');
      return reply.status(201).send(cobView(row, row, { now: deps.clock.now(), publicUrl: deps.publicUrl }));
    },
  );
}

function patchCob(app: RouteApp, deps: ChargeListDeps) {
  bcbOperation(
    app,
    {
      method: 'PATCH',
      url: '/cob/:txid',
      tags: TAGS,
      scope: 'cob.write',
      operationId: 'bcbPatchCob',
      summary: 'Revisar cobrança imediata',
      description:
        'Uma alteração de algum campo incrementa a revisão em 1; uma que só muda loc (a cobrança passa a outra location livre da conta) ou nada muda não a incrementa. ' +
        'status REMOVIDA_PELO_USUARIO_RECEBEDOR remove a cobrança e não vem com outras alterações.',
      request: { params: BcbTxidParams, body: CobRevisada },
      answers: [200, CobCompleta],
      problems: [400, 403, 404, 503],
      errors: WRITE,
    },
    async (request) => {
      if (request.body.status !== undefined && Object.keys(request.body).length > 1) {
        throw problem('CobOperacaoInvalida', 'Remover a cobrança (status REMOVIDA_PELO_USUARIO_RECEBEDOR) não se combina com outras alterações.', {
          violacoes: [{ razao: 'O campo status não pode vir com outras alterações.', propriedade: 'status', valor: request.body.status }],
        });
      }
      await reviseCharge(deps, request.accountId, request.params.txid, request.body, 'bcb');
      return shownCob(deps, request.accountId, request.params.txid);
    },
  );
}

function getCob(app: RouteApp, deps: ChargeListDeps) {
  bcbOperation(
    app,
    {
      method: 'GET',
      url: '/cob/:txid',
      tags: TAGS,
      scope: 'cob.read',
      operationId: 'bcbGetCob',
      summary: 'Consultar cobrança imediata',
      description: 'Com revisao, a cobrança como era nessa revisão; uma revisão que a cobrança não teve é 400 CobConsultaInvalida.',
      request: { params: BcbTxidParams, querystring: CobQuery },
      answers: [200, CobCompleta],
      problems: [400, 403, 404, 503],
      errors: READ,
    },
    async (request) => shownCob(deps, request.accountId, request.params.txid, request.query.revisao),
  );
}

function listCobs(app: RouteApp, deps: ChargeListDeps) {
  bcbOperation(
    app,
    {
      method: 'GET',
      url: '/cob',
      tags: TAGS,
      scope: 'cob.read',
      operationId: 'bcbListCob',
      summary: 'Consultar lista de cobranças imediatas',
      description: 'Cobranças imediatas criadas entre inicio e fim (no máximo 31 dias), mais novas primeiro; cobranças com vencimento não entram.',
      request: { querystring: CobListQuery },
      answers: [200, CobsConsultadas],
      problems: [400, 403, 503],
      errors: READ,
    },
    async (request) => chargesPage(deps, await listChargesOf(deps, request.accountId, request.query), cobView),
  );
}

/** BCB's immediate charges (`cob`), through the charges core. */
export const cobOperations =
  (bcb: BcbDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const deps: ChargeListDeps = {
      db: bcb.db,
      clock: bcb.clock,
      ispb: bcb.config.pspIspb,
      publicUrl: bcb.config.publicUrl,
      lists: bcb.lists,
      ...(bcb.cobs ? { cobs: bcb.cobs } : {}),
    };
    putCob(app, deps);
    postCob(app, deps);
    getCob(app, deps);
    listCobs(app, deps);
    patchCob(app, deps);
  };
