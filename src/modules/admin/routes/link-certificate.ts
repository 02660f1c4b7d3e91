import { Type } from 'typebox';
import type { RouteApp } from '../../../http/route-app.ts';
import { errorResponses } from '../../../http/schemas.ts';
import { linkCertificate, type AccountsDeps } from '../../accounts/service.ts';
import { AccountParams, common } from './schemas.ts';

/** POST /admin/accounts/{accountId}/certificates */
export function adminLinkCertificateRoute(app: RouteApp, deps: AccountsDeps): void {
  app.post(
    '/admin/accounts/:accountId/certificates',
    {
      schema: {
        ...common,
        operationId: 'adminLinkCertificate',
        summary: 'Link a client certificate to an account',
        params: AccountParams,
        body: Type.Object({ pem: Type.String({ minLength: 1, maxLength: 16384, description: 'PEM text' }) }, { additionalProperties: false }),
        response: {
          201: Type.Object({ fingerprint: Type.String({ description: 'SHA-256 of the DER, lowercase hex' }) }),
          ...errorResponses(400, 401, 404, 409),
        },
      },
    },
    async (request, reply) => reply.status(201).send(await linkCertificate(deps, BigInt(request.params.accountId), request.body.pem)),
  );
}
