// @ts-check
/**
 * The dashboard's DOM helpers. Elements are built from text only: the page's policy (Trusted Types) refuses
 * HTML from strings, so nothing a file or key is named can become markup.
 */

/**
 * @typedef {string | number | boolean | null | undefined | EventListener} PropValue
 * @typedef {Node | string | null | undefined | false} Child
 */

/**
 * An element with attributes (`on…` props become listeners; `false`, null and undefined are left out) and children.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, PropValue>} [props]
 * @param {...(Child | Child[])} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (typeof value === 'function') node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) if (child !== null && child !== undefined && child !== false) node.append(child);
  return node;
}

/**
 * A name as text that may wrap after the `_`, `.` and `-` between its parts as well as at spaces (a `<wbr>`
 * marks each place), so that a long name breaks between its words rather than inside one; only a part longer
 * than a whole line is broken, where the line ends (style.css). The text, and so the accessible name, is unchanged.
 * @param {string} name
 * @returns {(string | HTMLElement)[]}
 */
export function breakable(name) {
  return name.split(/(?<=[^_.-][_.-]+)(?=[^_.-])/).flatMap((part, i) => (i === 0 ? [part] : [h('wbr'), part]));
}

/**
 * The element with `id`, which the page must have.
 * @template {HTMLElement} T
 * @param {string} id
 * @param {new () => T} type
 * @returns {T}
 */
export function byId(id, type) {
  const node = document.getElementById(id);
  if (!(node instanceof type)) throw new Error(`the page has no ${type.name} #${id}`);
  return node;
}

/**
 * The element matching `selector` inside `root`, which must be there.
 * @template {Element} T
 * @param {ParentNode} root
 * @param {string} selector
 * @param {new () => T} type
 * @returns {T}
 */
export function find(root, selector, type) {
  const node = root.querySelector(selector);
  if (!(node instanceof type)) throw new Error(`no ${type.name} matches ${selector}`);
  return node;
}

/**
 * A fresh copy of the `<template id=…>`'s content.
 * @param {string} id
 * @returns {DocumentFragment}
 */
export function fromTemplate(id) {
  return /** @type {DocumentFragment} */ (byId(id, HTMLTemplateElement).content.cloneNode(true));
}

let statusTimer = 0;

/**
 * Says `message` in the polite status region (read by screen readers, shown for a few seconds).
 * @param {string} message
 */
export function announce(message) {
  const status = byId('status', HTMLElement);
  clearTimeout(statusTimer);
  // Emptied first, and filled a moment later, so that the same message said twice is announced twice.
  status.textContent = '';
  statusTimer = window.setTimeout(() => {
    status.textContent = message;
    statusTimer = window.setTimeout(() => (status.textContent = ''), 8000);
  }, 50);
}

/**
 * Shows `message` in the alert region until the next one, or until it is clicked away.
 * @param {string} message
 */
export function alertError(message) {
  const alert = byId('alert', HTMLElement);
  alert.replaceChildren(h('span', {}, message), h('button', { type: 'button', class: 'quiet', onclick: () => alert.replaceChildren() }, 'Dismiss'));
}

export function clearError() {
  byId('alert', HTMLElement).replaceChildren();
}

/** Empties the status and alert regions, a message about to be shown included (signing out). */
export function clearMessages() {
  clearTimeout(statusTimer);
  byId('status', HTMLElement).textContent = '';
  clearError();
}

/**
 * Whether `error` is a stop that was asked for (a view left, a sign-out): there is nothing to report, and
 * what the call was about must not be shown to whoever is signed in next.
 * @param {unknown} error
 */
export function isAbort(error) {
  return error instanceof DOMException && error.name === 'AbortError';
}

/**
 * A message for `error`: the API's own message for its errors.
 * @param {unknown} error
 */
export function messageOf(error) {
  if (error instanceof DOMException && error.name === 'AbortError') return 'Cancelled.';
  if (error instanceof Error) return error.message;
  return String(error);
}

/**
 * Shows `error` in a form's error paragraph (role=alert, so it is read out) or hides it.
 * @param {HTMLElement} paragraph
 * @param {unknown} [error]
 */
export function showFormError(paragraph, error) {
  paragraph.textContent = error === undefined ? '' : messageOf(error);
  paragraph.hidden = error === undefined;
}

/** @type {WeakMap<HTMLDialogElement, (value: string) => void>} settles a dialog's opening whose close event is still to come */
const openings = new WeakMap();

/**
 * Opens `dialog` as a modal (the page behind becomes inert, Escape closes it) and resolves with its
 * return value when it closes; focus goes back to what had it.
 * @param {HTMLDialogElement} dialog
 * @returns {Promise<string>}
 */
export function openDialog(dialog) {
  // The close event comes a task after the close, and a click may come first (browsers run input first): the
  // last opening is settled here, and its late event is not taken for this opening's.
  openings.get(dialog)?.(dialog.returnValue);
  const opener = document.activeElement;
  dialog.returnValue = '';
  dialog.showModal();
  return new Promise((resolve) => {
    const settle = (/** @type {string} */ value) => {
      dialog.removeEventListener('close', onClose);
      openings.delete(dialog);
      resolve(value);
    };
    const onClose = () => {
      if (dialog.open) return;
      if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
      settle(dialog.returnValue);
    };
    dialog.addEventListener('close', onClose);
    openings.set(dialog, settle);
  });
}

/**
 * Closes every dialog and empties what the views wrote into them (names, paths, a link, a secret, an
 * error), so that nothing of a session stays in the page after it (signing out).
 */
export function clearDialogs() {
  for (const dialog of document.querySelectorAll('dialog')) {
    dialog.close();
    for (const form of dialog.querySelectorAll('form')) form.reset();
    for (const field of dialog.querySelectorAll('input')) field.value = field.defaultValue;
    for (const filled of dialog.querySelectorAll('[data-filled]')) filled.replaceChildren();
    for (const error of dialog.querySelectorAll('.form-error')) showFormError(/** @type {HTMLElement} */ (error));
  }
}

/** Every `[data-close]` button closes its dialog. */
export function wireDialogCloseButtons() {
  document.addEventListener('click', (event) => {
    const button = event.target instanceof Element ? event.target.closest('dialog [data-close]') : null;
    button?.closest('dialog')?.close();
  });
}

/**
 * Disables a dialog's buttons while its action runs, so a double click cannot send it twice.
 * @param {HTMLElement} dialog
 * @param {boolean} busy
 */
export function setBusy(dialog, busy) {
  dialog.setAttribute('aria-busy', String(busy));
  for (const button of dialog.querySelectorAll('button:not([data-close])')) /** @type {HTMLButtonElement} */ (button).disabled = busy;
}

/**
 * Asks for confirmation of a permanent action in the confirm dialog and runs `action` when it is given,
 * keeping the dialog open (with the error in it) if the action fails. Resolves true once it has run.
 * @param {{ title: string, body: Child[], confirmLabel: string, action: () => Promise<void> }} options
 * @returns {Promise<boolean>}
 */
export async function confirmAction({ title, body, confirmLabel, action }) {
  const dialog = byId('confirm-dialog', HTMLDialogElement);
  const error = find(dialog, '.form-error', HTMLElement);
  const confirm = find(dialog, '[data-confirm]', HTMLButtonElement);
  byId('confirm-title', HTMLElement).textContent = title;
  byId('confirm-body', HTMLElement).replaceChildren(...body.filter((child) => child !== null && child !== undefined && child !== false));
  confirm.textContent = confirmLabel;
  showFormError(error);
  const run = async () => {
    setBusy(dialog, true);
    try {
      await action();
      dialog.close('done');
    } catch (failure) {
      showFormError(error, failure);
    } finally {
      setBusy(dialog, false);
    }
  };
  confirm.addEventListener('click', run);
  try {
    return (await openDialog(dialog)) === 'done';
  } finally {
    confirm.removeEventListener('click', run);
  }
}

const sizes = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1 });

/**
 * `bytes` for people: 999 B, 1.5 kB, 12 MB (powers of 1000, as file managers show them).
 * @param {number} bytes
 */
export function formatBytes(bytes) {
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${unit === 0 ? value : sizes.format(value)} ${units[unit]}`;
}

const dates = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/**
 * A `<time>` for an ISO timestamp, in the reader's locale and zone; the exact instant in its title.
 * @param {string | null} iso
 * @param {string} [none] what to show for no timestamp
 */
export function timeElement(iso, none = '—') {
  if (!iso) return h('span', { class: 'muted' }, none);
  return h('time', { datetime: iso, title: iso }, dates.format(new Date(iso)));
}

/**
 * A one-line count: "1 file", "3 folders".
 * @param {number} count
 * @param {string} noun
 */
export function plural(count, noun) {
  return `${count.toLocaleString()} ${noun}${count === 1 ? '' : 's'}`;
}
