// @ts-check
/**
 * The trash (issue 28): the "Deleted … — Undo" notice shown after a delete in the files view, and the Trash view,
 * what was deleted or replaced newest first, with Restore and Purge per item and what the trash holds.
 */
import { ApiError, followJob, listTrash, purgeTrashItem, restoreFromTrash } from './api.js';
import { abilities, sessionSignal } from './session.js';
import { alertError, announce, byId, confirmAction, find, focusFirst, focusLost, formatBytes, fromTemplate, h, isAbort, messageOf, plural, replaceRows, showFormError, timeElement, trackRowFocus } from './ui.js';

/** @typedef {import('./api.js').TrashItem} TrashItem */

/** How many items a page of the Trash view shows. */
const PAGE_SIZE = 50;

/** Ends the notice's wiring when another notice or a sign-out replaces it. */
let noticeLifetime = new AbortController();

/** Hides the Undo notice (a sign-out, or a newer delete). */
export function hideUndoNotice() {
  noticeLifetime.abort();
  noticeLifetime = new AbortController();
  const notice = byId('undo-notice', HTMLElement);
  notice.hidden = true;
  find(notice, '[data-text]', HTMLElement).textContent = '';
}

/**
 * Shows "Deleted `path` — Undo" above the view, once the trash holds what this delete put there (with the trash
 * off, `DRIVE_TRASH_DAYS=0`, it does not, and no notice shows): the item deleted from `path` at or after
 * `since`, when the delete request set out (an older delete of the same path is never the one undone). Undo
 * restores that item and calls `onRestored` (which redraws what shows it); focus then goes to the view's
 * heading when the redraw leaves it nowhere.
 * @param {string} path
 * @param {() => Promise<void> | void} onRestored
 * @param {number} since when the delete request was sent (milliseconds since the epoch)
 * @returns {Promise<void>}
 */
export async function showUndoNotice(path, onRestored, since) {
  hideUndoNotice();
  const { signal } = noticeLifetime;
  /** @type {TrashItem | undefined} */
  let item;
  try {
    item = await deletedSince(path, since);
  } catch {
    // The trash could not be read (or the key may not): the delete stands, without an Undo.
    return;
  }
  if (!item || signal.aborted) return;
  const found = item;
  const notice = byId('undo-notice', HTMLElement);
  const undo = find(notice, '[data-action="undo"]', HTMLButtonElement);
  const dismiss = find(notice, '[data-action="dismiss-undo"]', HTMLButtonElement);
  find(notice, '[data-text]', HTMLElement).textContent = `Deleted ${path}`;
  notice.hidden = false;
  const leave = () => {
    const hadFocus = notice.contains(document.activeElement);
    hideUndoNotice();
    if (hadFocus || focusLost()) focusFirst(document.querySelector('#main h1'), document.getElementById('main'));
  };
  dismiss.addEventListener('click', leave, { signal });
  undo.addEventListener('click', async () => {
    undo.disabled = true;
    try {
      await restoreItem(found);
      leave();
      await onRestored();
      if (focusLost()) focusFirst(document.querySelector('#main h1'), document.getElementById('main'));
    } catch (failure) {
      if (isAbort(failure)) return;
      alertError(`Could not restore ${path}: ${messageOf(failure)}`);
    } finally {
      undo.disabled = false;
    }
  }, { signal });
}

/**
 * The newest trash item deleted from `path` itself (not from below it) at or after `since`: the one the delete
 * that set out at `since` made. None (no Undo) if that delete's item is not there (purged or restored already
 * by another request), whatever older deletes of the path the trash holds.
 * @param {string} path
 * @param {number} since
 * @returns {Promise<TrashItem | undefined>}
 */
async function deletedSince(path, since) {
  let cursor;
  do {
    const page = await listTrash({ path, cursor, signal: sessionSignal() });
    const item = page.items.find((candidate) => candidate.path === path && candidate.reason === 'deleted' && Date.parse(candidate.deleted_at) >= since);
    if (item) return item;
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return undefined;
}

/**
 * Restores `item` to where it was taken from, following the job of a big folder, and announces the result.
 * Resolves true once it is back; a failure (a 409: something stands there now) is thrown with the API's message.
 * @param {TrashItem} item
 * @param {boolean} [overwrite]
 */
async function restoreItem(item, overwrite = false) {
  const session = sessionSignal();
  const result = await restoreFromTrash(overwrite ? { id: item.id, overwrite: true } : { id: item.id });
  if ('done' in result) {
    announce(`Restored ${item.path}.`);
    return true;
  }
  await followJob(result.job, (job) => announce(`Restoring ${item.path}: ${plural(Number('files_restored' in job ? job.files_restored : 0), 'file')} restored so far…`), session);
  announce(`Restored ${item.path}.`);
  return true;
}

/**
 * Shows the trash in `main` until `signal` aborts.
 * @param {HTMLElement} main
 * @param {AbortSignal} signal
 */
export async function renderTrash(main, signal) {
  main.replaceChildren(fromTemplate('trash-view'));
  document.title = 'Trash · Drive';
  const view = find(main, '.trash-view', HTMLElement);
  const tbody = find(view, 'tbody', HTMLElement);
  const more = find(view, '[data-action="more-trash"]', HTMLButtonElement);
  const heading = find(view, 'h1', HTMLElement);
  // A key that may not restore nor purge has no Actions column.
  find(view, '[data-actions-column]', HTMLElement).hidden = !abilities().modify;
  /** @type {TrashItem[]} */
  let items = [];
  /** @type {string | null} */
  let next = null;
  let reading = new AbortController();
  /** @param {boolean} [append] a further page after the ones shown */
  const read = async (append = false) => {
    reading.abort();
    reading = new AbortController();
    const current = AbortSignal.any([signal, reading.signal]);
    try {
      // Redrawing after an action reads as many items as were shown, from the start.
      const page = await listTrash({ cursor: append && next ? next : undefined, limit: append ? PAGE_SIZE : Math.max(PAGE_SIZE, Math.min(1000, items.length)), signal: current });
      items = append ? [...items, ...page.items] : page.items;
      next = page.next_cursor;
      draw(page.usage);
    } catch (failure) {
      if (current.aborted) return;
      find(view, '[data-loading]', HTMLElement).hidden = true;
      showFormError(find(view, '[data-error]', HTMLElement), failure);
    }
  };
  const reload = () => read(false);
  /** @param {import('./api.js').TrashPage['usage']} usage */
  const draw = (usage) => {
    find(view, '[data-loading]', HTMLElement).hidden = true;
    showFormError(find(view, '[data-error]', HTMLElement));
    find(view, '[data-usage]', HTMLElement).textContent = `The trash holds ${plural(usage.items, 'item')}: ${plural(usage.files, 'file')}, ${formatBytes(usage.bytes)}.`;
    const table = find(view, 'table', HTMLTableElement);
    replaceRows(tbody, items.map((item) => trashRow(item, reload)));
    table.hidden = items.length === 0;
    find(view, '[data-empty]', HTMLElement).hidden = items.length !== 0;
    const hadFocus = document.activeElement === more;
    more.hidden = next === null;
    if (hadFocus && more.hidden) focusFirst(tbody.lastElementChild?.querySelector('button'), heading);
  };
  more.addEventListener('click', async () => {
    const shown = items.length;
    await read(true);
    // Focus goes to the first item of the new page.
    focusFirst(tbody.children[shown]?.querySelector('button, th'), more.hidden ? heading : more);
    announce(`Showing ${plural(items.length, 'item')}.`);
  });
  trackRowFocus(tbody, () => [heading], signal);
  await reload();
}

/**
 * @param {TrashItem} item
 * @param {() => Promise<void>} reload
 */
function trashRow(item, reload) {
  const may = abilities();
  const busy = item.state !== 'trashed';
  return h('tr', { 'data-row': item.id, 'data-trash-id': item.id },
    h('th', { scope: 'row', class: 'path' }, item.path),
    h('td', {}, item.type === 'folder' ? `Folder (${plural(item.files ?? 0, 'file')})` : 'File'),
    h('td', { class: 'num' }, formatBytes(item.size)),
    h('td', { class: 'when' }, timeElement(item.deleted_at)),
    h('td', { class: 'when' }, timeElement(item.purge_at)),
    h('td', {}, item.reason === 'replaced' ? 'Replaced' : 'Deleted', busy && h('span', { class: 'muted' }, ` (${item.state})`)),
    may.modify && h('td', { class: 'actions' },
      h('button', { type: 'button', class: 'secondary small', 'aria-label': `Restore ${item.path}`, 'data-control': 'restore', disabled: busy, onclick: () => confirmRestore(item, reload) }, 'Restore'),
      ' ',
      h('button', { type: 'button', class: 'danger-quiet small', 'aria-label': `Purge ${item.path}`, 'data-control': 'purge', disabled: busy, onclick: () => confirmPurge(item, reload) }, 'Purge…')),
  );
}

/**
 * Restores `item`; when something stands at its path (`409`), shows the API's message and offers to replace it.
 * @param {TrashItem} item
 * @param {() => Promise<void>} reload
 */
async function confirmRestore(item, reload) {
  try {
    await restoreItem(item);
    return reload();
  } catch (failure) {
    if (isAbort(failure)) return;
    if (!(failure instanceof ApiError && failure.status === 409)) {
      alertError(`Could not restore ${item.path}: ${messageOf(failure)}`);
      return reload();
    }
    const replaced = await confirmAction({
      title: `Restore “${item.path}” over what is there?`,
      body: [
        h('p', {}, failure.message),
        h('p', {}, `Restoring over it puts what stands at ${item.path} in the trash in turn.`),
      ],
      confirmLabel: 'Restore and replace',
      action: async () => {
        await restoreItem(item, true);
      },
    });
    if (!replaced) announce(`${item.path} was not restored.`);
    return reload();
  }
}

/**
 * @param {TrashItem} item
 * @param {() => Promise<void>} reload
 */
async function confirmPurge(item, reload) {
  /** @type {{ files: number, bytes: number } | undefined} */
  let purged;
  const done = await confirmAction({
    title: `Purge “${item.path}”?`,
    body: [
      h('p', {}, item.type === 'folder' ? `The folder and the ${plural(item.files ?? 0, 'file')} it held (${formatBytes(item.size)}) are deleted for good.` : `The file (${formatBytes(item.size)}) is deleted for good.`),
      h('p', { class: 'warning-text' }, 'Purging is permanent: it cannot be restored afterwards.'),
    ],
    confirmLabel: 'Purge',
    action: async () => {
      purged = await purgeTrashItem(item.id);
    },
  });
  if (!done || !purged) return;
  announce(`Purged ${item.path} (${formatBytes(purged.bytes)}).`);
  await reload();
}
