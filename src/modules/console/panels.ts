import { changeMarker as accountsMarker } from '../accounts/repo.ts';
import { Type, type TProperties } from 'typebox';
import { changeMarker as chargesMarker } from '../charges/repo.ts';
import { changeMarker as controlsMarker, inboxMarkers } from '../controls/repo.ts';
import { changeMarker as ledgerMarker } from '../ledger/repo.ts';
import { changeMarker as medsMarker } from '../meds/repo.ts';
import { changeMarker as notificationsMarker } from '../notifications/repo.ts';
import { changeMarker as transactionsMarker } from '../transactions/repo.ts';
import { changeMarker as keyWebhooksMarker } from '../webhooks/pix-key-repo.ts';
import { changeMarkers as webhookMarkers } from '../webhooks/repo.ts';
import { HOLDER_ACTIONS, NETWORK_ACTIONS, type ConsoleAction } from './actions.ts';
import type { ChangeSource } from './changes.ts';
import { CONTROL_ACTIONS } from './control-actions.ts';
import { PAYER_ACTIONS } from './automatico-actions.ts';
import { automaticoOf, accountSummary, payerAutomaticoOf, accountsWithBalances, chargesOf, clockOf, faultsOf, inboxOf, medsOf, transactionsOf, webhooksOf, type AccountSummary, type ConsoleContext } from './service.ts';
import { accountHeader, chargeActions, chargesSection, medActions, medsSection, overviewActions } from './views/account.ts';
import { accountsTable } from './views/accounts.ts';
import { automaticoActions, automaticoSections } from './views/automatico.ts';
import { payerAutomaticoActions, payerAutomaticoSections } from './views/automatico-payer.ts';
import { automaticoMarkers } from '../recurrences/rows.ts';
import { advanceByForm, advanceToForm, clockSection, directoryFaultForm, faultsSection, resetClockForm, settlementFaultForm, webhookFaultForm } from './views/controls.ts';
import { externalKeyForm, incomingPixForm, incomingRefundForm, openMedForm, payBrCodeForm, settleForm } from './views/action-forms.ts';
import { panel, type ViewContext } from './views/forms.ts';
import { html, type SafeHtml } from './views/html.ts';
import { arrivalsSection, inboxHeader } from './views/inbox.ts';
import type { NavEntry } from './views/layout.ts';
import { transactionsSection } from './views/transactions.ts';
import { webhookActions, webhooksSections } from './views/webhooks.ts';

/**
 * What the console is made of. A new panel (as the test clock, faults and the inbox are) is a page here,
 * its forms' actions, and, when what it shows changes without a movement of money, a change
 * source: the routes, the navigation and the live updates follow from these lists.
 */

/** A page of its own in the console's navigation, at `nav.href`. */
export interface ConsolePage {
  readonly nav: NavEntry;
  /** The page's own query parameters (all optional), validated before `render` gets them. */
  readonly query?: TProperties;
  render(ctx: ConsoleContext, view: ViewContext, query: Readonly<Record<string, unknown>>): Promise<{ title: string; body: SafeHtml }>;
}

/** A tab of an account's page, at /console/accounts/{id}/{slug} ('' is the overview). */
export interface AccountTab {
  readonly slug: string;
  readonly label: string;
  render(ctx: ConsoleContext, view: ViewContext, summary: AccountSummary): Promise<SafeHtml>;
}

const accountsPage: ConsolePage = {
  nav: { href: '/console', label: 'Accounts' },
  query: { page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })) },
  async render(ctx, _view, query) {
    return { title: 'Accounts', body: accountsTable(await accountsWithBalances(ctx, typeof query.page === 'number' ? query.page : 1)) };
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

const NO_CONTROLS = html`<p>This process runs without the sandbox's controls (the test clock, faults and the inbox).</p>`;

const clockPage: ConsolePage = {
  nav: { href: '/console/clock', label: 'Clock' },
  async render(ctx, view) {
    const clock = clockOf(ctx);
    if (!clock) return { title: 'The test clock', body: NO_CONTROLS };
    const note = 'Business time moves forward only, for every process on the database; whatever fell due meanwhile (expiries, settlements, retries) happens promptly, in order.';
    const forms = [advanceByForm(view, 'by'), advanceToForm(view, 'to', clock), resetClockForm(view, 'reset')];
    return { title: 'The test clock', body: html`${clockSection(clock)}<div class="panels">${panel('As the network', 'network-title', forms, note)}</div>` };
  },
};

const faultsPage: ConsolePage = {
  nav: { href: '/console/faults', label: 'Faults' },
  async render(ctx, view) {
    const faults = await faultsOf(ctx);
    if (!faults || !ctx.controls) return { title: 'Faults', body: NO_CONTROLS };
    const forms = [webhookFaultForm(view, 'webhook', ctx.controls.inboxUrl('')), settlementFaultForm(view, 'settlement'), directoryFaultForm(view, 'directory')];
    const note = 'Each fault shows where it acts: in the delivery log (HTTP 503 (sandbox fault 3)), in a transfer\'s error reason, or as 503 DIRECTORY_UNAVAILABLE.';
    return { title: 'Faults', body: html`${faultsSection(view, faults)}<div class="panels">${panel('Set a fault (as the network)', 'network-title', forms, note)}</div>` };
  },
};

const INBOX_NAME = '^[A-Za-z0-9_-]{1,64}$';

const inboxPage: ConsolePage = {
  nav: { href: '/console/inbox', label: 'Inbox' },
  query: { name: Type.Optional(Type.String({ pattern: INBOX_NAME })) },
  async render(ctx, view, query) {
    const inbox = await inboxOf(ctx, typeof query.name === 'string' ? query.name : 'mine');
    if (!inbox) return { title: 'The webhook inbox', body: NO_CONTROLS };
    return { title: 'The webhook inbox', body: html`${inboxHeader(view, inbox)}${arrivalsSection(inbox)}` };
  },
};

export const CONSOLE_PAGES: readonly ConsolePage[] = [accountsPage, networkPage, clockPage, faultsPage, inboxPage];

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
      return html`${chargeActions(view, summary.account.id, clockOf(ctx))}${chargesSection(view, await chargesOf(ctx, summary.account.id))}`;
    },
  },
  {
    slug: 'automatico',
    label: 'Pix Automático',
    async render(ctx, view, summary) {
      const id = summary.account.id;
      // As its receiver, then as its payer.
      const receiver = html`${automaticoActions(view, clockOf(ctx))}${automaticoSections(view, await automaticoOf(ctx, id))}`;
      return html`${receiver}${payerAutomaticoActions(view, id)}${payerAutomaticoSections(view, await payerAutomaticoOf(ctx, id))}`;
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
      const account = { id: summary.account.id, keys: summary.keys.map((k) => k.key), inbox: ctx.controls?.inboxUrl(`account-${summary.account.id}`) ?? null };
      return html`${webhookActions(view, account, clockOf(ctx))}${webhooksSections(await webhooksOf(ctx, summary.account.id))}`;
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

export const CONSOLE_ACTIONS: readonly ConsoleAction[] = [...NETWORK_ACTIONS, ...HOLDER_ACTIONS, ...CONTROL_ACTIONS, ...PAYER_ACTIONS];

/** What the live updates watch: each module's own marker. */
export const CHANGE_SOURCES: readonly ChangeSource[] = [
  accountsMarker,
  ledgerMarker,
  transactionsMarker,
  chargesMarker,
  medsMarker,
  notificationsMarker,
  ...webhookMarkers,
  keyWebhooksMarker,
  controlsMarker,
  ...inboxMarkers,
  ...automaticoMarkers,
];
