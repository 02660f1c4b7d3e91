import { Type } from 'typebox';
import type { RouteApp } from '../../../http/route-app.ts';
import { errorResponses } from '../../../http/schemas.ts';
import { settleNow, type SandboxDeps } from '../service.ts';
import { common } from './schemas.ts';

/** POST /sandbox/settle */
export function sandboxSettleRoute(app: RouteApp, deps: SandboxDeps): void {
  app.post(
    '/sandbox/settle',
    {
      schema: {
        ...common,
        operationId: 'sandboxSettle',
        summary: 'Settle every queued transfer now',
        response: { 200: Type.Object({ settled: Type.Integer(), failed: Type.Integer() }), ...errorResponses(401) },
      },
    },
    async () => settleNow(deps),
  );
}
