import type { RouteApp } from '../../../http/route-app.ts';
import { errorResponses } from '../../../http/schemas.ts';
import { getCharge, type ChargesDeps } from '../service.ts';
import { chargeView } from '../views.ts';
import { Charge, read, TxidParams } from './schemas.ts';

/** GET /cob/{txid} */
export function getChargeRoute(app: RouteApp, deps: ChargesDeps): void {
  app.get(
    '/cob/:txid',
    {
      schema: { ...read, operationId: 'getCharge', summary: 'A charge', params: TxidParams, response: { 200: Charge, ...errorResponses(400, 401, 404) } },
    },
    async (request) => chargeView(await getCharge(deps, request.accountId, request.params.txid), deps.clock.now()),
  );
}
