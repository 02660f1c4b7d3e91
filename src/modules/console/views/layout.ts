import { hidden } from './forms.ts';
import { html, type SafeHtml } from './html.ts';

/** An entry of the console's navigation. */
export interface NavEntry {
  readonly href: string;
  readonly label: string;
}

export interface Notice {
  readonly text: string;
  readonly tone: 'ok' | 'error';
}

export interface LayoutParts {
  readonly title: string;
  readonly nav: readonly NavEntry[];
  /** The nav entry of this page (its href). */
  readonly current: string;
  readonly csrf: string;
  /** The change marker the page was drawn at: its event stream tells it of anything later. */
  readonly marker: string;
  readonly notice?: Notice | undefined;
  readonly body: SafeHtml;
}

const head = (title: string, extra: SafeHtml | string = '') => html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Pix sandbox console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/console/static/console.css">
<script src="/console/static/console.js" defer></script>
${extra}
</head>`;

function status(notice: Notice | undefined): SafeHtml {
  return html`<div id="status" class="status${notice ? ` ${notice.tone}` : ''}" role="status" aria-live="polite" aria-atomic="true">${notice?.text ?? ''}</div>`;
}

/** A signed-in page: the navigation, the status region the script announces in, the page. */
export function layout(p: LayoutParts): string {
  const nav = p.nav.map((e) => html`<li><a href="${e.href}"${e.href === p.current ? html` aria-current="page"` : ''}>${e.label}</a></li>`);
  return html`${head(p.title, html`<meta name="console-marker" content="${p.marker}">`)}
<body>
<a class="skip-link" href="#main">Skip to the content</a>
<header class="top">
  <p class="brand">Pix sandbox console</p>
  <nav aria-label="Console"><ul>${nav}</ul></nav>
  <p id="live-state" class="live-state" data-state="off" role="status" aria-live="polite">Live updates: off</p>
  <form method="post" action="/console/sign-out" class="sign-out">${hidden('_csrf', p.csrf)}<button type="submit" class="quiet">Sign out</button></form>
</header>
<main id="main" tabindex="-1">
<h1>${p.title}</h1>
${status(p.notice)}
${p.body}
</main>
</body>
</html>
`.toString();
}

/** The sign-in page; `message` says why the last attempt was refused. */
export function signInPage(o: { next: string; message?: string | undefined }): string {
  return html`${head('Sign in')}
<body class="sign-in">
<main id="main">
<h1>Pix sandbox console</h1>
<p>Sign in with the service's <code>ADMIN_TOKEN</code> (printed at start, and kept in <code>data/demo/admin-token</code>).</p>
${o.message ? html`<p id="sign-in-error" class="status error" role="alert">${o.message}</p>` : ''}
<form method="post" action="/console/sign-in" class="action-form">
  ${hidden('next', o.next)}
  <div class="field">
    <label for="token">Admin token</label>
    <input id="token" name="token" type="password" required autocomplete="current-password" spellcheck="false"${o.message ? html` aria-describedby="sign-in-error" aria-invalid="true"` : ''}>
  </div>
  <button type="submit" class="primary">Sign in</button>
</form>
</main>
</body>
</html>
`.toString();
}

/** What a refused form shows when it was sent without the script. */
export function errorPage(o: { message: string; back: string }): string {
  return html`${head('Not done')}
<body>
<main id="main">
<h1>Not done</h1>
<p class="status error" role="alert">${o.message}</p>
<p><a href="${o.back}">Back</a></p>
</main>
</body>
</html>
`.toString();
}
