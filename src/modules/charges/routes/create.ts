import type { RouteApp } from '../../../http/route-app.ts';
import { errorResponses } from '../../../http/schemas.ts';
import { createCharge, type ChargesDeps } from '../service.ts';
import { chargeView } from '../views.ts';
import { Charge, ChargeBody, write, TxidParams } from './schemas.ts';

/** PUT /cob/{txid} */
export function createChargeRoute(app: RouteApp, deps: ChargesDeps): void {
  app.put(
    '/cob/:txid',
    {
      schema: {
        ...write,
        operationId: 'createCharge',
        summary: 'Create an immediate charge with your txid',
        description: "A txid this account already used (even with the same body) is 409; other accounts' txids are invisible and never collide.",
        params: TxidParams,
        body: ChargeBody,
        response: { 201: Charge, ...errorResponses(400, 401, 409, 415, 422) },
      },
    },
    async (request, reply) => {
      const row = await createCharge(deps, request.accountId, request.body, request.params.txid);
      return reply.status(201).send(chargeView(row, deps.clock.now()));
    },
  );
}
