import { Type } from 'typebox';
import type { RouteApp } from '../../../http/route-app.ts';
import { errorResponses } from '../../../http/schemas.ts';
import { rotateClientSecret, type AccountsDeps } from '../../accounts/service.ts';
import { AccountParams, common } from './schemas.ts';

const Credentials = Type.Object({ clientId: Type.String(), clientSecret: Type.String({ description: 'Shown only in this answer' }) });

/** POST /admin/accounts/{accountId}/client-secret */
export function adminRotateClientSecretRoute(app: RouteApp, deps: AccountsDeps): void {
  app.post(
    '/admin/accounts/:accountId/client-secret',
    {
      schema: {
        ...common,
        operationId: 'adminRotateClientSecret',
        summary: 'Rotate the client secret',
        params: AccountParams,
        response: { 201: Credentials, ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => reply.status(201).send(await rotateClientSecret(deps, BigInt(request.params.accountId))),
  );
}
