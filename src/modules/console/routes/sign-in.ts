import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../../http/errors.ts';
import { ConsoleSessions, cookieValue, SESSION_COOKIE, SESSION_TTL_MS } from '../session.ts';
import { signInPage } from '../views/layout.ts';
import { safeReturn } from './guard.ts';

export interface SignInDeps {
  readonly sessions: ConsoleSessions;
  /** The admin token's check, with its limit on wrong ones per source (http/auth.ts adminTokenCheck). */
  readonly checkAdminToken: (token: string | null, request: FastifyRequest) => Promise<void>;
  /** Cookies marked Secure when the console is reached over HTTPS. */
  readonly secure: boolean;
}

const html = 'text/html; charset=utf-8';
const publicRoute = { consolePublic: true };

/** GET and POST /console/sign-in, POST /console/sign-out. */
export const signInRoutes =
  (deps: SignInDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { sessions } = deps;
    app.get(
      '/console/sign-in',
      { config: publicRoute, schema: { hide: true, querystring: Type.Object({ next: Type.Optional(Type.String({ maxLength: 300 })) }) } },
      async (request, reply) => {
        const next = safeReturn(request.query.next);
        if (sessions.verify(cookieValue(request.headers.cookie, SESSION_COOKIE))) return reply.redirect(next, 303);
        return reply.type(html).send(signInPage({ next }));
      },
    );

    app.post(
      '/console/sign-in',
      {
        config: publicRoute,
        schema: { hide: true, body: Type.Object({ token: Type.String({ maxLength: 4096 }), next: Type.Optional(Type.String({ maxLength: 300 })) }, { additionalProperties: false }) },
      },
      async (request, reply) => {
        const next = safeReturn(request.body.next);
        try {
          await deps.checkAdminToken(request.body.token, request);
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          if (error.headers) void reply.headers(error.headers);
          const message = error.code === 'ADMIN_TOKEN_INVALID' ? 'That is not the admin token of this service.' : error.message;
          return reply.status(error.statusCode).type(html).send(signInPage({ next, message }));
        }
        const { value } = sessions.issue();
        void reply.header('set-cookie', ConsoleSessions.cookie(value, { secure: deps.secure, maxAgeSeconds: SESSION_TTL_MS / 1000 }));
        return reply.redirect(next, 303);
      },
    );

    app.post(
      '/console/sign-out',
      { schema: { hide: true, body: Type.Object({ _csrf: Type.String({ maxLength: 100 }) }, { additionalProperties: false }) } },
      async (request, reply) => {
        sessions.revoke(request.consoleSession!);
        void reply.header('set-cookie', ConsoleSessions.cookie('', { secure: deps.secure, maxAgeSeconds: 0 }));
        return reply.redirect('/console/sign-in', 303);
      },
    );
  };
