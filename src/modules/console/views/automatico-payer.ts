import { parseDecimal } from '../../../lib/money.ts';
import { saoPauloDay } from '../../cobv/due.ts';
import { addDays } from '../../recurrences/cycle.ts';
import { SANDBOX_RECEIVER } from '../../recurrences/sandbox-receiver.ts';
import { FREQUENCIES, RETRY_POLICIES } from '../automatico-actions.ts';
import type { PayerAutomaticoItems } from '../service.ts';
import { day, money, time } from './format.ts';
import { actionForm, amountField, field, formCard, hidden, panel, select, type ViewContext } from './forms.ts';
import { html, type SafeHtml } from './html.ts';

/**
 * An account's Pix Automático as its payer, as its API (/api/automatico/*) shows it: the
 * authorizations asked of it or held by it, the recurring charges it pays with each attempt's
 * history; the holder's answers (approve, reject, cancel) and the sandbox as another
 * institution's receiver asking the account and charging it.
 */

type Authorization = PayerAutomaticoItems['authorizations'][number];
type PayerCharge = PayerAutomaticoItems['charges'][number];

/** An amount as the console's amount fields take it. */
const AMOUNT_PATTERN = '[0-9]+([.,][0-9]{1,2})?';

const amount = (decimal: string) => money(parseDecimal(decimal) ?? 0n);

/** A history, oldest first: each status and when it came. */
function history(entries: readonly { status: string; at: string }[]): SafeHtml {
  return html`<ol class="history">${entries.map((e) => html`<li><span class="badge">${e.status}</span> ${time(new Date(e.at))}</li>`)}</ol>`;
}

const ending = (v: { rejection: { code: string; description: string } | null; cancellation: { code: string; requestedBy: string } | null }): SafeHtml =>
  html`${v.rejection ? html`<br><span class="note">${v.rejection.code}: ${v.rejection.description}</span>` : ''}${v.cancellation ? html`<br><span class="note">${v.cancellation.code} by ${v.cancellation.requestedBy}</span>` : ''}`;

const ids = (accountId: bigint, idRec: string) => [hidden('accountId', String(accountId)), hidden('idRec', idRec)];

/** A PENDING authorization answered by its holder: approved (with a maximum per charge where the recurrence fixes no amount) or rejected. */
function answerForms(view: ViewContext, accountId: bigint, a: Authorization): SafeHtml {
  const maximum =
    a.amount.fixed === null
      ? [field({ id: `auth-${a.idRec}-max`, name: 'maximumAmount', label: 'Maximum per charge (R$, optional)', inputmode: 'decimal', maxLength: 20, pattern: AMOUNT_PATTERN })]
      : [];
  const approve = actionForm(view, 'approve-authorization', { inline: true, submit: 'Approve', label: `Approve the authorization ${a.idRec} as the payer`, fields: [...ids(accountId, a.idRec), ...maximum] });
  const reject = actionForm(view, 'reject-authorization', { inline: true, submit: 'Reject', label: `Reject the authorization ${a.idRec} as the payer`, tone: 'danger', fields: ids(accountId, a.idRec) });
  return html`${approve}${reject}`;
}

/** The day a charge of the recurrence is due by default: 5 days on (in its D-10 to D-2 window), not before the recurrence starts. */
function defaultDue(view: ViewContext, a: Authorization): string {
  const due = addDays(saoPauloDay(view.now), 5);
  return due < a.startDate ? a.startDate : due;
}

/** Another institution's receiver charging an APPROVED recurrence of its own. */
function sendChargeForm(view: ViewContext, a: Authorization): SafeHtml {
  const p = `send-${a.idRec}`;
  const fields = [
    hidden('idRec', a.idRec),
    field({ id: `${p}-due`, name: 'dueDate', label: 'Due date', type: 'date', value: defaultDue(view, a), required: true, hint: 'Sent from 10 to 2 days before it settles' }),
    amountField(`${p}-amount`, 'Amount (R$)', a.amount.fixed ?? a.amount.receiverMinimum ?? ''),
  ];
  const form = actionForm(view, 'sandbox-recurring-charge', { submit: 'Send the charge', label: `Send a recurring charge of ${a.idRec} as its receiver`, fields });
  return html`<details id="${p}"><summary>Send a recurring charge (as its receiver)</summary>${form}</details>`;
}

function authorizationActions(view: ViewContext, items: PayerAutomaticoItems, a: Authorization): SafeHtml {
  if (a.status === 'PENDING') return html`<br>${answerForms(view, items.accountId, a)}`;
  if (a.status !== 'APPROVED') return html``;
  const cancel = actionForm(view, 'cancel-authorization', { inline: true, submit: 'Cancel', label: `Cancel the authorization ${a.idRec} as the payer`, tone: 'danger', fields: ids(items.accountId, a.idRec) });
  return html`<br>${cancel}${a.receiver.ispb === items.ispb ? '' : sendChargeForm(view, a)}`;
}

function authorizationAmount(a: Authorization): SafeHtml {
  if (a.amount.fixed !== null) return amount(a.amount.fixed);
  const minimum = a.amount.receiverMinimum === null ? html`any amount` : html`at least ${amount(a.amount.receiverMinimum)}`;
  return html`${minimum}${a.amount.payerMaximum === null ? '' : html`<br><span class="note">at most ${amount(a.amount.payerMaximum)} (the payer's maximum)</span>`}`;
}

function authorizationRow(view: ViewContext, items: PayerAutomaticoItems, a: Authorization): SafeHtml {
  return html`<tr>
  <th scope="row"><code>${a.idRec}</code></th>
  <td><span class="badge authorization-${a.status.toLowerCase()}">${a.status}</span>${a.journey ? html`<br><span class="note">${a.journey}</span>` : ''}${ending(a)}${authorizationActions(view, items, a)}</td>
  <td>${a.receiver.name}<br><span class="note">CNPJ ${a.receiver.document}, ISPB ${a.receiver.ispb}</span></td>
  <td>${a.contract}${a.object ? html`<br><span class="note">${a.object}</span>` : ''}</td>
  <td class="num">${authorizationAmount(a)}</td>
  <td>${a.frequency} from ${day(a.startDate)}${a.endDate ? html` to ${day(a.endDate)}` : ''}<br><span class="note">${a.retryPolicy}</span></td>
  <td>${a.solicitation ? html`<code>${a.solicitation.id}</code><br><span class="badge">${a.solicitation.status}</span> expires ${time(new Date(a.solicitation.expiresAt))}` : html`<span class="none">—</span>`}</td>
  <td>${history(a.history)}</td>
</tr>`;
}

function authorizationsSection(view: ViewContext, items: PayerAutomaticoItems): SafeHtml {
  const rows = items.authorizations.map((a) => authorizationRow(view, items, a));
  return html`<section data-live id="authorizations" data-live-label="authorizations" aria-labelledby="authorizations-title">
<h2 id="authorizations-title">Authorizations, as the payer <span class="count">(the newest ${items.authorizations.length})</span></h2>
${
  rows.length === 0
    ? html`<p>No authorization yet: a receiver's solicitation reaches the account PENDING (the form above plays another institution's receiver), and the account approves a code with POST /api/automatico/authorizations.</p>`
    : html`<div class="table-wrap"><table>
<caption class="visually-hidden">Authorizations of Pix Automático asked of or held by the account, newest first</caption>
<thead><tr><th scope="col">idRec</th><th scope="col">Status, journey, or answer it (as the payer)</th><th scope="col">Receiver</th><th scope="col">Contract</th><th scope="col" class="num">Amount</th><th scope="col">Calendar, retries</th><th scope="col">Solicitation</th><th scope="col">History</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`
}
</section>`;
}

function attemptItem(a: PayerCharge['attempts'][number]): SafeHtml {
  const why = a.rejection ? html`<br><span class="note">${a.rejection.code}: ${a.rejection.description}</span>` : '';
  return html`<li><strong>${a.type}</strong> for ${day(a.date)}: <span class="badge">${a.status}</span>${why}${history(a.history)}</li>`;
}

function cancelChargeForm(view: ViewContext, accountId: bigint, c: PayerCharge): SafeHtml {
  if (c.cancellableUntil === null) return html``;
  const form = actionForm(view, 'cancel-payer-charge', {
    inline: true,
    submit: 'Cancel',
    label: `Cancel the recurring charge ${c.id} as the payer`,
    tone: 'danger',
    fields: [hidden('accountId', String(accountId)), hidden('id', String(c.id))],
  });
  return html`<br><span class="note">cancellable until ${time(new Date(c.cancellableUntil))}</span><br>${form}`;
}

function payerChargeRow(view: ViewContext, items: PayerAutomaticoItems, c: PayerCharge): SafeHtml {
  return html`<tr>
  <th scope="row">${c.id}<br><code class="note">${c.txid}</code></th>
  <td><code>${c.idRec}</code><br><span class="note">${c.receiver.name}</span></td>
  <td><span class="badge payer-charge-${c.status.toLowerCase()}">${c.status}</span>${ending(c)}${c.endToEndId ? html`<br><span class="note">paid: <code>${c.endToEndId}</code></span>` : ''}${cancelChargeForm(view, items.accountId, c)}</td>
  <td class="num">${amount(c.amount)}</td>
  <td>${day(c.dueDate)}${c.settlementDate !== c.dueDate ? html`<br><span class="note">settles ${day(c.settlementDate)}</span>` : ''}</td>
  <td><ol class="attempts">${c.attempts.map(attemptItem)}</ol></td>
  <td>${history(c.history)}</td>
</tr>`;
}

function payerChargesSection(view: ViewContext, items: PayerAutomaticoItems): SafeHtml {
  const rows = items.charges.map((c) => payerChargeRow(view, items, c));
  return html`<section data-live id="payer-charges" data-live-label="recurring charges it pays" aria-labelledby="payer-charges-title">
<h2 id="payer-charges-title">Recurring charges it pays <span class="count">(the newest ${items.charges.length})</span></h2>
${
  rows.length === 0
    ? html`<p>No recurring charge to pay yet: the receiver of an approved authorization sends one from 10 to 2 days before it is due.</p>`
    : html`<div class="table-wrap"><table>
<caption class="visually-hidden">Recurring charges the account pays, latest due date first, with their attempts</caption>
<thead><tr><th scope="col">Id, txid</th><th scope="col">Of the recurrence</th><th scope="col">Status, or cancel it (as the payer)</th><th scope="col" class="num">Amount</th><th scope="col">Due</th><th scope="col">Attempts</th><th scope="col">History</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`
}
</section>`;
}

/** Another institution's receiver asking the account to approve a recurrence (journey 1). */
function askForm(view: ViewContext, accountId: bigint, p: string): SafeHtml {
  const options = (values: readonly string[]) => values.map((value) => ({ value, label: value }));
  const fields = [
    hidden('payerAccountId', String(accountId)),
    field({ id: `${p}-receiver`, name: 'receiverName', label: 'Receiver name', value: SANDBOX_RECEIVER.nome, maxLength: 140 }),
    field({ id: `${p}-contract`, name: 'contract', label: 'Contract', required: true, maxLength: 35 }),
    field({ id: `${p}-object`, name: 'object', label: 'Object (optional)', maxLength: 35 }),
    select({ id: `${p}-frequency`, name: 'frequency', label: 'Frequency', options: options(FREQUENCIES), selected: 'MENSAL' }),
    field({ id: `${p}-start`, name: 'startDate', label: 'Start date', type: 'date', value: saoPauloDay(view.now), required: true }),
    field({ id: `${p}-fixed`, name: 'fixedAmount', label: 'Fixed amount (R$, optional)', inputmode: 'decimal', maxLength: 20, hint: 'Every charge is this amount; or leave it empty', pattern: AMOUNT_PATTERN }),
    field({ id: `${p}-minimum`, name: 'minimumAmount', label: 'Minimum amount (R$, optional)', inputmode: 'decimal', maxLength: 20, hint: "Where no amount is fixed: the floor of the payer's maximum", pattern: AMOUNT_PATTERN }),
    select({ id: `${p}-retries`, name: 'retryPolicy', label: 'Retries', options: options(RETRY_POLICIES) }),
  ];
  return formCard('Ask this account to approve a recurrence', `${p}-title`, actionForm(view, 'sandbox-recurrence', { submit: 'Send the solicitation', fields }));
}

export function payerAutomaticoActions(view: ViewContext, accountId: bigint): SafeHtml {
  const note = "The sandbox plays another institution's receiver: its solicitation reaches the account a moment later (the next event), PENDING until the account answers it; an approved one's charges are sent from its row below.";
  return html`<div class="panels">${panel("As another institution's receiver (the account pays)", 'receiver-title', [askForm(view, accountId, 'ask')], note)}</div>`;
}

export function payerAutomaticoSections(view: ViewContext, items: PayerAutomaticoItems): SafeHtml {
  return html`${authorizationsSection(view, items)}${payerChargesSection(view, items)}`;
}
