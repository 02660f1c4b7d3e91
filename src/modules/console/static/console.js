/* global window, document, fetch, URLSearchParams, FormData, DOMParser, EventSource, HTMLFormElement, CSS, navigator, Element */
// The console's one script, served as it is written: it sends the console's forms with fetch and
// shows their answer, keeps the live parts of a page current from the server's event stream, and
// copies BR Codes and the inbox's URL. Every page works without it, only without live updates.
(() => {
  'use strict';
  const status = document.getElementById('status');
  const liveState = document.getElementById('live-state');
  const marker = document.querySelector('meta[name="console-marker"]');
  /** What the server last drew in each live region, to tell a real change from a details element opened. */
  const drawn = new WeakMap();
  for (const region of document.querySelectorAll('[data-live]')) drawn.set(region, region.innerHTML);

  function announce(text, tone) {
    if (!status) return;
    status.textContent = text;
    status.className = `status${tone ? ` ${tone}` : ''}`;
  }

  function setLive(state, text) {
    document.documentElement.dataset.live = state;
    if (!liveState) return;
    liveState.dataset.state = state;
    liveState.textContent = text;
  }

  /** The page's own address, without the notice a form sent without the script came back with. */
  function pageUrl() {
    const url = new URL(window.location.href);
    for (const name of ['notice', 'tone', 'sig']) url.searchParams.delete(name);
    return url;
  }

  function signIn() {
    window.location.assign(`/console/sign-in?next=${encodeURIComponent(window.location.pathname)}`);
  }

  /** Replaces each live region whose content the server draws differently now, keeping open details and focus. */
  function swap(next) {
    const changed = [];
    for (const region of document.querySelectorAll('[data-live]')) {
      const fresh = next.getElementById(region.id);
      if (!fresh || fresh.innerHTML === drawn.get(region)) continue;
      const open = [...region.querySelectorAll('details[open][id]')].map((d) => d.id);
      const focused = region.contains(document.activeElement) && document.activeElement.id ? document.activeElement.id : null;
      const copy = document.importNode(fresh, true);
      drawn.set(copy, fresh.innerHTML);
      for (const id of open) {
        const details = copy.querySelector(`#${CSS.escape(id)}`);
        if (details) details.open = true;
      }
      region.replaceWith(copy);
      if (focused) document.getElementById(focused)?.focus();
      changed.push(region.dataset.liveLabel || region.id);
    }
    const nextMarker = next.querySelector('meta[name="console-marker"]');
    if (marker && nextMarker) marker.content = nextMarker.content;
    if (changed.length > 0) {
      const at = new Date().toLocaleTimeString('pt-BR', { timeZone: 'America/Sao_Paulo' });
      setLive('on', `Live updates on: ${changed.join(', ')} updated at ${at}`);
    }
  }

  let refreshing = null;
  let again = false;
  /** Reads the page again and swaps its live regions; calls that come meanwhile make one more read. */
  function refresh() {
    if (refreshing) {
      again = true;
      return refreshing;
    }
    refreshing = (async () => {
      do {
        again = false;
        const response = await fetch(pageUrl(), { headers: { 'x-console-request': 'refresh' }, credentials: 'same-origin' });
        if (response.status === 401) return signIn();
        if (!response.ok) return;
        swap(new DOMParser().parseFromString(await response.text(), 'text/html'));
      } while (again);
    })()
      .catch(() => setLive('off', 'Live updates: the page could not be read again'))
      .finally(() => (refreshing = null));
    return refreshing;
  }

  document.addEventListener('submit', async (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.dataset.action) return;
    event.preventDefault();
    const button = form.querySelector('button[type="submit"]');
    if (button) button.disabled = true;
    form.setAttribute('aria-busy', 'true');
    announce('Working…');
    try {
      const response = await fetch(form.action, {
        method: 'POST',
        body: new URLSearchParams(new FormData(form)),
        headers: { 'x-console-request': 'fetch' },
        credentials: 'same-origin',
      });
      if (response.status === 401) return signIn();
      announce(await response.text(), response.ok ? 'ok' : 'error');
      if (response.ok) {
        // Done: the form is ready for the next one (a refused one keeps what was typed, to be corrected).
        form.reset();
        await refresh();
      }
    } catch (error) {
      announce(`The service could not be reached: ${error.message}`, 'error');
    } finally {
      if (button && button.isConnected) button.disabled = false;
      form.removeAttribute('aria-busy');
      if (!form.isConnected && status) document.getElementById('main')?.focus();
    }
  });

  document.addEventListener('click', async (event) => {
    const button = event.target instanceof Element ? event.target.closest('button[data-copy]') : null;
    const source = button && document.getElementById(button.dataset.copy);
    if (!source) return;
    const what = button.dataset.copyWhat || 'The BR Code';
    try {
      await navigator.clipboard.writeText(source.textContent.trim());
      announce(`${what} was copied`, 'ok');
    } catch {
      const range = document.createRange();
      range.selectNodeContents(source);
      window.getSelection().removeAllRanges();
      window.getSelection().addRange(range);
      announce(`${what} is selected: copy it with Ctrl+C`, 'ok');
    }
  });

  if (window.location.search.includes('notice=')) window.history.replaceState(null, '', pageUrl());

  if (marker && 'EventSource' in window) {
    const source = new EventSource(`/console/events?since=${encodeURIComponent(marker.content)}`);
    setLive('connecting', 'Live updates: connecting');
    source.addEventListener('open', () => setLive('on', 'Live updates on'));
    source.addEventListener('change', () => void refresh());
    source.addEventListener('error', () => {
      if (source.readyState === EventSource.CLOSED) setLive('off', 'Live updates off: reload the page');
      else setLive('connecting', 'Live updates: reconnecting');
    });
    window.addEventListener('pagehide', () => source.close());
  }
})();
