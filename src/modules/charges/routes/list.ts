import { Type } from 'typebox';
import { LIST_LIMITS } from '../../../http/list-queries.ts';
import type { RouteApp } from '../../../http/route-app.ts';
import { errorResponses, Timestamp } from '../../../http/schemas.ts';
import { listChargesOf, type ChargeListDeps } from '../service.ts';
import { chargeView } from '../views.ts';
import { Charge, Cnpj, read, Cpf, Status } from './schemas.ts';

const ListQuery = Type.Object(
  {
    inicio: Type.String({ format: 'date-time', description: 'Charges created from this instant (RFC 3339)' }),
    fim: Type.String({ format: 'date-time', description: 'up to this instant, inclusive (RFC 3339), at most 31 days after inicio' }),
    cpf: Type.Optional(Cpf),
    cnpj: Type.Optional(Cnpj),
    status: Type.Optional(Status),
    'paginacao.paginaAtual': Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, description: '0-indexed page (default 0)' })),
    'paginacao.itensPorPagina': Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Page size, at most 1000 (default 100)' })),
  },
  { additionalProperties: false },
);

const ListResponse = Type.Object({
  parametros: Type.Object({
    inicio: Timestamp(),
    fim: Timestamp(),
    cpf: Type.Optional(Type.String()),
    cnpj: Type.Optional(Type.String()),
    status: Type.Optional(Status),
    paginacao: Type.Object({
      paginaAtual: Type.Integer(),
      itensPorPagina: Type.Integer(),
      quantidadeDePaginas: Type.Integer(),
      quantidadeTotalDeItens: Type.Integer(),
    }),
  }),
  cobs: Type.Array(Charge),
});

/** GET /cob */
export function listChargesRoute(app: RouteApp, deps: ChargeListDeps): void {
  app.get(
    '/cob',
    {
      schema: {
        ...read,
        operationId: 'listCharges',
        summary: "List the account's charges created in an interval",
        description:
          'Newest first; `inicio` and `fim` at most 31 days apart. `status` matches the status the charge reads with now (an expired ATIVA ' +
          `one is REMOVIDA_PELO_PSP). ${LIST_LIMITS}`,
        querystring: ListQuery,
        response: { 200: ListResponse, ...errorResponses(400, 401, 429, 503) },
      },
    },
    async (request) => {
      const { parametros, rows, now } = await listChargesOf(deps, request.accountId, request.query);
      return { parametros, cobs: rows.map((row) => chargeView(row, now)) };
    },
  );
}
