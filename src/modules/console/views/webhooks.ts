import type { DeliveryDetail } from '../../webhooks/log-details.ts';
import type { webhooksOf } from '../service.ts';
import { resendForm } from './action-forms.ts';
import { RETRY_DELAYS_MS } from '../../webhooks/delivery.ts';
import { PIX_CALLBACK_EVENT } from '../../webhooks/repo.ts';
import { clockCard, type ClockState } from './controls.ts';
import { duration, readable, time } from './format.ts';
import { actionForm, field, formCard, hidden, panel, select, type ViewContext } from './forms.ts';
import { WEBHOOK_EVENT_TYPES } from '../../webhooks/event-types.ts';
import { html, type SafeHtml } from './html.ts';

type Webhooks = Awaited<ReturnType<typeof webhooksOf>>;

function headerList(headers: Readonly<Record<string, string>>): SafeHtml {
  const entries = Object.entries(headers);
  if (entries.length === 0) return html`<span class="none">none</span>`;
  return html`<dl class="headers">${entries.map(([name, value]) => html`<div><dt>${name}</dt><dd><code>${value}</code></dd></div>`)}</dl>`;
}

function registrations(list: Webhooks['registrations']): SafeHtml {
  if (list.length === 0) return html`<p>No webhook registered by event: <code>POST /api/webhooks</code> registers one.</p>`;
  return html`<div class="table-wrap"><table>
<caption class="visually-hidden">Webhook registrations by event</caption>
<thead><tr><th scope="col">Id</th><th scope="col">Event</th><th scope="col">URL</th><th scope="col">Headers</th><th scope="col">Active</th><th scope="col">Version</th><th scope="col">Updated</th></tr></thead>
<tbody>${list.map(
    (w) => html`<tr><th scope="row">${w.id}</th><td>${w.type}</td><td><code>${w.url}</code></td><td>${headerList(w.headers)}</td><td>${w.isActive ? 'yes' : 'no'}</td><td>${w.version}</td><td>${time(new Date(w.updatedAt))}</td></tr>`,
  )}</tbody>
</table></div>`;
}

function keyWebhooks(list: Webhooks['keyWebhooks'], total: number): SafeHtml {
  if (list.length === 0) return html`<p>No webhook registered per key: <code>PUT /v2/webhook/{chave}</code> registers one.</p>`;
  return html`${total > list.length ? html`<p class="note">The oldest ${list.length} of ${total}.</p>` : ''}<div class="table-wrap"><table>
<caption class="visually-hidden">Webhooks per Pix key (BCB's API Pix), oldest first</caption>
<thead><tr><th scope="col">Pix key</th><th scope="col">webhookUrl</th><th scope="col">Callbacks go to</th><th scope="col">Created</th></tr></thead>
<tbody>${list.map(
    (w) => html`<tr><th scope="row"><code>${w.chave}</code></th><td><code>${w.webhook_url}</code></td><td><code>${w.callbackUrl}</code></td><td>${time(w.created_at)}</td></tr>`,
  )}</tbody>
</table></div>`;
}

function eventOf(d: DeliveryDetail): SafeHtml {
  const event = d.event_type === PIX_CALLBACK_EVENT ? html`${d.event_type}<br><span class="note">callback of a webhook per key, over mutual TLS</span>` : html`${d.event_type}`;
  return html`${event}${d.transaction_id === null ? '' : html`<br><span class="note">transaction ${d.transaction_id}</span>`}`;
}

/** Whether the signature sent verifies with the account's signing secret of today (Standard Webhooks). */
function signatureMark(verifies: boolean | null): SafeHtml {
  if (verifies === null) return html``;
  return verifies
    ? html`<p class="signature valid"><span aria-hidden="true">✓</span> Signature valid: it verifies with the account's signing secret.</p>`
    : html`<p class="signature invalid"><span aria-hidden="true">✗</span> Signed with a secret rotated since: it does not verify with today's.</p>`;
}

function delivery(d: DeliveryDetail): SafeHtml {
  return html`<tr>
  <th scope="row">${d.id}</th>
  <td>${time(d.created_at)}</td>
  <td>${eventOf(d)}</td>
  <td><code>${d.url}</code></td>
  <td>${d.is_resend ? 'resend' : d.attempt}</td>
  <td><span class="badge ${d.success ? 'confirmed' : 'error'}">${d.outcome}</span>${d.error && d.error !== `HTTP ${d.status_code}` ? html`<br><span class="reason">${d.error}</span>` : ''}</td>
  <td class="num">${d.duration_ms} ms</td>
  <td><details id="delivery-${d.id}"><summary>Request<span class="visually-hidden"> of attempt ${d.id}</span></summary>
    <h4>Headers</h4>${headerList(d.headers)}
    ${signatureMark(d.verifies)}
    <h4>Body</h4><pre class="payload">${d.body === null ? '(the notification is no longer kept)' : readable(d.body)}</pre>
  </details></td>
</tr>`;
}

function deliveries(list: readonly DeliveryDetail[]): SafeHtml {
  if (list.length === 0) return html`<p>No delivery in the last 31 days.</p>`;
  return html`<div class="table-wrap"><table>
<caption class="visually-hidden">Webhook deliveries and resends, newest first</caption>
<thead><tr><th scope="col">Id</th><th scope="col">Sent</th><th scope="col">Event</th><th scope="col">URL</th><th scope="col">Attempt</th><th scope="col">Answer</th><th scope="col" class="num">Took</th><th scope="col">Payload, headers, signature</th></tr></thead>
<tbody>${list.map(delivery)}</tbody>
</table></div>`;
}

export function webhooksSections(data: Webhooks): SafeHtml {
  return html`<section data-live id="webhook-registrations" data-live-label="webhook registrations" aria-labelledby="registrations-title">
<h2 id="registrations-title">Registrations</h2>
<h3>By event <span class="count">(<code>/api/webhooks</code>)</span></h3>
${registrations(data.registrations)}
<h3>Per Pix key <span class="count">(BCB's <code>/v2/webhook/{chave}</code>: each Pix with a txid received at the key, and its refunds, as <code>POST {webhookUrl}/pix</code>)</span></h3>
${keyWebhooks(data.keyWebhooks, data.keyWebhooksTotal)}
</section>
<section data-live id="webhook-deliveries" data-live-label="webhook deliveries" aria-labelledby="deliveries-title">
<h2 id="deliveries-title">Deliveries <span class="count">(the newest ${data.deliveries.length} of the last 31 days)</span></h2>
${deliveries(data.deliveries)}
</section>`;
}

const RETRIES = `A failed delivery is tried again ${RETRY_DELAYS_MS.map((ms) => duration(ms)).join(', ')} after each failure, on business time: advancing the clock brings the next try forward.`;

/** Registering a webhook by event (POST /api/webhooks), at the sandbox's inbox unless another URL is given. */
function registerWebhookForm(view: ViewContext, accountId: bigint, inbox: string): SafeHtml {
  const fields = [
    hidden('accountId', String(accountId)),
    select({ id: 'hook-event', name: 'eventType', label: 'Event', options: WEBHOOK_EVENT_TYPES.map((type) => ({ value: type, label: type })) }),
    field({ id: 'hook-url', name: 'url', label: 'URL', type: 'url', value: inbox, required: true, maxLength: 2048, hint: 'HTTPS, or this sandbox\'s inbox over HTTP' }),
  ];
  return formCard('Register a webhook by event', 'hook-title', actionForm(view, 'register-webhook', { submit: 'Register the webhook', fields }));
}

/** Setting a key's webhook (BCB's PUT /v2/webhook/{chave}): its callbacks go to that URL plus /pix. */
function keyWebhookForm(view: ViewContext, accountId: bigint, keys: readonly string[], inbox: string): SafeHtml {
  if (keys.length === 0) return formCard('Set a key\'s webhook', 'key-hook-title', html`<p class="none">The account has no Pix key.</p>`);
  const fields = [
    hidden('accountId', String(accountId)),
    select({ id: 'key-hook-key', name: 'chave', label: 'Pix key', options: keys.map((key) => ({ value: key, label: key })) }),
    field({ id: 'key-hook-url', name: 'webhookUrl', label: 'webhookUrl', type: 'url', value: inbox, required: true, maxLength: 2048, hint: 'Callbacks go to this URL plus /pix' }),
  ];
  return formCard('Set a key\'s webhook (API Pix)', 'key-hook-title', actionForm(view, 'register-key-webhook', { submit: 'Set the webhook', fields }));
}

/**
 * Registering webhooks of both kinds and resending (the holder) and, with the test clock, time
 * moving on to the next retry. `inbox` is the URL of this account's inbox in the sandbox, which
 * the registration forms offer first.
 */
export function webhookActions(view: ViewContext, account: { id: bigint; keys: readonly string[]; inbox: string | null }, clock: ClockState | null): SafeHtml {
  const inbox = account.inbox ?? '';
  return html`<div class="panels">
${panel('As the account holder', 'holder-title', [registerWebhookForm(view, account.id, inbox), keyWebhookForm(view, account.id, account.keys, inbox), resendForm(view, account.id, 'resend')])}
${clock ? panel('As the network', 'network-title', [clockCard(view, 'clock', clock, RETRIES)]) : ''}
</div>`;
}
