// @ts-check
/**
 * The dashboard's DOM helpers. Elements are built from text only: the page's policy (Trusted Types) refuses
 * HTML from strings, so nothing a file or key is named can become markup.
 */

import { createMessageQueue } from './message-queue.js';

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

/** The status region's messages, in order (message-queue.js), on the page's timers. */
const statusMessages = createMessageQueue((text) => {
  byId('status', HTMLElement).textContent = text;
}, window);

/**
 * Says `message` in the polite status region (read by screen readers, shown for a few seconds), after the
 * messages said before it have each had their turn; one of the same `topic` still waiting is replaced by it.
 * @param {string} message
 * @param {string} [topic]
 */
export function announce(message, topic) {
  statusMessages.say(message, topic);
}

/**
 * Shows `message` in the alert region until the next one, or until it is clicked away.
 * @param {string} message
 */
export function alertError(message) {
  const alert = byId('alert', HTMLElement);
  const dismiss = () => {
    const had = alert.contains(document.activeElement);
    alert.replaceChildren();
    // Focus goes back where it was before it came to the message, rather than to the body.
    if (had) focusFirst(beforeMessages, ...mainTargets());
  };
  alert.replaceChildren(h('span', {}, message), h('button', { type: 'button', class: 'quiet', onclick: dismiss }, 'Dismiss'));
}

export function clearError() {
  byId('alert', HTMLElement).replaceChildren();
}

/** Empties the status and alert regions, a message about to be shown included (signing out). */
export function clearMessages() {
  statusMessages.clear();
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
  placeMessages();
  return new Promise((resolve) => {
    const settle = (/** @type {string} */ value) => {
      dialog.removeEventListener('close', onClose);
      openings.delete(dialog);
      resolve(value);
    };
    const onClose = () => {
      if (dialog.open) return;
      // The opener, or the button of the menu it was in (a menu item is hidden by now); failing both (its row was
      // drawn again meanwhile), the row that had focus, or one near it.
      if (focusLost() && !focusFirst(opener, invokerOf(opener))) returnFocusToRows();
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
    placeMessages();
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
 * Marks a dialog's buttons unavailable while its action runs, so a double click cannot send it twice. They are
 * `aria-disabled`, not disabled: a disabled button loses the focus to the body, and the next Tab starts over.
 * @param {HTMLElement} dialog
 * @param {boolean} busy
 */
export function setBusy(dialog, busy) {
  dialog.setAttribute('aria-busy', String(busy));
  for (const button of dialog.querySelectorAll('button:not([data-close])')) {
    // The message regions may be in the dialog (placeMessages): their Dismiss is not the dialog's.
    if (!button.closest('.toasts')) setUnavailable(/** @type {HTMLElement} */ (button), busy);
  }
}

/**
 * Makes `button` refuse clicks (and so the Enter that submits its form) while keeping the focus it has.
 * @param {HTMLElement} button
 * @param {boolean} unavailable
 */
export function setUnavailable(button, unavailable) {
  if (unavailable) button.setAttribute('aria-disabled', 'true');
  else button.removeAttribute('aria-disabled');
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

/** What can take the focus in a row, in the order tried when its own control is gone. */
const FOCUSABLE = 'a[href], button, input, select, textarea, [tabindex]:not([tabindex="-1"])';

/**
 * Whether keyboard focus has fallen to nowhere: the body, or an element since removed, hidden, disabled or left in
 * a closed dialog. The next Tab would then start over from the top of the page.
 */
export function focusLost() {
  const active = document.activeElement;
  if (!(active instanceof HTMLElement) || active === document.body) return true;
  return !active.isConnected || active.matches(':disabled') || !active.checkVisibility() || active.closest('dialog:not([open])') !== null;
}

/**
 * Focuses the first of `candidates` that takes it (one removed, hidden or disabled does not); says whether one did.
 * @param {...(Element | null | undefined | false)} candidates
 */
export function focusFirst(...candidates) {
  for (const candidate of candidates) {
    if (!(candidate instanceof HTMLElement) || !candidate.isConnected || candidate === document.body) continue;
    candidate.focus();
    if (document.activeElement === candidate) return true;
  }
  return false;
}

/** The view's heading, then `<main>` itself: where focus goes when nothing nearer is left. */
function mainTargets() {
  const main = document.getElementById('main');
  return [main?.querySelector('h1'), main];
}

/**
 * The button that opens the popover `element` is in (a row's More menu), if it is in one.
 * @param {Element | null} element
 */
function invokerOf(element) {
  const popover = element?.closest('[popover]');
  return popover?.id ? document.querySelector(`[popovertarget="${CSS.escape(popover.id)}"]`) : null;
}

/**
 * @typedef {{ key: string, control: string | undefined, keys: string[], fallback: () => (Element | null | undefined)[] }} RowFocus
 * @type {Map<HTMLElement, RowFocus | undefined>} each list of rows shown, and the row of it that last had focus
 */
const rowLists = new Map();

/**
 * Remembers, until `signal` aborts, which row of `list` (its children, marked `data-row`; their controls marked
 * `data-control`) last had focus, so that focus can go back to it, or near it, when the rows are drawn anew or a
 * dialog opened from a row closes (`replaceRows`, `returnFocusToRows`).
 * @param {HTMLElement} list
 * @param {() => (Element | null | undefined)[]} fallback where focus goes when no row is left
 * @param {AbortSignal} signal
 */
export function trackRowFocus(list, fallback, signal) {
  rowLists.set(list, undefined);
  signal.addEventListener('abort', () => rowLists.delete(list), { once: true });
  document.addEventListener('focusin', (event) => {
    const target = event.target instanceof Element ? event.target : null;
    const row = target?.closest('[data-row]');
    if (target && row && row.parentElement === list) {
      // A menu's items act for the row's More button.
      const control = target.closest('[data-control], [popover]');
      rowLists.set(list, {
        key: row.getAttribute('data-row') ?? '',
        control: control?.hasAttribute('popover') ? 'more' : control?.getAttribute('data-control') ?? undefined,
        keys: [...list.children].map((child) => child.getAttribute('data-row') ?? ''),
        fallback,
      });
    } else if (target && !target.closest('dialog, .toasts')) {
      // Focus went elsewhere in the page: it is no row's to take back.
      rowLists.set(list, undefined);
    }
  }, { signal });
}

/**
 * Replaces the rows of `list` (see `trackRowFocus`); if that took the focus with them, it goes to the same row
 * drawn anew, else the one that came after it, else the one before, else the list's fallback.
 * @param {HTMLElement} list
 * @param {Node[]} rows
 */
export function replaceRows(list, rows) {
  list.replaceChildren(...rows);
  if (focusLost()) focusRowOf(list);
}

/** Puts lost focus back on the row that last had it, in whichever list shown it was (see `replaceRows`). */
export function returnFocusToRows() {
  for (const list of rowLists.keys()) if (list.isConnected && focusRowOf(list)) return;
  focusFirst(...mainTargets());
}

/**
 * @param {HTMLElement} list
 * @returns {boolean} whether focus went somewhere
 */
function focusRowOf(list) {
  const last = rowLists.get(list);
  if (!last) return false;
  const at = Math.max(0, last.keys.indexOf(last.key));
  const order = [last.key, ...last.keys.slice(at + 1), ...last.keys.slice(0, at).reverse()];
  const rows = [...list.children];
  for (const key of order) {
    const row = rows.find((child) => child.getAttribute('data-row') === key);
    if (!row) continue;
    const own = last.control === undefined ? null : row.querySelector(`[data-control="${CSS.escape(last.control)}"]`);
    if (focusFirst(own, ...row.querySelectorAll(FOCUSABLE))) return true;
  }
  return focusFirst(...last.fallback());
}

/** Focus, as it last was outside the message regions: where Dismiss sends it back. */
/** @type {Element | null} */
let beforeMessages = null;

/**
 * Puts the message regions into the modal dialog open on top, if one is, else back at the end of the page. Outside
 * an open modal dialog they are inert: left out of the accessibility tree, so unheard, and drawn under its backdrop.
 */
function placeMessages() {
  const toasts = document.querySelector('.toasts');
  if (!toasts) return;
  const modal = [...document.querySelectorAll('dialog[open]')].filter((dialog) => dialog.matches(':modal')).at(-1);
  const home = modal ?? document.body;
  if (toasts.parentElement !== home) home.append(toasts);
}

/**
 * The page-wide wiring of focus and messages: buttons marked unavailable refuse clicks; the message regions follow
 * modal dialogs; Dismiss knows where focus came from.
 */
export function wireFocusAndMessages() {
  document.addEventListener('click', (event) => {
    if (!(event.target instanceof Element) || !event.target.closest('button[aria-disabled="true"]')) return;
    event.preventDefault();
    event.stopImmediatePropagation();
  }, { capture: true });
  document.addEventListener('focusin', (event) => {
    if (event.target instanceof Element && !event.target.closest('.toasts')) beforeMessages = event.target;
  });
  // A dialog closes in many ways (a button, Escape, a sign-out): each shows as its open attribute going.
  new MutationObserver(placeMessages).observe(document.body, { attributes: true, attributeFilter: ['open'], subtree: true });
}
