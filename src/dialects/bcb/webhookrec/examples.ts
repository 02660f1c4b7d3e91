import type { OperationExamples } from '../../../http/openapi-examples.ts';

const rec = { webhookUrl: 'https://academia.example.com/api/webhookrec', criacao: '2026-11-24T15:10:00.358Z' };
const cobr = { webhookUrl: 'https://academia.example.com/api/webhookcobr', criacao: '2026-11-24T15:11:00.358Z' };

/** Examples of BCB's `webhookrec` and `webhookcobr`. */
export const WEBHOOKREC_EXAMPLES: Record<string, OperationExamples> = {
  bcbPutWebhookRec: { body: { webhookUrl: rec.webhookUrl }, problems: { 400: 'WebhookRecOperacaoInvalida', 404: 'NaoEncontrado' } },
  bcbGetWebhookRec: { responses: { 200: rec }, problems: { 404: 'NaoEncontrado' } },
  bcbDeleteWebhookRec: { problems: { 404: 'NaoEncontrado' } },
  bcbPutWebhookCobR: { body: { webhookUrl: cobr.webhookUrl }, problems: { 400: 'WebhookCobROperacaoInvalida', 404: 'NaoEncontrado' } },
  bcbGetWebhookCobR: { responses: { 200: cobr }, problems: { 404: 'NaoEncontrado' } },
  bcbDeleteWebhookCobR: { problems: { 404: 'NaoEncontrado' } },
};
