import { Type } from 'typebox';
import type { RouteApp } from '../../../http/route-app.ts';
import { errorResponses } from '../../../http/schemas.ts';
import { findOne, type TransactionsDeps } from '../service.ts';
import { statusView } from '../views.ts';
import { common, Identifier, StatusView } from './schemas.ts';

/** GET /api/pix/transaction/{id} */
export function getTransactionRoute(app: RouteApp, deps: TransactionsDeps): void {
  app.get(
    '/api/pix/transaction/:id',
    {
      schema: {
        ...common,
        operationId: 'getTransaction',
        summary: 'A transaction by numeric id, externalId or endToEndId',
        params: Type.Object({ id: Identifier }),
        response: { 200: StatusView, ...errorResponses(401, 404) },
      },
    },
    async (request) => statusView(await findOne(deps, request.accountId, request.params.id)),
  );
}
