import type { RouteApp } from '../../../http/route-app.ts';
import { errorResponses } from '../../../http/schemas.ts';
import { reviseCharge, type ChargesDeps } from '../service.ts';
import { chargeView } from '../views.ts';
import { Charge, write, RevisionBody, TxidParams } from './schemas.ts';

/** PATCH /cob/{txid} */
export function reviseChargeRoute(app: RouteApp, deps: ChargesDeps): void {
  app.patch(
    '/cob/:txid',
    {
      schema: {
        ...write,
        operationId: 'reviseCharge',
        summary: 'Revise or cancel an ATIVA charge',
        description:
          'Any field of the creation body; `status` REMOVIDA_PELO_USUARIO_RECEBEDOR cancels. Every change raises `revisao` by 1 and ' +
          'issues a new BR Code. A charge that is not ATIVA is 400.',
        params: TxidParams,
        body: RevisionBody,
        response: { 200: Charge, ...errorResponses(400, 401, 404, 415, 422) },
      },
    },
    async (request) => chargeView(await reviseCharge(deps, request.accountId, request.params.txid, request.body), deps.clock.now()),
  );
}
