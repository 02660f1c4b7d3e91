import { flag, html, type SafeHtml } from './html.ts';

/** What every view of a signed-in page knows: the session's CSRF token, where actions come back to, and now. */
export interface ViewContext {
  readonly csrf: string;
  /** This page's path (and query): a form submitted without the script comes back here. */
  readonly returnTo: string;
  readonly now: Date;
}

export interface FieldOptions {
  readonly id: string;
  readonly name: string;
  readonly label: string;
  readonly value?: string | undefined;
  readonly required?: boolean;
  readonly type?: 'text' | 'search' | 'url' | 'date' | 'datetime-local';
  /** datetime-local: 1 takes seconds too. */
  readonly step?: number;
  readonly inputmode?: 'decimal' | 'numeric' | 'text';
  readonly hint?: string | undefined;
  readonly maxLength?: number;
  readonly pattern?: string;
}

const hintId = (o: { id: string; hint?: string | undefined }) => (o.hint ? `${o.id}-hint` : undefined);

export function field(o: FieldOptions): SafeHtml {
  return html`<div class="field">
  <label for="${o.id}">${o.label}</label>
  <input id="${o.id}" name="${o.name}" type="${o.type ?? 'text'}" value="${o.value ?? ''}"${flag('required', o.required === true)}${o.inputmode ? html` inputmode="${o.inputmode}"` : ''}${o.maxLength ? html` maxlength="${o.maxLength}"` : ''}${o.pattern ? html` pattern="${o.pattern}"` : ''}${o.step ? html` step="${o.step}"` : ''}${o.hint ? html` aria-describedby="${hintId(o)}"` : ''} autocomplete="off">
  ${o.hint ? html`<p class="hint" id="${hintId(o)}">${o.hint}</p>` : ''}
</div>`;
}

export const amountField = (id: string, label = 'Amount (R$)', value = '', required = true) =>
  field({ id, name: 'amount', label, value, required, inputmode: 'decimal', maxLength: 20, hint: 'For example 10,00 or 10.00', pattern: '[0-9]+([.,][0-9]{1,2})?' });

export function textArea(o: { id: string; name: string; label: string; value?: string; required?: boolean; rows?: number }): SafeHtml {
  return html`<div class="field">
  <label for="${o.id}">${o.label}</label>
  <textarea id="${o.id}" name="${o.name}" rows="${o.rows ?? 3}"${flag('required', o.required === true)} spellcheck="false">${o.value ?? ''}</textarea>
</div>`;
}

export function select(o: { id: string; name: string; label: string; options: readonly { value: string; label: string }[]; selected?: string }): SafeHtml {
  return html`<div class="field">
  <label for="${o.id}">${o.label}</label>
  <select id="${o.id}" name="${o.name}">${o.options.map((opt) => html`<option value="${opt.value}"${flag('selected', opt.value === o.selected)}>${opt.label}</option>`)}</select>
</div>`;
}

export const hidden = (name: string, value: string) => html`<input type="hidden" name="${name}" value="${value}">`;

export interface ActionFormOptions {
  readonly submit: string;
  readonly fields?: SafeHtml | SafeHtml[];
  /** A form of one button in a table row. */
  readonly inline?: boolean;
  /** An accessible name, where the button's text alone does not say which row it acts on. */
  readonly label?: string;
  readonly tone?: 'primary' | 'danger';
}

/**
 * A console action: a POST form carrying the session's CSRF token. The script sends it with
 * fetch and shows the answer in the status region; without the script it is an ordinary POST.
 */
export function actionForm(view: ViewContext, name: string, o: ActionFormOptions): SafeHtml {
  return html`<form method="post" action="/console/actions/${name}" data-action="${name}" class="${o.inline ? 'inline-form' : 'action-form'}"${o.label ? html` aria-label="${o.label}"` : ''}>
  ${hidden('_csrf', view.csrf)}${hidden('returnTo', view.returnTo)}
  ${o.fields ?? ''}
  <button type="submit" class="${o.tone ?? 'primary'}"${o.label ? html` aria-label="${o.label}"` : ''}>${o.submit}</button>
</form>`;
}

/** A titled group of forms ("As the network", "As the account holder"). */
export function panel(title: string, id: string, body: SafeHtml | SafeHtml[], note?: string): SafeHtml {
  return html`<section class="panel" aria-labelledby="${id}">
  <h2 id="${id}">${title}</h2>
  ${note ? html`<p class="note">${note}</p>` : ''}
  <div class="forms">${body}</div>
</section>`;
}

/** One form of a panel, with its own heading. */
export function formCard(title: string, id: string, form: SafeHtml): SafeHtml {
  return html`<div class="card" role="group" aria-labelledby="${id}"><h3 id="${id}">${title}</h3>${form}</div>`;
}
