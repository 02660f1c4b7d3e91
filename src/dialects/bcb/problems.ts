import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static, type TSchema } from 'typebox';

/**
 * BCB's error types (API Pix 2.9.0, "Tratamento de erros"), each with the status and title the
 * specification gives it. The general ones answer any `/v2` operation; the others are raised by
 * the operation they belong to. Decision: docs/decisions/0030-bcb-dialect-problems.md.
 */
export const PROBLEM_TYPES = {
  RequisicaoInvalida: { status: 400, title: 'Requisição Inválida' },
  AcessoNegado: { status: 403, title: 'Acesso Negado' },
  NaoEncontrado: { status: 404, title: 'Não Encontrado' },
  PermanentementeRemovido: { status: 410, title: 'Permanentemente Removido' },
  ErroInternoDoServidor: { status: 500, title: 'Erro Interno do Servidor' },
  ServicoIndisponivel: { status: 503, title: 'Serviço Indisponível' },

  CobOperacaoInvalida: { status: 400, title: 'Cobrança inválida.' },
  CobNaoEncontrado: { status: 404, title: 'Cobrança não encontrada.' },
  CobConsultaInvalida: { status: 400, title: 'Consulta inválida.' },
  CobVOperacaoInvalida: { status: 400, title: 'Cobrança inválida.' },
  CobVNaoEncontrada: { status: 404, title: 'Cobrança não encontrada.' },
  CobVConsultaInvalida: { status: 400, title: 'Consulta inválida.' },
  LoteCobVOperacaoInvalida: { status: 400, title: 'Lote de cobranças inválido.' },
  LoteCobVNaoEncontrado: { status: 404, title: 'Lote de cobranças não encontrado.' },
  LoteCobVConsultaInvalida: { status: 400, title: 'Consulta inválida.' },
  PayloadLocationOperacaoInvalida: { status: 400, title: 'PayloadLocation inválido.' },
  PayloadLocationNaoEncontrado: { status: 404, title: 'PayloadLocation não encontrado.' },
  PayloadLocationConsultaInvalida: { status: 400, title: 'Consulta inválida.' },
  CobPayloadNaoEncontrado: { status: 404, title: 'Cobrança não encontrada.' },
  CobPayloadOperacaoInvalida: { status: 400, title: 'Cobrança inválida.' },
  PixDevolucaoInvalida: { status: 400, title: 'Devolução inválida.' },
  PixNaoEncontrado: { status: 404, title: 'Pix não encontrado.' },
  PixDevolucaoNaoEncontrada: { status: 404, title: 'Devolução não encontrada.' },
  PixConsultaInvalida: { status: 400, title: 'Consulta inválida.' },
  WebhookOperacaoInvalida: { status: 400, title: 'Webhook inválido.' },
  WebhookNaoEncontrado: { status: 404, title: 'Webhook não encontrado.' },
  PayloadLocationRecNaoEncontrado: { status: 404, title: 'Location não encontrada.' },
  PayloadLocationRecConsultaInvalida: { status: 400, title: 'Consulta inválida.' },
  RecNaoEncontrada: { status: 404, title: 'Recorrência não encontrada.' },
  RecOperacaoInvalida: { status: 400, title: 'Operação inválida.' },
  RecConsultaInvalida: { status: 400, title: 'Consulta inválida.' },
  RecPayloadNaoEncontrado: { status: 404, title: 'Recorrência não encontrada.' },
  RecPayloadOperacaoInvalida: { status: 400, title: 'Recorrência não encontrada.' },
  SolicRecNaoEncontrada: { status: 404, title: 'Solicitação de recorrência não encontrada.' },
  SolicRecOperacaoInvalida: { status: 400, title: 'Operação inválida.' },
  CobRNaoEncontrado: { status: 404, title: 'Cobrança não encontrada.' },
  CobROperacaoInvalida: { status: 400, title: 'Operação inválida.' },
  CobRConsultaInvalida: { status: 400, title: 'Consulta inválida.' },
  WebhookRecOperacaoInvalida: { status: 400, title: 'Webhook inválido.' },
  WebhookCobROperacaoInvalida: { status: 400, title: 'Webhook inválido.' },
} as const satisfies Record<string, { readonly status: number; readonly title: string }>;

export type ProblemName = keyof typeof PROBLEM_TYPES;

export const PROBLEM_TYPE_BASE = 'https://pix.bcb.gov.br/api/v2/error/';
export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';

/** BCB's `Violacao`: one field that does not match the schema. */
export const ViolacaoSchema = Type.Object(
  {
    razao: Type.Optional(Type.String({ description: 'Descrição do erro' })),
    propriedade: Type.Optional(Type.String({ description: 'Nome da propriedade (caminho com pontos: valor.original)' })),
    valor: Type.Optional(Type.String({ description: 'Valor da propriedade' })),
  },
  { $id: 'Violacao', title: 'Violações' },
);
export type Violacao = Static<typeof ViolacaoSchema>;

/** BCB's `Problema` (RFC 7807), with the request id as `correlationId`. */
export const ProblemaSchema = Type.Object(
  {
    type: Type.String({ format: 'uri', description: 'https://pix.bcb.gov.br/api/v2/error/<TipoErro>' }),
    title: Type.String({ description: 'Descrição resumida do problema.' }),
    status: Type.Integer({ description: 'Código HTTP do status retornado.' }),
    detail: Type.Optional(Type.String({ description: 'Descrição completa do problema.' })),
    correlationId: Type.Optional(Type.String({ description: 'Identificador de correlação (o x-request-id da resposta)' })),
    violacoes: Type.Optional(Type.Array(Type.Ref('Violacao'))),
  },
  { $id: 'Problema', title: 'Problema', required: ['type', 'title', 'status'] },
);
/** The schema's type, with its `Violacao` reference resolved. */
export type Problema = Omit<Static<typeof ProblemaSchema>, 'violacoes'> & { violacoes?: Violacao[] };

/** Shared schemas a server adds once (`addSchema`), so routes and the OpenAPI document can refer to them. */
export const PROBLEM_SCHEMAS: readonly TSchema[] = [ViolacaoSchema, ProblemaSchema];

/**
 * A problem an operation raises: `throw problem('CobNaoEncontrado', 'Cobrança não encontrada ...')`.
 * The status is BCB's for the type unless given (PermanentementeRemovido-like cases of a payload type).
 */
export class BcbProblem extends Error {
  override name = 'BcbProblem';
  readonly problemName: ProblemName;
  readonly status: number;
  readonly violacoes: readonly Violacao[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(
    problemName: ProblemName,
    detail: string,
    options: { status?: number; violacoes?: readonly Violacao[]; headers?: Record<string, string> } = {},
  ) {
    super(detail);
    this.problemName = problemName;
    this.status = options.status ?? PROBLEM_TYPES[problemName].status;
    this.violacoes = options.violacoes;
    this.headers = options.headers;
  }
}

export const problem = (name: ProblemName, detail: string, options?: ConstructorParameters<typeof BcbProblem>[2]) =>
  new BcbProblem(name, detail, options);

/** The body of a problem, with the request id as its correlationId. */
export function problemBody(request: FastifyRequest, p: BcbProblem): Problema {
  return {
    type: PROBLEM_TYPE_BASE + p.problemName,
    title: PROBLEM_TYPES[p.problemName].title,
    status: p.status,
    detail: p.message,
    correlationId: String(request.id),
    ...(p.violacoes && p.violacoes.length > 0 ? { violacoes: [...p.violacoes] } : {}),
  };
}

export function sendProblem(request: FastifyRequest, reply: FastifyReply, p: BcbProblem): FastifyReply {
  if (p.headers) void reply.headers(p.headers);
  return reply.header('x-request-id', request.id).header('content-type', PROBLEM_CONTENT_TYPE).status(p.status).send(problemBody(request, p));
}

/**
 * The error responses of a `/v2` route, as BCB declares them: each status with a `Problema` in
 * `application/problem+json`.
 */
export function problemResponses(...statuses: number[]): Record<number, unknown> {
  const out: Record<number, unknown> = {};
  for (const status of statuses) {
    out[status] = {
      description: PROBLEM_DESCRIPTIONS[status] ?? 'Problema',
      content: { 'application/problem+json': { schema: Type.Ref('Problema') } },
    };
  }
  return out;
}

const PROBLEM_DESCRIPTIONS: Record<number, string> = {
  400: 'Requisição inválida (violacoes lista cada campo)',
  401: 'Token ausente, inválido ou expirado, ou sem o certificado ao qual está vinculado',
  403: 'Requisição de participante autenticado que viola alguma regra de autorização',
  404: 'Recurso solicitado não foi encontrado',
  410: 'A entidade existia, mas foi permanentemente removida',
  500: 'Condição inesperada ao processar a requisição',
  503: 'Serviço não está disponível no momento',
};
