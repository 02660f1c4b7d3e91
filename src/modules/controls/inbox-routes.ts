import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ADMIN_SECURITY, errorResponses, Timestamp } from '../../http/schemas.ts';
import type { Clock } from '../../lib/clock.ts';
import { DELIVERY_TIMEOUT_MS } from '../webhooks/sender.ts';
import * as repo from './repo.ts';
import type { SandboxControls } from './service.ts';

/** Arrivals kept per inbox (the oldest go), and listed at most. */
export const INBOX_KEEP = 200;
/** Headers recorded per arrival, and the length of each value. */
const MAX_HEADERS = 64;
const MAX_HEADER_VALUE = 2048;
/** A timeout fault holds the answer past any sender's time limit. */
const HOLD_MS = DELIVERY_TIMEOUT_MS + 1_000;

const Name = Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'Any name: letters, digits, _ and -' });
const Arrival = Type.Object({
  id: Type.Integer(),
  receivedAt: Timestamp(),
  method: Type.String(),
  headers: Type.Record(Type.String(), Type.String()),
  body: Type.String({ description: 'The body as text (UTF-8)' }),
  status: Type.Integer({ description: 'What the inbox answered: 200, or what a fault said' }),
});

export interface InboxDeps {
  readonly controls: SandboxControls;
  readonly db: Parameters<typeof repo.recordArrival>[0];
  /** Business time: arrivals are stamped as everything else the sandbox records. */
  readonly clock: Clock;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function recordedHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw).slice(0, MAX_HEADERS)) {
    if (value !== undefined) out[name] = (Array.isArray(value) ? value.join(', ') : value).slice(0, MAX_HEADER_VALUE);
  }
  return out;
}

/**
 * POST /sandbox/inbox/{name}: public (webhooks post to it), any body and content type, recorded
 * as it came; it answers 200, or what a webhook fault on its URL says (docs/guide/sandbox.md).
 */
export const inboxReceiveRoute =
  (deps: InboxDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    app.post(
      '/sandbox/inbox/:name',
      {
        schema: {
          tags: ['Sandbox'],
          security: [],
          operationId: 'sandboxInboxReceive',
          summary: 'A webhook inbox: records whatever is posted to it',
          description: 'No token: register `{PUBLIC_URL}/sandbox/inbox/{name}` as a webhook and read what arrived with GET. HTTP is allowed here (sandbox only).',
          params: Type.Object({ name: Name }),
          response: { 200: Type.Object({ received: Type.Literal(true), id: Type.Integer() }), ...errorResponses(400, 413) },
        },
      },
      async (request, reply) => {
        const fault = await deps.controls.webhookFault(deps.controls.inboxUrl(request.params.name), 'inbox');
        if (fault?.effect === 'delay') await sleep(fault.delayMs!);
        if (fault?.effect === 'timeout') await sleep(HOLD_MS);
        const status = fault?.effect === 'status' ? fault.status! : 200;
        // Text columns take no NUL: shown as U+FFFD, as invalid UTF-8 is.
        const body = Buffer.isBuffer(request.body) ? request.body.toString('utf8').replaceAll('\u0000', '\uFFFD') : '';
        const id = await repo.recordArrival(
          deps.db,
          { name: request.params.name, receivedAt: deps.clock.now(), method: request.method, headers: recordedHeaders(request.headers), body, status },
          INBOX_KEEP,
        );
        // The status a fault says, whatever the schema's: it is the point of the fault.
        if (status !== 200) return reply.status(status as 200).send({ received: true, id: Number(id) });
        return { received: true as const, id: Number(id) };
      },
    );
  };

/** GET and DELETE /sandbox/inbox/{name} (admin token). */
export const inboxReadRoutes =
  (deps: InboxDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const params = Type.Object({ name: Name });
    app.get(
      '/sandbox/inbox/:name',
      {
        schema: {
          tags: ['Sandbox'],
          security: ADMIN_SECURITY,
          operationId: 'sandboxInboxList',
          summary: 'What arrived at a webhook inbox, newest first',
          params,
          response: { 200: Type.Object({ data: Type.Array(Arrival) }) },
        },
      },
      async (request) => {
        const rows = await repo.listArrivals(deps.db, request.params.name, INBOX_KEEP);
        return {
          data: rows.map((r) => ({ id: Number(r.id), receivedAt: r.received_at.toISOString(), method: r.method, headers: r.headers, body: r.body, status: r.status })),
        };
      },
    );
    app.delete(
      '/sandbox/inbox/:name',
      { schema: { tags: ['Sandbox'], security: ADMIN_SECURITY, operationId: 'sandboxInboxClear', summary: 'Empty a webhook inbox', params, response: { 204: Type.Null() } } },
      async (request, reply) => {
        await repo.clearInbox(deps.db, request.params.name);
        return reply.status(204).send(null);
      },
    );
  };
