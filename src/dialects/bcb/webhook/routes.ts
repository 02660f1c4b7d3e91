import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { destinationPolicy } from '../../../modules/webhooks/destination.ts';
import { deleteKeyWebhook, getKeyWebhook, listKeyWebhooks, putKeyWebhook, type KeyWebhooksDeps } from '../../../modules/webhooks/pix-keys.ts';
import type { RouteApp } from '../../../http/route-app.ts';
import type { BcbDeps } from '../operations.ts';
import { bcbOperation } from '../operation.ts';
import { paginacao } from '../pix/schemas.ts';
import { ChaveParams, WebhookCompleto, WebhookQuery, WebhooksConsultados, WebhookSolicitado } from './schemas.ts';
import { webhookView } from './views.ts';

const TAGS = ['API Pix: webhook'];
const ERRORS = { invalid: 'WebhookOperacaoInvalida', notFound: 'WebhookNaoEncontrado' } as const;

function putWebhookRoute(app: RouteApp, core: KeyWebhooksDeps): void {
  bcbOperation(
    app,
    {
      method: 'PUT',
      url: '/webhook/:chave',
      tags: TAGS,
      scope: 'webhook.write',
      operationId: 'bcbPutWebhook',
      summary: 'Configurar o Webhook Pix',
      description:
        'A chave deve ser uma das chaves da conta; a URL segue as regras dos webhooks (HTTPS, portas, endereços). Os Pix com txid ' +
        'recebidos na chave, e as devoluções deles que chegarem a DEVOLVIDO ou NAO_REALIZADO, são notificados em ' +
        '`POST {webhookUrl}/pix` com `{"pix": [...]}`, assinados (Standard Webhooks) e com o certificado de cliente do serviço (mTLS).',
      request: { params: ChaveParams, body: WebhookSolicitado },
      answers: [200, Type.Null({ description: 'Webhook configurado' })],
      problems: [400, 403, 404, 503],
      errors: ERRORS,
    },
    async (request, reply) => {
      await putKeyWebhook(core, request.accountId, request.params.chave, request.body.webhookUrl);
      return reply.status(200).send(null);
    },
  );
}

function getWebhookRoute(app: RouteApp, core: KeyWebhooksDeps): void {
  bcbOperation(
    app,
    {
      method: 'GET',
      url: '/webhook/:chave',
      tags: TAGS,
      scope: 'webhook.read',
      operationId: 'bcbGetWebhook',
      summary: 'Exibir informações acerca do Webhook Pix',
      request: { params: ChaveParams },
      answers: [200, WebhookCompleto],
      problems: [403, 404, 503],
      errors: ERRORS,
    },
    async (request) => webhookView(await getKeyWebhook(core, request.accountId, request.params.chave)),
  );
}

function deleteWebhookRoute(app: RouteApp, core: KeyWebhooksDeps): void {
  bcbOperation(
    app,
    {
      method: 'DELETE',
      url: '/webhook/:chave',
      tags: TAGS,
      scope: 'webhook.write',
      operationId: 'bcbDeleteWebhook',
      summary: 'Cancelar o webhook Pix',
      description: 'As notificações ainda não entregues deste webhook terminam como FAILED (ficam no log).',
      request: { params: ChaveParams },
      answers: [204, Type.Null({ description: 'Webhook cancelado' })],
      problems: [403, 404, 503],
      errors: ERRORS,
    },
    async (request, reply) => {
      await deleteKeyWebhook(core, request.accountId, request.params.chave);
      return reply.status(204).send(null);
    },
  );
}

function listWebhooksRoute(app: RouteApp, core: KeyWebhooksDeps): void {
  bcbOperation(
    app,
    {
      method: 'GET',
      url: '/webhook',
      tags: TAGS,
      scope: 'webhook.read',
      operationId: 'bcbListWebhooks',
      summary: 'Consultar webhooks cadastrados',
      request: { querystring: WebhookQuery },
      answers: [200, WebhooksConsultados],
      problems: [400, 403, 503],
      errors: ERRORS,
    },
    async (request) => {
      const q = request.query;
      const page = q['paginacao.paginaAtual'] ?? 0;
      const size = q['paginacao.itensPorPagina'] ?? 100;
      const { rows, total } = await listKeyWebhooks(core, request.accountId, { from: q.inicio, to: q.fim, page, size });
      return {
        parametros: { ...(q.inicio ? { inicio: q.inicio } : {}), ...(q.fim ? { fim: q.fim } : {}), paginacao: paginacao(page, size, total) },
        webhooks: rows.map(webhookView),
      };
    },
  );
}

/** BCB's `webhook` group: a webhook per key of the account, whose callbacks are `POST {webhookUrl}/pix`. */
export const webhookOperations =
  (deps: BcbDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const core: KeyWebhooksDeps = { db: deps.db, clock: deps.clock, lists: deps.lists, policy: destinationPolicy(deps.config) };
    putWebhookRoute(app, core);
    getWebhookRoute(app, core);
    deleteWebhookRoute(app, core);
    listWebhooksRoute(app, core);
  };
