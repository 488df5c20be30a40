// @ts-check
/**
 * The dashboard's entry point: sign-in with a key of any role, the views (Files; Settings → API Keys and
 * Settings → Trust rules, for admins) chosen by the address's fragment, which works under any base path and never
 * reaches the server, and the page-wide wiring.
 */
import { ApiError, accessOf, apiEvents } from './api.js';
import { folderHref, renderFiles, resetFilesView } from './files-view.js';
import { renderKeys } from './keys-view.js';
import { renderTrust } from './trust-view.js';
import { hideUndoNotice, renderTrash } from './trash-view.js';
import { abilities, forgetKey, readAccess, readKey, storeAccess, storeKey } from './session.js';
import { alertError, announce, byId, clearDialogs, clearMessages, find, fromTemplate, h, messageOf, showFormError, wireDialogCloseButtons, wireFocusAndMessages } from './ui.js';
import { resetUploads, uploadsRunning, wireUploadsPanel } from './uploads.js';

/** @typedef {{ view: 'files', folder: string } | { view: 'keys' } | { view: 'trust' } | { view: 'trash' }} Route */

/** The settings pages, admins' only, by view: what the page says to another key that asks for one. */
const SETTINGS = /** @type {const} */ ({ keys: 'Settings → API Keys', trust: 'Settings → Trust rules' });

const main = byId('main', HTMLElement);
/** Aborted when another view replaces the current one, so late answers of the old one are dropped. */
let viewLifetime = new AbortController();

/**
 * The view a fragment names: `#/settings/api-keys`, `#/settings/trust`, or `#/files/<folder>` (segments
 * URL-encoded), the default.
 * @param {string} hash
 * @returns {Route}
 */
function routeOf(hash) {
  if (hash === '#/settings/api-keys') return { view: 'keys' };
  if (hash === '#/settings/trust') return { view: 'trust' };
  if (hash === '#/trash') return { view: 'trash' };
  if (!hash.startsWith('#/files/')) return { view: 'files', folder: '/' };
  try {
    const segments = hash.slice('#/files/'.length).split('/').filter((segment) => segment !== '').map(decodeURIComponent);
    return { view: 'files', folder: `/${segments.join('/')}` };
  } catch {
    return { view: 'files', folder: '/' };
  }
}

/**
 * Shows the view of the address, or the sign-in form when this tab holds no key.
 * @param {{ focus?: boolean, notice?: string }} [options] focus: move focus to the new view's heading
 * @returns {Promise<void> | void}
 */
function render(options = {}) {
  viewLifetime.abort();
  viewLifetime = new AbortController();
  const key = readKey();
  find(document, '.main-nav', HTMLElement).hidden = key === undefined;
  byId('sign-out', HTMLButtonElement).hidden = key === undefined;
  if (key === undefined) return renderSignIn(options.notice);
  if (!readAccess()) return readAccessThenRender(key, options);
  const may = abilities();
  find(document, '[data-nav="keys"]', HTMLElement).closest('li')?.toggleAttribute('hidden', !may.manageKeys);
  // An upload-only key sees none of the trash (the API answers it 403).
  find(document, '[data-nav="trash"]', HTMLElement).closest('li')?.toggleAttribute('hidden', !may.list);

  let route = routeOf(location.hash);
  // Another key never renders a settings page: nothing of it is asked of the API.
  if (route.view === 'trash' && !may.list) {
    alertError('The trash needs a key that may list files; this key can only upload.');
    route = { view: 'files', folder: '/' };
  }
  if (route.view !== 'files' && route.view !== 'trash' && !may.manageKeys) {
    alertError(`${SETTINGS[route.view]} needs an admin key; this key can only reach its files.`);
    route = { view: 'files', folder: '/' };
  }
  // Both settings pages are under the one Settings link.
  const section = route.view === 'files' || route.view === 'trash' ? route.view : 'keys';
  for (const link of document.querySelectorAll('[data-nav]')) {
    if (link.getAttribute('data-nav') === section) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  const shown = route.view === 'keys' ? renderKeys(main, viewLifetime.signal) : route.view === 'trust' ? renderTrust(main, viewLifetime.signal) : route.view === 'trash' ? renderTrash(main, viewLifetime.signal) : renderFiles(main, route.folder, viewLifetime.signal);
  if (options.focus) main.querySelector('h1')?.focus();
  return shown;
}

/**
 * Asks the API what the tab's key may do (a tab signed in before it kept that), then renders.
 * @param {string} key
 * @param {{ focus?: boolean, notice?: string }} options
 * @returns {Promise<void>}
 */
async function readAccessThenRender(key, options) {
  main.replaceChildren(h('p', { class: 'loading' }, 'Loading…'));
  try {
    storeAccess(await accessOf(key));
  } catch (failure) {
    if (!(failure instanceof ApiError && failure.status === 401)) return alertError(messageOf(failure));
    return endSession('This tab was signed out: its key was revoked or is no longer valid. Sign in with another key.');
  }
  return render(options);
}

/** @param {string} [notice] why the tab was signed out, if it was */
function renderSignIn(notice) {
  document.title = 'Sign in · Drive';
  main.replaceChildren(fromTemplate('sign-in-view'));
  const form = byId('sign-in-form', HTMLFormElement);
  const input = byId('sign-in-key', HTMLInputElement);
  const error = byId('sign-in-error', HTMLElement);
  const button = find(form, 'button[type=submit]', HTMLButtonElement);
  if (notice) showFormError(error, notice);
  form.addEventListener('submit', async (event) => {
    // Never submitted: the key must not leave in a request of its own (the policy's form-action 'none' backs this).
    event.preventDefault();
    const key = input.value.trim();
    if (key === '') {
      showFormError(error, 'Paste an API key to sign in.');
      return input.focus();
    }
    button.disabled = true;
    try {
      // Checks the key and reads what it may do; the page then offers just that.
      const access = await accessOf(key);
      storeKey(key, access);
      // A key confined to a folder opens there: it may not list the root.
      if (access.prefix && access.prefix !== '/' && routeOf(location.hash).view === 'files') location.replace(folderHref(access.prefix));
      render({ focus: true });
      announce(`Signed in with a${access.role === 'admin' ? 'n' : ''} ${access.role} key.`);
    } catch (failure) {
      showFormError(error, signInProblem(failure));
      input.focus();
    } finally {
      button.disabled = false;
    }
  });
  input.focus();
}

/**
 * What to tell someone whose key was refused.
 * @param {unknown} error
 */
function signInProblem(error) {
  if (error instanceof ApiError && error.status === 401) return 'Drive does not know this key, or it has been revoked. Check that you pasted all of it.';
  return messageOf(error);
}

/**
 * Ends the session (Sign out, or a key that stopped working): the key and all kept with it are forgotten,
 * its calls, followed jobs and uploads stop, and nothing it showed is left for the next key to see (the
 * tray, messages, dialogs, the sort order, the folder in the address).
 * @param {string} [notice] why, when the tab did not choose to
 * @returns {Promise<void> | void}
 */
function endSession(notice) {
  resetUploads();
  forgetKey();
  clearDialogs();
  clearMessages();
  hideUndoNotice();
  resetFilesView();
  // The address names the folder shown; the next key starts at its own root.
  if (location.hash !== '') history.replaceState(null, '', `${location.pathname}${location.search}`);
  return render({ notice });
}

function signOut() {
  endSession();
  announce('Signed out. The key is forgotten by this tab.');
}

/** The wiring that lives as long as the page. */
function start() {
  wireFocusAndMessages();
  wireDialogCloseButtons();
  wireUploadsPanel();
  byId('sign-out', HTMLButtonElement).addEventListener('click', signOut);
  byId('skip-link', HTMLAnchorElement).addEventListener('click', (event) => {
    // The fragment names views, so the skip link moves focus itself.
    event.preventDefault();
    main.focus();
  });
  window.addEventListener('hashchange', () => render({ focus: true }));
  apiEvents.addEventListener('unauthorized', () => {
    if (readKey() === undefined) return;
    endSession('This tab was signed out: its key was revoked or is no longer valid. Sign in with another key.');
    announce('Signed out.');
  });
  apiEvents.addEventListener('ratelimited', (event) => {
    const { seconds, message } = /** @type {CustomEvent<{ seconds: number, message: string }>} */ (event).detail;
    announce(`${message.replace(/\.?$/, '.')} Trying again in ${seconds} s.`);
  });
  window.addEventListener('beforeunload', (event) => {
    if (uploadsRunning()) event.preventDefault();
  });
  // A file dropped outside a drop zone would otherwise replace the page.
  for (const type of ['dragover', 'drop']) window.addEventListener(type, (event) => event.preventDefault());
  render();
}

start();
