import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page, type Request, type Response } from 'playwright-core';
import { freePort } from '../processes.ts';
import { startTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../harness.ts';

/**
 * The console's browser tests: Debian's Chromium (scripts/install-browser.sh) driven by
 * playwright-core, against the service listening on a real port, on the test database of the
 * run (PGlite, or a fresh PostgreSQL database with TEST_DATABASE_URL).
 */
export const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOTS = new URL('../../test-results/console/', import.meta.url).pathname;

export async function launchBrowser(): Promise<Browser> {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: run scripts/install-browser.sh (CI's browser step does)`);
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}

/** The service on a port of its own, its PUBLIC_URL that address. */
export async function startListening(): Promise<{ t: TestApp; origin: string }> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const t = await startTestApp({ env: { PUBLIC_URL: origin } });
  await t.app.listen({ port, host: '127.0.0.1' });
  return { t, origin };
}

/** Waits until the element's whole text is `text` (R$ amounts spelt with a plain space). */
export async function hasText(page: Page, selector: string, text: string): Promise<void> {
  const pattern = new RegExp(`^\\s*${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ /g, '\\s')}\\s*$`);
  await page.locator(selector).filter({ hasText: pattern }).waitFor();
}

/**
 * What the page breaks of the console's accessibility rules: a form control without a label, a
 * table header without a scope, an image without alt text, a button without a name, an id twice.
 */
const ACCESSIBILITY_CHECK = `(() => {
  const problems = [];
  for (const el of document.querySelectorAll('input:not([type=hidden]), select, textarea')) {
    if (el.labels.length === 0 && !el.getAttribute('aria-label')) problems.push('no label: ' + el.outerHTML.slice(0, 80));
  }
  for (const th of document.querySelectorAll('th')) {
    const want = th.closest('thead') ? 'col' : 'row';
    if (th.getAttribute('scope') !== want) problems.push('th without scope=' + want + ': ' + th.textContent.trim().slice(0, 40));
  }
  for (const img of document.querySelectorAll('img')) if (!img.getAttribute('alt')) problems.push('img without alt');
  for (const b of document.querySelectorAll('button')) if (!(b.getAttribute('aria-label') || b.textContent.trim())) problems.push('button without a name');
  const ids = [...document.querySelectorAll('[id]')].map((e) => e.id);
  for (const id of new Set(ids.filter((id, i) => ids.indexOf(id) !== i))) problems.push('id used twice: ' + id);
  if (!document.querySelector('[aria-live]')) problems.push('no live region');
  return problems;
})()`;

export async function accessibilityProblems(page: Page): Promise<string[]> {
  return (await page.evaluate(ACCESSIBILITY_CHECK)) as string[];
}

/** Text as a person reads it: Intl writes R$ with a no-break space. */
export const plain = (text: string | null) => (text ?? '').replace(/\u00a0/g, ' ').replace(/\s+/g, ' ').trim();

interface Expected {
  readonly status: number;
  readonly path: string;
  used: boolean;
}

/**
 * A page that fails the journey on anything going wrong: a console error, an uncaught error, a
 * failed request, a request outside the service, or an answer of 400 or more that the journey
 * did not announce with `expect`. The event stream is the one request a navigation may cut.
 */
export class WatchedPage {
  readonly problems: string[] = [];
  readonly #expected: Expected[] = [];
  readonly context: BrowserContext;
  readonly page: Page;
  readonly origin: string;

  private constructor(context: BrowserContext, page: Page, origin: string) {
    this.context = context;
    this.page = page;
    this.origin = origin;
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      const status = /the server responded with a status of (\d+)/.exec(message.text());
      if (status && this.#expected.some((e) => e.status === Number(status[1]))) return;
      this.problems.push(`console error: ${message.text()}`);
    });
    page.on('pageerror', (error) => this.problems.push(`page error: ${error.message}`));
    page.on('request', (request) => {
      if (!request.url().startsWith(`${origin}/`) && !request.url().startsWith('data:')) this.problems.push(`request outside the service: ${request.url()}`);
    });
    page.on('requestfailed', (request) => this.#failed(request));
    page.on('response', (response) => this.#answered(response));
  }

  static async open(browser: Browser, origin: string): Promise<WatchedPage> {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, locale: 'pt-BR', timezoneId: 'America/Sao_Paulo' });
    return new WatchedPage(context, await context.newPage(), origin);
  }

  /** The journey expects one answer with this status on this path. */
  expect(status: number, path: string): void {
    this.#expected.push({ status, path, used: false });
  }

  #failed(request: Request): void {
    const path = new URL(request.url()).pathname;
    // A page left (or closed) ends its event stream, and the redraw a live update was reading
    // when a form was sent or a link followed: the browser reports them aborted, itself. The
    // service's own failures are answers (checked below) or other errors.
    if (request.failure()?.errorText === 'net::ERR_ABORTED' && request.method() === 'GET' && path.startsWith('/console')) return;
    this.problems.push(`request failed: ${request.method()} ${request.url()}: ${request.failure()?.errorText}`);
  }

  #answered(response: Response): void {
    if (response.status() < 400) return;
    const path = new URL(response.url()).pathname;
    const expected = this.#expected.find((e) => !e.used && e.status === response.status() && e.path === path);
    if (expected) expected.used = true;
    else this.problems.push(`unexpected ${response.status()} for ${response.request().method()} ${response.url()}`);
  }

  async signIn(next = '/console'): Promise<void> {
    await this.page.goto(`${this.origin}${next}`);
    await this.page.getByLabel('Admin token').fill(TEST_ADMIN_TOKEN);
    await this.page.getByRole('button', { name: 'Sign in' }).click();
    await this.page.waitForURL(`${this.origin}${next}`);
  }

  /** The page once its event stream is open: what changes from now on reaches it. */
  async live(): Promise<void> {
    await this.page.locator('html[data-live="on"]').waitFor();
  }

  /** Saves the page as test-results/console/<journey>.png; returns the file. */
  async screenshot(journey: string): Promise<string> {
    mkdirSync(SCREENSHOTS, { recursive: true });
    const path = `${SCREENSHOTS}${journey}.png`;
    await this.page.screenshot({ path, fullPage: true });
    return path;
  }

  /** Closes the page and fails on whatever went wrong, and on an announced answer that never came. */
  async close(): Promise<void> {
    await this.context.close();
    const missing = this.#expected.filter((e) => !e.used).map((e) => `expected ${e.status} for ${e.path}, which never came`);
    assert.deepEqual([...this.problems, ...missing], []);
  }
}
