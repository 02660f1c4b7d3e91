import { Type } from 'typebox';
import type { RouteApp } from '../../../http/route-app.ts';
import { errorResponses } from '../../../http/schemas.ts';
import { limitClientScopes, type AccountsDeps } from '../../accounts/service.ts';
import { PIX_SCOPES } from '../../auth/scopes.ts';
import { AccountParams, common } from './schemas.ts';

const Scope = Type.Union(PIX_SCOPES.map((scope) => Type.Literal(scope)));

const ScopesChange = Type.Object(
  {
    scopes: Type.Union([Type.Array(Scope, { maxItems: PIX_SCOPES.length * 2 }), Type.Null()], {
      description: 'The scopes the client may hold from now on; null: all of them',
    }),
  },
  { additionalProperties: false },
);

const ClientScopes = Type.Object({
  accountId: Type.Integer(),
  clientId: Type.String(),
  scopes: Type.Array(Type.String(), { description: 'The scopes the client holds' }),
});

/** PATCH /admin/accounts/{accountId} */
export function adminLimitScopesRoute(app: RouteApp, deps: AccountsDeps): void {
  app.patch(
    '/admin/accounts/:accountId',
    {
      schema: {
        ...common,
        operationId: 'adminLimitScopes',
        summary: 'Limit the OAuth scopes of the client',
        description: 'Tokens already issued keep their scopes until they expire; new ones carry only the scopes held.',
        params: AccountParams,
        body: ScopesChange,
        response: { 200: ClientScopes, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => limitClientScopes(deps, BigInt(request.params.accountId), request.body.scopes),
  );
}
