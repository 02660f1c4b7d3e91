import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Db } from '../../db/client.ts';
import { notFound } from '../../http/errors.ts';
import { errorResponses, Timestamp } from '../../http/schemas.ts';
import type { Clock } from '../../lib/clock.ts';
import { centavosToNumber } from '../../lib/money.ts';
import { BalanceReader } from './balance-reader.ts';
import { accountSecurity } from '../auth/scopes.ts';

const Amount = (description: string) => Type.Number({ description: `${description} (BRL, 2 decimals)` });

const BalancesResponse = Type.Object({
  data: Type.Array(
    Type.Object({
      eventDate: Timestamp('Time of the query'),
      balanceAmount: Type.Object({
        available: Amount('Usable now, net of blocked amounts'),
        blocked: Amount('Reserved for operations in processing'),
        overdraft: Amount('Additional credit limit; always 0'),
      }),
    }),
    { minItems: 1, maxItems: 1 },
  ),
});

const BalanceResponse = Type.Object({
  grossBalance: Amount('available + blocked'),
  blockedBalance: Amount('blocked'),
  netBalance: Amount('available'),
  consultedAt: Timestamp('Time of the query'),
});

export const balanceRoutes =
  (deps: { db: Db; clock: Clock }): FastifyPluginAsyncTypebox =>
  async (app) => {
    // Balance reads that arrive together share one statement (never a cached answer).
    const reader = new BalanceReader(deps.db);
    async function read(accountId: bigint) {
      const balances = await reader.read(accountId);
      if (!balances) throw notFound('ACCOUNT_NOT_FOUND', 'Account not found');
      return { ...balances, at: deps.clock.now().toISOString() };
    }

    app.get(
      '/accounts/balances',
      {
        schema: {
          operationId: 'getBalances',
          tags: ['Balance'],
          summary: 'Balance (central-bank-format view)',
          security: accountSecurity('balance.read'),
          response: { 200: BalancesResponse, ...errorResponses(401) },
        },
      },
      async (request) => {
        const b = await read(request.accountId);
        return {
          data: [
            {
              eventDate: b.at,
              balanceAmount: { available: centavosToNumber(b.available), blocked: centavosToNumber(b.blocked), overdraft: 0 },
            },
          ],
        };
      },
    );

    app.get(
      '/balance',
      {
        schema: {
          operationId: 'getBalance',
          tags: ['Balance'],
          summary: 'Balance (standard view)',
          security: accountSecurity('balance.read'),
          response: { 200: BalanceResponse, ...errorResponses(401) },
        },
      },
      async (request) => {
        const b = await read(request.accountId);
        return {
          grossBalance: centavosToNumber(b.available + b.blocked),
          blockedBalance: centavosToNumber(b.blocked),
          netBalance: centavosToNumber(b.available),
          consultedAt: b.at,
        };
      },
    );
  };
