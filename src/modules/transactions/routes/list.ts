import { LIST_LIMITS } from '../../../http/list-queries.ts';
import type { RouteApp } from '../../../http/route-app.ts';
import { errorResponses } from '../../../http/schemas.ts';
import { listForAccount, type TransactionsDeps } from '../service.ts';
import { listView } from '../views.ts';
import { AccountQuery, common, ListResponse } from './schemas.ts';

/** GET /api/transactions */
export function listTransactionsRoute(app: RouteApp, deps: TransactionsDeps): void {
  app.get(
    '/api/transactions',
    {
      schema: {
        ...common,
        operationId: 'listTransactions',
        summary: "List the account's transactions",
        description: LIST_LIMITS,
        querystring: AccountQuery,
        response: { 200: ListResponse, ...errorResponses(400, 401, 429, 503) },
      },
    },
    async (request) => {
      const { rows, metadata } = await listForAccount(deps, request.accountId, request.query);
      return { data: rows.map(listView), metadata };
    },
  );
}
