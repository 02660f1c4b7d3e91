import { changeMarker as accountsMarker } from '../accounts/repo.ts';
import { changeMarker as chargesMarker } from '../charges/repo.ts';
import { changeMarker as ledgerMarker } from '../ledger/repo.ts';
import { changeMarker as medsMarker } from '../meds/repo.ts';
import { changeMarker as notificationsMarker } from '../notifications/repo.ts';
import { changeMarker as transactionsMarker } from '../transactions/repo.ts';
import { changeMarkers as webhookMarkers } from '../webhooks/repo.ts';
import { HOLDER_ACTIONS, NETWORK_ACTIONS, type ConsoleAction } from './actions.ts';
import type { ChangeSource } from './changes.ts';
import { accountSummary, accountsWithBalances, chargesOf, medsOf, transactionsOf, webhooksOf, type AccountSummary, type ConsoleContext } from './service.ts';
import { accountHeader, chargeActions, chargesSection, medActions, medsSection, overviewActions } from './views/account.ts';
import { accountsTable } from './views/accounts.ts';
import { externalKeyForm, incomingPixForm, incomingRefundForm, openMedForm, payBrCodeForm, settleForm } from './views/action-forms.ts';
import { panel, type ViewContext } from './views/forms.ts';
import { html, type SafeHtml } from './views/html.ts';
import type { NavEntry } from './views/layout.ts';
import { transactionsSection } from './views/transactions.ts';
import { webhookActions, webhooksSections } from './views/webhooks.ts';

/**
 * What the console is made of. A new panel (the test clock, faults, the inbox) is a page here,
 * its forms' actions, and, when what it shows changes without a movement of money, a change
 * source: the routes, the navigation and the live updates follow from these lists.
 */

/** A page of its own in the console's navigation, at `nav.href`. */
export interface ConsolePage {
  readonly nav: NavEntry;
  render(ctx: ConsoleContext, view: ViewContext, query: { page?: number | undefined }): Promise<{ title: string; body: SafeHtml }>;
}

/** A tab of an account's page, at /console/accounts/{id}/{slug} ('' is the overview). */
export interface AccountTab {
  readonly slug: string;
  readonly label: string;
  render(ctx: ConsoleContext, view: ViewContext, summary: AccountSummary): Promise<SafeHtml>;
}

const accountsPage: ConsolePage = {
  nav: { href: '/console', label: 'Accounts' },
  async render(ctx, _view, query) {
    return { title: 'Accounts', body: accountsTable(await accountsWithBalances(ctx, query.page ?? 1)) };
  },
};

const networkPage: ConsolePage = {
  nav: { href: '/console/network', label: 'Network' },
  async render(_ctx, view) {
    const forms = [incomingPixForm(view, 'in'), payBrCodeForm(view, 'pay'), incomingRefundForm(view, 'back'), openMedForm(view, 'med'), settleForm(view, 'settle'), externalKeyForm(view, 'key')];
    const note = 'The console plays the rest of the Pix network here, as the /sandbox/* operations do.';
    return { title: 'The Pix network', body: html`<div class="panels">${panel('As the network', 'network-title', forms, note)}</div>` };
  },
};

export const CONSOLE_PAGES: readonly ConsolePage[] = [accountsPage, networkPage];

export const ACCOUNT_TABS: readonly AccountTab[] = [
  {
    slug: '',
    label: 'Overview',
    async render(ctx, view, summary) {
      const id = summary.account.id;
      return html`${overviewActions(view, summary)}${transactionsSection(view, id, await transactionsOf(ctx, id), ctx.config.pspIspb)}`;
    },
  },
  {
    slug: 'charges',
    label: 'Charges',
    async render(ctx, view, summary) {
      return html`${chargeActions(view, summary.account.id)}${chargesSection(await chargesOf(ctx, summary.account.id))}`;
    },
  },
  {
    slug: 'meds',
    label: 'MEDs',
    async render(ctx, view, summary) {
      return html`${medActions(view)}${medsSection(view, await medsOf(ctx, summary.account.id))}`;
    },
  },
  {
    slug: 'webhooks',
    label: 'Webhooks',
    async render(ctx, view, summary) {
      return html`${webhookActions(view, summary.account.id)}${webhooksSections(await webhooksOf(ctx, summary.account.id))}`;
    },
  },
];

export const tabHref = (accountId: bigint, slug: string) => `/console/accounts/${accountId}${slug ? `/${slug}` : ''}`;

/** An account's page: its header (balances, keys, tabs) and the tab's content. */
export async function accountPage(ctx: ConsoleContext, view: ViewContext, accountId: bigint, tab: AccountTab) {
  const summary = await accountSummary(ctx, accountId);
  const tabs = ACCOUNT_TABS.map((t) => ({ href: tabHref(accountId, t.slug), label: t.label }));
  const body = html`${accountHeader(summary, tabs, tabHref(accountId, tab.slug))}${await tab.render(ctx, view, summary)}`;
  return { title: summary.account.name, body };
}

export const CONSOLE_ACTIONS: readonly ConsoleAction[] = [...NETWORK_ACTIONS, ...HOLDER_ACTIONS];

/** What the live updates watch: each module's own marker. */
export const CHANGE_SOURCES: readonly ChangeSource[] = [
  accountsMarker,
  ledgerMarker,
  transactionsMarker,
  chargesMarker,
  medsMarker,
  notificationsMarker,
  ...webhookMarkers,
];
