import type { OperationExamples } from '../../../http/openapi-examples.ts';
import { examplePage } from '../../../http/example-page.ts';

const CHAVE = 'c1a9e94e-4af5-4e52-b8e5-4eb266ee637c';
const webhook = { webhookUrl: 'https://padaria.example.com/api/webhook', chave: CHAVE, criacao: '2026-11-24T15:10:00.358Z' };

/** Examples of BCB's `webhook` group (webhooks per key). */
export const WEBHOOK_EXAMPLES: Record<string, OperationExamples> = {
  bcbPutWebhook: {
    params: { chave: CHAVE },
    body: { webhookUrl: webhook.webhookUrl },
    problems: { 400: 'WebhookOperacaoInvalida', 404: 'WebhookNaoEncontrado' },
  },
  bcbGetWebhook: { params: { chave: CHAVE }, responses: { 200: webhook }, problems: { 404: 'WebhookNaoEncontrado' } },
  bcbDeleteWebhook: { params: { chave: CHAVE }, problems: { 404: 'WebhookNaoEncontrado' } },
  bcbListWebhooks: {
    params: { inicio: '2026-11-01T00:00:00Z', fim: '2026-11-30T23:59:59Z', 'paginacao.paginaAtual': 0, 'paginacao.itensPorPagina': 100 },
    responses: { 200: examplePage({ inicio: '2026-11-01T00:00:00Z', fim: '2026-11-30T23:59:59Z' }, 'webhooks', [webhook]) },
    problems: { 400: 'WebhookOperacaoInvalida' },
  },
};
