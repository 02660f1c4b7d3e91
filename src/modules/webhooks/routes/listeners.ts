import { STATUS_CODES } from 'node:http';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ADMIN_SECURITY, errorResponses, Nullable, StringEnum, Timestamp } from '../../../http/schemas.ts';
import { LISTEN_PATH } from '../destination.ts';
import { answer, arrive, attach, detach, LISTEN_KINDS, listListeners, MAX_POLL_WAIT_MS, take, type ListenersDeps } from '../listeners.ts';

/**
 * The listeners of `pix-api listen` (sandbox, admin token): start one for an account, take what
 * arrived for it, answer each, stop it. And where the service delivers to it (no token: the
 * listener's id in the path is its secret), as it delivers to any receiver.
 */

const common = { tags: ['Sandbox'], security: ADMIN_SECURITY };
const ListenerId = Type.String({ pattern: '^[A-Za-z0-9_-]{22}$', description: "The listener's id (also its secret: deliveries arrive at its URL)" });
const SubPath = Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'pix, rec or cobr: where BCB\'s callbacks of a webhookUrl go' });
const Kinds = Type.Array(StringEnum(LISTEN_KINDS), {
  minItems: 1,
  uniqueItems: true,
  description: "events: the root's events (a registration of the listener's own for each); pix, rec, cobr: BCB's callbacks (each key's webhook, the rec and cobr webhooks, moved to the listener and moved back when it stops)",
});

const listenerFields = {
  id: ListenerId,
  name: Type.String(),
  url: Type.String({ description: 'Where the service delivers what the listener takes' }),
  kinds: Type.Array(Type.String()),
};

const Started = Type.Object({
    ...listenerFields,
    replaced: Type.Array(
      Type.Object({ kind: Type.String(), chave: Type.Optional(Type.String()), url: Nullable(Type.String()) }),
      { description: "BCB's registrations moved to the listener, with the URL each goes back to when it stops (null: none, removed then)" },
    ),
    clientCertificate: Type.Union([
      Type.Object({ cert: Type.String(), key: Type.String() }, { description: "The client certificate BCB's callbacks present, to present it to the local receiver (mutual TLS)" }),
      Type.Null(),
    ]),
});

const Forward = Type.Object({
  id: Type.Integer(),
  path: Type.String({ description: "'' for the root's events, '/pix', '/rec' or '/cobr' for BCB's callbacks" }),
  headers: Type.Record(Type.String(), Type.String()),
  body: Type.String(),
  receivedAt: Timestamp(),
});

/** Headers of an arrival that belong to its hop, not to the message: the listener's request makes its own. */
const HOP_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'x-ssl-client-cert', 'accept-encoding']);
const MAX_HEADERS = 64;

function messageHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw).slice(0, MAX_HEADERS)) {
    if (value !== undefined && !HOP_HEADERS.has(name)) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

export const listenerRoutes =
  (deps: ListenersDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    await app.register(listenerStartRoutes(deps));
    await app.register(listenerQueueRoutes(deps));
  };

/** Starting a listener, and an account's listeners. */
const listenerStartRoutes =
  (deps: ListenersDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/sandbox/listeners',
      {
        schema: {
          ...common,
          operationId: 'sandboxListenerStart',
          summary: "Start (or resume, by name) a listener of an account's deliveries (pix-api listen)",
          description:
            "Deliveries of the account go to the listener's URL as to any receiver, signed as ever. They wait there until the listener takes them " +
            '(GET .../arrivals) and are answered with what it says its local receiver answered (POST .../answer); with no listener asking for 15 s they are answered 503, ' +
            'and a delivery unanswered in 9 s gets 504: failed attempts, retried on their schedule. Starting again with the same name resumes the listener.',
          body: Type.Object(
            {
              accountId: Type.Integer({ minimum: 1 }),
              name: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'Default `default`' })),
              kinds: Kinds,
              mutualTls: Type.Optional(Type.Boolean({ description: "Hand over the client certificate BCB's callbacks present (default false)" })),
            },
            { additionalProperties: false },
          ),
          response: { 201: Started, ...errorResponses(400, 404, 422) },
        },
      },
      async (request, reply) => {
        const b = request.body;
        const started = await attach(deps, { accountId: BigInt(b.accountId), name: b.name ?? 'default', kinds: b.kinds, mutualTls: b.mutualTls ?? false });
        return reply.status(201).send(started);
      },
    );

    app.get(
      '/sandbox/listeners',
      {
        schema: {
          ...common,
          operationId: 'sandboxListenerList',
          summary: "An account's listeners, and whether each is connected",
          querystring: Type.Object({ accountId: Type.Integer({ minimum: 1 }) }),
          response: {
            200: Type.Object({
              data: Type.Array(Type.Object({ ...listenerFields, connected: Type.Boolean(), seenAt: Timestamp(), createdAt: Timestamp() })),
            }),
            ...errorResponses(400),
          },
        },
      },
      async (request) => ({ data: await listListeners(deps, BigInt(request.query.accountId)) }),
    );

  };

/** Taking what arrived for a listener, answering it, stopping the listener. */
const listenerQueueRoutes =
  (deps: ListenersDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/sandbox/listeners/:id/arrivals',
      {
        schema: {
          ...common,
          operationId: 'sandboxListenerTake',
          summary: 'Take what arrived for a listener (a long poll)',
          description: 'Hands over what arrived and was not taken yet, oldest first (20 at most); with nothing there, waits up to `waitMs` for something to arrive. Asking keeps the listener connected.',
          params: Type.Object({ id: ListenerId }),
          querystring: Type.Object({ waitMs: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_POLL_WAIT_MS, description: `Default 0; at most ${MAX_POLL_WAIT_MS}` })) }),
          response: { 200: Type.Object({ data: Type.Array(Forward) }), ...errorResponses(400, 404) },
        },
      },
      async (request) => ({ data: await take(deps, request.params.id, request.query.waitMs ?? 0) }),
    );

    app.post(
      '/sandbox/listeners/:id/arrivals/:arrivalId/answer',
      {
        schema: {
          ...common,
          operationId: 'sandboxListenerAnswer',
          summary: 'What the local receiver answered to an arrival: the delivery is answered with it',
          params: Type.Object({ id: ListenerId, arrivalId: Type.Integer({ minimum: 1 }) }),
          body: Type.Object(
            {
              status: Type.Integer({ minimum: 100, maximum: 599, description: "The local receiver's status (502 when it could not be reached)" }),
              durationMs: Type.Integer({ minimum: 0, maximum: 600_000 }),
              error: Type.Optional(Type.String({ maxLength: 500, description: 'Why there was no answer (connection refused, timeout, TLS failure)' })),
            },
            { additionalProperties: false },
          ),
          response: { 204: Type.Null(), ...errorResponses(400, 404) },
        },
      },
      async (request, reply) => {
        await answer(deps, request.params.id, BigInt(request.params.arrivalId), request.body);
        return reply.status(204).send(null);
      },
    );

    app.delete(
      '/sandbox/listeners/:id',
      {
        schema: {
          ...common,
          operationId: 'sandboxListenerStop',
          summary: "Stop a listener: its registrations go, BCB's registrations go back, nothing is left registered",
          params: Type.Object({ id: ListenerId }),
          response: { 204: Type.Null(), ...errorResponses(404) },
        },
      },
      async (request, reply) => {
        await detach(deps, request.params.id);
        return reply.status(204).send(null);
      },
    );
  };

/** POST {PUBLIC_URL}/sandbox/listen/{id}[/{path}]: where the service delivers to a listener (no token). */
export const listenerReceiveRoute =
  (deps: ListenersDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    const receive = async (request: FastifyRequest<{ Params: { id: string; path?: string } }>, reply: FastifyReply) => {
      const body = Buffer.isBuffer(request.body) ? request.body.toString('utf8') : '';
      const path = request.params.path === undefined ? '' : `/${request.params.path}`;
      const answered = await arrive(deps, request.params.id, { path, headers: messageHeaders(request.headers), body });
      // The status the local receiver gave, whatever the schema's: it is the delivery's answer.
      if (answered.status < 400) return reply.status(answered.status).send({ forwarded: true, status: answered.status });
      const message = `The listener's local receiver answered HTTP ${answered.status}${answered.error ? ` (${answered.error})` : ''}`;
      return reply.status(answered.status).send({ statusCode: answered.status, error: STATUS_CODES[answered.status] ?? 'Error', message, code: 'LOCAL_RECEIVER_REFUSED' });
    };
    const response = { 200: Type.Object({ forwarded: Type.Literal(true), status: Type.Integer({ description: "The local receiver's status" }) }), ...errorResponses(400, 404, 502, 503, 504) };
    const description = "No token: the service delivers here what a listener takes; answered with what the listener's local receiver answered.";
    app.post(
      `${LISTEN_PATH}/:id`,
      {
        schema: { tags: ['Sandbox'], security: [], operationId: 'sandboxListenerReceive', summary: "A listener's address: deliveries to forward", description, params: Type.Object({ id: ListenerId }), response },
      },
      receive,
    );
    app.post(
      `${LISTEN_PATH}/:id/:path`,
      {
        schema: {
          tags: ['Sandbox'],
          security: [],
          operationId: 'sandboxListenerReceiveAtPath',
          summary: "A sub-path of a listener's address (BCB callbacks: /pix, /rec, /cobr)",
          description,
          params: Type.Object({ id: ListenerId, path: SubPath }),
          response,
        },
      },
      receive,
    );
  };
