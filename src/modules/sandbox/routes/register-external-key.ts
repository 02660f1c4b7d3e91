import { Type } from 'typebox';
import type { RouteApp } from '../../../http/route-app.ts';
import { errorResponses, Nullable } from '../../../http/schemas.ts';
import { registerExternalKey, type SandboxDeps } from '../service.ts';
import { common, DocumentField, Ispb, Name } from './schemas.ts';

/** POST /sandbox/dict/keys */
export function sandboxRegisterExternalKeyRoute(app: RouteApp, deps: SandboxDeps): void {
  app.post(
    '/sandbox/dict/keys',
    {
      schema: {
        ...common,
        operationId: 'sandboxRegisterExternalKey',
        summary: 'Register a key held at another institution',
        body: Type.Object(
          {
            key: Type.String({ minLength: 1, maxLength: 77 }),
            name: Name,
            document: DocumentField,
            ispb: Ispb,
            bankName: Type.Optional(Type.String({ maxLength: 140 })),
            branch: Type.Optional(Type.String({ maxLength: 10 })),
            accountNumber: Type.Optional(Type.String({ maxLength: 20 })),
            behavior: Type.Optional(
              Type.Union([Type.Literal('reject'), Type.Literal('timeout')], {
                description: 'reject: every transfer to it ends in ERROR; timeout: transfers never settle (expiration applies)',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Object({ key: Type.String(), type: Type.String(), ispb: Type.String(), behavior: Nullable(Type.String()) }),
          ...errorResponses(400, 401, 409),
        },
      },
    },
    async (request, reply) => reply.status(201).send(await registerExternalKey(deps, request.body)),
  );
}
