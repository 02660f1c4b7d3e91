import { Type } from 'typebox';
import { LIST_LIMITS } from '../../../http/list-queries.ts';
import type { RouteApp } from '../../../http/route-app.ts';
import { errorResponses } from '../../../http/schemas.ts';
import { requirePixKey } from '../../directory/service.ts';
import { findOne, type TransactionsDeps } from '../service.ts';
import { listView } from '../views.ts';
import { common, Identifier, ListItem, PixKeyParam } from './schemas.ts';

/** GET /api/pix/transactions/pix-key/{pixKey}/{identifier} */
export function getTransactionByPixKeyRoute(app: RouteApp, deps: TransactionsDeps): void {
  app.get(
    '/api/pix/transactions/pix-key/:pixKey/:identifier',
    {
      schema: {
        ...common,
        operationId: 'getTransactionByPixKey',
        summary: 'One transaction of a PIX key by endToEndId, externalId or numeric id',
        description: LIST_LIMITS,
        params: Type.Object({ pixKey: PixKeyParam, identifier: Identifier }),
        response: { 200: ListItem, ...errorResponses(400, 401, 404, 429, 503) },
      },
    },
    async (request) => listView(await findOne(deps, request.accountId, request.params.identifier, requirePixKey(request.params.pixKey, 'pixKey').key)),
  );
}
