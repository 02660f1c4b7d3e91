/**
 * BCB's recurring charge (`cobr`) schemas, as TypeBox: what a receiver sends (CobRSolicitada,
 * CobRRevisada) and what it is answered (CobRGerada, CobRCompleta, CobsRConsultadas).
 */
import { Type } from 'typebox';
import { StringEnum } from '../../../http/schemas.ts';
import { BcbCnpj, BcbCpf, BcbDecimal, BcbTimestamp, BcbTxid, bcbListAnswer, bcbListQuery } from '../schemas.ts';

const Dia = (description: string) => Type.String({ format: 'date', description });
const IdRec = Type.String({ pattern: '^[a-zA-Z0-9]{29}$', description: 'Id da recorrência (idRec)' });
const Status = StringEnum(['CRIADA', 'ATIVA', 'CONCLUIDA', 'EXPIRADA', 'REJEITADA', 'CANCELADA'] as const);
const TentativaStatus = StringEnum(['SOLICITADA', 'AGENDADA', 'PAGA', 'CANCELADA', 'REJEITADA', 'EXPIRADA'] as const);

export const CobRTxidParams = Type.Object({ txid: BcbTxid });
export const CobRRetryParams = Type.Object({ txid: BcbTxid, data: Type.String({ format: 'date', description: 'Data prevista para a liquidação da nova tentativa (AAAA-MM-DD)' }) });

const Devedor = Type.Object(
  {
    email: Type.Optional(Type.String({ maxLength: 140, description: 'E-mail do devedor' })),
    logradouro: Type.Optional(Type.String({ maxLength: 200 })),
    cidade: Type.Optional(Type.String({ maxLength: 200 })),
    uf: Type.Optional(Type.String({ minLength: 2, maxLength: 2 })),
    cep: Type.Optional(Type.String({ maxLength: 9 })),
  },
  { additionalProperties: false },
);

const Recebedor = Type.Object(
  {
    agencia: Type.Optional(Type.String({ maxLength: 4, description: 'Agência da conta do usuário recebedor' })),
    conta: Type.String({ minLength: 1, maxLength: 20, description: 'Conta do usuário recebedor: a da conta que cobra' }),
    tipoConta: Type.Union([Type.Literal('CORRENTE'), Type.Literal('POUPANCA'), Type.Literal('PAGAMENTO')], { description: 'Tipo da conta do usuário recebedor' }),
  },
  { additionalProperties: false },
);

export const CobRSolicitada = Type.Object(
  {
    idRec: IdRec,
    infoAdicional: Type.Optional(Type.String({ maxLength: 140, description: 'Informações adicionais da fatura' })),
    calendario: Type.Object({ dataDeVencimento: Dia('Vencimento: liquidada nesse dia (ou no próximo dia útil, com ajusteDiaUtil)') }, { additionalProperties: false }),
    valor: Type.Object({ original: BcbDecimal('Valor da cobrança') }, { additionalProperties: false }),
    ajusteDiaUtil: Type.Optional(Type.Boolean({ default: true, description: 'Liquidação no próximo dia útil quando o vencimento cai em dia não útil (feriados nacionais)' })),
    devedor: Type.Optional(Devedor),
    recebedor: Recebedor,
  },
  { additionalProperties: false },
);

export const CobRRevisada = Type.Object({ status: Type.Literal('CANCELADA', { description: 'Cancela a cobrança recorrente' }) }, { additionalProperties: false });

const Rejeicao = Type.Object({ codigo: Type.String(), descricao: Type.String() });
const Tentativa = Type.Object({
  dataLiquidacao: Type.String({ format: 'date' }),
  tipo: Type.Union([Type.Literal('AGND'), Type.Literal('NTAG'), Type.Literal('RIFL')]),
  status: TentativaStatus,
  endToEndId: Type.String(),
  atualizacao: Type.Array(Type.Object({ status: TentativaStatus, data: BcbTimestamp('Quando') })),
  rejeicao: Type.Optional(Rejeicao),
});
const PixAutomatico = Type.Object({ endToEndId: Type.String(), txid: Type.Optional(Type.String()), valor: Type.String(), horario: BcbTimestamp('Horário'), infoPagador: Type.Optional(Type.String()) });

const cobrFields = {
  idRec: Type.String(),
  txid: Type.String(),
  infoAdicional: Type.Optional(Type.String()),
  calendario: Type.Object({ criacao: Type.String({ format: 'date' }), dataDeVencimento: Type.String({ format: 'date' }) }),
  valor: Type.Object({ original: Type.String() }),
  status: Status,
  politicaRetentativa: Type.String(),
  ajusteDiaUtil: Type.Boolean(),
  devedor: Type.Optional(Type.Record(Type.String(), Type.String())),
  recebedor: Type.Object({ cnpj: Type.String(), nome: Type.String(), agencia: Type.Optional(Type.String()), conta: Type.String(), tipoConta: Type.String() }),
  atualizacao: Type.Array(Type.Object({ status: Status, data: BcbTimestamp('Quando') })),
  encerramento: Type.Optional(Type.Record(Type.String(), Type.Record(Type.String(), Type.String()))),
};

/** BCB's CobRGerada (PUT, POST, PATCH). */
export const CobRGerada = Type.Object(cobrFields);
/** BCB's CobRCompleta (GET, the list, a retry): with its attempts and the Pix that paid it. */
export const CobRCompleta = Type.Object({ ...cobrFields, tentativas: Type.Optional(Type.Array(Tentativa)), pix: Type.Optional(Type.Array(PixAutomatico)) });

export const CobRListQuery = bcbListQuery({
  idRec: Type.Optional(IdRec),
  cpf: Type.Optional(BcbCpf),
  cnpj: Type.Optional(BcbCnpj),
  status: Type.Optional(Status),
  convenio: Type.Optional(Type.String({ maxLength: 60 })),
});
export const CobsRConsultadas = bcbListAnswer(
  { idRec: Type.String(), cpf: Type.String(), cnpj: Type.String(), status: Type.String(), recebedor: Type.Object({ convenio: Type.String() }) },
  'cobsr',
  CobRCompleta,
);
