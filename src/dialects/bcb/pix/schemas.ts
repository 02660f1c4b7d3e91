import { Type } from 'typebox';
import { bcbListAnswer, VALOR_PATTERN } from '../schemas.ts';

/** BCB's schemas of received Pix and refunds (API Pix 2.9.0: Pix, Devolucao, DevolucaoSolicitada, PixConsultados). */

const Valor = (description: string) => Type.String({ pattern: VALOR_PATTERN, description });
const DateTime = (description: string) => Type.String({ format: 'date-time', description });

const E2eParams = Type.Object({
  e2eid: Type.String({ pattern: '^[a-zA-Z0-9]{32}$', minLength: 32, maxLength: 32, description: 'EndToEndIdentification do Pix recebido' }),
});

export const DevolucaoParams = Type.Object({
  e2eid: E2eParams.properties.e2eid,
  id: Type.String({ pattern: '^[a-zA-Z0-9]{1,35}$', description: 'Id gerado pelo cliente para representar unicamente uma devolução' }),
});

/**
 * A read names what it looks for without a 400 (BCB declares none for these reads): an id that
 * cannot exist is simply not found (404).
 */
export const PixReadParams = Type.Object({
  e2eid: Type.String({ minLength: 1, maxLength: 64, description: 'EndToEndIdentification do Pix recebido (32 caracteres)' }),
});

/** Reading also finds the refund an accepted MED made, whose id is MED-{medId}. */
export const DevolucaoReadParams = Type.Object({
  e2eid: PixReadParams.properties.e2eid,
  id: Type.String({ minLength: 1, maxLength: 64, description: 'Id da devolução (MED-{id} para a devolução de um MED aceito)' }),
});

export const DevolucaoSolicitada = Type.Object(
  {
    valor: Valor('Valor solicitado para devolução. A soma das devoluções não ultrapassa o valor do Pix.'),
    natureza: Type.Optional(
      Type.Union([Type.Literal('ORIGINAL'), Type.Literal('RETIRADA')], {
        description: 'ORIGINAL (padrão): Pix comum ou valor da compra de um Pix Troco; RETIRADA: Pix Saque ou valor do troco',
      }),
    ),
    descricao: Type.Optional(Type.String({ maxLength: 140, description: 'Mensagem ao pagador relativa à devolução' })),
  },
  { additionalProperties: false },
);

export const Devolucao = Type.Object({
  id: Type.String({ description: 'Id da devolução' }),
  rtrId: Type.String({ pattern: '^[a-zA-Z0-9]{32}$', description: 'ReturnIdentification da PACS004' }),
  valor: Valor('Valor a devolver'),
  natureza: Type.Optional(
    Type.Union([Type.Literal('ORIGINAL'), Type.Literal('RETIRADA'), Type.Literal('MED_OPERACIONAL'), Type.Literal('MED_FRAUDE')]),
  ),
  descricao: Type.Optional(Type.String({ maxLength: 140 })),
  horario: Type.Object({
    solicitacao: Type.Optional(DateTime('Horário no qual a devolução foi solicitada')),
    liquidacao: Type.Optional(DateTime('Horário no qual a devolução foi liquidada')),
  }),
  status: Type.Union([Type.Literal('EM_PROCESSAMENTO'), Type.Literal('DEVOLVIDO'), Type.Literal('NAO_REALIZADO')]),
  motivo: Type.Optional(Type.String({ maxLength: 140, description: 'Por que a devolução atingiu o status (NAO_REALIZADO)' })),
});

const Part = Type.Object({ valor: Valor('Valor do componente') });
const Withdrawal = Type.Object({
  valor: Valor('Valor do saque ou do troco'),
  modalidadeAgente: Type.Optional(Type.String({ description: 'AGTEC, AGTOT ou AGPSS (sempre presente)' })),
  prestadorDoServicoDeSaque: Type.Optional(Type.String({ pattern: '^[0-9A-Z]{8}$', description: 'ISPB do Facilitador de Serviço de Saque' })),
});

export const Pix = Type.Object({
  endToEndId: Type.String({ description: 'EndToEndIdentification da PACS008' }),
  txid: Type.Optional(Type.String({ description: 'Identificador da transação (da cobrança paga)' })),
  valor: Valor('Valor do Pix'),
  componentesValor: Type.Optional(
    Type.Object(
      {
        original: Type.Optional(Part),
        saque: Type.Optional(Withdrawal),
        troco: Type.Optional(Withdrawal),
        juros: Type.Optional(Part),
        multa: Type.Optional(Part),
        abatimento: Type.Optional(Part),
        desconto: Type.Optional(Part),
      },
      { description: 'Composição do valor: original + saque + troco + multa + juros − abatimento − desconto' },
    ),
  ),
  chave: Type.Optional(Type.String({ maxLength: 77, description: 'Chave DICT do recebedor' })),
  horario: DateTime('Horário em que o Pix foi processado'),
  infoPagador: Type.Optional(Type.String({ maxLength: 140, description: 'Informação livre do pagador' })),
  devolucoes: Type.Optional(Type.Array(Devolucao)),
});

export const PixQuery = Type.Object(
  {
    inicio: DateTime('Início do intervalo (RFC 3339), inclusivo'),
    fim: DateTime('Fim do intervalo (RFC 3339), inclusivo; no máximo 31 dias depois do início'),
    txid: Type.Optional(Type.String({ pattern: '^[a-zA-Z0-9]{1,35}$' })),
    txIdPresente: Type.Optional(Type.Boolean({ description: 'Só Pix com (true) ou sem (false) txid' })),
    devolucaoPresente: Type.Optional(Type.Boolean({ description: 'Só Pix com (true) ou sem (false) devolução' })),
    cpf: Type.Optional(Type.String({ pattern: '^\\d{11}$', description: 'CPF do pagador (não junto com cnpj)' })),
    cnpj: Type.Optional(Type.String({ pattern: '^[0-9A-Z]{14}$', description: 'CNPJ do pagador (não junto com cpf)' })),
    'paginacao.paginaAtual': Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 })),
    'paginacao.itensPorPagina': Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  },
  { additionalProperties: false },
);

export const PixConsultados = bcbListAnswer({ txid: Type.String(), txIdPresente: Type.Boolean(), devolucaoPresente: Type.Boolean(), cpf: Type.String(), cnpj: Type.String() }, 'pix', Pix);

/** BCB's `Paginacao` of a page: at least one page even when nothing matches. */
export function paginacao(paginaAtual: number, itensPorPagina: number, total: number) {
  return { paginaAtual, itensPorPagina, quantidadeDePaginas: Math.max(1, Math.ceil(total / itensPorPagina)), quantidadeTotalDeItens: total };
}
