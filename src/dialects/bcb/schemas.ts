/**
 * Pieces of BCB's API Pix 2.9 schemas that several groups of `/v2` operations share, as TypeBox
 * (inline, so that each route's schema stands alone in the OpenAPI document). Inputs forbid
 * unknown properties; answers list every field they may carry (the serializer drops the rest).
 */
import { Type, type TArray, type TOptional, type TSchema } from 'typebox';
import type { Scope } from '../../modules/auth/scopes.ts';

/** BCB's `TxId` of a charge: 26 to 35 characters of [a-zA-Z0-9]. */
export const TXID_PATTERN = '^[a-zA-Z0-9]{26,35}$';
export const BcbTxid = Type.String({ pattern: TXID_PATTERN, description: 'Identificador da transação: 26 a 35 caracteres [a-zA-Z0-9]' });
export const BcbTxidParams = Type.Object({ txid: BcbTxid });

/** A received Pix's txid: 1 to 35 characters. */
export const BcbPixTxid = Type.String({ pattern: '^[a-zA-Z0-9]{1,35}$' });

/** Money as BCB writes it: a decimal string with 2 places (`"10.00"`). */
export const VALOR_PATTERN = '^\\d{1,10}\\.\\d{2}$';
export const BcbDecimal = (description: string) => Type.String({ pattern: VALOR_PATTERN, description });

export const BcbCpf = Type.String({ pattern: '^\\d{11}$', description: 'CPF: 11 dígitos' });
export const BcbCnpj = Type.String({ pattern: '^[0-9A-Z]{14}$', description: 'CNPJ: 14 caracteres (CNPJ alfanumérico incluído)' });

/**
 * BCB's `devedor` (PessoaFisica or PessoaJuridica): `nome` and exactly one of `cpf` or `cnpj`.
 * Both is the schema's to refuse, with the request's other schema violations; neither, and wrong
 * check digits, the core's.
 */
export const BcbDevedor = Type.Object(
  { cpf: Type.Optional(BcbCpf), cnpj: Type.Optional(BcbCnpj), nome: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false, not: { required: ['cpf', 'cnpj'] }, description: 'O devedor: nome e cpf (Pessoa Física) ou cnpj (Pessoa Jurídica)' },
);
export const BcbDevedorView = Type.Object({ cpf: Type.Optional(Type.String()), cnpj: Type.Optional(Type.String()), nome: Type.String() });

export const BcbChave = Type.String({ minLength: 1, maxLength: 77, description: 'Chave DICT do recebedor (uma das chaves da conta)' });
export const BcbSolicitacaoPagador = Type.String({ maxLength: 140, description: 'Texto apresentado ao pagador' });

/** BCB's `infoAdicionais`: up to 50 pairs of nome and valor. */
export const BcbInfoAdicionais = Type.Array(
  Type.Object({ nome: Type.String({ minLength: 1, maxLength: 50 }), valor: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
  { maxItems: 50, description: 'Informações adicionais apresentadas ao pagador' },
);
export const BcbInfoAdicionaisView = Type.Array(Type.Object({ nome: Type.String(), valor: Type.String() }));

export const BcbTipoCob = Type.Union([Type.Literal('cob'), Type.Literal('cobv')], { description: 'Tipo da cobrança' });

/** BCB's `CobrancaStatus`. */
export const BcbCobrancaStatus = Type.Union([
  Type.Literal('ATIVA'),
  Type.Literal('CONCLUIDA'),
  Type.Literal('REMOVIDA_PELO_USUARIO_RECEBEDOR'),
  Type.Literal('REMOVIDA_PELO_PSP'),
]);

/** BCB's `PayloadLocation` (with `txid` while it serves a charge: `PayloadLocationCompleta`). */
export const BcbLoc = Type.Object({
  id: Type.Integer({ description: 'Identificador da location' }),
  txid: Type.Optional(BcbTxid),
  location: Type.String({ maxLength: 77, description: 'Localização do payload (sem o esquema)' }),
  tipoCob: BcbTipoCob,
  criacao: Type.String({ format: 'date-time', description: 'Criação da location (RFC 3339)' }),
});

/** `loc` in a request: an unused location of the account (`PayloadLocationCob`). */
export const BcbLocRequest = Type.Object(
  { id: Type.Integer({ minimum: 1, description: 'Id de uma location da conta, livre' }), tipoCob: Type.Optional(BcbTipoCob) },
  { additionalProperties: false },
);

/** One branch of `valor.retirada` (saque or troco), as CobValor declares it. */
const retiradaItem = (agentes: readonly string[], view: boolean) =>
  Type.Object(
    {
      valor: view ? Type.String() : BcbDecimal('Valor da retirada'),
      modalidadeAlteracao: Type.Optional(view ? Type.Integer() : Type.Integer({ minimum: 0, maximum: 1, description: '1: o valor da retirada pode ser alterado' })),
      modalidadeAgente: view ? Type.String() : Type.Union(agentes.map((a) => Type.Literal(a)), { description: 'Modalidade do agente' }),
      prestadorDoServicoDeSaque: view ? Type.String() : Type.String({ pattern: '^[0-9A-Z]{8}$', description: 'ISPB do facilitador de serviço de saque' }),
    },
    view ? {} : { additionalProperties: false },
  );

/** `valor.retirada`: a Pix Saque or a Pix Troco (the core checks the rules between them and valor). */
export const bcbRetirada = (view: boolean) =>
  Type.Object(
    { saque: Type.Optional(retiradaItem(['AGTEC', 'AGTOT', 'AGPSS'], view)), troco: Type.Optional(retiradaItem(['AGTEC', 'AGTOT'], view)) },
    view ? {} : { additionalProperties: false, description: 'Retirada: exatamente um de saque ou troco' },
  );

/** BCB's `Paginacao` of an answer. */
export const BcbPaginacao = Type.Object({
  paginaAtual: Type.Integer({ minimum: 0 }),
  itensPorPagina: Type.Integer({ minimum: 1 }),
  quantidadeDePaginas: Type.Integer({ minimum: 1 }),
  quantidadeTotalDeItens: Type.Integer({ minimum: 0 }),
});

/** The paging of a list answer as BCB's `Paginacao` has it: at least one page, even an empty one. */
export function bcbPaginacao(p: { paginaAtual: number; itensPorPagina: number; quantidadeDePaginas: number; quantidadeTotalDeItens: number }) {
  return { ...p, quantidadeDePaginas: Math.max(1, p.quantidadeDePaginas) };
}

/** The query parameters every BCB list takes: `inicio`, `fim` (RFC 3339) and the paging. */
export const bcbListQuery = <T extends Record<string, TSchema>>(filters: T) =>
  Type.Object(
    {
      inicio: Type.String({ format: 'date-time', description: 'Início do intervalo de criação (inclusive), RFC 3339' }),
      fim: Type.String({ format: 'date-time', description: 'Fim do intervalo de criação (inclusive), RFC 3339; no máximo 31 dias após o início' }),
      ...filters,
      'paginacao.paginaAtual': Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'Página (a partir de 0)' })),
      'paginacao.itensPorPagina': Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Itens por página (padrão 100)' })),
    },
    { additionalProperties: false },
  );

/** An instant, RFC 3339, with what it is. */
export const BcbTimestamp = (description: string) => Type.String({ format: 'date-time', description });

/** The filters of a list as its answer repeats them in `parametros`: each optional. */
export const bcbListFilters = <T extends Record<string, TSchema>>(filters: T) =>
  Object.fromEntries(Object.entries(filters).map(([name, schema]) => [name, Type.Optional(schema)])) as { [K in keyof T]: TOptional<T[K]> };

/**
 * BCB's answer to a list: `parametros`, what was asked (the interval, the filters given, the
 * page), and the items under the list's own key (`cobs`, `pix`, `loc`...).
 */
export const bcbListAnswer = <F extends Record<string, TSchema>, K extends string, I extends TSchema>(filters: F, key: K, item: I) =>
  Type.Object({
    parametros: Type.Object({ inicio: BcbTimestamp('Início'), fim: BcbTimestamp('Fim'), ...bcbListFilters(filters), paginacao: BcbPaginacao }),
    ...({ [key]: Type.Array(item) } as { [P in K]: TArray<I> }),
  });

/** The filters of a charge list (`cob`, `cobv`). */
export const BCB_CHARGE_FILTERS = { cpf: Type.String(), cnpj: Type.String(), locationPresente: Type.Boolean(), status: Type.String() };

/** BCB's `Devolucao`: a refund of a received Pix. */
export const BcbDevolucao = Type.Object({
  id: Type.String(),
  rtrId: Type.String(),
  valor: Type.String(),
  natureza: Type.Optional(Type.String()),
  descricao: Type.Optional(Type.String()),
  horario: Type.Object({ solicitacao: Type.Optional(Type.String({ format: 'date-time' })), liquidacao: Type.Optional(Type.String({ format: 'date-time' })) }),
  status: Type.Union([Type.Literal('EM_PROCESSAMENTO'), Type.Literal('DEVOLVIDO'), Type.Literal('NAO_REALIZADO')]),
  motivo: Type.Optional(Type.String()),
});

const componente = Type.Object({
  valor: Type.String(),
  modalidadeAgente: Type.Optional(Type.String()),
  prestadorDoServicoDeSaque: Type.Optional(Type.String()),
});

/** BCB's `Pix`: a received Pix, with its value components and refunds. */
export const BcbPix = Type.Object({
  endToEndId: Type.String(),
  txid: Type.Optional(Type.String()),
  valor: Type.String(),
  componentesValor: Type.Optional(
    Type.Object({
      original: Type.Optional(componente),
      saque: Type.Optional(componente),
      troco: Type.Optional(componente),
      juros: Type.Optional(componente),
      multa: Type.Optional(componente),
      abatimento: Type.Optional(componente),
      desconto: Type.Optional(componente),
    }),
  ),
  chave: Type.Optional(Type.String()),
  horario: Type.String({ format: 'date-time' }),
  infoPagador: Type.Optional(Type.String()),
  devolucoes: Type.Optional(Type.Array(BcbDevolucao)),
});

/** The OAuth 2.0 scope an operation requires, as its `security` entry. */
export const bcbSecurity = (scope: Scope) => [{ oauth2: [scope] }];

/** A list's answer: the list's `parametros` with BCB's paging, and each row as its view shows it under the list's key. */
export function bcbListBody<P extends { paginacao: Parameters<typeof bcbPaginacao>[0] }, R, V, K extends string>(list: { parametros: P; rows: readonly R[] }, key: K, view: (row: R) => V) {
  return { parametros: { ...list.parametros, paginacao: bcbPaginacao(list.parametros.paginacao) }, ...({ [key]: list.rows.map(view) } as { [Q in K]: V[] }) };
}
