import { Type } from 'typebox';
import type { RouteApp } from '../../../http/route-app.ts';
import { errorResponses, Timestamp } from '../../../http/schemas.ts';
import { receiveIncomingPix, type SandboxDeps } from '../service.ts';
import { common, Decimal2, DocumentField, Ispb, Movement, Name } from './schemas.ts';

/** POST /sandbox/pix/incoming */
export function sandboxIncomingPixRoute(app: RouteApp, deps: SandboxDeps): void {
  app.post(
    '/sandbox/pix/incoming',
    {
      schema: {
        ...common,
        operationId: 'sandboxIncomingPix',
        summary: 'A PIX arrives from another institution',
        body: Type.Object(
          {
            pixKey: Type.String({ minLength: 1, maxLength: 77 }),
            amount: Decimal2('Amount, "10.00"'),
            payer: Type.Object(
              {
                name: Name,
                document: DocumentField,
                ispb: Type.Optional(Ispb),
                behavior: Type.Optional(
                  Type.Literal('reject', { description: "The payer's institution refuses refunds of this PIX: they end NAO_REALIZADO" }),
                ),
              },
              { additionalProperties: false },
            ),
            txid: Type.Optional(Type.String({ pattern: '^[a-zA-Z0-9]{26,35}$', description: 'Pays the charge with this txid of the account owning pixKey' })),
            receivedAt: Type.Optional(Timestamp('Back-dates the receipt (to test the refund window)')),
            description: Type.Optional(Type.String({ maxLength: 140 })),
          },
          { additionalProperties: false },
        ),
        response: { 201: Movement, ...errorResponses(400, 401, 404, 422) },
      },
    },
    async (request, reply) => reply.status(201).send(await receiveIncomingPix(deps, request.body)),
  );
}
