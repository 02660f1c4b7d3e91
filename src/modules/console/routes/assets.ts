import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';

/** The console's two static files, read once at start: the hand-written script and style sheet. */
const ASSETS = [
  { path: '/console/static/console.js', file: 'console.js', type: 'text/javascript; charset=utf-8' },
  { path: '/console/static/console.css', file: 'console.css', type: 'text/css; charset=utf-8' },
] as const;

export const assetRoutes = (): FastifyPluginAsyncTypebox => async (app) => {
  for (const asset of ASSETS) {
    const body = readFileSync(new URL(`../static/${asset.file}`, import.meta.url));
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    app.get(asset.path, { config: { consolePublic: true }, schema: { hide: true } }, async (request, reply) => {
      void reply.headers({ etag, 'cache-control': 'no-cache' });
      if (request.headers['if-none-match'] === etag) return reply.status(304).send();
      return reply.type(asset.type).send(body);
    });
  }
};
