import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';

/** The server a route plugin receives, so that one file can add one operation with its typed schema. */
export type RouteApp = Parameters<FastifyPluginAsyncTypebox>[0];
