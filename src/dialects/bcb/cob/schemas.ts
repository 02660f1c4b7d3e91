import { Type } from 'typebox';
import {
  BcbChave,
  BcbCnpj,
  BcbCobrancaStatus,
  BcbCpf,
  BcbDecimal,
  BcbDevedor,
  BcbDevedorView,
  BcbInfoAdicionais,
  BcbInfoAdicionaisView,
  BcbLoc,
  BcbLocRequest,
  BCB_CHARGE_FILTERS,
  bcbListAnswer,
  BcbPix,
  BcbSolicitacaoPagador,
  bcbListQuery,
  bcbRetirada,
} from '../schemas.ts';

const Expiracao = Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'Tempo de vida da cobrança em segundos a partir da criação (padrão 86400)' });

/** BCB's `CobValor` in a request. */
const valor = (revision: boolean) =>
  Type.Object(
    {
      original: revision ? Type.Optional(BcbDecimal('Valor original')) : BcbDecimal('Valor original (0.00 só com saque ou modalidadeAlteracao 1)'),
      modalidadeAlteracao: Type.Optional(Type.Integer({ minimum: 0, maximum: 1, description: '1: o pagador pode alterar o valor (padrão 0)' })),
      retirada: Type.Optional(bcbRetirada(false)),
    },
    { additionalProperties: false },
  );

const common = {
  devedor: Type.Optional(BcbDevedor),
  solicitacaoPagador: Type.Optional(BcbSolicitacaoPagador),
  infoAdicionais: Type.Optional(BcbInfoAdicionais),
};

/** BCB's `CobSolicitada` (PUT and POST /cob). */
export const CobSolicitada = Type.Object(
  {
    calendario: Type.Object({ expiracao: Type.Optional(Expiracao) }, { additionalProperties: false }),
    ...common,
    loc: Type.Optional(BcbLocRequest),
    valor: valor(false),
    chave: BcbChave,
  },
  { additionalProperties: false },
);

/** BCB's `CobRevisada` (PATCH /cob/{txid}). */
export const CobRevisada = Type.Object(
  {
    calendario: Type.Optional(Type.Object({ expiracao: Type.Optional(Expiracao) }, { additionalProperties: false })),
    ...common,
    loc: Type.Optional(BcbLocRequest),
    valor: Type.Optional(valor(true)),
    chave: Type.Optional(BcbChave),
    status: Type.Optional(Type.Literal('REMOVIDA_PELO_USUARIO_RECEBEDOR', { description: 'Remove a cobrança (sem outras alterações)' })),
  },
  { additionalProperties: false },
);

/** BCB's `CobCompleta` (also what CobGerada shows). */
export const CobCompleta = Type.Object({
  calendario: Type.Object({ criacao: Type.String({ format: 'date-time' }), expiracao: Type.Integer() }),
  txid: Type.String(),
  revisao: Type.Integer(),
  loc: Type.Optional(BcbLoc),
  location: Type.Optional(Type.String({ description: 'Localização do payload (sem o esquema)' })),
  status: BcbCobrancaStatus,
  devedor: Type.Optional(BcbDevedorView),
  valor: Type.Object({ original: Type.String(), modalidadeAlteracao: Type.Optional(Type.Integer()), retirada: Type.Optional(bcbRetirada(true)) }),
  chave: Type.String(),
  solicitacaoPagador: Type.Optional(Type.String()),
  infoAdicionais: Type.Optional(BcbInfoAdicionaisView),
  pixCopiaECola: Type.Optional(Type.String({ description: 'O BR Code dinâmico da cobrança (aponta para a location)' })),
  pix: Type.Optional(Type.Array(BcbPix, { description: 'O Pix que concluiu a cobrança' })),
});

export const CobQuery = Type.Object(
  { revisao: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647, description: 'Uma revisão anterior (a atual quando ausente)' })) },
  { additionalProperties: false },
);

export const CobListQuery = bcbListQuery({
  cpf: Type.Optional(BcbCpf),
  cnpj: Type.Optional(BcbCnpj),
  locationPresente: Type.Optional(Type.Boolean({ description: 'Só cobranças com (true) ou sem (false) location' })),
  status: Type.Optional(BcbCobrancaStatus),
});

/** BCB's `CobsConsultadas`. */
export const CobsConsultadas = bcbListAnswer(BCB_CHARGE_FILTERS, 'cobs', CobCompleta);
