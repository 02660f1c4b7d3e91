import { Type } from 'typebox';
import { BcbPaginacao } from '../schemas.ts';

/** BCB's schemas of webhooks per key (API Pix 2.9.0: WebhookSolicitado, WebhookCompleto, WebhooksConsultados). */

const DateTime = (description: string) => Type.String({ format: 'date-time', description });

export const ChaveParams = Type.Object({
  chave: Type.String({ minLength: 1, maxLength: 77, description: 'Chave DICT do recebedor (uma das chaves da conta)' }),
});

export const WebhookSolicitado = Type.Object(
  { webhookUrl: Type.String({ minLength: 1, maxLength: 2048, description: 'URL HTTPS; as notificações vão para {webhookUrl}/pix' }) },
  { additionalProperties: false },
);

export const WebhookCompleto = Type.Object({
  webhookUrl: Type.String(),
  chave: Type.String({ description: 'Chave DICT do recebedor' }),
  criacao: DateTime('Data e hora em que o webhook foi cadastrado'),
});

export const WebhookQuery = Type.Object(
  {
    inicio: Type.Optional(DateTime('Só webhooks criados a partir de (RFC 3339)')),
    fim: Type.Optional(DateTime('Só webhooks criados até (RFC 3339)')),
    'paginacao.paginaAtual': Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 })),
    'paginacao.itensPorPagina': Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  },
  { additionalProperties: false },
);

export const WebhooksConsultados = Type.Object({
  parametros: Type.Object({ inicio: Type.Optional(Type.String()), fim: Type.Optional(Type.String()), paginacao: BcbPaginacao }),
  webhooks: Type.Array(WebhookCompleto),
});
