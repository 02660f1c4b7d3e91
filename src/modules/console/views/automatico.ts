import type { AttemptRow } from '../../recurrences/rows.ts';
import { AUTOMATICO_REASONS } from '../../controls/rules.ts';
import { CHARGE_REJECTIONS, INSUFFICIENT_FUNDS } from '../../recurrences/catalog.ts';
import type { AutomaticoItems } from '../service.ts';
import { SANDBOX_PAYER } from './action-forms.ts';
import { clockCard, type ClockState } from './controls.ts';
import { day, money, time } from './format.ts';
import { actionForm, formCard, hidden, panel, select, type ViewContext } from './forms.ts';
import { html, type SafeHtml } from './html.ts';

/**
 * An account's Pix Automático, as its receiver sees it: recurrences with their journey and
 * history, solicitations under way, recurring charges with each attempt's own history; and the
 * network's part: the sandbox's payer approving a code or answering a solicitation, a fault on
 * the next attempt, the clock to the next event.
 */

/** A history (`atualizacao`), oldest first: each status and when it came. */
function history(entries: readonly { status: string; data: string }[]): SafeHtml {
  return html`<ol class="history">${entries.map((e) => html`<li><span class="badge">${e.status}</span> ${time(new Date(e.data))}</li>`)}</ol>`;
}

function approveForm(view: ViewContext, idRec: string, code: string): SafeHtml {
  const fields = [hidden('pixCopiaECola', code), hidden('payerName', SANDBOX_PAYER.name), hidden('payerDocument', SANDBOX_PAYER.document)];
  return actionForm(view, 'pay-brcode', { inline: true, submit: 'Approve as the payer', label: `Approve the recurrence ${idRec} as the payer (journey 2)`, fields });
}

function recurrencesSection(view: ViewContext, items: AutomaticoItems): SafeHtml {
  const rows = items.recs.map(({ row, code }) => {
    const amount = row.valor_rec_centavos !== null ? money(row.valor_rec_centavos) : row.valor_minimo_centavos !== null ? html`at least ${money(row.valor_minimo_centavos)}` : html`—`;
    return html`<tr>
  <th scope="row"><code>${row.id_rec}</code></th>
  <td><span class="badge rec-${row.status.toLowerCase()}">${row.status}</span><br><span class="note">${row.jornada}${row.jornada_txid ? html` (cob ${row.jornada_txid})` : ''}</span>${code ? html`<br>${approveForm(view, row.id_rec, code.pixCopiaECola)}` : ''}</td>
  <td>${row.contrato}<br><span class="note">${row.devedor_nome} (${row.devedor_document_type} ${row.devedor_document})</span></td>
  <td class="num">${amount}</td>
  <td>${row.periodicidade} from ${day(row.data_inicial)}${row.data_final ? html` to ${day(row.data_final)}` : ''}<br><span class="note">${row.politica_retentativa}</span></td>
  <td>${row.pagador ? html`${row.pagador.cpf ?? row.pagador.cnpj ?? ''}<br><span class="note">ISPB ${row.pagador.ispbParticipante ?? ''}</span>` : html`<span class="none">—</span>`}</td>
  <td>${history(row.history)}</td>
</tr>`;
  });
  return html`<section data-live id="recurrences" data-live-label="recurrences" aria-labelledby="recurrences-title">
<h2 id="recurrences-title">Recurrences <span class="count">(the newest ${items.recs.length})</span></h2>
${
  rows.length === 0
    ? html`<p>No recurrence yet: POST /v2/rec makes one (the account must be a company's).</p>`
    : html`<div class="table-wrap"><table>
<caption class="visually-hidden">Recurrences of Pix Automático, newest first</caption>
<thead><tr><th scope="col">idRec</th><th scope="col">Status, journey</th><th scope="col">Contract, devedor</th><th scope="col" class="num">Amount</th><th scope="col">Calendar, retries</th><th scope="col">Payer</th><th scope="col">History</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`
}
</section>`;
}

function answerForms(view: ViewContext, id: string): SafeHtml {
  const accept = actionForm(view, 'answer-solicitation', { inline: true, submit: 'Accept', label: `Accept the solicitation ${id} as the payer`, fields: [hidden('idSolicRec', id), hidden('decision', 'accept')] });
  const reject = actionForm(view, 'answer-solicitation', { inline: true, submit: 'Reject', label: `Reject the solicitation ${id} as the payer`, tone: 'danger', fields: [hidden('idSolicRec', id), hidden('decision', 'reject')] });
  return html`${accept}${reject}`;
}

function solicitationsSection(view: ViewContext, items: AutomaticoItems): SafeHtml {
  const rows = items.solicitations.map(
    (s) => html`<tr>
  <th scope="row"><code>${s.id_solic_rec}</code></th>
  <td><code>${s.id_rec}</code></td>
  <td><span class="badge">${s.status}</span>${s.status === 'RECEBIDA' && s.destinatario.ispbParticipante !== items.ispb ? html`<br>${answerForms(view, s.id_solic_rec)}` : ''}</td>
  <td>${s.destinatario.cpf ?? s.destinatario.cnpj ?? ''}<br><span class="note">ISPB ${s.destinatario.ispbParticipante ?? ''}</span></td>
  <td>${time(s.expires_at)}</td>
  <td>${history(s.history)}</td>
</tr>`,
  );
  return html`<section data-live id="solicitations" data-live-label="solicitations" aria-labelledby="solicitations-title">
<h2 id="solicitations-title">Solicitations <span class="count">(the newest ${items.solicitations.length})</span></h2>
${
  rows.length === 0
    ? html`<p>No solicitation yet: POST /v2/solicrec sends a recurrence to its payer's bank (journey 1).</p>`
    : html`<div class="table-wrap"><table>
<caption class="visually-hidden">Solicitations of a payer's approval, newest first</caption>
<thead><tr><th scope="col">idSolicRec</th><th scope="col">Of the recurrence</th><th scope="col">Status, or answer it (as the payer)</th><th scope="col">To</th><th scope="col">Expires</th><th scope="col">History</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`
}
</section>`;
}

function attemptItem(a: AttemptRow): SafeHtml {
  const why = a.rejeicao ? html`<br><span class="note">${a.rejeicao.codigo}: ${a.rejeicao.descricao}</span>` : '';
  return html`<li><strong>${a.tipo}</strong> for ${day(a.data_liquidacao)}: <span class="badge">${a.status}</span>${why}${history(a.history)}</li>`;
}

function chargesSection(items: AutomaticoItems): SafeHtml {
  const rows = items.charges.map(
    ({ row, attempts, paid }) => html`<tr>
  <th scope="row"><code>${row.txid}</code></th>
  <td><code>${row.id_rec}</code></td>
  <td><span class="badge">${row.status}</span>${row.encerramento?.rejeicao ? html`<br><span class="note">${row.encerramento.rejeicao.codigo}</span>` : ''}${row.encerramento?.cancelamento ? html`<br><span class="note">${row.encerramento.cancelamento.codigo} by ${row.encerramento.cancelamento.solicitante}</span>` : ''}${paid ? html`<br><span class="note">paid: <code>${paid.end_to_end_id ?? ''}</code> ${time(paid.created_at)}</span>` : ''}</td>
  <td class="num">${money(row.amount_centavos)}</td>
  <td>${day(row.due_date)}${row.settlement_date !== row.due_date ? html`<br><span class="note">settles ${day(row.settlement_date)}</span>` : ''}</td>
  <td><ol class="attempts">${attempts.map(attemptItem)}</ol></td>
  <td>${history(row.history)}</td>
</tr>`,
  );
  return html`<section data-live id="recurring-charges" data-live-label="recurring charges" aria-labelledby="recurring-charges-title">
<h2 id="recurring-charges-title">Recurring charges <span class="count">(the newest ${items.charges.length})</span></h2>
${
  rows.length === 0
    ? html`<p>No recurring charge yet: PUT /v2/cobr/{txid} sends one for an approved recurrence, from 10 to 2 days before it is due.</p>`
    : html`<div class="table-wrap"><table>
<caption class="visually-hidden">Recurring charges of Pix Automático, newest first, with their attempts</caption>
<thead><tr><th scope="col">txid</th><th scope="col">Of the recurrence</th><th scope="col">Status</th><th scope="col" class="num">Amount</th><th scope="col">Due</th><th scope="col">Attempts</th><th scope="col">History</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`
}
</section>`;
}

/** A fault on the sandbox payer PSP's next answer: its next scheduling or settlement attempt refused with a code. */
function failNextForm(view: ViewContext, p: string): SafeHtml {
  const reasons = [...new Set([...AUTOMATICO_REASONS.attempt])];
  const label = (code: string) => (code === INSUFFICIENT_FUNDS ? `${code}: no funds (the evening's retry follows)` : `${code}: ${CHARGE_REJECTIONS[code as keyof typeof CHARGE_REJECTIONS] ?? ''}`);
  const fields = [
    hidden('kind', 'automatico'),
    hidden('effect', 'reject'),
    hidden('count', '1'),
    select({ id: `${p}-stage`, name: 'stage', label: 'The next', options: [{ value: 'attempt', label: 'settlement attempt' }, { value: 'scheduling', label: 'scheduling' }] }),
    select({ id: `${p}-reason`, name: 'reason', label: 'Fails with', options: reasons.map((code) => ({ value: code, label: label(code) })) }),
  ];
  return formCard("Fail the payer's next answer", `${p}-title`, actionForm(view, 'set-fault', { submit: 'Set the fault', fields }));
}

function nextEventForm(view: ViewContext, p: string): SafeHtml {
  const form = actionForm(view, 'advance-next-event', { submit: 'Advance to the next event', fields: [] });
  return formCard('The next event', `${p}-title`, html`<p class="note">The clock moves to the next moment a rule acts (a solicitation answered, a charge scheduled or settled, a retry, an expiry), and it acts.</p>${form}`);
}

export function automaticoActions(view: ViewContext, clock: ClockState | null): SafeHtml {
  const network = [nextEventForm(view, 'next'), ...(clock ? [clockCard(view, 'clock', clock, 'Moving the clock runs every step of the cycle that fell due, in order.')] : []), failNextForm(view, 'fail')];
  return html`<div class="panels">${panel("As the network (the payer's bank)", 'network-title', network, "The sandbox's payer bank approves solicitations a minute after receiving them, and schedules and pays every charge, unless a fault says otherwise.")}</div>`;
}

export function automaticoSections(view: ViewContext, items: AutomaticoItems): SafeHtml {
  return html`${recurrencesSection(view, items)}${solicitationsSection(view, items)}${chargesSection(items)}`;
}
