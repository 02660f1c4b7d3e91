import { parseDecimal } from '../../../lib/money.ts';
import type { AccountSummary, ChargeItem, MedItem } from '../service.ts';
import { closeMedForms, createChargeForm, incomingPixForm, openMedForm, payBrCodeForm, SANDBOX_PAYER, settleForm, transferForm } from './action-forms.ts';
import { clockCard, type ClockState } from './controls.ts';
import { day, money, time } from './format.ts';
import { actionForm, hidden, panel, type ViewContext } from './forms.ts';
import { html, type SafeHtml } from './html.ts';
import type { NavEntry } from './layout.ts';

/** The account's name, numbers, balances and keys, and the tabs of its page. */
export function accountHeader(summary: AccountSummary, tabs: readonly NavEntry[], current: string): SafeHtml {
  const { account, balances, keys } = summary;
  return html`<section data-live id="balances" data-live-label="balances" aria-labelledby="balances-title" class="summary">
<h2 id="balances-title" class="visually-hidden">Balances</h2>
<dl class="balances">
  <div><dt>Available</dt><dd id="balance-available">${money(balances.available)}</dd></div>
  <div><dt>Blocked</dt><dd id="balance-blocked">${money(balances.blocked)}</dd></div>
</dl>
<dl class="facts">
  <div><dt>Account</dt><dd>${account.branch} / ${account.account_number} (id ${account.id})</dd></div>
  <div><dt>Holder</dt><dd>${account.document_type} ${account.document}</dd></div>
  <div><dt>Status</dt><dd>${account.status}</dd></div>
  <div><dt>Pix keys</dt><dd>${keys.length === 0 ? 'none' : html`<ul class="keys">${keys.map((k) => html`<li><code>${k.key}</code> (${k.key_type})</li>`)}</ul>`}</dd></div>
</dl>
</section>
<nav aria-label="Account" class="tabs"><ul>${tabs.map((t) => html`<li><a href="${t.href}"${t.href === current ? html` aria-current="page"` : ''}>${t.label}</a></li>`)}</ul></nav>`;
}

/** The overview's forms: money arriving (as the network), a transfer (as the holder). */
export function overviewActions(view: ViewContext, summary: AccountSummary): SafeHtml {
  const keys = summary.keys.map((k) => k.key);
  const id = summary.account.id;
  return html`<div class="panels">
${panel('As the network', 'network-title', [incomingPixForm(view, 'in', keys), settleForm(view, 'settle')], keys.length === 0 ? 'The account has no Pix key: register one with POST /admin/accounts/{id}/pix-keys to receive Pix.' : undefined)}
${panel('As the account holder', 'holder-title', [transferForm(view, id, 'out')])}
</div>`;
}

const CHARGE_KINDS = { cob: 'immediate charge', cobv: 'charge with a due date' } as const;

/** What a charge asks: its amount, and for a cobv still payable what it asks today (fine, interest, discounts applied) when that differs. */
function chargeAmount(item: ChargeItem): SafeHtml {
  const today = item.due?.todayCentavos;
  const paid = item.row.pix_amount_centavos;
  return html`${money(item.row.amount_centavos)}${
    today !== null && today !== undefined && today !== item.row.amount_centavos ? html`<br><span class="note">today: ${money(today)}</span>` : ''
  }${paid !== null && paid !== item.row.amount_centavos ? html`<br><span class="note">received: ${money(paid)}</span>` : ''}`;
}

/** When a charge stops being payable: a cob some seconds after its creation, a cobv after its last payable day. */
function validity(item: ChargeItem): SafeHtml {
  if (item.due) return html`<span class="note">due ${day(item.due.dueDate)}, payable until ${day(item.due.lastPayableDay)}</span>`;
  return html`<span class="note">expires after ${item.row.expiracao_seconds ?? '—'} s</span>`;
}

/** The network paying an ATIVA charge as a payer would, with its own code and the sandbox's payer. */
function simulatePayment(view: ViewContext, item: ChargeItem): SafeHtml {
  if (item.status !== 'ATIVA') return html``;
  const fields = [hidden('pixCopiaECola', item.row.br_code), hidden('payerName', SANDBOX_PAYER.name), hidden('payerDocument', SANDBOX_PAYER.document)];
  return html`<br>${actionForm(view, 'pay-brcode', { inline: true, submit: 'Simulate a payment', label: `Simulate a payment of charge ${item.row.txid}`, fields })}`;
}

function chargeRow(view: ViewContext, item: ChargeItem): SafeHtml {
  const { row, status, qr } = item;
  const codeId = `brcode-${row.txid}`;
  return html`<tr>
  <th scope="row"><code>${row.txid}</code></th>
  <td><abbr title="${CHARGE_KINDS[row.tipo_cob]}">${row.tipo_cob}</abbr></td>
  <td><span class="badge charge-${status.toLowerCase()}">${status}</span>${row.pix_end_to_end_id ? html`<br><span class="note">paid: <code>${row.pix_end_to_end_id}</code> ${time(row.pix_at)}</span>` : ''}${simulatePayment(view, item)}</td>
  <td class="num">${chargeAmount(item)}</td>
  <td>${time(row.created_at)}<br>${validity(item)}</td>
  <td><img class="qr" src="${qr}" width="150" height="150" alt="QR code of charge ${row.txid}"></td>
  <td class="brcode-cell"><code id="${codeId}" class="brcode">${row.br_code}</code>
    <button type="button" class="quiet" data-copy="${codeId}">Copy<span class="visually-hidden"> the BR Code of charge ${row.txid}</span></button></td>
</tr>`;
}

export function chargesSection(view: ViewContext, items: readonly ChargeItem[]): SafeHtml {
  return html`<section data-live id="charges" data-live-label="charges" aria-labelledby="charges-title">
<h2 id="charges-title">Charges <span class="count">(the newest ${items.length} of the last 31 days)</span></h2>
${
  items.length === 0
    ? html`<p>No charge in the last 31 days.</p>`
    : html`<div class="table-wrap"><table class="charges">
<caption class="visually-hidden">Charges (cob and cobv), newest first, with their QR code and BR Code</caption>
<thead><tr><th scope="col">txid</th><th scope="col">Type</th><th scope="col">Status</th><th scope="col" class="num">Amount</th><th scope="col">Created, validity</th><th scope="col">QR code</th><th scope="col">BR Code (copia e cola)</th></tr></thead>
<tbody>${items.map((item) => chargeRow(view, item))}</tbody>
</table></div>`
}
</section>`;
}

/** The account holder's charge, the network paying one, and (with the test clock) time moving on past an expiry. */
export function chargeActions(view: ViewContext, accountId: bigint, clock: ClockState | null): SafeHtml {
  const expiry = 'A charge past its expiry (expiracao) is REMOVIDA_PELO_PSP: advance the clock past it to see one expire.';
  const network = [payBrCodeForm(view, 'pay'), ...(clock ? [clockCard(view, 'clock', clock, expiry)] : [])];
  return html`<div class="panels">
${panel('As the account holder', 'holder-title', [createChargeForm(view, accountId, 'cob')], 'This form creates immediate charges (cob); PUT /v2/cobv/{txid} creates one with a due date (cobv), listed here too.')}
${panel('As the network', 'network-title', network)}
</div>`;
}

function medRow(view: ViewContext, m: MedItem): SafeHtml {
  return html`<tr>
  <th scope="row">${m.id}</th>
  <td><code class="e2e">${m.endToEndId ?? ''}</code></td>
  <td class="num">${money(parseDecimal(m.amount) ?? 0n)}</td>
  <td>${m.reason}${m.details ? html`<br><span class="note">${m.details}</span>` : ''}</td>
  <td><span class="badge med-${m.status.toLowerCase()}">${m.status}</span>${m.refund ? html`<br><span class="note">refund ${m.refund.id}: ${m.refund.status}</span>` : ''}</td>
  <td>${time(new Date(m.createdAt))}</td>
  <td>${m.closedAt ? time(new Date(m.closedAt)) : m.status === 'OPEN' ? closeMedForms(view, m.id) : ''}</td>
</tr>`;
}

export function medsSection(view: ViewContext, meds: readonly MedItem[]): SafeHtml {
  return html`<section data-live id="meds" data-live-label="MEDs" aria-labelledby="meds-title">
<h2 id="meds-title">MEDs <span class="count">(${meds.length} of the last 31 days)</span></h2>
${
  meds.length === 0
    ? html`<p>No MED in the last 31 days.</p>`
    : html`<div class="table-wrap"><table>
<caption class="visually-hidden">MED disputes against Pix the account received, newest first</caption>
<thead><tr><th scope="col">Id</th><th scope="col">Of the Pix</th><th scope="col" class="num">Blocked</th><th scope="col">Reason</th><th scope="col">Status</th><th scope="col">Opened</th><th scope="col">Closed, or close it (as the network)</th></tr></thead>
<tbody>${meds.map((m) => medRow(view, m))}</tbody>
</table></div>`
}
</section>`;
}

export function medActions(view: ViewContext): SafeHtml {
  return html`<div class="panels">${panel('As the network', 'network-title', [openMedForm(view, 'med')], "A received Pix's timeline (Overview) opens a MED against it too.")}</div>`;
}
