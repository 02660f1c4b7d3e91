import type { RouteApp } from '../../../http/route-app.ts';
import { errorResponses } from '../../../http/schemas.ts';
import { createCharge, type ChargesDeps } from '../service.ts';
import { chargeView } from '../views.ts';
import { Charge, ChargeBody, write } from './schemas.ts';

/** POST /cob */
export function createChargeWithGeneratedTxidRoute(app: RouteApp, deps: ChargesDeps): void {
  app.post(
    '/cob',
    {
      schema: {
        ...write,
        operationId: 'createChargeWithGeneratedTxid',
        summary: 'Create an immediate charge; the service draws its txid',
        body: ChargeBody,
        response: { 201: Charge, ...errorResponses(400, 401, 415, 422) },
      },
    },
    async (request, reply) => {
      const row = await createCharge(deps, request.accountId, request.body);
      return reply.status(201).send(chargeView(row, deps.clock.now()));
    },
  );
}
