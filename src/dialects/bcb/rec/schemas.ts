/**
 * BCB's Pix Automático recurrence (`rec`) schemas, as TypeBox: what a receiver sends
 * (RecSolicitada, RecRevisada) and what it is answered (RecGerada, RecCompleta).
 */
import { Type } from 'typebox';
import { BcbCnpj, BcbCpf, BcbDecimal, BcbTimestamp, TXID_PATTERN, bcbListAnswer, bcbListQuery } from '../schemas.ts';

const Dia = (description: string) => Type.String({ format: 'date', description });
const Periodicidade = Type.Union([Type.Literal('SEMANAL'), Type.Literal('MENSAL'), Type.Literal('TRIMESTRAL'), Type.Literal('SEMESTRAL'), Type.Literal('ANUAL')], {
  description: 'Periodicidade das cobranças',
});
const Politica = Type.Union([Type.Literal('NAO_PERMITE'), Type.Literal('PERMITE_3R_7D')], { description: 'Política de retentativa pós vencimento' });
const Status = Type.Union([Type.Literal('CRIADA'), Type.Literal('APROVADA'), Type.Literal('REJEITADA'), Type.Literal('EXPIRADA'), Type.Literal('CANCELADA')]);
const Nome = Type.String({ minLength: 1, maxLength: 140, description: 'Nome do usuário' });
const Txid = Type.String({ pattern: TXID_PATTERN, description: 'O txid da cobrança imediata da jornada 3' });

export const IdRecParams = Type.Object({ idRec: Type.String({ maxLength: 29, description: 'Id da recorrência (idRec)' }) });

export const RecSolicitada = Type.Object(
  {
    vinculo: Type.Object(
      {
        objeto: Type.Optional(Type.String({ maxLength: 35, description: 'O que o pagador reconhece nas cobranças (texto livre)' })),
        contrato: Type.String({ minLength: 1, maxLength: 35, description: 'Número ou código do contrato' }),
        devedor: Type.Object({ cpf: Type.Optional(BcbCpf), cnpj: Type.Optional(BcbCnpj), nome: Nome }, { additionalProperties: false }),
      },
      { additionalProperties: false },
    ),
    calendario: Type.Object(
      { dataInicial: Dia('Data estimada do primeiro pagamento'), dataFinal: Type.Optional(Dia('Fim da vigência (ausente: por tempo indeterminado)')), periodicidade: Periodicidade },
      { additionalProperties: false },
    ),
    valor: Type.Optional(
      Type.Object(
        { valorRec: Type.Optional(BcbDecimal('Valor fixo de cada cobrança')), valorMinimoRecebedor: Type.Optional(BcbDecimal('Piso do valor máximo que o pagador pode fixar')) },
        { additionalProperties: false },
      ),
    ),
    politicaRetentativa: Politica,
    loc: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Id de uma location de recorrência livre (POST /locrec)' })),
    recebedor: Type.Optional(Type.Object({ convenio: Type.Optional(Type.String({ maxLength: 60 })) }, { additionalProperties: false })),
    ativacao: Type.Optional(Type.Object({ dadosJornada: Type.Optional(Type.Object({ txid: Txid }, { additionalProperties: false })) }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);

export const RecRevisada = Type.Object(
  {
    status: Type.Optional(Type.Literal('CANCELADA', { description: 'Cancela a recorrência' })),
    vinculo: Type.Optional(Type.Object({ devedor: Type.Optional(Type.Object({ nome: Nome }, { additionalProperties: false })) }, { additionalProperties: false })),
    loc: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
    calendario: Type.Optional(Type.Object({ dataInicial: Type.Optional(Dia('Data estimada do primeiro pagamento')) }, { additionalProperties: false })),
    ativacao: Type.Optional(Type.Object({ dadosJornada: Type.Optional(Type.Object({ txid: Txid }, { additionalProperties: false })) }, { additionalProperties: false })),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const RecQuery = Type.Object(
  { txid: Type.Optional(Type.String({ pattern: TXID_PATTERN, description: 'Uma cobrança (cob ou cobv) para o QR composto' })) },
  { additionalProperties: false },
);

const LocRec = Type.Object({ id: Type.Integer(), location: Type.String(), tipo: Type.Literal('rec'), criacao: BcbTimestamp('Criação'), idRec: Type.String() });

/** BCB's RecGerada (POST and PATCH): the recurrence without the payer's side. */
const recFields = {
  idRec: Type.String(),
  vinculo: Type.Object({
    objeto: Type.Optional(Type.String()),
    contrato: Type.String(),
    devedor: Type.Object({ cpf: Type.Optional(Type.String()), cnpj: Type.Optional(Type.String()), nome: Type.String() }),
  }),
  calendario: Type.Object({ dataInicial: Type.String(), dataFinal: Type.Optional(Type.String()), periodicidade: Type.String() }),
  valor: Type.Optional(Type.Object({ valorRec: Type.Optional(Type.String()), valorMinimoRecebedor: Type.Optional(Type.String()) })),
  politicaRetentativa: Type.String(),
  recebedor: Type.Object({ cnpj: Type.String(), nome: Type.String(), convenio: Type.Optional(Type.String()) }),
  status: Status,
  loc: Type.Optional(LocRec),
  atualizacao: Type.Array(Type.Object({ status: Status, data: BcbTimestamp('Quando') })),
  encerramento: Type.Optional(Type.Record(Type.String(), Type.Record(Type.String(), Type.String()))),
  ativacao: Type.Object({ tipoJornada: Type.String(), dadosJornada: Type.Optional(Type.Object({ txid: Type.String() })) }),
};
export const RecGerada = Type.Object(recFields);

/** BCB's RecCompletaPesquisada (lists) and RecCompleta (GET, with dadosQR). */
export const RecPesquisada = Type.Object({ ...recFields, pagador: Type.Optional(Type.Record(Type.String(), Type.String())) });
export const RecCompleta = Type.Object({
  ...recFields,
  pagador: Type.Optional(Type.Record(Type.String(), Type.String())),
  dadosQR: Type.Optional(Type.Object({ jornada: Type.String(), pixCopiaECola: Type.String() })),
});

export const RecListQuery = bcbListQuery({
  cpf: Type.Optional(BcbCpf),
  cnpj: Type.Optional(BcbCnpj),
  locationPresente: Type.Optional(Type.Boolean({ description: 'Só recorrências com (true) ou sem (false) location' })),
  status: Type.Optional(Status),
  convenio: Type.Optional(Type.String({ maxLength: 60 })),
});
export const RecsConsultadas = bcbListAnswer(
  { cpf: Type.String(), cnpj: Type.String(), locationPresente: Type.Boolean(), status: Type.String(), recebedor: Type.Object({ convenio: Type.String() }) },
  'recs',
  RecPesquisada,
);
