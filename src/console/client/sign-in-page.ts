// The sign-in screen of a server with authentication: the reader pastes a token, which is checked
// against the API and kept in this tab's sessionStorage (api.ts), never in the URL or localStorage.
import { ApiError, errorText, getJson, storeToken } from './api.ts';
import { h, setText } from './dom.ts';
import type { Page } from './page.ts';

export function signInPage(main: HTMLElement, signedIn: () => void): Page {
  const input = h('input', {
    id: 'sign-in-token',
    type: 'password',
    name: 'token',
    autocomplete: 'off',
    spellcheck: 'false',
    required: true,
    placeholder: 'sluice_…',
    'aria-describedby': 'sign-in-help',
  });
  const status = h('p', { id: 'sign-in-status', role: 'alert', class: 'sign-in-status' });
  const button = h('button', { type: 'submit', id: 'sign-in-submit', class: 'primary' }, 'Sign in');
  const form = h(
    'form',
    { class: 'sign-in', 'aria-labelledby': 'sign-in-title' },
    h('label', { for: 'sign-in-token' }, 'Token'),
    input,
    button,
    status,
  );
  let closed = false;
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const token = input.value.trim();
    if (token === '') return;
    button.disabled = true;
    setText(status, '');
    storeToken(token);
    getJson('/v1/views')
      .then(() => {
        if (!closed) signedIn();
      })
      .catch((error: unknown) => {
        if (error instanceof ApiError && error.status === 401) storeToken(null);
        setText(
          status,
          error instanceof ApiError && error.status === 401
            ? `That token was not accepted (${errorText(error)}).`
            : `Cannot check the token: ${errorText(error)}`,
        );
      })
      .finally(() => {
        button.disabled = false;
      });
  });
  main.append(
    h('h1', { id: 'sign-in-title' }, 'Sign in'),
    h(
      'p',
      { id: 'sign-in-help' },
      'This server requires a token. Paste one an admin created for you (sluice token create --role reader). ',
      'It is kept for this browser tab only.',
    ),
    form,
  );
  input.focus();
  return {
    title: 'Sign in',
    close: () => {
      closed = true;
    },
  };
}
