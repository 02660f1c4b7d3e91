import { Type } from 'typebox';
import type { RouteApp } from '../../../http/route-app.ts';
import { errorResponses } from '../../../http/schemas.ts';
import { registerPixKey, type AccountsDeps } from '../../accounts/service.ts';
import { AccountParams, common } from './schemas.ts';

/** POST /admin/accounts/{accountId}/pix-keys */
export function adminRegisterPixKeyRoute(app: RouteApp, deps: AccountsDeps): void {
  app.post(
    '/admin/accounts/:accountId/pix-keys',
    {
      schema: {
        ...common,
        operationId: 'adminRegisterPixKey',
        summary: 'Register a Pix key of the account in the directory',
        params: AccountParams,
        body: Type.Object(
          {
            type: Type.Union([Type.Literal('cpf'), Type.Literal('cnpj'), Type.Literal('email'), Type.Literal('phone'), Type.Literal('evp')]),
            key: Type.Optional(Type.String({ minLength: 1, maxLength: 77, description: 'Omit for evp (generated); cpf/cnpj default to the holder document' })),
          },
          { additionalProperties: false },
        ),
        response: { 201: Type.Object({ key: Type.String(), type: Type.String() }), ...errorResponses(400, 401, 404, 409, 422) },
      },
    },
    async (request, reply) => reply.status(201).send(await registerPixKey(deps, BigInt(request.params.accountId), request.body)),
  );
}
