import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { RouteApp } from '../../../http/route-app.ts';
import { deleteAutomaticoWebhook, getAutomaticoWebhook, putAutomaticoWebhook, type AutomaticoKind, type AutomaticoWebhooksDeps } from '../../../modules/webhooks/automatico.ts';
import { destinationPolicy } from '../../../modules/webhooks/destination.ts';
import type { Scope } from '../../../modules/auth/scopes.ts';
import { bcbOperation } from '../operation.ts';
import type { BcbDeps } from '../operations.ts';
import { BcbTimestamp } from '../schemas.ts';

/**
 * BCB's webhooks of Pix Automático: `webhookrec` (recurrences) and `webhookcobr` (recurring
 * charges), one URL each per account, stated once for both kinds.
 */
const KINDS = {
  rec: {
    path: '/webhookrec',
    tags: ['API Pix: webhookrec (Pix Automático)'],
    read: 'webhookrec.read',
    write: 'webhookrec.write',
    ids: { put: 'bcbPutWebhookRec', get: 'bcbGetWebhookRec', delete: 'bcbDeleteWebhookRec' },
    invalid: 'WebhookRecOperacaoInvalida',
    what: 'recorrências',
    body: '`POST {webhookUrl}/rec` com `{"recs": [...]}` quando uma recorrência da conta é aprovada, rejeitada, expira ou é cancelada',
  },
  cobr: {
    path: '/webhookcobr',
    tags: ['API Pix: webhookcobr (Pix Automático)'],
    read: 'webhookcobr.read',
    write: 'webhookcobr.write',
    ids: { put: 'bcbPutWebhookCobR', get: 'bcbGetWebhookCobR', delete: 'bcbDeleteWebhookCobR' },
    invalid: 'WebhookCobROperacaoInvalida',
    what: 'cobranças recorrentes',
    body: '`POST {webhookUrl}/cobr` com `{"cobsr": [...]}` quando uma cobrança recorrente da conta ou uma de suas tentativas muda',
  },
} as const satisfies Record<AutomaticoKind, { read: Scope; write: Scope } & Record<string, unknown>>;

const WebhookSolicitado = Type.Object({ webhookUrl: Type.String({ minLength: 1, maxLength: 2048, description: 'URL HTTPS dos callbacks' }) }, { additionalProperties: false });
const WebhookCompleto = Type.Object({ webhookUrl: Type.String(), criacao: BcbTimestamp('Data e hora em que o webhook foi cadastrado') });

const errorsOf = (kind: AutomaticoKind) => ({ invalid: KINDS[kind].invalid, notFound: 'NaoEncontrado' }) as const;

function putWebhook(app: RouteApp, deps: AutomaticoWebhooksDeps, kind: AutomaticoKind): void {
  const k = KINDS[kind];
  const errors = errorsOf(kind);
  bcbOperation(
    app,
    {
      method: 'PUT',
      url: k.path,
      tags: [...k.tags],
      scope: k.write,
      operationId: k.ids.put,
      summary: `Configurar o webhook de ${k.what}`,
      description:
        `A URL segue as regras dos webhooks (HTTPS, portas, endereços). Notifica ${k.body}, assinado (Standard Webhooks) e com o certificado ` +
        'de cliente do serviço (mTLS), com retentativas e log como os callbacks /pix. Um novo PUT troca a URL.',
      request: { body: WebhookSolicitado },
      answers: [200, Type.Null({ description: 'Webhook configurado' })],
      problems: [400, 403, 404, 503],
      errors,
    },
    async (request, reply) => {
      await putAutomaticoWebhook(deps, request.accountId, kind, request.body.webhookUrl);
      return reply.status(200).send(null);
    },
  );
}

function getWebhook(app: RouteApp, deps: AutomaticoWebhooksDeps, kind: AutomaticoKind): void {
  const k = KINDS[kind];
  const errors = errorsOf(kind);
  bcbOperation(
    app,
    {
      method: 'GET',
      url: k.path,
      tags: [...k.tags],
      scope: k.read,
      operationId: k.ids.get,
      summary: `Exibir o webhook de ${k.what}`,
      answers: [200, WebhookCompleto],
      problems: [403, 404, 503],
      errors,
    },
    async (request) => {
      const row = await getAutomaticoWebhook(deps, request.accountId, kind);
      return { webhookUrl: row.webhook_url, criacao: row.created_at.toISOString() };
    },
  );
}

function deleteWebhook(app: RouteApp, deps: AutomaticoWebhooksDeps, kind: AutomaticoKind): void {
  const k = KINDS[kind];
  const errors = errorsOf(kind);
  bcbOperation(
    app,
    {
      method: 'DELETE',
      url: k.path,
      tags: [...k.tags],
      scope: k.write,
      operationId: k.ids.delete,
      summary: `Cancelar o webhook de ${k.what}`,
      description: 'As notificações ainda não entregues terminam como FAILED (ficam no log).',
      answers: [204, Type.Null({ description: 'Webhook cancelado' })],
      problems: [403, 404, 503],
      errors,
    },
    async (request, reply) => {
      await deleteAutomaticoWebhook(deps, request.accountId, kind);
      return reply.status(204).send(null);
    },
  );
}

/** BCB's `webhookrec` and `webhookcobr`. */
export const automaticoWebhookOperations =
  (bcb: BcbDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const deps: AutomaticoWebhooksDeps = { db: bcb.db, clock: bcb.clock, policy: destinationPolicy(bcb.config) };
    for (const kind of ['rec', 'cobr'] as const) {
      putWebhook(app, deps, kind);
      getWebhook(app, deps, kind);
      deleteWebhook(app, deps, kind);
    }
  };
