import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { overloaded } from '../../../http/errors.ts';
import type { ChangeFeed } from '../changes.ts';

/** Open event streams per process at most: each is a console tab. */
export const MAX_STREAMS = 64;

/**
 * GET /console/events: server-sent events. `change` (its data the new marker) when anything the
 * console shows may have changed, in this process or another on the database; a comment now and
 * then keeps the stream open. The streams end when the service closes.
 */
export const eventRoutes =
  (feed: ChangeFeed): FastifyPluginAsyncTypebox =>
  async (app) => {
    const open = new Set<() => void>();
    app.addHook('preClose', async () => {
      for (const end of [...open]) end();
    });
    app.get(
      '/console/events',
      { schema: { hide: true, querystring: Type.Object({ since: Type.Optional(Type.String({ maxLength: 400, pattern: '^[0-9A-Za-z.-]*$' })) }) } },
      async (request, reply) => {
        if (open.size >= MAX_STREAMS) throw overloaded('Too many console pages are open on this process');
        reply.hijack();
        const raw = reply.raw;
        raw.writeHead(200, { ...(reply.getHeaders() as OutgoingHttpHeaders), 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
        raw.write('retry: 2000\n\n');
        const stop = feed.subscribe(
          { change: (marker) => raw.write(`event: change\ndata: ${marker}\n\n`), ping: () => raw.write(': ping\n\n') },
          request.query.since || undefined,
        );
        const end = () => {
          stop();
          open.delete(end);
          if (!raw.writableEnded) raw.end();
        };
        open.add(end);
        raw.on('close', end);
      },
    );
  };
