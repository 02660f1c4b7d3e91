import { readable, time } from './format.ts';
import { actionForm, hidden, type ViewContext } from './forms.ts';
import { html, type SafeHtml } from './html.ts';

export interface InboxArrival {
  readonly id: bigint;
  readonly received_at: Date;
  readonly method: string;
  /** The sub-path it came to (`/pix`), '' for the inbox itself. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly status: number;
}

export interface InboxView {
  readonly name: string;
  /** `{PUBLIC_URL}/sandbox/inbox/{name}`: what a webhook registers. */
  readonly url: string;
  readonly arrivals: readonly InboxArrival[];
}


/** Which inbox to show (a GET form: the name lands in the address), its URL to register, and emptying it. */
export function inboxHeader(view: ViewContext, inbox: InboxView): SafeHtml {
  return html`<div class="panels">
<section class="panel" aria-labelledby="inbox-choose-title">
  <h2 id="inbox-choose-title">Which inbox</h2>
  <form method="get" action="/console/inbox" class="action-form">
    <div class="field">
      <label for="inbox-name">Inbox name</label>
      <input id="inbox-name" name="name" type="text" value="${inbox.name}" required pattern="[A-Za-z0-9_\\-]{1,64}" maxlength="64" aria-describedby="inbox-name-hint" autocomplete="off">
      <p class="hint" id="inbox-name-hint">Letters, digits, _ and -. Any name is an inbox: nothing needs creating.</p>
    </div>
    <button type="submit" class="primary">Show it</button>
  </form>
</section>
<section class="panel" aria-labelledby="inbox-url-title">
  <h2 id="inbox-url-title">Register this URL as a webhook</h2>
  <p><code id="inbox-url" class="brcode">${inbox.url}</code></p>
  <p><button type="button" class="quiet" data-copy="inbox-url" data-copy-what="The inbox URL">Copy<span class="visually-hidden"> the URL of the inbox ${inbox.name}</span></button></p>
  <p class="note">Plain HTTP is allowed for this one destination (sandbox only), and for one sub-path under it (BCB's callbacks go to a webhook's URL plus <code>/pix</code>, <code>/rec</code> or <code>/cobr</code>: they arrive here with it). The inbox answers 200, or what a webhook fault on its URL says, and keeps the last 200 arrivals.</p>
  ${actionForm(view, 'clear-inbox', { submit: 'Empty the inbox', tone: 'danger', label: `Empty the inbox ${inbox.name}`, fields: hidden('name', inbox.name) })}
</section>
</div>`;
}

function arrivalRow(a: InboxArrival): SafeHtml {
  const id = String(a.id);
  const headers = Object.entries(a.headers);
  return html`<tr>
  <th scope="row">${id}</th>
  <td>${time(a.received_at)}</td>
  <td>${a.method}${a.path ? html` <code>${a.path}</code>` : ''}</td>
  <td><span class="badge ${a.status < 300 ? 'confirmed' : 'error'}">${a.status}</span></td>
  <td><details id="arrival-${id}"><summary>Headers and body<span class="visually-hidden"> of arrival ${id}</span></summary>
    <h4>Headers</h4>${headers.length === 0 ? html`<p class="none">none</p>` : html`<dl class="headers">${headers.map(([name, value]) => html`<div><dt>${name}</dt><dd><code>${value}</code></dd></div>`)}</dl>`}
    <h4>Body</h4><pre class="payload">${a.body === '' ? '(empty)' : readable(a.body)}</pre>
  </details></td>
</tr>`;
}

/** What arrived, newest first: a live region, so deliveries show as they come. */
export function arrivalsSection(inbox: InboxView): SafeHtml {
  return html`<section data-live id="inbox" data-live-label="the inbox" aria-labelledby="arrivals-title">
<h2 id="arrivals-title">What arrived at <code>${inbox.name}</code> <span class="count">(the newest ${inbox.arrivals.length})</span></h2>
${
  inbox.arrivals.length === 0
    ? html`<p>Nothing arrived yet.</p>`
    : html`<div class="table-wrap"><table>
<caption class="visually-hidden">Requests that arrived at the inbox ${inbox.name}, newest first</caption>
<thead><tr><th scope="col">Id</th><th scope="col">Received</th><th scope="col">Method and sub-path</th><th scope="col">Answered</th><th scope="col">Request</th></tr></thead>
<tbody>${inbox.arrivals.map(arrivalRow)}</tbody>
</table></div>`
}
</section>`;
}
