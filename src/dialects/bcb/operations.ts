import type { FastifyPluginAsync } from 'fastify';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/client.ts';
import type { ListQueries } from '../../http/list-queries.ts';
import type { Clock } from '../../lib/clock.ts';
import type { PayloadSigner } from '../../modules/locations/signing/signer.ts';
import { cobOperations } from './cob/routes.ts';
import { locOperations } from './loc/routes.ts';
import { locrecOperations } from './locrec/routes.ts';
import { recOperations } from './rec/routes.ts';
import { recPayloadRoute } from './rec/payload.ts';
import { cobPayloadRoutes } from './payloads/routes.ts';
import { pixOperations } from './pix/routes.ts';
import { webhookOperations } from './webhook/routes.ts';
import { cobvPayloadRoute } from './cobv/payload.ts';
import { cobvOperations } from './cobv/routes.ts';
import type { CobBatcher } from '../../modules/charges/batcher.ts';
import { lotecobvOperations } from './lotecobv/routes.ts';
import { cobrOperations } from './cobr/routes.ts';
import { solicrecOperations } from './solicrec/routes.ts';
import { automaticoWebhookOperations } from './webhookrec/routes.ts';

/** What BCB's operations share: the core's dependencies, as the root dialect's routes get them. */
export interface BcbDeps {
  readonly config: Config;
  readonly db: Db;
  readonly clock: Clock;
  /** Account lists: their own connections and a limit per account. */
  readonly lists: ListQueries;
  /**
   * Signs the payloads of locations (`/qr/v2/...`) and serves their JWK Set: prepared on first
   * use (generating the sandbox's CA and key the first time), then the same one.
   */
  readonly payloadSigner: () => Promise<PayloadSigner>;
  /** New charges with new locations, created together (shared with the root's /cob). */
  readonly cobs?: CobBatcher;
}

/** BCB's API Pix operations, each group a plugin of its own, registered inside the `/v2` scope. */
export function bcbOperations(deps: BcbDeps): FastifyPluginAsync[] {
  return [cobOperations(deps), cobvOperations(deps), lotecobvOperations(deps), locOperations(deps), locrecOperations(deps), recOperations(deps), solicrecOperations(deps), cobrOperations(deps), pixOperations(deps), webhookOperations(deps), automaticoWebhookOperations(deps)];
}

/** The public routes of BCB's dialect (no token, no certificate): payload locations and their JWK Set. */
export function bcbPublicRoutes(deps: BcbDeps): FastifyPluginAsync[] {
  return [cobPayloadRoutes(deps), cobvPayloadRoute(deps), recPayloadRoute(deps)];
}
