import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Db } from '../../db/client.ts';
import { AppError } from '../../http/errors.ts';
import { errorResponses } from '../../http/schemas.ts';
import { pendingFunctions } from '../../db/function-files.ts';
import { appliedVersion, LATEST_MIGRATION, pendingMigrations } from '../../db/migrate.ts';

export const healthRoutes =
  (deps: { db: Db }): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/health',
      {
        schema: {
          operationId: 'health',
          tags: ['Operations'],
          summary: 'Liveness: the process is up',
          response: { 200: Type.Object({ status: Type.Literal('ok') }) },
        },
      },
      async () => ({ status: 'ok' as const }),
    );

    app.get(
      '/ready',
      {
        schema: {
          operationId: 'ready',
          tags: ['Operations'],
          summary: 'Readiness: the database answers and every migration is applied',
          response: { 200: Type.Object({ status: Type.Literal('ready'), migration: Type.Integer() }), ...errorResponses(503) },
        },
      },
      async () => {
        let version: number;
        let pending: string[];
        try {
          version = await appliedVersion(deps.db);
          const functions = await pendingFunctions(deps.db);
          pending = [...(await pendingMigrations(deps.db)).map(String), ...functions.map((name) => `function ${name}`)];
        } catch {
          throw new AppError(503, 'DATABASE_UNAVAILABLE', 'Database is not reachable');
        }
        if (pending.length > 0) {
          throw new AppError(503, 'MIGRATIONS_PENDING', `Migrations pending: ${pending.join(', ')} (at ${version}, expected ${LATEST_MIGRATION})`);
        }
        return { status: 'ready' as const, migration: version };
      },
    );
  };
