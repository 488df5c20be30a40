// @ts-check
/**
 * Files: one folder at a time, a page of its entries at a time (a folder of 100,000 files shows its first
 * page as fast as one of ten, and the page holds at most PAGE_SIZE rows), with breadcrumbs and the actions
 * on them (new folder, upload by picker or drop, download, delete a folder after showing what it holds, and
 * the row actions of entry-actions.js), each shown only to a key whose role may use it.
 */
import { showActivity } from './activity.js';
import { ApiError, createFolder, deleteFolder, downloadFile, fileExists, listPage, waitForJob } from './api.js';
import { confirmDeleteFile, entryActions, moreMenu } from './entry-actions.js';
import { nextOrder, sortRows } from './listing-order.js';
import { childPath, nameOf, parentOf } from './paths.js';
import { abilities, sessionSignal } from './session.js';
import { alertError, announce, breakable, byId, confirmAction, find, focusFirst, focusLost, formatBytes, fromTemplate, h, isAbort, messageOf, openDialog, plural, replaceRows, setBusy, setUnavailable, showFormError, timeElement, trackRowFocus } from './ui.js';
import { enqueueUploads, focusTray } from './uploads.js';
import { showUndoNotice } from './trash-view.js';

/** @typedef {import('./api.js').Listing} Listing */
/** @typedef {import('./api.js').FileEntry} FileEntry */
/** @typedef {import('./listing-order.js').SortOrder} SortOrder */
/** @typedef {ReturnType<typeof abilities>} Abilities */

/** How many of a folder's entries the delete confirmation names. */
const NAMED_IN_CONFIRMATION = 8;
/** Rows on a page of a folder. */
const PAGE_SIZE = 200;
/** Uploads finishing within this long of each other update the page once. */
const UPLOADED_SETTLE_MS = 400;
/** Names checked at once, when a folder spans pages, for files an upload would replace. */
const EXISTS_CONCURRENCY = 6;

/**
 * The address of `folder`'s view: `#/files/<segments, URL-encoded>`.
 * @param {string} folder
 */
export function folderHref(folder) {
  return folder === '/' ? '#/files/' : `#/files${folder.split('/').map(encodeURIComponent).join('/')}`;
}

/** The order of the rows on a page, kept from folder to folder while the session lives. */
/** @type {SortOrder} */
let order = { key: 'name', descending: false };

/** Forgets what the view kept between folders (signing out): the next key starts as the first did. */
export function resetFilesView() {
  order = { key: 'name', descending: false };
}

/**
 * Shows `folder` in `main` until `signal` aborts (another view took over).
 * @param {HTMLElement} main
 * @param {string} folder
 * @param {AbortSignal} signal
 */
export async function renderFiles(main, folder, signal) {
  main.replaceChildren(fromTemplate('files-view'));
  const view = find(main, '.files-view', HTMLElement);
  const may = abilities();
  const title = folder === '/' ? 'All files' : nameOf(folder);
  document.title = `${title} · Files · Drive`;
  find(view, 'h1', HTMLElement).replaceChildren(...breakable(title));
  find(view, 'caption', HTMLElement).textContent = `Contents of ${folder}`;
  renderBreadcrumbs(find(view, '.breadcrumbs ol', HTMLElement), folder);
  // At the root the trail would only repeat the heading.
  find(view, '.breadcrumbs', HTMLElement).hidden = folder === '/';
  // Only what the key's role may do is offered; the API refuses the rest anyway.
  find(view, '[data-action="new-folder"]', HTMLButtonElement).hidden = !may.createFolder;
  find(view, '.file-button', HTMLElement).hidden = !may.upload;
  find(view, '[data-drop-hint]', HTMLElement).hidden = !may.upload;
  find(view, '[data-empty-upload]', HTMLElement).hidden = !may.upload;
  wireGoToFolder(view);
  const toUploads = find(view, '[data-to-uploads]', HTMLAnchorElement);
  toUploads.hidden = !may.upload || byId('uploads', HTMLElement).hidden;
  toUploads.addEventListener('click', (event) => {
    // The fragment names views: the link moves focus itself.
    event.preventDefault();
    focusTray();
  });
  // After a row's action (rename, move, delete) or an upload landing redraws the rows, focus goes back to that row
  // or one beside it; with no row left, to the heading.
  trackRowFocus(find(view, 'tbody', HTMLElement), () => [find(view, 'h1', HTMLElement)], signal);

  /** The page shown: uploads over a file of the same name ask first. */
  /** @type {(Listing & { next_cursor: string | null }) | undefined} */
  let shown;
  /** The cursors of the pages before and of this one (null for the first): Previous goes back one. */
  /** @type {(string | null)[]} */
  const cursors = [null];
  // Each listing replaces the one still on its way (a page turned, an upload landed meanwhile): an older
  // answer that arrives last is dropped rather than drawn over the newer one.
  let listing = new AbortController();
  const reload = async () => {
    if (!may.list) return;
    listing.abort();
    listing = new AbortController();
    shown = (await loadListing(view, folder, AbortSignal.any([signal, listing.signal]), reload, cursors)) ?? shown;
  };
  find(view, '[data-action="next-page"]', HTMLButtonElement).addEventListener('click', () => {
    if (!shown?.next_cursor) return;
    cursors.push(shown.next_cursor);
    reload();
  });
  find(view, '[data-action="previous-page"]', HTMLButtonElement).addEventListener('click', () => {
    if (cursors.length < 2) return;
    cursors.pop();
    reload();
  });
  wireSortHeaders(view, () => shown && drawRows(view, shown, reload));
  const upload = (/** @type {File[]} */ files) => uploadAsking(files, folder, shown, cursors.length > 1);
  // A key that cannot list opens the folder it makes: it has no other way to see it.
  find(view, '[data-action="new-folder"]', HTMLButtonElement).addEventListener('click', () => newFolder(folder, (path) => (may.list ? reload() : (location.hash = folderHref(path)))));
  const deleteButton = find(view, '[data-action="delete-folder"]', HTMLButtonElement);
  deleteButton.hidden = folder === '/' || !may.modify;
  deleteButton.addEventListener('click', () => confirmDeleteFolder(folder, () => (location.hash = folderHref(parentOf(folder))), () => { location.hash = folderHref(folder); }));
  const picker = find(view, '[data-input="upload"]', HTMLInputElement);
  picker.addEventListener('change', () => {
    if (picker.files && picker.files.length > 0) upload([...picker.files]);
    picker.value = '';
  });
  if (may.upload) wireDropZone(view, upload);
  if (!may.list) return showUnlisted(view, folder);
  // A batch of uploads lists the page once, after the last of a burst, not once a file.
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let settle;
  const onUploaded = (/** @type {Event} */ event) => {
    if (/** @type {CustomEvent<{ folder: string }>} */ (event).detail.folder !== folder) return;
    // Busy until that listing is drawn, and a listing still on its way (older than this file) dropped: else it
    // would end the busy state while the page is still to change, and whoever acts on its rows then (a person,
    // a test) would see them redrawn under them.
    listing.abort();
    view.setAttribute('aria-busy', 'true');
    clearTimeout(settle);
    settle = setTimeout(reload, UPLOADED_SETTLE_MS);
  };
  document.addEventListener('drive:uploaded', onUploaded);
  // The folder's recent activity, kept current while it is shown (a key that may list may read the feed).
  showActivity(view, folder, signal);
  signal.addEventListener('abort', () => {
    document.removeEventListener('drive:uploaded', onUploaded);
    clearTimeout(settle);
  }, { once: true });
  await reload();
}

/**
 * For a key that may not list (upload-only): the folder's name and where uploads go, with no listing.
 * @param {HTMLElement} view
 * @param {string} folder
 */
function showUnlisted(view, folder) {
  find(view, '[data-loading]', HTMLElement).hidden = true;
  const note = find(view, '[data-unlisted]', HTMLElement);
  find(note, '[data-unlisted-folder]', HTMLElement).textContent = folder;
  note.hidden = false;
  find(view, '[data-goto]', HTMLElement).hidden = false;
}

/**
 * The "Open folder" form: a path typed in, for a key that cannot list its way there (upload-only, or
 * confined to a folder below the one asked for).
 * @param {HTMLElement} view
 */
function wireGoToFolder(view) {
  const form = find(view, '[data-goto] form', HTMLFormElement);
  const input = find(form, 'input', HTMLInputElement);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const segments = input.value.split('/').filter((segment) => segment !== '');
    location.hash = folderHref(segments.length === 0 ? '/' : `/${segments.join('/')}`);
  });
}

/**
 * The Name, Size and Modified headers sort the rows on the page (`redraw` draws them again); `aria-sort`
 * says which way.
 * @param {HTMLElement} view
 * @param {() => void} redraw
 */
function wireSortHeaders(view, redraw) {
  const headers = [...view.querySelectorAll('th[data-sort]')];
  const mark = () => {
    for (const header of headers) {
      const key = header.getAttribute('data-sort');
      if (key === order.key) header.setAttribute('aria-sort', order.descending ? 'descending' : 'ascending');
      else header.removeAttribute('aria-sort');
    }
  };
  for (const header of headers) {
    find(header, 'button', HTMLButtonElement).addEventListener('click', () => {
      order = nextOrder(order, /** @type {SortOrder['key']} */ (header.getAttribute('data-sort')));
      mark();
      redraw();
    });
  }
  mark();
}
/**
 * `Drive / reports / 2024`, each an ancestor's link; the last is the current page.
 * @param {HTMLElement} list
 * @param {string} folder
 */
function renderBreadcrumbs(list, folder) {
  const segments = folder.split('/').filter((segment) => segment !== '');
  const crumbs = [{ name: 'All files', path: '/' }, ...segments.map((name, i) => ({ name, path: `/${segments.slice(0, i + 1).join('/')}` }))];
  list.replaceChildren(
    ...crumbs.map((crumb, i) =>
      h('li', {}, i === crumbs.length - 1 ? h('a', { href: folderHref(crumb.path), 'aria-current': 'page' }, ...breakable(crumb.name)) : h('a', { href: folderHref(crumb.path) }, ...breakable(crumb.name))),
    ),
  );
}

/**
 * Queues `files` for upload into `folder`, first asking whether to replace the files of the same name it
 * holds (the API replaces them: a new file, the old bytes deleted).
 * @param {File[]} files
 * @param {string} folder
 * @param {(Listing & { next_cursor: string | null }) | undefined} listing the page shown
 * @param {boolean} pagesBefore whether pages come before the one shown
 */
async function uploadAsking(files, folder, listing, pagesBefore) {
  // Asking takes calls and a dialog: a sign-out meanwhile drops the files, they are not queued for the next key.
  const session = sessionSignal();
  // The API stores names in NFC; a Mac's files arrive in NFD, so compare as the API will.
  const existing = new Set(listing?.files.map((file) => file.name.normalize('NFC')));
  /** @type {File[]} */
  let replaced = files.filter((file) => existing.has(file.name.normalize('NFC')));
  if (listing && (listing.next_cursor || pagesBefore)) {
    // The folder spans pages: the names not on this one are asked about, a few at a time.
    const unknown = files.filter((file) => !existing.has(file.name.normalize('NFC')));
    const found = new Array(unknown.length).fill(false);
    let next = 0;
    const ask = async () => {
      for (let i = next++; i < unknown.length; i = next++) found[i] = await fileExists(childPath(folder, unknown[i].name.normalize('NFC'))).catch(() => false);
    };
    await Promise.all(Array.from({ length: EXISTS_CONCURRENCY }, ask));
    if (session.aborted) return;
    replaced = [...replaced, ...unknown.filter((_, i) => found[i])];
  }
  if (replaced.length > 0) {
    const confirmed = await confirmAction({
      title: replaced.length === 1 ? `Replace “${replaced[0].name}”?` : `Replace ${replaced.length} files?`,
      body: [
        h('p', {}, `${folder} already holds ${replaced.length === 1 ? 'a file' : 'files'} of ${replaced.length === 1 ? 'this name' : 'these names'}. Uploading replaces ${replaced.length === 1 ? 'it' : 'them'}: the earlier bytes are deleted.`),
        replaced.length > 1 && h('ul', { class: 'doomed' }, ...replaced.slice(0, NAMED_IN_CONFIRMATION).map((file) => h('li', {}, h('span', { class: 'path' }, file.name)))),
      ],
      confirmLabel: replaced.length === 1 ? 'Replace file' : 'Replace files',
      action: async () => undefined,
    });
    if (session.aborted) return;
    if (!confirmed) return announce('Nothing uploaded.');
  }
  enqueueUploads(files, folder);
}

/**
 * Lists a page of `folder` (the one `cursors` ends with) into the view's table, and returns it (undefined
 * if it failed or the view is gone).
 * @param {HTMLElement} view
 * @param {string} folder
 * @param {AbortSignal} signal
 * @param {() => Promise<void>} reload lists the page again (after an entry is deleted, renamed or moved)
 * @param {(string | null)[]} cursors
 * @returns {Promise<(Listing & { next_cursor: string | null }) | undefined>}
 */
async function loadListing(view, folder, signal, reload, cursors) {
  const loading = find(view, '[data-loading]', HTMLElement);
  const error = find(view, '[data-error]', HTMLElement);
  const table = find(view, 'table', HTMLTableElement);
  const empty = find(view, '[data-empty]', HTMLElement);
  view.setAttribute('aria-busy', 'true');
  /** @type {Listing & { next_cursor: string | null }} */
  let listing;
  try {
    listing = await listPage(folder, { limit: PAGE_SIZE, cursor: cursors.at(-1), signal });
  } catch (failure) {
    if (signal.aborted) return undefined;
    loading.hidden = true;
    table.hidden = true;
    empty.hidden = true;
    showFormError(error, failure);
    // A key confined to a folder may not list this one (its 403 names the folder it may reach).
    find(view, '[data-goto]', HTMLElement).hidden = !(failure instanceof ApiError && failure.status === 403);
    return undefined;
  } finally {
    // A listing that was replaced leaves the busy state to the one that replaced it.
    if (!signal.aborted) view.removeAttribute('aria-busy');
  }
  loading.hidden = true;
  showFormError(error);
  const count = drawRows(view, listing, reload);
  table.hidden = count === 0;
  empty.hidden = count !== 0 || cursors.length > 1;
  const pager = find(view, '[data-pager]', HTMLElement);
  pager.hidden = cursors.length === 1 && !listing.next_cursor;
  const first = (cursors.length - 1) * PAGE_SIZE;
  find(pager, '[data-page-label]', HTMLElement).textContent = count === 0 ? `Page ${cursors.length}` : `Items ${first + 1}–${first + count}`;
  const previous = find(pager, '[data-action="previous-page"]', HTMLButtonElement);
  const next = find(pager, '[data-action="next-page"]', HTMLButtonElement);
  const hadFocus = pager.contains(document.activeElement);
  previous.disabled = cursors.length === 1;
  next.disabled = !listing.next_cursor;
  // On the first or last page, the button pressed is disabled: focus goes to the other one rather than the body.
  if (hadFocus && focusLost()) focusFirst(next, previous);
  return listing;
}

/**
 * Fills the table with the page's rows in the chosen order (of this page only: the API pages in its own
 * order), and returns how many there are.
 * @param {HTMLElement} view
 * @param {Listing} listing
 * @param {() => Promise<void>} reload
 */
function drawRows(view, listing, reload) {
  const may = abilities();
  const entries = sortRows([
    ...listing.folders.map((entry) => ({ ...entry, kind: /** @type {const} */ ('folder'), file: undefined })),
    ...listing.files.map((file) => ({ ...file, kind: /** @type {const} */ ('file'), file })),
  ], order);
  const rows = entries.map((entry) => (entry.file ? fileRow(entry.file, may, reload) : folderRow(entry.path, may, reload)));
  replaceRows(find(view, 'tbody', HTMLElement), rows);
  return rows.length;
}

/**
 * @param {string} path
 * @param {Abilities} may
 * @param {() => Promise<void>} reload
 */
function folderRow(path, may, reload) {
  const name = nameOf(path);
  const row = h('tr', { 'data-kind': 'folder', 'data-row': path },
    h('th', { scope: 'row', class: 'name' }, h('a', { href: folderHref(path), class: 'entry folder', 'data-control': 'open' }, h('span', { class: 'icon', 'aria-hidden': 'true' }), entryName(name))),
    h('td', { class: 'num muted' }, h('span', { class: 'visually-hidden' }, 'Folder')),
    h('td', { class: 'when muted' }, ''),
  );
  const items = entryActions(row, { path, kind: 'folder' }, may, reload);
  row.append(h('td', { class: 'actions' },
    may.modify && h('button', { type: 'button', class: 'danger-quiet small', 'aria-label': `Delete folder ${name}`, 'data-control': 'delete', onclick: () => confirmDeleteFolder(path, reload) }, 'Delete…'),
    items.length > 0 && moreMenu(`More actions for ${name}`, items),
  ));
  return row;
}

/**
 * @param {FileEntry} file
 * @param {Abilities} may
 * @param {() => Promise<void>} reload
 */
function fileRow(file, may, reload) {
  const button = h('button', { type: 'button', class: 'secondary small', 'aria-label': `Download ${file.name}`, 'data-control': 'download' }, 'Download');
  button.addEventListener('click', () => download(file, button));
  const row = h('tr', { 'data-kind': 'file', 'data-row': file.path },
    h('th', { scope: 'row', class: 'name' }, h('span', { class: 'entry file' }, h('span', { class: 'icon', 'aria-hidden': 'true' }), entryName(file.name))),
    h('td', { class: 'num' }, formatBytes(file.size)),
    h('td', { class: 'when' }, timeElement(file.created_at)),
  );
  const items = entryActions(row, { path: file.path, kind: 'file' }, may, reload);
  row.append(h('td', { class: 'actions' },
    may.download && button,
    may.modify && h('button', { type: 'button', class: 'danger-quiet small', 'aria-label': `Delete ${file.name}`, 'data-control': 'delete', onclick: () => confirmDeleteFile(file.path, reload) }, 'Delete…'),
    items.length > 0 && moreMenu(`More actions for ${file.name}`, items),
  ));
  return row;
}

/**
 * A row's name, which wraps between its words (see `breakable`).
 * @param {string} name
 */
function entryName(name) {
  return h('span', { class: 'entry-name' }, ...breakable(name));
}

/**
 * Downloads `file` with the key in the Authorization header, then hands the browser the bytes as an object
 * URL under the file's name: the key never goes into a URL (a link would need it in the query).
 * @param {FileEntry} file
 * @param {HTMLButtonElement} button
 */
async function download(file, button) {
  const session = sessionSignal();
  // Unavailable while it runs, not disabled: a disabled button would drop the focus it has.
  setUnavailable(button, true);
  announce(`Downloading ${file.name}…`);
  try {
    const blob = await downloadFile(file.path, (loaded, total) => {
      button.textContent = total ? `${Math.floor((loaded / total) * 100)}%` : formatBytes(loaded);
    }, session);
    const url = URL.createObjectURL(blob);
    const link = h('a', { href: url, download: file.name, hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
    // The browser has taken the bytes once the click is handled; a minute is ample for a slow disk.
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
    announce(`Downloaded ${file.name} (${formatBytes(blob.size)}).`);
  } catch (failure) {
    if (isAbort(failure)) return;
    alertError(`Could not download ${file.name}: ${messageOf(failure)}`);
  } finally {
    setUnavailable(button, false);
    button.textContent = 'Download';
  }
}

/**
 * Asks for a folder name and creates it inside `parent` (`a/b` makes both).
 * @param {string} parent
 * @param {(path: string) => void} onCreated
 */
async function newFolder(parent, onCreated) {
  const dialog = byId('folder-dialog', HTMLDialogElement);
  const form = find(dialog, 'form', HTMLFormElement);
  const input = byId('folder-name', HTMLInputElement);
  const error = find(dialog, '.form-error', HTMLElement);
  byId('folder-name-hint', HTMLElement).textContent = `It is made inside ${parent}. Use / for nested folders, like 2024/q1.`;
  input.value = '';
  showFormError(error);
  const submit = async (/** @type {SubmitEvent} */ event) => {
    event.preventDefault();
    const name = input.value.trim().replace(/^\/+|\/+$/g, '');
    if (name === '') {
      showFormError(error, 'Give the folder a name.');
      return input.focus();
    }
    setBusy(dialog, true);
    try {
      const created = await createFolder(childPath(parent, name));
      dialog.close('done');
      announce(`Created the folder ${created.path}.`);
      onCreated(created.path);
    } catch (failure) {
      showFormError(error, failure);
      input.focus();
    } finally {
      setBusy(dialog, false);
    }
  };
  form.addEventListener('submit', submit);
  try {
    await openDialog(dialog);
  } finally {
    form.removeEventListener('submit', submit);
  }
}

/**
 * Shows what deleting `path` takes with it, from one small page of its tree (the first few names; counts
 * and total size when that page is all of it, else that more go), and deletes it all once confirmed. A tree
 * too big for one request goes on in a job: the folder is gone at once, and the job's progress is announced.
 * @param {string} path
 * @param {() => void} afterDelete
 * @param {() => Promise<void> | void} [afterRestore] what the Undo notice does once the folder is back (`afterDelete`)
 */
async function confirmDeleteFolder(path, afterDelete, afterRestore = afterDelete) {
  const session = sessionSignal();
  /** @type {Listing & { next_cursor: string | null }} */
  let tree;
  try {
    tree = await listPage(path, { recursive: true, limit: NAMED_IN_CONFIRMATION });
  } catch (failure) {
    if (isAbort(failure)) return;
    return alertError(`Could not read ${path}: ${messageOf(failure)}`);
  }
  const bytes = tree.files.reduce((sum, file) => sum + file.size, 0);
  const entries = [
    ...tree.folders.map((folder) => ({ path: folder.path, detail: 'folder' })),
    ...tree.files.map((file) => ({ path: file.path, detail: formatBytes(file.size) })),
  ].sort((a, b) => (a.path < b.path ? -1 : 1));
  const inside = (/** @type {string} */ entry) => entry.slice(path.length + 1);
  const summary = entries.length === 0
    ? 'The folder is empty.'
    : tree.next_cursor
      ? `More than ${plural(entries.length, 'item')} (files and folders, at every depth) will be deleted with it.`
      : `${plural(tree.files.length, 'file')} (${formatBytes(bytes)}) and ${plural(tree.folders.length, 'folder')} will be deleted with it.`;
  /** @type {Awaited<ReturnType<typeof deleteFolder>> | undefined} */
  let result;
  // When the delete set out: its trash item is deleted at or after it (the Undo is tied to this delete).
  let since = 0;
  const done = await confirmAction({
    title: `Delete “${nameOf(path)}” and everything in it?`,
    body: [
      h('p', { 'data-summary': true }, summary),
      entries.length > 0 && h('ul', { class: 'doomed' }, ...entries.slice(0, NAMED_IN_CONFIRMATION).map((entry) => h('li', {}, h('span', { class: 'path' }, inside(entry.path)), ' ', h('span', { class: 'muted' }, entry.detail)))),
      tree.next_cursor && h('p', { class: 'muted' }, '…and more.'),
      h('p', { class: 'warning-text' }, 'It all goes to the Trash, where it can be restored until it is purged (unless the drive keeps no trash).'),
    ],
    confirmLabel: 'Delete folder',
    action: async () => {
      since = Date.now();
      result = await deleteFolder(path);
    },
  });
  if (!done || !result || session.aborted) return;
  if ('done' in result) {
    announce(`Deleted ${path} and ${plural(result.done.files_deleted, 'file')} in it.`);
    void showUndoNotice(path, afterRestore, since);
    return afterDelete();
  }
  // Gone for readers already; the server deletes the rest, and this page follows it.
  afterDelete();
  try {
    const finished = await waitForJob(result.job, (job) => announce(`Deleting ${path}: ${plural(job.files_deleted, 'file')} deleted so far…`), session);
    announce(`Deleted ${path} and ${plural(finished.files_deleted, 'file')} in it.`);
    void showUndoNotice(path, afterRestore, since);
  } catch (failure) {
    if (isAbort(failure)) return;
    alertError(`${path} is gone, but following its delete failed: ${messageOf(failure)}. The delete goes on without this page.`);
  }
}

/**
 * Files dropped anywhere on the view go to `upload`; dropped folders are refused with a message (a browser
 * gives their contents only through a separate walk, which this page does not do).
 * @param {HTMLElement} view
 * @param {(files: File[]) => void} upload
 */
function wireDropZone(view, upload) {
  const zone = find(view, '[data-zone]', HTMLElement);
  let depth = 0;
  const carriesFiles = (/** @type {DragEvent} */ event) => event.dataTransfer?.types.includes('Files') ?? false;
  view.addEventListener('dragenter', (event) => {
    if (!carriesFiles(event)) return;
    depth++;
    zone.classList.add('dragging');
  });
  view.addEventListener('dragleave', () => {
    depth = Math.max(0, depth - 1);
    if (depth === 0) zone.classList.remove('dragging');
  });
  view.addEventListener('dragover', (event) => {
    if (!carriesFiles(event) || !event.dataTransfer) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = 'copy';
  });
  view.addEventListener('drop', (event) => {
    event.preventDefault();
    depth = 0;
    zone.classList.remove('dragging');
    const transfer = event.dataTransfer;
    if (!transfer) return;
    /** @type {File[]} */
    const files = [];
    let folders = 0;
    // Entries are read here, in the drop handler: the browser empties the transfer once it returns.
    for (const item of transfer.items) {
      if (item.kind !== 'file') continue;
      if (item.webkitGetAsEntry()?.isDirectory) folders++;
      else {
        const file = item.getAsFile();
        if (file) files.push(file);
      }
    }
    if (folders > 0) alertError(`${plural(folders, 'dropped folder')} skipped: drop the files inside it, or create the folder first.`);
    if (files.length > 0) upload(files);
  });
}
