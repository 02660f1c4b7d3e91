import type { FaultRow } from '../../controls/repo.ts';
import { ADVANCE_UNITS, saoPauloLocal } from '../control-actions.ts';
import { duration, integer, time } from './format.ts';
import { actionForm, field, formCard, hidden, select, type ViewContext } from './forms.ts';
import { html, type SafeHtml } from './html.ts';

/** The test clock as a page shows it: business time when the page was drawn, and how far it runs ahead. */
export interface ClockState {
  readonly now: Date;
  readonly offsetMs: number;
}

/** Reason codes of BCB's catalogue a receiving institution rejects a Pix with, and what each says. */
export const REJECTION_REASONS: readonly { code: string; meaning: string }[] = [
  { code: 'AC03', meaning: "the receiver's account does not exist or is invalid" },
  { code: 'AC06', meaning: "the receiver's account is blocked" },
  { code: 'AC07', meaning: "the receiver's account is closed" },
  { code: 'AG03', meaning: 'the account does not take this kind of transaction' },
  { code: 'AM02', meaning: 'the amount is over what the account may receive' },
  { code: 'AM04', meaning: 'insufficient funds' },
  { code: 'AB03', meaning: 'settlement timed out in the SPI' },
  { code: 'AB09', meaning: "an error at the receiver's institution" },
  { code: 'BE01', meaning: "the receiver's CPF or CNPJ is not the account holder's" },
  { code: 'DS04', meaning: "rejected by the receiver's institution" },
  { code: 'RR04', meaning: 'rejected for a regulatory reason' },
];

const meaningOf = (code: string) => REJECTION_REASONS.find((r) => r.code === code)?.meaning;

/** Business time and its offset, a live region: an advance from anywhere redraws it. */
export function clockSection(clock: ClockState): SafeHtml {
  return html`<section data-live id="clock" data-live-label="the clock" aria-labelledby="clock-title" class="summary">
<h2 id="clock-title" class="visually-hidden">The test clock</h2>
<dl class="balances">
  <div><dt>Business time (São Paulo)</dt><dd id="clock-now">${time(clock.now)}</dd></div>
  <div><dt>Ahead of the real clock</dt><dd id="clock-offset">${duration(clock.offsetMs)}</dd></div>
</dl>
<p class="note">Every time rule reads business time: charge expiry, due dates, refund windows, settlement delays, webhook retries. It runs on with the real clock; tokens and rate limits stay on real time.</p>
</section>`;
}

const advanceByFields = (p: string) => [
  field({ id: `${p}-by`, name: 'by', label: 'Advance by', required: true, inputmode: 'numeric', pattern: '[0-9]+', maxLength: 15 }),
  select({ id: `${p}-unit`, name: 'unit', label: 'Unit', options: Object.keys(ADVANCE_UNITS).map((u) => ({ value: u, label: u })), selected: 'minutes' }),
];

/** Moves the clock forward by a number of seconds, minutes, hours or days. */
export function advanceByForm(view: ViewContext, p: string): SafeHtml {
  return formCard('Advance the clock', `${p}-title`, actionForm(view, 'advance-clock', { submit: 'Advance', fields: advanceByFields(p) }));
}

/** Puts the clock back at the real time. */
export function resetClockForm(view: ViewContext, p: string): SafeHtml {
  return formCard(
    'Reset the clock',
    `${p}-title`,
    html`<p class="note">Business time goes back to the real time. What was made later keeps its times; what falls due waits for the real time to reach it.</p>${actionForm(view, 'reset-clock', { submit: 'Reset the clock', fields: [] })}`,
  );
}


/**
 * The clock on another page (an account's charges, its webhooks): business time in a live line,
 * and the form that moves it, with what moving it does there.
 */
export function clockCard(view: ViewContext, p: string, clock: ClockState, note: string): SafeHtml {
  const line = html`<p data-live id="clock-line" data-live-label="the clock" class="note">Business time: ${time(clock.now)}, ${duration(clock.offsetMs)} ahead of the real clock.</p>`;
  return formCard('The test clock', `${p}-title`, html`${line}<p class="note">${note}</p>${actionForm(view, 'advance-clock', { submit: 'Advance', fields: advanceByFields(p) })}`);
}

/** Moves the clock to a date and time in São Paulo. */
export function advanceToForm(view: ViewContext, p: string, clock: ClockState): SafeHtml {
  const fields = [field({ id: `${p}-to`, name: 'to', label: 'To (São Paulo date and time)', type: 'datetime-local', value: saoPauloLocal(clock.now), required: true, step: 1 })];
  return formCard('Advance to a date and time', `${p}-title`, actionForm(view, 'advance-clock', { submit: 'Advance to it', fields }));
}

function target(f: FaultRow): SafeHtml {
  if (f.kind === 'webhook') return html`deliveries to <code>${f.url_prefix}</code>…`;
  if (f.kind === 'settlement') return html`transfers to <code>${f.pix_key}</code>`;
  return html`every key look-up and transfer`;
}

function detail(f: FaultRow): SafeHtml {
  if (f.status !== null) return html`HTTP ${f.status}`;
  if (f.delay_ms !== null) return html`${integer(f.delay_ms)} ms`;
  if (f.reason !== null) return html`<abbr title="${meaningOf(f.reason) ?? ''}">${f.reason}</abbr>${meaningOf(f.reason) ? html`<br><span class="note">${meaningOf(f.reason)}</span>` : ''}`;
  return html`<span class="none">—</span>`;
}

function faultRow(view: ViewContext, f: FaultRow): SafeHtml {
  const id = String(f.id);
  return html`<tr>
  <th scope="row">${id}</th>
  <td>${f.kind}</td>
  <td>${f.effect}</td>
  <td>${target(f)}</td>
  <td>${detail(f)}</td>
  <td>${f.remaining === null ? 'until cleared' : `${integer(f.remaining)} more`}</td>
  <td>${time(f.created_at)}</td>
  <td>${actionForm(view, 'clear-fault', { submit: 'Clear', inline: true, label: `Clear fault ${id}`, tone: 'danger', fields: hidden('id', id) })}</td>
</tr>`;
}

/** The faults set now, each with its clear button, and one to clear them all. */
export function faultsSection(view: ViewContext, faults: readonly FaultRow[]): SafeHtml {
  return html`<section data-live id="faults" data-live-label="faults" aria-labelledby="faults-title">
<h2 id="faults-title">Faults set now <span class="count">(${faults.length})</span></h2>
${
  faults.length === 0
    ? html`<p>No fault is set: deliveries, settlement and the directory behave.</p>`
    : html`<div class="table-wrap"><table>
<caption class="visually-hidden">Faults set now, oldest first</caption>
<thead><tr><th scope="col">Id</th><th scope="col">Kind</th><th scope="col">Effect</th><th scope="col">On</th><th scope="col">Status, delay or reason</th><th scope="col">Applies</th><th scope="col">Set (real time)</th><th scope="col">Clear it</th></tr></thead>
<tbody>${faults.map((f) => faultRow(view, f))}</tbody>
</table></div>
${actionForm(view, 'clear-faults', { submit: 'Clear every fault', tone: 'danger' })}`
}
</section>`;
}

/** Webhook deliveries under a URL prefix: a status, a timeout or a delay, for the next N or until cleared. */
export function webhookFaultForm(view: ViewContext, p: string, inboxPrefix: string): SafeHtml {
  const effects = [
    { value: 'status', label: 'answered with a status' },
    { value: 'timeout', label: 'time out' },
    { value: 'delay', label: 'held for a delay, then delivered' },
  ];
  const fields = [
    hidden('kind', 'webhook'),
    field({ id: `${p}-prefix`, name: 'urlPrefix', label: 'URL prefix', type: 'url', value: inboxPrefix, required: true, maxLength: 2048, hint: "Deliveries to URLs that start with this: a receiver's address, or this service's inbox" }),
    select({ id: `${p}-effect`, name: 'effect', label: 'Deliveries are', options: effects }),
    field({ id: `${p}-status`, name: 'status', label: 'Status (when answered with a status)', value: '503', inputmode: 'numeric', pattern: '[0-9]{3}', maxLength: 3 }),
    field({ id: `${p}-delay`, name: 'delayMs', label: 'Delay in ms (when held)', inputmode: 'numeric', pattern: '[0-9]+', maxLength: 6 }),
    field({ id: `${p}-count`, name: 'count', label: 'For the next N deliveries (empty: until cleared)', inputmode: 'numeric', pattern: '[0-9]+', maxLength: 5 }),
  ];
  return formCard('Webhook deliveries fail', `${p}-title`, actionForm(view, 'set-fault', { submit: 'Set the fault', fields }));
}

/** Settlement of transfers to a key: rejected with a reason code, or delayed. */
export function settlementFaultForm(view: ViewContext, p: string): SafeHtml {
  const fields = [
    hidden('kind', 'settlement'),
    field({ id: `${p}-key`, name: 'pixKey', label: 'Transfers to the key', required: true, maxLength: 77 }),
    select({ id: `${p}-effect`, name: 'effect', label: 'Are', options: [{ value: 'reject', label: 'rejected' }, { value: 'delay', label: 'delayed' }] }),
    select({ id: `${p}-reason`, name: 'reason', label: 'Reason code (when rejected)', options: REJECTION_REASONS.map((r) => ({ value: r.code, label: `${r.code}: ${r.meaning}` })) }),
    field({ id: `${p}-delay`, name: 'delayMs', label: 'Delay in ms (when delayed)', inputmode: 'numeric', pattern: '[0-9]+', maxLength: 6 }),
  ];
  return formCard('Settlement to a key fails', `${p}-title`, actionForm(view, 'set-fault', { submit: 'Set the fault', fields }));
}

export function directoryFaultForm(view: ViewContext, p: string): SafeHtml {
  const form = actionForm(view, 'set-fault', { submit: 'Make it unavailable', tone: 'danger', fields: [hidden('kind', 'directory'), hidden('effect', 'unavailable')] });
  return formCard('The directory is unavailable', `${p}-title`, html`<p class="note">Transfers and key look-ups answer 503 DIRECTORY_UNAVAILABLE until the fault is cleared.</p>${form}`);
}
