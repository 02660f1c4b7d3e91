import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { CONSOLE_ACTIONS } from '../panels.ts';
import type { ConsoleContext } from '../service.ts';
import type { ConsoleSessions } from '../session.ts';
import { fromScript, safeReturn } from './guard.ts';
import { noticeText } from './pages.ts';

/**
 * POST /console/actions/{name}, one route per action with its own body schema. The script gets
 * the action's sentence as text; a form sent without it is sent back to its page, the sentence
 * in the query (signed for the session). The session's token was checked before validation (guard.ts).
 */
export const actionRoutes =
  (deps: { ctx: ConsoleContext; sessions: ConsoleSessions }): FastifyPluginAsyncTypebox =>
  async (app) => {
    for (const action of CONSOLE_ACTIONS) {
      const body = Type.Object(
        { ...action.body.properties, _csrf: Type.String({ maxLength: 100 }), returnTo: Type.Optional(Type.String({ maxLength: 300 })) },
        { additionalProperties: false },
      );
      app.post(`/console/actions/${action.name}`, { schema: { hide: true, body } }, async (request, reply) => {
        const { _csrf: _token, returnTo, ...fields } = request.body as Record<string, string>;
        const message = await action.run(deps.ctx, fields);
        if (fromScript(request)) return reply.type('text/plain; charset=utf-8').send(message);
        const sig = deps.sessions.noticeSignature(request.consoleSession!, noticeText('ok', message));
        const query = new URLSearchParams({ notice: message, tone: 'ok', sig });
        return reply.redirect(`${safeReturn(returnTo)}?${query}`, 303);
      });
    }
  };
