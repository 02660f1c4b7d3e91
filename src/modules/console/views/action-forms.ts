import { actionForm, amountField, field, formCard, hidden, select, textArea, type ViewContext } from './forms.ts';
import { html, type SafeHtml } from './html.ts';

/** The payer the network's forms offer: any name and a valid CPF do. */
export const SANDBOX_PAYER = { name: 'Pagador Sandbox', document: '52998224725' };

const payerFields = (p: string) => [
  field({ id: `${p}-payer-name`, name: 'payerName', label: 'Payer name', value: SANDBOX_PAYER.name, required: true, maxLength: 140 }),
  field({ id: `${p}-payer-document`, name: 'payerDocument', label: 'Payer CPF or CNPJ', value: SANDBOX_PAYER.document, required: true, maxLength: 18 }),
];

/** A Pix arriving from another institution: to one of `keys` (an account's page) or to any key. */
export function incomingPixForm(view: ViewContext, p: string, keys: readonly string[] = []): SafeHtml {
  const key =
    keys.length > 0
      ? select({ id: `${p}-key`, name: 'pixKey', label: 'To the key', options: keys.map((k) => ({ value: k, label: k })) })
      : field({ id: `${p}-key`, name: 'pixKey', label: 'To the key', required: true, maxLength: 77 });
  const fields = [key, amountField(`${p}-amount`), ...payerFields(p), field({ id: `${p}-description`, name: 'description', label: 'Description (optional)', maxLength: 140 })];
  return formCard('Incoming Pix', `${p}-title`, actionForm(view, 'incoming-pix', { submit: 'Receive the Pix', fields }));
}

export function payBrCodeForm(view: ViewContext, p: string): SafeHtml {
  const fields = [
    textArea({ id: `${p}-code`, name: 'pixCopiaECola', label: 'BR Code (Pix copia e cola)', required: true, rows: 3 }),
    ...payerFields(p),
    amountField(`${p}-amount`, 'Amount (R$), where the code leaves it to the payer', '', false),
  ];
  return formCard('Pay a BR Code', `${p}-title`, actionForm(view, 'pay-brcode', { submit: 'Pay', fields }));
}

/** The receiver of one of our transfers sends money back; with `endToEndId`, for that transfer. */
export function incomingRefundForm(view: ViewContext, p: string, endToEndId?: string): SafeHtml {
  const e2e = endToEndId ? hidden('endToEndId', endToEndId) : field({ id: `${p}-e2e`, name: 'endToEndId', label: 'Of the transfer (endToEndId)', required: true, maxLength: 32 });
  const form = actionForm(view, 'incoming-refund', { submit: 'Refund arrives', fields: [e2e, amountField(`${p}-amount`)] });
  return endToEndId ? form : formCard('A refund arriving', `${p}-title`, form);
}

const REASONS = [
  { value: 'FRAUD', label: 'Fraud' },
  { value: 'OPERATIONAL_FLAW', label: 'Operational flaw' },
];

/** A MED against a received Pix; with `endToEndId`, against that one. */
export function openMedForm(view: ViewContext, p: string, endToEndId?: string): SafeHtml {
  const e2e = endToEndId ? hidden('endToEndId', endToEndId) : field({ id: `${p}-e2e`, name: 'endToEndId', label: 'Of the received Pix (endToEndId)', required: true, maxLength: 32 });
  const fields = [e2e, select({ id: `${p}-reason`, name: 'reason', label: 'Reason', options: REASONS }), field({ id: `${p}-details`, name: 'details', label: 'Details (optional)', maxLength: 500 })];
  const form = actionForm(view, 'open-med', { submit: 'Open a MED', fields, tone: 'danger' });
  return endToEndId ? form : formCard('Open a MED', `${p}-title`, form);
}

export function closeMedForms(view: ViewContext, medId: number): SafeHtml {
  return html`<div class="row-actions">
${actionForm(view, 'close-med', { submit: 'Accept', inline: true, label: `Accept MED ${medId}`, fields: [hidden('medId', String(medId)), hidden('decision', 'accept')] })}
${actionForm(view, 'close-med', { submit: 'Reject', inline: true, tone: 'danger', label: `Reject MED ${medId}`, fields: [hidden('medId', String(medId)), hidden('decision', 'reject')] })}
</div>`;
}

export function settleForm(view: ViewContext, p: string): SafeHtml {
  return formCard('Settle now', `${p}-title`, html`<p class="note">Settles every queued transfer and refund at once, instead of waiting for the worker.</p>${actionForm(view, 'settle', { submit: 'Settle now' })}`);
}

export function externalKeyForm(view: ViewContext, p: string): SafeHtml {
  const fields = [
    field({ id: `${p}-key`, name: 'key', label: 'Key', required: true, maxLength: 77, hint: 'An e-mail, +55 phone, CPF, CNPJ or EVP' }),
    field({ id: `${p}-name`, name: 'name', label: 'Holder name', required: true, maxLength: 140 }),
    field({ id: `${p}-document`, name: 'document', label: 'Holder CPF or CNPJ', required: true, maxLength: 18 }),
    field({ id: `${p}-ispb`, name: 'ispb', label: 'Institution ISPB', value: '60746948', required: true, pattern: '[0-9]{8}' }),
    field({ id: `${p}-bank`, name: 'bankName', label: 'Institution name (optional)', maxLength: 140 }),
    select({ id: `${p}-behavior`, name: 'behavior', label: 'Transfers to it', options: [{ value: '', label: 'settle' }, { value: 'reject', label: 'are rejected' }, { value: 'timeout', label: 'never settle (expire)' }] }),
  ];
  return formCard('A key at another institution', `${p}-title`, actionForm(view, 'external-key', { submit: 'Register the key', fields }));
}

export function createChargeForm(view: ViewContext, accountId: bigint, p: string): SafeHtml {
  const fields = [
    hidden('accountId', String(accountId)),
    amountField(`${p}-amount`),
    field({ id: `${p}-expiration`, name: 'expiration', label: 'Expires after (seconds)', value: '3600', inputmode: 'numeric', pattern: '[0-9]*' }),
    field({ id: `${p}-txid`, name: 'txid', label: 'txid (optional: 26 to 35 letters and digits)', maxLength: 35 }),
    field({ id: `${p}-message`, name: 'message', label: 'Message to the payer (optional)', maxLength: 140 }),
  ];
  return formCard('Create a charge', `${p}-title`, actionForm(view, 'create-charge', { submit: 'Create the charge', fields }));
}

export function transferForm(view: ViewContext, accountId: bigint, p: string): SafeHtml {
  const fields = [
    hidden('accountId', String(accountId)),
    field({ id: `${p}-key`, name: 'pixKey', label: 'To the key', required: true, maxLength: 77 }),
    amountField(`${p}-amount`),
    field({ id: `${p}-description`, name: 'description', label: 'Description (optional)', maxLength: 140 }),
    select({ id: `${p}-priority`, name: 'priority', label: 'Priority', options: [{ value: 'NORM', label: 'NORM (settles after the delay)' }, { value: 'HIGH', label: 'HIGH (settles at once)' }] }),
  ];
  return formCard('Send a transfer', `${p}-title`, actionForm(view, 'transfer', { submit: 'Send', fields }));
}

/** A refund of a received Pix, asked for by the account holder (inline in the Pix's details). */
export function refundForm(view: ViewContext, accountId: bigint, endToEndId: string, p: string, amount: string): SafeHtml {
  const fields = [hidden('accountId', String(accountId)), hidden('endToEndId', endToEndId), amountField(`${p}-amount`, 'Amount to refund (R$)', amount)];
  return actionForm(view, 'refund', { submit: 'Refund', fields });
}

export function resendForm(view: ViewContext, accountId: bigint, p: string, transaction?: string): SafeHtml {
  const fields = [
    hidden('accountId', String(accountId)),
    transaction ? hidden('transaction', transaction) : field({ id: `${p}-transaction`, name: 'transaction', label: 'Transaction (id or endToEndId)', required: true, maxLength: 64 }),
    ...(transaction ? [] : [field({ id: `${p}-url`, name: 'url', label: 'To this URL instead (optional)', type: 'url', maxLength: 2048 })]),
  ];
  const form = actionForm(view, 'resend-webhook', { submit: 'Resend the webhook', fields, ...(transaction ? { label: `Resend the webhook of transaction ${transaction}` } : {}) });
  return transaction ? form : formCard('Resend a webhook', `${p}-title`, form);
}
