import { Type } from 'typebox';
import type { RouteApp } from '../../../http/route-app.ts';
import { errorResponses } from '../../../http/schemas.ts';
import { receiveIncomingRefund, type SandboxDeps } from '../service.ts';
import { common, Decimal2, Movement } from './schemas.ts';

/** POST /sandbox/refunds/incoming */
export function sandboxIncomingRefundRoute(app: RouteApp, deps: SandboxDeps): void {
  app.post(
    '/sandbox/refunds/incoming',
    {
      schema: {
        ...common,
        operationId: 'sandboxIncomingRefund',
        summary: 'The receiver of one of our transfers sends money back (REFUND_OUT)',
        body: Type.Object(
          { endToEndId: Type.String({ pattern: '^[a-zA-Z0-9]{32}$' }), amount: Decimal2('Amount refunded, "10.00"') },
          { additionalProperties: false },
        ),
        response: { 201: Movement, ...errorResponses(400, 401, 404, 422) },
      },
    },
    async (request, reply) => reply.status(201).send(await receiveIncomingRefund(deps, request.body)),
  );
}
