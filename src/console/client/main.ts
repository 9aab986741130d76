// The console's entry: the page shell (header, navigation, server status) and a hash router —
// #/ overview and catalog, #/sql the editor, #/views/<name> a live view. Each page is torn down
// (timers, sockets) when the reader leaves it. A server with authentication that refuses the tab's
// token (or has none) gets the sign-in screen instead of the page, until a token is accepted.
import { getJson, onUnauthenticated, storeToken, storedToken, type ViewJson } from './api.ts';
import { signInPage } from './sign-in-page.ts';
import { h, setText } from './dom.ts';
import { overviewPage } from './overview-page.ts';
import type { Page } from './page.ts';
import { viewHref } from './page.ts';
import { sqlPage } from './sql-page.ts';
import { viewPage } from './view-page.ts';

const main = document.getElementById('main') as HTMLElement;
const navViews = document.getElementById('nav-views') as HTMLElement;
const serverEpoch = document.getElementById('server-epoch') as HTMLElement;
const serverState = document.getElementById('server-state') as HTMLElement;

let current: Page | null = null;
let first = true;
let signingIn = false;

const signOut = h('button', { type: 'button', id: 'sign-out', hidden: true }, 'Sign out');
document.querySelector('header .server')?.append(signOut);
signOut.addEventListener('click', () => {
  storeToken(null);
  showSignIn();
});

function showSignIn(): void {
  signOut.hidden = true;
  if (signingIn) return;
  signingIn = true;
  current?.close();
  main.replaceChildren();
  current = signInPage(main, () => {
    signingIn = false;
    signOut.hidden = storedToken() === null;
    viewNames = '';
    route();
  });
  document.title = 'Sign in · Sluice';
}
onUnauthenticated(showSignIn);

function route(): void {
  const hash = location.hash;
  if (hash !== '' && !hash.startsWith('#/')) return; // in-page anchors (the skip link)
  if (signingIn) return;
  signOut.hidden = storedToken() === null;
  current?.close();
  const path = hash.slice(1) || '/';
  const view = /^\/views\/([^/]+)$/.exec(path);
  main.replaceChildren();
  if (path === '/sql') current = sqlPage(main);
  else if (view !== null) current = viewPage(main, viewName(view[1] as string));
  else current = overviewPage(main);
  document.title = `${current.title} · Sluice`;
  for (const a of document.querySelectorAll<HTMLAnchorElement>('header nav a')) {
    const target = a.getAttribute('href') ?? '';
    if (target === (hash || '#/')) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  // After a navigation, move focus to the new page's heading so keyboard and screen-reader users
  // start there (not on first load, where the reader starts at the top anyway).
  if (!first) {
    const heading = main.querySelector('h1');
    if (heading !== null) {
      heading.setAttribute('tabindex', '-1');
      heading.focus({ preventScroll: false });
    }
  }
  first = false;
}

/** The view name of a route; a malformed escape (`#/views/%`) is taken as written, not a crash. */
function viewName(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

let viewNames = '';
async function pollServer(): Promise<void> {
  try {
    const ready = await getJson<{ status: string; epoch: number }>('/readyz');
    setText(serverEpoch, String(ready.epoch));
    setText(serverState, ready.status);
    serverState.className = 'badge state-live';
    const { views } = await getJson<{ views: ViewJson[] }>('/v1/views');
    const names = views.map((v) => v.name).join('\n');
    if (names !== viewNames) {
      viewNames = names;
      navViews.replaceChildren(...views.map((v) => h('li', {}, h('a', { href: viewHref(v.name) }, v.name))));
      for (const a of navViews.querySelectorAll('a')) {
        if (a.getAttribute('href') === location.hash) a.setAttribute('aria-current', 'page');
      }
    }
  } catch {
    setText(serverState, 'unreachable');
    serverState.className = 'badge state-closed';
  }
  window.setTimeout(() => void pollServer(), 2000);
}

document.querySelector('.skip-link')?.addEventListener('click', (event) => {
  event.preventDefault();
  main.focus();
});
window.addEventListener('hashchange', route);
route();
void pollServer();
