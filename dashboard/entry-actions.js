// @ts-check
/**
 * What can be done to one file or folder of a listing, besides downloading it: rename in place, move or copy
 * into a folder picked by browsing, share links to a file, and delete a file. Each calls `onChanged` once the
 * drive has changed, so the listing can be read again.
 */
import { ApiError, createLink, deleteFile, followJob, listLinks, listPage, moveOrCopy, revokeLink } from './api.js';
import { destinationOf, isWithin, nameOf, parentOf, stemRange } from './paths.js';
import { sessionSignal } from './session.js';
import { showUndoNotice } from './trash-view.js';
import { alertError, announce, byId, confirmAction, find, focusFirst, h, isAbort, messageOf, openDialog, setBusy, setUnavailable, showFormError, timeElement } from './ui.js';

/** @typedef {{ path: string, kind: 'file' | 'folder' }} Entry */
/** @typedef {import('./api.js').Job} Job */

/** Folders read at once in the picker: one page of the list route. */
const PICKER_PAGE = 200;

/** The expiries offered for a share link, in seconds; the API's default (a day) is preselected. */
export const LINK_EXPIRIES = /** @type {const} */ ([
  { seconds: 3600, label: '1 hour' },
  { seconds: 86_400, label: '1 day' },
  { seconds: 7 * 86_400, label: '7 days' },
  { seconds: 30 * 86_400, label: '30 days' },
]);

let menuCount = 0;

/**
 * A "More" button opening a small menu of `items` (a popover: Escape or a click elsewhere closes it, and focus
 * goes back to the button). Arrow keys move between the items.
 * @param {string} label the button's accessible name, like "More actions for report.pdf"
 * @param {[string, () => void][]} items
 * @returns {Node[]} the button and its menu, to place together
 */
export function moreMenu(label, items) {
  const id = `row-menu-${++menuCount}`;
  const buttons = items.map(([text, run]) =>
    h('button', { type: 'button', class: 'quiet', onclick: () => {
      menu.hidePopover();
      run();
    } }, text));
  const menu = h('div', { id, popover: 'auto', class: 'row-menu', role: 'group', 'aria-label': label }, ...buttons);
  const opener = h('button', { type: 'button', class: 'quiet small', popovertarget: id, 'aria-label': label, 'data-more': true, 'data-control': 'more' }, 'More', h('span', { 'aria-hidden': 'true' }, ' ▾'));
  menu.addEventListener('beforetoggle', (event) => {
    if (/** @type {ToggleEvent} */ (event).newState !== 'open') return;
    // Beside its button, or above it near the bottom of the window (the top layer ignores the table's box).
    const box = opener.getBoundingClientRect();
    menu.style.left = `${Math.max(8, box.right - 200)}px`;
    menu.style.top = `${box.bottom + 4}px`;
  });
  menu.addEventListener('toggle', (event) => {
    if (/** @type {ToggleEvent} */ (event).newState !== 'open') return;
    const room = window.innerHeight - opener.getBoundingClientRect().bottom;
    if (room < menu.offsetHeight + 12) menu.style.top = `${Math.max(8, opener.getBoundingClientRect().top - menu.offsetHeight - 4)}px`;
    buttons[0]?.focus();
  });
  menu.addEventListener('keydown', (event) => {
    const at = buttons.indexOf(/** @type {HTMLButtonElement} */ (document.activeElement));
    if (at < 0) return;
    // Home and End go to the first and last item, as in any menu, rather than scrolling the page under it.
    const to = { ArrowDown: (at + 1) % buttons.length, ArrowUp: (at - 1 + buttons.length) % buttons.length, Home: 0, End: buttons.length - 1 }[event.key];
    if (to === undefined) return;
    event.preventDefault();
    buttons[to].focus();
  });
  // Focus leaving the menu (Tab, Shift+Tab) closes it: left open, it would cover the next button focused.
  menu.addEventListener('focusout', (event) => {
    if (event.relatedTarget instanceof Node && menu.contains(event.relatedTarget)) return;
    if (event.relatedTarget === null && !document.hasFocus()) return;
    if (menu.matches(':popover-open')) menu.hidePopover();
  });
  return [opener, menu];
}

/**
 * Turns the name cell of `row` into a form that renames `entry` (a move within its folder): Enter saves,
 * Escape puts the name back. A taken name offers Replace (files only: the API replaces files, not folders).
 * @param {HTMLTableRowElement} row
 * @param {Entry} entry
 * @param {() => void} onChanged
 */
export function renameInPlace(row, entry, onChanged) {
  const cell = find(row, '.name', HTMLElement);
  const before = [...cell.childNodes];
  const name = nameOf(entry.path);
  const input = h('input', { type: 'text', value: name, 'aria-label': `New name for ${name}`, autocomplete: 'off', spellcheck: 'false', maxlength: 255 });
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true });
  const replace = h('button', { type: 'button', class: 'danger small', hidden: true }, 'Replace');
  const save = h('button', { type: 'submit', class: 'primary small' }, 'Save');
  const cancel = h('button', { type: 'button', class: 'small' }, 'Cancel');
  const form = h('form', { class: 'rename-form', novalidate: true, 'aria-label': `Rename ${name}` }, input, save, cancel, replace, error);
  const restore = () => {
    cell.replaceChildren(...before);
    row.querySelector('[data-more]')?.closest('button')?.focus();
  };
  let running = false;
  /** The form is read-only while the move runs, with focus kept where it is (a disabled control would drop it). */
  const setRunning = (/** @type {boolean} */ on) => {
    running = on;
    input.readOnly = on;
    for (const control of [save, cancel, replace]) setUnavailable(control, on);
  };
  const run = async (/** @type {boolean} */ overwrite) => {
    if (running) return;
    const wanted = input.value.trim();
    if (wanted === name) return restore();
    const target = destinationOf(entry, parentOf(entry.path), wanted);
    if ('problem' in target) {
      showFormError(error, target.problem);
      return input.focus();
    }
    setRunning(true);
    try {
      const result = await moveOrCopy('move', { from: entry.path, to: target.to, overwrite });
      // The row stands for its new name from now on: once the rows are drawn again, focus goes to that row's.
      row.setAttribute('data-row', target.to);
      restore();
      await finish('move', entry, target.to, result, onChanged);
    } catch (failure) {
      setRunning(false);
      replace.hidden = !(isConflict(failure) && entry.kind === 'file') || overwrite;
      showFormError(error, conflictMessage(failure, target.to, entry));
      input.focus();
    }
  };
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    run(false);
  });
  input.addEventListener('input', () => (replace.hidden = true));
  input.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape') return;
    event.preventDefault();
    restore();
  });
  cancel.addEventListener('click', restore);
  replace.addEventListener('click', () => run(true));
  cell.replaceChildren(form);
  input.focus();
  input.setSelectionRange(...stemRange(name));
}

/**
 * The Move or Copy dialog: a folder picker that browses the drive's folders a page at a time, the name to
 * give (the entry's own, by default), and Replace when the destination is a file already.
 * @param {'move' | 'copy'} kind
 * @param {Entry} entry
 * @param {() => void} onChanged
 */
export async function moveOrCopyDialog(kind, entry, onChanged) {
  const dialog = byId('transfer-dialog', HTMLDialogElement);
  const form = find(dialog, 'form', HTMLFormElement);
  const crumbs = find(dialog, '[data-picker-crumbs]', HTMLElement);
  const list = find(dialog, '[data-picker-folders]', HTMLElement);
  const status = find(dialog, '[data-picker-status]', HTMLElement);
  const more = find(dialog, '[data-picker-more]', HTMLButtonElement);
  const nameInput = byId('transfer-name', HTMLInputElement);
  const target = byId('transfer-target', HTMLElement);
  const error = find(dialog, '.form-error', HTMLElement);
  const submit = find(dialog, '[data-submit]', HTMLButtonElement);
  const replace = find(dialog, '[data-replace]', HTMLButtonElement);
  const verb = kind === 'move' ? 'Move' : 'Copy';
  const name = nameOf(entry.path);

  byId('transfer-title', HTMLElement).textContent = `${verb} “${name}”`;
  submit.textContent = `${verb} here`;
  nameInput.value = name;
  showFormError(error);
  replace.hidden = true;
  let picked = parentOf(entry.path);
  /** @type {string | null} */
  let cursor = null;
  let reading = new AbortController();

  const describe = () => {
    const destination = destinationOf(entry, picked, nameInput.value.trim());
    target.textContent = 'to' in destination ? `${verb === 'Move' ? 'Moves' : 'Copies'} it to ${destination.to}` : destination.problem;
    replace.hidden = true;
  };
  /** Shows `folder`'s subfolders (a page more of them with `append`). */
  const browse = async (/** @type {string} */ folder, append = false) => {
    reading.abort();
    reading = new AbortController();
    const signal = reading.signal;
    if (!append) {
      picked = folder;
      cursor = null;
      drawCrumbs();
      list.replaceChildren();
      describe();
    }
    status.textContent = 'Loading folders…';
    more.hidden = true;
    try {
      const page = await listPage(folder, { limit: PICKER_PAGE, cursor, signal });
      cursor = page.next_cursor;
      list.append(...page.folders.map((sub) => h('li', {},
        h('button', {
          type: 'button',
          class: 'quiet picker-folder',
          // A folder cannot go into itself or below itself.
          disabled: entry.kind === 'folder' && isWithin(sub.path, entry.path),
          onclick: () => browse(sub.path).then(focusPicker),
        }, h('span', { class: 'icon', 'aria-hidden': 'true' }), sub.name))));
      status.textContent = list.childElementCount === 0 ? `No folders in ${folder}.` : '';
      more.hidden = !cursor;
    } catch (failure) {
      if (signal.aborted || isAbort(failure)) return;
      status.textContent = `Could not read ${folder}: ${messageOf(failure)}`;
    }
  };
  /** Focus on the first folder listed, or on the current one's crumb when it holds none. */
  const focusPicker = () => {
    const first = list.querySelector('button:not(:disabled)');
    (first instanceof HTMLButtonElement ? first : find(crumbs, '[aria-current]', HTMLButtonElement)).focus();
  };
  const drawCrumbs = () => {
    const segments = picked.split('/').filter((segment) => segment !== '');
    const trail = [{ name: 'All files', path: '/' }, ...segments.map((segment, i) => ({ name: segment, path: `/${segments.slice(0, i + 1).join('/')}` }))];
    // A crumb or folder clicked is about to be replaced: focus goes to the crumb of the folder now picked.
    const hadFocus = crumbs.contains(document.activeElement) || list.contains(document.activeElement);
    crumbs.replaceChildren(...trail.map((crumb, i) =>
      h('li', {}, h('button', { type: 'button', class: 'quiet small', 'aria-current': i === trail.length - 1 ? 'location' : undefined, onclick: () => browse(crumb.path) }, crumb.name))));
    if (hadFocus) focusFirst(crumbs.querySelector('[aria-current]'));
  };
  const run = async (/** @type {boolean} */ overwrite) => {
    const destination = destinationOf(entry, picked, nameInput.value.trim());
    if ('problem' in destination) {
      showFormError(error, destination.problem);
      return;
    }
    setBusy(dialog, true);
    try {
      const result = await moveOrCopy(kind, { from: entry.path, to: destination.to, overwrite });
      dialog.close('done');
      await finish(kind, entry, destination.to, result, onChanged);
    } catch (failure) {
      showFormError(error, conflictMessage(failure, destination.to, entry));
      replace.hidden = !(isConflict(failure) && entry.kind === 'file') || overwrite;
      if (!replace.hidden) replace.focus();
    } finally {
      setBusy(dialog, false);
    }
  };
  const onSubmit = (/** @type {SubmitEvent} */ event) => {
    event.preventDefault();
    run(false);
  };
  const onReplace = () => run(true);
  const onMore = () => browse(picked, true);
  form.addEventListener('submit', onSubmit);
  replace.addEventListener('click', onReplace);
  more.addEventListener('click', onMore);
  nameInput.addEventListener('input', describe);
  const closed = openDialog(dialog);
  await browse(picked);
  focusPicker();
  try {
    await closed;
  } finally {
    reading.abort();
    form.removeEventListener('submit', onSubmit);
    replace.removeEventListener('click', onReplace);
    more.removeEventListener('click', onMore);
    nameInput.removeEventListener('input', describe);
  }
}

/**
 * @param {unknown} failure
 */
function isConflict(failure) {
  return failure instanceof ApiError && failure.status === 409;
}

/**
 * The API's message, with what to do about a taken destination.
 * @param {unknown} failure
 * @param {string} to
 * @param {Entry} entry
 */
function conflictMessage(failure, to, entry) {
  if (!isConflict(failure)) return messageOf(failure);
  return entry.kind === 'file'
    ? `${to} exists already (${messageOf(failure)}). Replace it, or choose another name.`
    : `${to} exists already (${messageOf(failure)}). Choose another name or folder.`;
}

/**
 * Says what a move or copy did, following its job when a big folder answered 202, then calls `onChanged`.
 * @param {'move' | 'copy'} kind
 * @param {Entry} entry
 * @param {string} to
 * @param {Awaited<ReturnType<typeof moveOrCopy>>} result
 * @param {() => void} onChanged
 */
async function finish(kind, entry, to, result, onChanged) {
  const session = sessionSignal();
  const done = kind === 'move' ? (parentOf(to) === parentOf(entry.path) ? 'Renamed' : 'Moved') : 'Copied';
  const going = kind === 'move' ? 'Moving' : 'Copying';
  if ('entry' in result) {
    announce(`${done} ${entry.path} to ${result.entry.path ?? to}.`);
    return onChanged();
  }
  onChanged();
  try {
    await followJob(result.job, () => announce(`${going} ${entry.path} to ${to}…`), session);
    announce(`${done} ${entry.path} to ${to}.`);
  } catch (failure) {
    // Signed out meanwhile: the job goes on in the drive, unfollowed, and the next key hears nothing of it.
    if (isAbort(failure)) return;
    alertError(`${going} ${entry.path} to ${to} did not finish: ${messageOf(failure)}`);
  }
  onChanged();
}

/**
 * Deletes the file at `path` after a confirmation.
 * @param {string} path
 * @param {() => void} onChanged
 */
export async function confirmDeleteFile(path, onChanged) {
  /** @type {{ deleted: string[], not_found: string[] } | undefined} */
  let result;
  // When the delete set out: its trash item is deleted at or after it (the Undo is tied to this delete).
  let since = 0;
  const done = await confirmAction({
    title: `Delete “${nameOf(path)}”?`,
    body: [
      h('p', {}, h('span', { class: 'path' }, path), ' will be deleted.'),
      h('p', { class: 'warning-text' }, 'It goes to the Trash, where it can be restored until it is purged (unless the drive keeps no trash); its share links stop working.'),
    ],
    confirmLabel: 'Delete file',
    action: async () => {
      since = Date.now();
      result = await deleteFile(path);
    },
  });
  if (!done || !result) return;
  const gone = result.not_found.includes(path);
  announce(gone ? `${path} was already gone.` : `Deleted ${path}.`);
  onChanged();
  if (!gone) void showUndoNotice(path, onChanged, since);
}

/**
 * The share dialog of the file at `path`: "Copy link" makes a link that expires after the time chosen, puts
 * it on the clipboard and shows it; below, the file's live links, each with Revoke.
 * @param {string} path
 */
export async function shareDialog(path) {
  const dialog = byId('share-dialog', HTMLDialogElement);
  const form = find(dialog, 'form', HTMLFormElement);
  const expiry = byId('share-expiry', HTMLSelectElement);
  const created = find(dialog, '[data-created]', HTMLElement);
  const url = byId('share-url', HTMLInputElement);
  const copy = find(dialog, '[data-copy]', HTMLButtonElement);
  const error = find(dialog, '.form-error', HTMLElement);
  const links = find(dialog, '[data-links]', HTMLElement);
  const linksStatus = find(dialog, '[data-links-status]', HTMLElement);
  const lifetime = new AbortController();

  byId('share-title', HTMLElement).textContent = `Share “${nameOf(path)}”`;
  expiry.replaceChildren(...LINK_EXPIRIES.map((choice) => h('option', { value: choice.seconds, selected: choice.seconds === 86_400 }, choice.label)));
  created.hidden = true;
  url.value = '';
  showFormError(error);

  // Each reading replaces the one on its way (the dialog reads on opening and after each new link): an older
  // answer arriving last is not drawn over the newer one.
  let reading = new AbortController();
  const drawLinks = async () => {
    reading.abort();
    reading = new AbortController();
    const signal = AbortSignal.any([lifetime.signal, reading.signal]);
    linksStatus.textContent = 'Loading…';
    try {
      const live = await listLinks(path, signal);
      links.replaceChildren(...live.map((link) => {
        const revoke = h('button', { type: 'button', class: 'danger-quiet small', 'aria-label': `Revoke the link that expires ${new Date(link.expires_at).toLocaleString()}` }, 'Revoke');
        const item = h('li', { 'data-link-id': link.id },
          h('span', {}, 'Expires ', timeElement(link.expires_at)),
          link.created_at && h('span', { class: 'muted' }, ' · made ', timeElement(link.created_at)),
          revoke);
        revoke.addEventListener('click', async () => {
          setUnavailable(revoke, true);
          try {
            await revokeLink(link.id);
            // Focus goes to the next link's Revoke, or the one before, or Copy (or Copy link, when no link was made here).
            const next = item.nextElementSibling ?? item.previousElementSibling;
            item.remove();
            if (links.childElementCount === 0) linksStatus.textContent = 'No live links.';
            announce('Link revoked: it no longer opens the file.');
            focusFirst(next?.querySelector('button'), copy, find(form, 'button[type=submit]', HTMLButtonElement));
          } catch (failure) {
            showFormError(error, failure);
          } finally {
            setUnavailable(revoke, false);
          }
        });
        return item;
      }));
      linksStatus.textContent = live.length === 0 ? 'No live links.' : '';
    } catch (failure) {
      if (!signal.aborted) linksStatus.textContent = `Could not read the links: ${messageOf(failure)}`;
    }
  };
  const copyUrl = async () => {
    try {
      await navigator.clipboard.writeText(url.value);
      announce('The link is on the clipboard.');
    } catch {
      url.focus();
      url.select();
      announce('Copying was refused by the browser: the link is selected, press Ctrl+C (⌘C on a Mac).');
    }
  };
  const onSubmit = async (/** @type {SubmitEvent} */ event) => {
    event.preventDefault();
    setBusy(dialog, true);
    try {
      const link = await createLink(path, Number(expiry.value));
      url.value = link.url;
      created.hidden = false;
      find(created, '[data-expires]', HTMLElement).replaceChildren('Expires ', timeElement(link.expires_at), '.');
      showFormError(error);
      await copyUrl();
      drawLinks();
    } catch (failure) {
      showFormError(error, failure);
    } finally {
      setBusy(dialog, false);
    }
  };
  form.addEventListener('submit', onSubmit);
  copy.addEventListener('click', copyUrl);
  const closed = openDialog(dialog);
  drawLinks();
  try {
    await closed;
  } finally {
    lifetime.abort();
    form.removeEventListener('submit', onSubmit);
    copy.removeEventListener('click', copyUrl);
    // The link leaves the page with the dialog.
    url.value = '';
    links.replaceChildren();
  }
}

/**
 * The menu items for an entry, as the key's role allows them.
 * @param {HTMLTableRowElement} row
 * @param {Entry} entry
 * @param {{ modify: boolean, share: boolean }} may
 * @param {() => void} onChanged
 * @returns {[string, () => void][]}
 */
export function entryActions(row, entry, may, onChanged) {
  /** @type {[string, () => void][]} */
  const items = [];
  if (may.modify) {
    items.push(['Rename', () => renameInPlace(row, entry, onChanged)]);
    items.push(['Move…', () => moveOrCopyDialog('move', entry, onChanged)]);
    items.push(['Copy…', () => moveOrCopyDialog('copy', entry, onChanged)]);
  }
  if (may.share && entry.kind === 'file') items.push(['Share link…', () => shareDialog(entry.path)]);
  return items;
}
