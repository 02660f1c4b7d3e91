import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ChargeListDeps } from '../service.ts';
import { createChargeWithGeneratedTxidRoute } from './create-with-generated-txid.ts';
import { createChargeRoute } from './create.ts';
import { getChargeRoute } from './get.ts';
import { listChargesRoute } from './list.ts';
import { getChargeQrCodeRoute } from './qrcode.ts';
import { reviseChargeRoute } from './revise.ts';

export type { ChargeListDeps, ChargesDeps } from '../service.ts';
export { sandboxChargeRoutes } from './sandbox-pay.ts';

/** The account holder's charge (cob) operations, in the order the OpenAPI document lists them. */
export const chargeRoutes =
  (deps: ChargeListDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    createChargeRoute(app, deps);
    createChargeWithGeneratedTxidRoute(app, deps);
    getChargeRoute(app, deps);
    listChargesRoute(app, deps);
    reviseChargeRoute(app, deps);
    getChargeQrCodeRoute(app, deps);
  };
