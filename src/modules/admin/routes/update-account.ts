import { Type } from 'typebox';
import type { RouteApp } from '../../../http/route-app.ts';
import { errorResponses } from '../../../http/schemas.ts';
import { updateAccount, type AccountsDeps } from '../../accounts/service.ts';
import { SCOPES } from '../../auth/scopes.ts';
import { AccountParams, Address, common } from './schemas.ts';

const Scope = Type.Union(SCOPES.map((scope) => Type.Literal(scope)));

const AccountChange = Type.Object(
  {
    address: Type.Optional(Address),
    scopes: Type.Optional(
      Type.Union([Type.Array(Scope, { maxItems: SCOPES.length * 2 }), Type.Null()], {
        description: "The scopes the client may hold from now on (BCB's and the service's own: docs/guide/authentication.md lists them); null: all of them",
      }),
    ),
  },
  { additionalProperties: false },
);

const AccountSettings = Type.Object({
  accountId: Type.Integer(),
  clientId: Type.String(),
  scopes: Type.Array(Type.String(), { description: 'The scopes the client holds' }),
  address: Type.Union([Address, Type.Null()]),
});

/** PATCH /admin/accounts/{accountId} */
export function adminUpdateAccountRoute(app: RouteApp, deps: AccountsDeps): void {
  app.patch(
    '/admin/accounts/:accountId',
    {
      schema: {
        ...common,
        operationId: 'adminUpdateAccount',
        summary: "Change an account's address or the OAuth scopes of its client",
        description:
          'Each field given is changed, the others are left as they are; the answer is the settings after. Tokens already issued lose ' +
          'the scopes removed, in this process at once and in every other within 5 s; new ones carry only the scopes held. ' +
          "The address is the recebedor's in cobv answers made after.",
        params: AccountParams,
        body: AccountChange,
        response: { 200: AccountSettings, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => updateAccount(deps, BigInt(request.params.accountId), request.body),
  );
}
