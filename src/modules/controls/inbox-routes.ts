import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ADMIN_SECURITY, errorResponses, Timestamp } from '../../http/schemas.ts';
import type { Clock } from '../../lib/clock.ts';
import { DELIVERY_TIMEOUT_MS } from '../webhooks/sender.ts';
import { AppError } from '../../http/errors.ts';
import { clientAddress, failureSource, type CertificateTrust } from '../../http/client-certificate.ts';
import type { RateLimiter } from '../../http/rate-limit.ts';
import * as repo from './repo.ts';
import type { InboxBounds } from './repo.ts';
import type { SandboxControls } from './service.ts';

/**
 * What the inboxes keep: per inbox its newest 200 arrivals, within 1 MiB of bodies (the oldest
 * go first); 50 inboxes in all (a new one empties the inbox written to longest ago). An inbox
 * takes at most 600 arrivals a minute from one source, but from the machine's own addresses
 * (the service's own deliveries, and its developer): docs/guide/sandbox.md.
 */
export const INBOX_BOUNDS: InboxBounds = { arrivals: 200, bytes: 1024 * 1024, names: 50 };
export const INBOX_ARRIVALS_PER_MINUTE = 600;
/** Arrivals listed at most: all an inbox keeps. */
export const INBOX_KEEP = INBOX_BOUNDS.arrivals;
/** Headers recorded per arrival, and the length of each value. */
const MAX_HEADERS = 64;
const MAX_HEADER_VALUE = 2048;
/** A timeout fault holds the answer past any sender's time limit. */
const HOLD_MS = DELIVERY_TIMEOUT_MS + 1_000;

const Name = Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'Any name: letters, digits, _ and -' });
const SubPath = Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'One segment under the inbox (pix, rec, cobr): letters, digits, _ and -' });
const Arrival = Type.Object({
  id: Type.Integer(),
  receivedAt: Timestamp(),
  method: Type.String(),
  headers: Type.Record(Type.String(), Type.String()),
  path: Type.String({ description: "The sub-path it came to ('/pix'), '' for the inbox itself" }),
  body: Type.String({ description: 'The body as text (UTF-8)' }),
  status: Type.Integer({ description: 'What the inbox answered: 200, or what a fault said' }),
});

export interface InboxDeps {
  readonly controls: SandboxControls;
  readonly db: Parameters<typeof repo.recordArrival>[0];
  /** Business time: arrivals are stamped as everything else the sandbox records. */
  readonly clock: Clock;
}

export interface InboxReceiveDeps extends InboxDeps {
  /** Arrivals per source and minute (INBOX_ARRIVALS_PER_MINUTE), in real time. */
  readonly arrivals: RateLimiter;
  readonly realClock: Clock;
  readonly trust: Pick<CertificateTrust, 'trustedProxies'>;
}

/** The machine's own addresses: the service delivering to its own inbox, and its developer. */
const isLoopback = (address: string) => /^127\./.test(address) || address === '::1';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function recordedHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw).slice(0, MAX_HEADERS)) {
    if (value !== undefined) out[name] = (Array.isArray(value) ? value.join(', ') : value).slice(0, MAX_HEADER_VALUE);
  }
  return out;
}

/** Records an arrival at an inbox (or a sub-path of one), after the limit per source and the faults on its URL. */
function receiveArrival(deps: InboxReceiveDeps) {
  return async (request: FastifyRequest<{ Params: { name: string; path?: string } }>, reply: FastifyReply) => {
    const address = clientAddress(request, deps.trust);
    if (!isLoopback(address)) {
      const decision = await deps.arrivals.hit(failureSource(address), deps.realClock.now().getTime());
      if (!decision.allowed) {
        throw new AppError(429, 'RATE_LIMITED', `An inbox takes at most ${INBOX_ARRIVALS_PER_MINUTE} arrivals a minute from one address`, {
          headers: { 'retry-after': String(decision.retryAfterSeconds) },
        });
      }
    }
    const { name } = request.params;
    const path = request.params.path === undefined ? '' : `/${request.params.path}`;
    const fault = await deps.controls.webhookFault(`${deps.controls.inboxUrl(name)}${path}`, 'inbox');
    if (fault?.effect === 'delay') await sleep(fault.delayMs!);
    if (fault?.effect === 'timeout') await sleep(HOLD_MS);
    const status = fault?.effect === 'status' ? fault.status! : 200;
    // Text columns take no NUL: shown as U+FFFD, as invalid UTF-8 is.
    const body = Buffer.isBuffer(request.body) ? request.body.toString('utf8').replaceAll('\u0000', '\uFFFD') : '';
    const id = await repo.recordArrival(
      deps.db,
      { name, path, receivedAt: deps.clock.now(), method: request.method, headers: recordedHeaders(request.headers), body, status },
      INBOX_BOUNDS,
    );
    // The status a fault says, whatever the schema's: it is the point of the fault.
    return reply.status(status).send({ received: true, id: Number(id) });
  };
}

/**
 * POST /sandbox/inbox/{name}: public (webhooks post to it), any body and content type, recorded
 * as it came; it answers 200, or what a webhook fault on its URL says (docs/guide/sandbox.md).
 */
export const inboxReceiveRoute =
  (deps: InboxReceiveDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    const receive = receiveArrival(deps);
    const description =
      'No token: register `{PUBLIC_URL}/sandbox/inbox/{name}` as a webhook and read what arrived with GET. HTTP is allowed here (sandbox only). ' +
      'Each inbox keeps its newest 200 arrivals within 1 MiB of bodies; 50 inboxes in all (a new one empties the one written to longest ago); ' +
      "at most 600 arrivals a minute from one address other than the machine's own (429).";
    const response = { 200: Type.Object({ received: Type.Literal(true), id: Type.Integer() }), ...errorResponses(400, 413, 429) };
    app.post(
      '/sandbox/inbox/:name',
      {
        schema: {
          tags: ['Sandbox'],
          security: [],
          operationId: 'sandboxInboxReceive',
          summary: 'A webhook inbox: records whatever is posted to it',
          description,
          params: Type.Object({ name: Name }),
          response,
        },
      },
      receive,
    );
    app.post(
      '/sandbox/inbox/:name/:path',
      {
        schema: {
          tags: ['Sandbox'],
          security: [],
          operationId: 'sandboxInboxReceiveAtPath',
          summary: 'A sub-path of a webhook inbox (BCB callbacks: {webhookUrl}/pix, /rec, /cobr): recorded in the inbox with its path',
          description,
          params: Type.Object({ name: Name, path: SubPath }),
          response,
        },
      },
      receive,
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
          data: rows.map((r) => ({ id: Number(r.id), receivedAt: r.received_at.toISOString(), method: r.method, path: r.path, headers: r.headers, body: r.body, status: r.status })),
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
