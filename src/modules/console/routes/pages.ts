import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { StringEnum } from '../../../http/schemas.ts';
import type { ChangeFeed } from '../changes.ts';
import { ACCOUNT_TABS, accountPage, CONSOLE_PAGES, type AccountTab } from '../panels.ts';
import type { ConsoleContext } from '../service.ts';
import type { ConsoleSessions } from '../session.ts';
import type { ViewContext } from '../views/forms.ts';
import type { SafeHtml } from '../views/html.ts';
import { layout, type Notice } from '../views/layout.ts';

export interface PageDeps {
  readonly ctx: ConsoleContext;
  readonly feed: ChangeFeed;
  readonly sessions: ConsoleSessions;
}

/** The answer of a form sent without the script, carried back to the page (signed for the session). */
const NoticeQuery = {
  notice: Type.Optional(Type.String({ maxLength: 600 })),
  tone: Type.Optional(StringEnum(['ok', 'error'] as const)),
  sig: Type.Optional(Type.String({ maxLength: 64 })),
};
type NoticeParams = { notice?: string | undefined; tone?: 'ok' | 'error' | undefined; sig?: string | undefined };

const NAV = CONSOLE_PAGES.map((p) => p.nav);

export const noticeText = (tone: string, text: string) => `${tone}:${text}`;

function viewOf(deps: PageDeps, request: FastifyRequest): ViewContext {
  return { csrf: deps.sessions.csrfToken(request.consoleSession!), returnTo: request.url.split('?')[0]!, now: deps.ctx.clock.now() };
}

async function send(deps: PageDeps, request: FastifyRequest, reply: FastifyReply, page: { title: string; current: string; body: SafeHtml }) {
  const session = request.consoleSession!;
  const q = request.query as NoticeParams;
  const tone = q.tone ?? 'ok';
  const notice: Notice | undefined =
    q.notice !== undefined && deps.sessions.checkNotice(session, noticeText(tone, q.notice), q.sig) ? { text: q.notice, tone } : undefined;
  const marker = await deps.feed.current();
  const csrf = deps.sessions.csrfToken(session);
  return reply.type('text/html; charset=utf-8').send(layout({ ...page, nav: NAV, csrf, marker, notice }));
}

const AccountId = Type.String({ pattern: '^[1-9][0-9]{0,17}$' });

/**
 * The test clock as the database has it now: an advance made through another process reaches
 * this one's poll up to 200 ms later, but the page it made out of date is read again at once.
 */
const currentClock = (deps: PageDeps) => deps.ctx.controls?.refresh();

/** The console's pages: one per entry of CONSOLE_PAGES, and an account's page with its tabs. */
export const pageRoutes =
  (deps: PageDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    for (const page of CONSOLE_PAGES) {
      app.get(page.nav.href, { schema: { hide: true, querystring: Type.Object({ ...page.query, ...NoticeQuery }) } }, async (request, reply) => {
        await currentClock(deps);
        const { title, body } = await page.render(deps.ctx, viewOf(deps, request), request.query as Record<string, unknown>);
        return send(deps, request, reply, { title, current: page.nav.href, body });
      });
    }
    const account = async (request: FastifyRequest, reply: FastifyReply, id: string, tab: AccountTab) => {
      await currentClock(deps);
      const { title, body } = await accountPage(deps.ctx, viewOf(deps, request), BigInt(id), tab);
      return send(deps, request, reply, { title, current: '/console', body });
    };
    app.get(
      '/console/accounts/:accountId',
      { schema: { hide: true, params: Type.Object({ accountId: AccountId }), querystring: Type.Object(NoticeQuery) } },
      async (request, reply) => account(request, reply, request.params.accountId, ACCOUNT_TABS[0]!),
    );
    const tabs = ACCOUNT_TABS.filter((t) => t.slug !== '');
    app.get(
      '/console/accounts/:accountId/:tab',
      { schema: { hide: true, params: Type.Object({ accountId: AccountId, tab: StringEnum(tabs.map((t) => t.slug)) }), querystring: Type.Object(NoticeQuery) } },
      async (request, reply) => account(request, reply, request.params.accountId, tabs.find((t) => t.slug === request.params.tab)!),
    );
  };
