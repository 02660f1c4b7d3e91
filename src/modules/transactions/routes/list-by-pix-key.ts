import { Type } from 'typebox';
import { LIST_LIMITS } from '../../../http/list-queries.ts';
import type { RouteApp } from '../../../http/route-app.ts';
import { errorResponses } from '../../../http/schemas.ts';
import { requirePixKey } from '../../directory/service.ts';
import { listForAccount, type TransactionsDeps } from '../service.ts';
import { listView } from '../views.ts';
import { common, ListResponse, PixKeyParam, PixKeyQuery } from './schemas.ts';

/** GET /api/pix/transactions/pix-key/{pixKey} */
export function listTransactionsByPixKeyRoute(app: RouteApp, deps: TransactionsDeps): void {
  app.get(
    '/api/pix/transactions/pix-key/:pixKey',
    {
      schema: {
        ...common,
        operationId: 'listTransactionsByPixKey',
        summary: 'List the transactions tied to a PIX key (at most 1000 results)',
        description: LIST_LIMITS,
        params: Type.Object({ pixKey: PixKeyParam }),
        querystring: PixKeyQuery,
        response: { 200: ListResponse, ...errorResponses(400, 401, 429, 503) },
      },
    },
    async (request) => {
      const { key: pixKey } = requirePixKey(request.params.pixKey, 'pixKey');
      const { rows, metadata } = await listForAccount(deps, request.accountId, request.query, pixKey);
      return { data: rows.map(listView), metadata };
    },
  );
}
