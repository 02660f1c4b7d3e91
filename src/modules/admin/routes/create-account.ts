import { Type } from 'typebox';
import type { RouteApp } from '../../../http/route-app.ts';
import { errorResponses } from '../../../http/schemas.ts';
import { createAccount, type AccountsDeps } from '../../accounts/service.ts';
import { Address, common } from './schemas.ts';

/** POST /admin/accounts */
export function adminCreateAccountRoute(app: RouteApp, deps: AccountsDeps): void {
  app.post(
    '/admin/accounts',
    {
      schema: {
        ...common,
        operationId: 'adminCreateAccount',
        summary: 'Create an account',
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 140 }),
            document: Type.String({ minLength: 11, maxLength: 18, description: 'CPF or CNPJ (digits, punctuation allowed)' }),
            address: Type.Optional(Address),
          },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Object({
            accountId: Type.Integer(),
            branch: Type.String(),
            accountNumber: Type.String(),
            clientId: Type.String(),
            clientSecret: Type.String({ description: 'Shown only in this answer' }),
          }),
          ...errorResponses(400, 401),
        },
      },
    },
    async (request, reply) => {
      const created = await createAccount(deps, request.body);
      return reply.status(201).send({ ...created, accountId: Number(created.accountId) });
    },
  );
}
