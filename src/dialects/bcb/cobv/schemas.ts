/**
 * BCB's schemas of due-date charges (API Pix 2.9.0: CobVSolicitada, CobVRevisada, CobVCompleta,
 * CobsVConsultadas) as TypeBox, for validation and the OpenAPI document. Requests are closed
 * (`additionalProperties: false`); answers list every field they carry, so that nothing is lost.
 */
import { Type, type TSchema } from 'typebox';
import { BCB_CHARGE_FILTERS, BcbCobrancaStatus, BcbDecimal, BcbLoc, BcbPix, bcbListAnswer } from '../schemas.ts';

const closed = { additionalProperties: false } as const;

export const Timestamp = (description: string) => Type.String({ format: 'date-time', description });
const Day = (description: string) => Type.String({ format: 'date', description });

export const InfoAdicional = Type.Object({ nome: Type.String({ maxLength: 50 }), valor: Type.String({ maxLength: 200 }) }, closed);

const address = {
  logradouro: Type.Optional(Type.String({ maxLength: 200 })),
  cidade: Type.Optional(Type.String({ maxLength: 200 })),
  uf: Type.Optional(Type.String({ maxLength: 2 })),
  cep: Type.Optional(Type.String({ maxLength: 8 })),
};
const identity = {
  cpf: Type.Optional(Type.String({ pattern: '^\\d{11}$', description: 'CPF do devedor' })),
  cnpj: Type.Optional(Type.String({ pattern: '^[0-9A-Z]{14}$', description: 'CNPJ do devedor' })),
  nome: Type.String({ minLength: 1, maxLength: 200 }),
};

/** BCB's devedor of a cobv: nome and exactly one of cpf or cnpj, with an optional address and e-mail. */
export const Devedor = Type.Object(
  { ...identity, email: Type.Optional(Type.String({ maxLength: 200 })), ...address },
  { ...closed, not: { required: ['cpf', 'cnpj'] }, description: 'nome e exatamente um de cpf ou cnpj' },
);

const rule = (max: number, description: string) =>
  Type.Object({ modalidade: Type.Integer({ minimum: 1, maximum: max, description }), valorPerc: BcbDecimal('Valor ou percentual') }, closed);
const Desconto = Type.Object(
  {
    modalidade: Type.Integer({ minimum: 1, maximum: 6, description: '1, 2: até as datas de descontoDataFixa; 3 a 6: por dia de antecipação (valorPerc)' }),
    descontoDataFixa: Type.Optional(
      Type.Array(Type.Object({ data: Day('Até esta data, inclusive (no máximo a de vencimento)'), valorPerc: BcbDecimal('Valor ou percentual') }, closed), {
        minItems: 1,
        maxItems: 3,
      }),
    ),
    valorPerc: Type.Optional(BcbDecimal('Valor ou percentual por dia de antecipação')),
  },
  closed,
);
const ruleFields = {
  multa: Type.Optional(rule(2, '1: valor fixo; 2: percentual')),
  juros: Type.Optional(rule(8, '1 a 4: valor, % ao dia, ao mês, ao ano (dias corridos); 5 a 8: o mesmo em dias úteis')),
  abatimento: Type.Optional(rule(2, '1: valor fixo; 2: percentual')),
  desconto: Type.Optional(Desconto),
};

/** The fields of PUT /cobv/{txid}; in PATCH every one is optional. */
function cobvFields(revision: boolean) {
  const opt = <T extends TSchema>(schema: T) => (revision ? Type.Optional(schema) : schema);
  return {
    calendario: opt(
      Type.Object(
        {
          dataDeVencimento: opt(Day('Data de vencimento (America/Sao_Paulo)')),
          validadeAposVencimento: Type.Optional(Type.Integer({ minimum: 0, maximum: 3650, description: 'Dias corridos após o vencimento (padrão 30)' })),
        },
        closed,
      ),
    ),
    devedor: opt(Devedor),
    loc: Type.Optional(Type.Object({ id: Type.Integer({ minimum: 1 }), tipoCob: Type.Optional(Type.Literal('cobv')) }, closed)),
    valor: opt(Type.Object({ original: opt(BcbDecimal('Valor original, maior que zero')), ...ruleFields }, closed)),
    chave: opt(Type.String({ minLength: 1, maxLength: 77, description: 'Uma chave Pix da conta' })),
    solicitacaoPagador: Type.Optional(Type.String({ maxLength: 140 })),
    infoAdicionais: Type.Optional(Type.Array(InfoAdicional, { maxItems: 50 })),
  };
}

export const CobVSolicitada = Type.Object(cobvFields(false), closed);
export const CobVRevisada = Type.Object(
  { ...cobvFields(true), status: Type.Optional(Type.Literal('REMOVIDA_PELO_USUARIO_RECEBEDOR', { description: 'Remove a cobrança (sozinho)' })) },
  closed,
);

const AnswerRule = Type.Object({ modalidade: Type.Integer(), valorPerc: Type.String() });

/** BCB's CobVCompleta. */
export const CobV = Type.Object({
  calendario: Type.Object({ criacao: Timestamp('Criação'), dataDeVencimento: Type.String(), validadeAposVencimento: Type.Integer() }),
  txid: Type.String(),
  revisao: Type.Integer(),
  loc: Type.Optional(BcbLoc),
  location: Type.String({
    description: 'O mesmo que loc.location; "" numa cobrança desvinculada da sua location (DELETE /loc/{id}/txid), já que CobVGerada exige o campo',
  }),
  status: BcbCobrancaStatus,
  devedor: Type.Object({ cpf: Type.Optional(Type.String()), cnpj: Type.Optional(Type.String()), nome: Type.String(), email: Type.Optional(Type.String()), ...address }),
  recebedor: Type.Object({
    cpf: Type.Optional(Type.String()),
    cnpj: Type.Optional(Type.String()),
    nome: Type.String(),
    logradouro: Type.String(),
    cidade: Type.String(),
    uf: Type.String(),
    cep: Type.String(),
  }),
  valor: Type.Object({
    original: Type.String(),
    multa: Type.Optional(AnswerRule),
    juros: Type.Optional(AnswerRule),
    abatimento: Type.Optional(AnswerRule),
    desconto: Type.Optional(
      Type.Object({
        modalidade: Type.Integer(),
        descontoDataFixa: Type.Optional(Type.Array(Type.Object({ data: Type.String(), valorPerc: Type.String() }))),
        valorPerc: Type.Optional(Type.String()),
      }),
    ),
  }),
  chave: Type.String(),
  solicitacaoPagador: Type.Optional(Type.String()),
  infoAdicionais: Type.Optional(Type.Array(Type.Object({ nome: Type.String(), valor: Type.String() }))),
  pixCopiaECola: Type.Optional(Type.String({ description: 'O BR Code dinâmico da cobrança (aponta para a location); ausente sem location' })),
  pix: Type.Optional(Type.Array(BcbPix, { description: 'O Pix que concluiu a cobrança, com seus componentes e devoluções' })),
});

export const CobsVConsultadas = bcbListAnswer(BCB_CHARGE_FILTERS, 'cobs', CobV);

export const CobVListQuery = Type.Object(
  {
    inicio: Timestamp('Criadas a partir deste instante (RFC 3339)'),
    fim: Timestamp('Criadas até este instante (no máximo 31 dias após inicio)'),
    cpf: Type.Optional(Type.String({ pattern: '^\\d{11}$' })),
    cnpj: Type.Optional(Type.String({ pattern: '^[0-9A-Z]{14}$' })),
    locationPresente: Type.Optional(Type.Boolean()),
    status: Type.Optional(BcbCobrancaStatus),
    loteCobVId: Type.Optional(Type.Integer({ minimum: 0, maximum: 9_007_199_254_740_991 })),
    'paginacao.paginaAtual': Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
    'paginacao.itensPorPagina': Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  },
  closed,
);
