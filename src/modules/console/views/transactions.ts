import { formatCentavos } from '../../../lib/money.ts';
import { MOVEMENT, STATUS_LABELS, TYPE_LABELS } from '../../transactions/views.ts';
import type { TimelineEvent, TransactionItem } from '../timeline.ts';
import { incomingRefundForm, openMedForm, refundForm, resendForm } from './action-forms.ts';
import { money, time } from './format.ts';
import type { ViewContext } from './forms.ts';
import { html, type SafeHtml } from './html.ts';

function timeline(events: readonly TimelineEvent[]): SafeHtml {
  return html`<ol class="timeline">${events.map(
    (e) => html`<li class="${e.tone}">${time(e.at)} <span class="what">${e.what}</span>${e.amountCentavos === undefined ? '' : html` <span class="amount">${money(e.amountCentavos)}</span>`}</li>`,
  )}</ol>`;
}

/** What the console may do with a transaction: as its holder, and as the network on its other side. */
function rowActions(view: ViewContext, accountId: bigint, item: TransactionItem, ispb: string): SafeHtml[] {
  const t = item.row;
  const p = `tx${t.id}`;
  const actions: SafeHtml[] = [];
  if (t.end_to_end_id && t.status === 'CONFIRMED' && t.type === 'PAYMENT') {
    actions.push(html`<div class="card"><h4>Refund it (as the holder)</h4>${refundForm(view, accountId, t.end_to_end_id, `${p}-refund`, formatCentavos(t.amount_centavos))}</div>`);
    actions.push(html`<div class="card"><h4>Dispute it (as the network)</h4>${openMedForm(view, `${p}-med`, t.end_to_end_id)}</div>`);
  }
  if (t.end_to_end_id && t.status === 'CONFIRMED' && t.type === 'WITHDRAW' && t.counterpart_ispb !== ispb) {
    actions.push(html`<div class="card"><h4>Send it back (as the receiving institution)</h4>${incomingRefundForm(view, `${p}-back`, t.end_to_end_id)}</div>`);
  }
  if (item.timeline.some((e) => e.what.startsWith('Notification'))) {
    actions.push(html`<div class="card"><h4>Notify again (as the holder)</h4>${resendForm(view, accountId, `${p}-resend`, String(t.id))}</div>`);
  }
  return actions;
}

function row(view: ViewContext, accountId: bigint, item: TransactionItem, ispb: string): SafeHtml {
  const t = item.row;
  const sign = MOVEMENT[t.type] === 'CREDIT' ? '+' : '−';
  return html`<tr>
  <th scope="row">${t.id}</th>
  <td>${time(t.created_at)}</td>
  <td>${TYPE_LABELS[t.type]}</td>
  <td><span class="badge ${t.status.toLowerCase()}">${STATUS_LABELS[t.status]}</span>${t.error_reason ? html`<br><span class="reason">${t.error_reason}</span>` : ''}</td>
  <td class="num">${sign} ${money(t.amount_centavos)}</td>
  <td>${t.counterpart_name ?? ''}</td>
  <td><code class="e2e">${t.end_to_end_id ?? ''}</code></td>
  <td><details id="tx-${t.id}"><summary>Timeline and actions<span class="visually-hidden"> of transaction ${t.id}</span></summary>
    ${timeline(item.timeline)}
    <div class="row-cards">${rowActions(view, accountId, item, ispb)}</div>
  </details></td>
</tr>`;
}

/** The account's transactions, newest first, each with its timeline. */
export function transactionsSection(view: ViewContext, accountId: bigint, data: { transactions: readonly TransactionItem[]; total: number }, ispb: string): SafeHtml {
  const shown = data.transactions.length;
  return html`<section data-live id="transactions" data-live-label="transactions" aria-labelledby="transactions-title">
<h2 id="transactions-title">Transactions <span class="count">(${data.total}${data.total > shown ? html`, the newest ${shown} shown` : ''})</span></h2>
${
  shown === 0
    ? html`<p>No transaction in the last 31 days.</p>`
    : html`<div class="table-wrap"><table class="transactions">
<caption class="visually-hidden">Transactions of the last 31 days, newest first</caption>
<thead><tr><th scope="col">Id</th><th scope="col">Created</th><th scope="col">Type</th><th scope="col">Status</th><th scope="col" class="num">Amount</th><th scope="col">Counterpart</th><th scope="col">endToEndId</th><th scope="col">Timeline</th></tr></thead>
<tbody>${data.transactions.map((item) => row(view, accountId, item, ispb))}</tbody>
</table></div>`
}
</section>`;
}
