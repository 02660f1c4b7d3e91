import { Type } from 'typebox';
import type { RouteApp } from '../../../http/route-app.ts';
import { errorResponses, IdParam } from '../../../http/schemas.ts';
import { unlinkCertificate, type AccountsDeps } from '../../accounts/service.ts';
import { common } from './schemas.ts';

/** DELETE /admin/accounts/{accountId}/certificates/{fingerprint} */
export function adminUnlinkCertificateRoute(app: RouteApp, deps: AccountsDeps): void {
  app.delete(
    '/admin/accounts/:accountId/certificates/:fingerprint',
    {
      schema: {
        ...common,
        operationId: 'adminUnlinkCertificate',
        summary: 'Unlink a certificate; tokens bound to it stop working',
        params: Type.Object({ accountId: IdParam('Account id'), fingerprint: Type.String({ pattern: '^[0-9a-fA-F]{64}$' }) }),
        response: { 204: Type.Null(), ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      await unlinkCertificate(deps, BigInt(request.params.accountId), request.params.fingerprint);
      return reply.status(204).send(null);
    },
  );
}
