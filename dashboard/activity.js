// @ts-check
/**
 * Files → Recent activity: the folder's latest changes, it and everything below it, newest first
 * (GET drive/changes/recent), kept current while the folder is shown by following the change feed from that
 * page's cursor (GET drive/changes, a long poll: a change shows within about two seconds of being made), and
 * older ones a page at a time (**Show older**). Each change is a line of text (what happened, to which path,
 * from where for a move, and when), so it reads the same to the eye and to a screen reader.
 */
import { ApiError, changesAfter, recentChanges } from './api.js';
import { breakable, find, focusLost, h, isAbort, setUnavailable, showFormError, timeElement } from './ui.js';

/** @typedef {import('./api.js').Change} Change */

/** Changes a page. */
const PAGE = 20;
/** Past this many lines, the panel reads its newest page again rather than grow. */
const KEPT = 200;
/** How long one request of the feed waits for a change (the API allows 25). */
const POLL_SECONDS = 20;

/** What each kind of change is called, as the line starts. */
const WHAT = {
  'file.created': 'Added',
  'file.replaced': 'Replaced',
  'file.deleted': 'Deleted',
  'file.moved': 'Moved',
  'folder.created': 'Folder created',
  'folder.deleted': 'Folder deleted',
  'folder.moved': 'Folder moved',
};

/**
 * One change as a list item: "Moved /a/b.txt from /b.txt, 2 Mar 2026, 09:30".
 * @param {Change} change
 */
function changeItem(change) {
  return h('li', { class: 'activity-item', 'data-change': change.id },
    h('span', { class: 'activity-what' }, WHAT[change.type] ?? change.type),
    ' ',
    h('span', { class: 'activity-path' }, ...breakable(change.path)),
    change.from !== undefined && h('span', { class: 'muted' }, ' from ', h('span', { class: 'activity-path' }, ...breakable(change.from))),
    h('span', { class: 'visually-hidden' }, ','),
    ' ',
    h('span', { class: 'activity-when muted' }, timeElement(change.at)),
  );
}

/**
 * Shows `folder`'s recent activity in the view's panel until `signal` aborts (another view took over, or the
 * session ended). A key that may not read the feed never gets here (the view leaves the panel hidden); one
 * the API refuses this folder (`403`, a key confined below it) has the panel hidden again, as the listing
 * says why.
 * @param {HTMLElement} view
 * @param {string} folder
 * @param {AbortSignal} signal
 */
export function showActivity(view, folder, signal) {
  const panel = find(view, '[data-activity]', HTMLElement);
  const heading = find(panel, 'h2', HTMLElement);
  const list = find(panel, '[data-activity-list]', HTMLElement);
  const empty = find(panel, '[data-activity-empty]', HTMLElement);
  const error = find(panel, '[data-activity-error]', HTMLElement);
  const refresh = find(panel, '[data-action="refresh-activity"]', HTMLButtonElement);
  const older = find(panel, '[data-action="older-activity"]', HTMLButtonElement);
  panel.hidden = false;
  /** The lines shown, newest first. @type {Change[]} */
  let shown = [];
  /** Where the page of older ones starts; null when none is older. @type {string | null} */
  let before = null;
  /** The load and follow running: Refresh (or too many lines) replaces it. */
  let run = new AbortController();

  const draw = () => {
    const onOlder = document.activeElement === older;
    list.replaceChildren(...shown.map(changeItem));
    list.hidden = shown.length === 0;
    empty.hidden = shown.length > 0 || before !== null;
    older.hidden = before === null;
    // Show older gone with the last page: focus to the panel's heading, not the page body.
    if (onOlder && focusLost()) heading.focus();
  };

  /** @param {unknown} failure @param {AbortSignal} live */
  const failed = (failure, live) => {
    if (live.aborted || isAbort(failure)) return;
    panel.removeAttribute('aria-busy');
    if (failure instanceof ApiError && failure.status === 403) {
      panel.hidden = true;
      return;
    }
    showFormError(error, failure);
  };

  const load = async () => {
    run.abort();
    run = new AbortController();
    const live = AbortSignal.any([signal, run.signal]);
    panel.setAttribute('aria-busy', 'true');
    try {
      const page = await recentChanges(folder, { limit: PAGE, signal: live });
      shown = page.changes;
      before = page.next_before;
      showFormError(error);
      panel.removeAttribute('aria-busy');
      draw();
      // Every change after the page, as it is made: none missed between the page and the first poll.
      let cursor = page.cursor;
      for (;;) {
        const next = await changesAfter(cursor, POLL_SECONDS, live);
        cursor = next.next_cursor;
        if (next.changes.length === 0) continue;
        shown = [...next.changes.reverse(), ...shown];
        if (shown.length > KEPT) {
          load();
          return;
        }
        draw();
      }
    } catch (failure) {
      failed(failure, live);
    }
  };

  refresh.addEventListener('click', () => load());
  older.addEventListener('click', async () => {
    if (before === null || older.getAttribute('aria-disabled') === 'true') return;
    const live = AbortSignal.any([signal, run.signal]);
    setUnavailable(older, true);
    try {
      const page = await recentChanges(folder, { limit: PAGE, before, signal: live });
      if (live.aborted) return;
      shown = [...shown, ...page.changes];
      before = page.next_before;
      showFormError(error);
      draw();
    } catch (failure) {
      failed(failure, live);
    } finally {
      setUnavailable(older, false);
    }
  });
  load();
}
