// @ts-check
/**
 * Settings → API Keys: the drive's keys, creating one (its secret shown once, with a copy button), and
 * revoking one after confirmation.
 */
import { createKey, listKeys, revokeKey } from './api.js';
import { announce, byId, confirmAction, find, fromTemplate, h, openDialog, replaceRows, setBusy, showFormError, timeElement, trackRowFocus } from './ui.js';
import { readKey } from './session.js';

/** @typedef {import('./api.js').ApiKey} ApiKey */
/** @typedef {import('./api.js').Role} Role */

/** What each role may do, as the API enforces it (README, "Keys, roles and the admin routes"). */
const ROLES = /** @type {const} */ ({
  'read-write': { label: 'Read and write', does: 'Upload, download, list, create and delete folders.' },
  'read-only': { label: 'Read only', does: 'Download and list; nothing else.' },
  'upload-only': { label: 'Upload only', does: 'Upload files and create folders; cannot read or delete. For jobs that push files.' },
  admin: { label: 'Admin', does: 'Everything, and managing API keys (this page). Always the whole drive.' },
});

/**
 * Shows the keys in `main` until `signal` aborts.
 * @param {HTMLElement} main
 * @param {AbortSignal} signal
 */
export async function renderKeys(main, signal) {
  main.replaceChildren(fromTemplate('keys-view'));
  document.title = 'API Keys · Settings · Drive';
  const view = find(main, '.keys-view', HTMLElement);
  const showRevoked = find(view, '[data-input="show-revoked"]', HTMLInputElement);
  /** @type {ApiKey[]} */
  let keys = [];
  const draw = () => drawKeys(view, keys, showRevoked.checked, reload);
  // Each reading replaces the one on its way, so an older answer arriving last is not drawn over a newer one.
  let reading = new AbortController();
  const reload = async () => {
    reading.abort();
    reading = new AbortController();
    const current = AbortSignal.any([signal, reading.signal]);
    try {
      keys = await listKeys({ signal: current });
      draw();
    } catch (failure) {
      if (current.aborted) return;
      find(view, '[data-loading]', HTMLElement).hidden = true;
      showFormError(find(view, '[data-error]', HTMLElement), failure);
    }
  };
  showRevoked.addEventListener('change', draw);
  const create = find(view, '[data-action="create-key"]', HTMLButtonElement);
  create.addEventListener('click', () => createKeyDialog(reload));
  // After a revoke redraws the rows, focus goes to the next key's Revoke (or the one before), else to Create.
  trackRowFocus(find(view, 'tbody', HTMLElement), () => [create], signal);
  await reload();
}

/**
 * @param {HTMLElement} view
 * @param {ApiKey[]} keys
 * @param {boolean} showRevoked
 * @param {() => Promise<void>} reload
 */
function drawKeys(view, keys, showRevoked, reload) {
  find(view, '[data-loading]', HTMLElement).hidden = true;
  showFormError(find(view, '[data-error]', HTMLElement));
  const shown = keys.filter((key) => showRevoked || !key.revoked_at);
  const table = find(view, 'table', HTMLTableElement);
  replaceRows(find(table, 'tbody', HTMLElement), shown.map((key) => keyRow(key, reload)));
  table.hidden = shown.length === 0;
  find(view, '[data-empty]', HTMLElement).hidden = shown.length !== 0;
}

/**
 * @param {ApiKey} key
 * @param {() => Promise<void>} reload
 */
function keyRow(key, reload) {
  // The key this tab signed in with, as far as the last four characters tell: revoking it signs the tab out.
  const ours = !key.revoked_at && key.role === 'admin' && readKey()?.endsWith(key.last4);
  return h('tr', { 'data-key-id': key.id, 'data-row': key.id, class: key.revoked_at ? 'revoked' : undefined },
    h('th', { scope: 'row' }, key.name, ours && h('span', { class: 'badge' }, 'this tab')),
    h('td', {}, h('span', { class: `role role-${key.role}`, title: ROLES[key.role].does }, ROLES[key.role].label)),
    h('td', {}, key.prefix === '/' ? h('span', { class: 'muted' }, 'Whole drive') : h('code', {}, key.prefix)),
    h('td', { class: 'when' }, timeElement(key.created_at)),
    h('td', { class: 'when' }, timeElement(key.last_used_at, 'Never')),
    // Said as "ending in 1a2b" by every reader: an aria-label on <code> is not (ARIA prohibits naming a code element).
    // A no-break space: the hidden text's last space would be dropped, and "ending in1a2b" read.
    h('td', {}, h('code', { class: 'last4' }, h('span', { class: 'visually-hidden' }, 'ending in\u00a0'), h('span', { 'aria-hidden': 'true' }, '…'), key.last4)),
    h('td', { class: 'actions' },
      key.revoked_at
        ? h('span', { class: 'muted' }, 'Revoked ', timeElement(key.revoked_at))
        : h('button', { type: 'button', class: 'danger-quiet small', 'aria-label': `Revoke ${key.name}`, 'data-control': 'revoke', onclick: () => confirmRevoke(key, Boolean(ours), reload) }, 'Revoke…')),
  );
}

/**
 * @param {ApiKey} key
 * @param {boolean} ours
 * @param {() => Promise<void>} reload
 */
async function confirmRevoke(key, ours, reload) {
  const revoked = await confirmAction({
    title: `Revoke “${key.name}”?`,
    body: [
      h('p', {}, `Anything that uses the key ending in ${key.last4} gets 401 Unauthorized from now on (in AWS, within 30 seconds). This cannot be undone: to give access again, create a new key.`),
      ours && h('p', { class: 'warning-text' }, 'This looks like the key this tab signed in with: you will be signed out.'),
    ],
    confirmLabel: 'Revoke key',
    action: async () => {
      await revokeKey(key.id);
    },
  });
  if (!revoked) return;
  announce(`Revoked ${key.name}.`);
  await reload();
}

/**
 * The create dialog: name, role and folder; then the secret, shown this once.
 * @param {() => Promise<void>} reload
 */
async function createKeyDialog(reload) {
  const dialog = byId('key-dialog', HTMLDialogElement);
  const form = find(dialog, 'form', HTMLFormElement);
  const secretStep = find(dialog, '[data-step="secret"]', HTMLElement);
  const name = byId('key-name', HTMLInputElement);
  const role = byId('key-role', HTMLSelectElement);
  const prefix = byId('key-prefix', HTMLInputElement);
  const error = find(form, '.form-error', HTMLElement);
  const secret = byId('key-secret', HTMLInputElement);
  const copy = find(dialog, '[data-copy]', HTMLButtonElement);

  form.reset();
  form.hidden = false;
  secretStep.hidden = true;
  dialog.setAttribute('aria-labelledby', 'key-dialog-title');
  showFormError(error);
  const describeRole = () => {
    const chosen = /** @type {Role} */ (role.value);
    byId('key-role-hint', HTMLElement).textContent = ROLES[chosen].does;
    // An admin reaches the whole drive (the API refuses a prefix for it).
    prefix.disabled = chosen === 'admin';
    if (prefix.disabled) prefix.value = '';
  };
  describeRole();

  const submit = async (/** @type {SubmitEvent} */ event) => {
    event.preventDefault();
    if (name.value.trim() === '') {
      showFormError(error, 'Give the key a name, so you can tell it apart later.');
      return name.focus();
    }
    setBusy(dialog, true);
    try {
      const folder = prefix.value.trim();
      const created = await createKey({ name: name.value.trim(), role: /** @type {Role} */ (role.value), ...(folder ? { prefix: folder } : {}) });
      showSecret(created.key, created.secret);
      reload();
    } catch (failure) {
      showFormError(error, failure);
    } finally {
      setBusy(dialog, false);
    }
  };
  /**
   * @param {ApiKey} key
   * @param {string} value
   */
  const showSecret = (key, value) => {
    form.hidden = true;
    secretStep.hidden = false;
    dialog.setAttribute('aria-labelledby', 'key-secret-title');
    find(secretStep, '[data-secret-label]', HTMLElement).textContent = `for “${key.name}” (${ROLES[key.role].label.toLowerCase()}${key.prefix === '/' ? '' : `, ${key.prefix}`})`;
    secret.value = value;
    copy.textContent = 'Copy';
    secret.focus();
    secret.select();
    announce('Key created. Copy it now: it is shown only this once.');
  };
  const copySecret = async () => {
    try {
      await navigator.clipboard.writeText(secret.value);
      copy.textContent = 'Copied';
      announce('The key is on the clipboard.');
    } catch {
      secret.focus();
      secret.select();
      announce('Copying was refused by the browser: the key is selected, press Ctrl+C (⌘C on a Mac).');
    }
  };

  role.addEventListener('change', describeRole);
  form.addEventListener('submit', submit);
  copy.addEventListener('click', copySecret);
  try {
    await openDialog(dialog);
  } finally {
    role.removeEventListener('change', describeRole);
    form.removeEventListener('submit', submit);
    copy.removeEventListener('click', copySecret);
    // The secret leaves the page with the dialog.
    secret.value = '';
  }
}
