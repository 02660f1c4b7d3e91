import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RouteApp } from '../../../http/route-app.ts';
import {
  cancelRecurringChargeByReceiver,
  createRecurringCharge,
  getRecurringCharge,
  listRecurringChargesOf,
  retryRecurringCharge,
  type RecurringChargeDeps,
} from '../../../modules/recurrences/charges.ts';
import { bcbOperation } from '../operation.ts';
import type { BcbDeps } from '../operations.ts';
import { bcbListBody } from '../schemas.ts';
import { CobRCompleta, CobRGerada, CobRListQuery, CobRRetryParams, CobRRevisada, CobRSolicitada, CobRTxidParams, CobsRConsultadas } from './schemas.ts';
import { cobrCompletaView, cobrView } from './views.ts';

const TAGS = ['API Pix: cobr (Pix Automático)'];
const WRITE = { invalid: 'CobROperacaoInvalida', notFound: 'CobRNaoEncontrado' } as const;
const READ = { invalid: 'CobRConsultaInvalida', notFound: 'CobRNaoEncontrado' } as const;

const CREATE_RULES =
  'Uma cobrança de uma recorrência APROVADA da conta, para o ciclo em que cai o vencimento (uma por ciclo que não esteja REJEITADA nem CANCELADA). ' +
  'Enviada de D-10 a D-2 do dia em que liquida: o vencimento, ou com ajusteDiaUtil (padrão) o próximo dia útil (feriados nacionais). ' +
  'valor.original é o valorRec da recorrência quando ela o fixa; recebedor.conta (e agencia) são os da conta. ' +
  'A primeira tentativa (AGND) vai ao PSP do pagador (SOLICITADA), que a agenda (AGENDADA, a cobrança ATIVA) ou a recusa; ' +
  'ela liquida entre 00:00 e 08:00 do dia (horário de São Paulo), e sem saldo tenta de novo entre 18:00 e 21:00.';

function putCobR(app: RouteApp, deps: RecurringChargeDeps) {
  bcbOperation(
    app,
    {
      method: 'PUT',
      url: '/cobr/:txid',
      tags: TAGS,
      scope: 'cobr.write',
      operationId: 'bcbPutCobR',
      summary: 'Criar cobrança recorrente',
      description: CREATE_RULES,
      request: { params: CobRTxidParams, body: CobRSolicitada },
      answers: [201, CobRGerada],
      problems: [400, 403, 404, 503],
      errors: WRITE,
    },
    async (request, reply) => reply.status(201).send(cobrView(await createRecurringCharge(deps, request.accountId, request.params.txid, request.body))),
  );
}

function postCobR(app: RouteApp, deps: RecurringChargeDeps) {
  bcbOperation(
    app,
    {
      method: 'POST',
      url: '/cobr',
      tags: TAGS,
      scope: 'cobr.write',
      operationId: 'bcbPostCobR',
      summary: 'Criar cobrança recorrente (txid definido pelo PSP)',
      description: CREATE_RULES,
      request: { body: CobRSolicitada },
      answers: [201, CobRGerada],
      problems: [400, 403, 503],
      errors: WRITE,
    },
    async (request, reply) => reply.status(201).send(cobrView(await createRecurringCharge(deps, request.accountId, undefined, request.body))),
  );
}

function getCobR(app: RouteApp, deps: RecurringChargeDeps) {
  bcbOperation(
    app,
    {
      method: 'GET',
      url: '/cobr/:txid',
      tags: TAGS,
      scope: 'cobr.read',
      operationId: 'bcbGetCobR',
      summary: 'Consultar cobrança recorrente',
      description: 'Com as tentativas (tipo, data de liquidação, status e o histórico de cada uma) e o Pix que a pagou.',
      request: { params: CobRTxidParams },
      answers: [200, CobRCompleta],
      problems: [403, 404, 503],
      errors: READ,
    },
    async (request) => cobrCompletaView(await getRecurringCharge(deps.db, request.accountId, request.params.txid)),
  );
}

function patchCobR(app: RouteApp, deps: RecurringChargeDeps) {
  bcbOperation(
    app,
    {
      method: 'PATCH',
      url: '/cobr/:txid',
      tags: TAGS,
      scope: 'cobr.write',
      operationId: 'bcbPatchCobR',
      summary: 'Revisar cobrança recorrente',
      description:
        'status CANCELADA cancela a cobrança e suas tentativas em andamento (solicitante USUARIO_RECEBEDOR, código SLCR), ' +
        'antes do dia da primeira tentativa de liquidação.',
      request: { params: CobRTxidParams, body: CobRRevisada },
      answers: [200, CobRGerada],
      problems: [400, 403, 404, 503],
      errors: WRITE,
    },
    async (request) => cobrView(await cancelRecurringChargeByReceiver(deps, request.accountId, request.params.txid)),
  );
}

function listCobR(app: RouteApp, deps: RecurringChargeDeps) {
  bcbOperation(
    app,
    {
      method: 'GET',
      url: '/cobr',
      tags: TAGS,
      scope: 'cobr.read',
      operationId: 'bcbListCobR',
      summary: 'Consultar lista de cobranças recorrentes',
      description: 'Cobranças recorrentes criadas entre inicio e fim (no máximo 31 dias), mais novas primeiro; idRec, cpf ou cnpj do devedor, status e convenio as filtram.',
      request: { querystring: CobRListQuery },
      answers: [200, CobsRConsultadas],
      problems: [400, 403, 503],
      errors: READ,
    },
    async (request) => {
      const { parametros, details } = await listRecurringChargesOf(deps, request.accountId, request.query);
      return bcbListBody({ parametros, rows: details }, 'cobsr', cobrCompletaView);
    },
  );
}

function retryCobR(app: RouteApp, deps: RecurringChargeDeps) {
  bcbOperation(
    app,
    {
      method: 'POST',
      url: '/cobr/:txid/retentativa/:data',
      tags: TAGS,
      scope: 'cobr.write',
      operationId: 'bcbPostCobRRetentativa',
      summary: 'Solicitar retentativa de cobrança',
      description:
        'Com a política PERMITE_3R_7D da recorrência: uma nova tentativa (tipo NTAG, o agendamento de nova tentativa após o vencimento) em data, ' +
        'uma data futura nos 7 dias após o vencimento que nenhuma tentativa tomou; no máximo 3. Recusada com NAO_PERMITE e enquanto uma tentativa ' +
        'está SOLICITADA ou AGENDADA.',
      request: { params: CobRRetryParams },
      answers: [201, CobRCompleta],
      problems: [400, 403, 404, 503],
      errors: WRITE,
    },
    async (request, reply) => reply.status(201).send(cobrCompletaView(await retryRecurringCharge(deps, request.accountId, request.params.txid, request.params.data))),
  );
}

/** BCB's recurring charges of Pix Automático (`cobr`), on the receiver's side. */
export const cobrOperations =
  (bcb: BcbDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const deps: RecurringChargeDeps = { db: bcb.db, clock: bcb.clock, lists: bcb.lists, windowDays: bcb.config.automaticoWindowDays };
    putCobR(app, deps);
    postCobR(app, deps);
    listCobR(app, deps);
    getCobR(app, deps);
    patchCobR(app, deps);
    retryCobR(app, deps);
  };
