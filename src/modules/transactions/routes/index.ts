import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { TransactionsDeps } from '../service.ts';
import { getTransactionByPixKeyRoute } from './get-by-pix-key.ts';
import { getTransactionRoute } from './get.ts';
import { listTransactionsByPixKeyRoute } from './list-by-pix-key.ts';
import { listTransactionsRoute } from './list.ts';

/** The transaction operations, in the order the OpenAPI document lists them. */
export const transactionRoutes =
  (deps: TransactionsDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    listTransactionsRoute(app, deps);
    getTransactionRoute(app, deps);
    listTransactionsByPixKeyRoute(app, deps);
    getTransactionByPixKeyRoute(app, deps);
  };
