import type { AccountRow } from '../service.ts';
import { money, time } from './format.ts';
import { html, type SafeHtml } from './html.ts';

export interface AccountsPage {
  readonly rows: readonly AccountRow[];
  readonly total: number;
  readonly page: number;
  readonly size: number;
}

function pagination(p: AccountsPage): SafeHtml {
  const pages = Math.max(1, Math.ceil(p.total / p.size));
  if (pages === 1) return html``;
  return html`<nav aria-label="Pages of accounts" class="pages">
  ${p.page > 1 ? html`<a href="/console?page=${p.page - 1}" rel="prev">Newer accounts</a>` : ''}
  <span>Page ${p.page} of ${pages}</span>
  ${p.page < pages ? html`<a href="/console?page=${p.page + 1}" rel="next">Older accounts</a>` : ''}
</nav>`;
}

/** Every account with its balances, newest first. */
export function accountsTable(p: AccountsPage): SafeHtml {
  const rows = p.rows.map(
    (a) => html`<tr>
  <th scope="row"><a href="/console/accounts/${a.id}">${a.name}</a></th>
  <td>${a.id}</td>
  <td>${a.document_type} ${a.document}</td>
  <td>${a.branch} / ${a.account_number}</td>
  <td>${a.status}</td>
  <td class="num">${money(a.balances.available)}</td>
  <td class="num">${money(a.balances.blocked)}</td>
  <td>${time(a.created_at)}</td>
</tr>`,
  );
  return html`<section data-live id="accounts" data-live-label="accounts" aria-labelledby="accounts-title">
<h2 id="accounts-title">Accounts <span class="count">(${p.total})</span></h2>
${
  p.rows.length === 0
    ? html`<p>No account yet: <code>npx pix-api accounts create</code> or <code>POST /admin/accounts</code> makes one.</p>`
    : html`<div class="table-wrap"><table>
<caption class="visually-hidden">Accounts and their balances, newest first</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Id</th><th scope="col">Document</th><th scope="col">Branch / account</th><th scope="col">Status</th><th scope="col" class="num">Available</th><th scope="col" class="num">Blocked</th><th scope="col">Created</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`
}
${pagination(p)}
</section>`;
}
