// @ts-check
/**
 * The uploads tray. Every file goes through one queue, a few at a time, each with its own progress bar:
 * a small file in one `POST drive/upload`, a large one in parts sent straight to S3 through the presigned
 * URLs of `POST drive/uploads`, then `complete` (or, on any failure or a cancel, the session is aborted).
 */
import { ApiError, abortUpload, completeUpload, partUrls, sendWithProgress, startUpload, uploadSmallFile } from './api.js';
import { mapLimit } from './map-limit.js';
import { readKey } from './session.js';
import { alertError, announce, byId, focusFirst, focusLost, formatBytes, h, messageOf, plural } from './ui.js';
import { quarterTracker } from './upload-progress.js';

/**
 * Above this, a file goes in parts: one API request carries at most 4,500,000 bytes, its multipart framing
 * included (Lambda takes 6 MB after base64).
 */
export const LARGE_FILE_BYTES = 4 * 1024 * 1024;
const FILES_AT_ONCE = 3;
const PARTS_AT_ONCE = 4;
/** A part that fails on the way (a dropped connection, a 5xx from S3) is sent again, up to this many times in all. */
const PART_ATTEMPTS = 3;

/**
 * @typedef {'queued' | 'running' | 'done' | 'failed' | 'cancelled'} UploadState
 * @typedef {{ file: File, folder: string, key: string | undefined, state: UploadState, controller: AbortController, row: HTMLLIElement, bar: HTMLProgressElement, status: HTMLElement, cancel: HTMLButtonElement }} Upload
 */

/** @type {Upload[]} */
const uploads = [];
let running = 0;
/** Counts the tray's resets (sign-outs): an upload of an earlier count, settling late, touches nothing shown. */
let generation = 0;

/**
 * Queues `files` for upload into `folder` and shows them in the tray.
 * @param {File[]} files
 * @param {string} folder
 */
export function enqueueUploads(files, folder) {
  const list = byId('uploads-list', HTMLUListElement);
  for (const file of files) {
    const upload = createUpload(file, folder);
    uploads.push(upload);
    list.append(upload.row);
  }
  showTray(true);
  announce(`Uploading ${plural(files.length, 'file')} to ${folder}.`);
  summarize();
  pump();
}

/** Whether any upload is queued or on its way (leaving the page would stop it). */
export function uploadsRunning() {
  return uploads.some((upload) => upload.state === 'queued' || upload.state === 'running');
}

/**
 * Empties the tray (signing out): every upload stops, large ones abort their sessions with the key they
 * started with, and no name, count or message of them is left for the next key to see.
 */
export function resetUploads() {
  generation++;
  for (const upload of uploads) cancel(upload);
  uploads.length = 0;
  running = 0;
  byId('uploads-list', HTMLUListElement).replaceChildren();
  byId('uploads-summary', HTMLElement).textContent = '';
  showTray(false);
}

/**
 * Shows or hides the tray, and with it the files view's "Go to uploads" link (the tray comes last in the page,
 * many Tab stops after the upload button).
 * @param {boolean} shown
 */
export function showTray(shown) {
  byId('uploads', HTMLElement).hidden = !shown;
  for (const link of document.querySelectorAll('[data-to-uploads]')) /** @type {HTMLElement} */ (link).hidden = !shown;
}

/** Focus on the tray's heading, from "Go to uploads". */
export function focusTray() {
  byId('uploads-title', HTMLElement).focus();
}

/** The tray's "Clear finished" button. */
export function wireUploadsPanel() {
  byId('uploads-clear', HTMLButtonElement).addEventListener('click', () => {
    for (const upload of uploads.filter((u) => u.state !== 'queued' && u.state !== 'running')) {
      upload.row.remove();
      uploads.splice(uploads.indexOf(upload), 1);
    }
    showTray(uploads.length > 0);
    summarize();
    // The tray went with its last row: focus goes to the upload button, or the view's heading, not the body.
    const main = byId('main', HTMLElement);
    if (focusLost()) focusFirst(main.querySelector('[data-input="upload"]'), main.querySelector('h1'), main);
  });
}

/**
 * @param {File} file
 * @param {string} folder
 * @returns {Upload}
 */
function createUpload(file, folder) {
  const bar = h('progress', { max: Math.max(file.size, 1), value: 0, 'aria-label': `Upload of ${file.name}` });
  const status = h('span', { class: 'upload-status' }, 'Waiting');
  const cancelButton = h('button', { type: 'button', class: 'quiet small', 'aria-label': `Cancel the upload of ${file.name}` }, 'Cancel');
  const row = h('li', { class: 'upload', 'data-state': 'queued' },
    h('div', { class: 'upload-line' }, h('span', { class: 'upload-name', title: `${folder === '/' ? '' : folder}/${file.name}` }, file.name), status, cancelButton),
    bar,
  );
  /** @type {Upload} */
  const upload = { file, folder, key: readKey(), state: 'queued', controller: new AbortController(), row, bar, status, cancel: cancelButton };
  cancelButton.addEventListener('click', () => cancel(upload));
  return upload;
}

/** @param {Upload} upload */
function cancel(upload) {
  if (upload.state === 'queued') setState(upload, 'cancelled', 'Cancelled');
  if (upload.state === 'running') upload.controller.abort(new DOMException('Cancelled', 'AbortError'));
}

/**
 * @param {Upload} upload
 * @param {UploadState} state
 * @param {string} text
 */
function setState(upload, state, text) {
  upload.state = state;
  upload.row.dataset.state = state;
  upload.status.textContent = text;
  const hadFocus = document.activeElement === upload.cancel;
  upload.cancel.hidden = state !== 'queued' && state !== 'running';
  summarize();
  if (!hadFocus || !upload.cancel.hidden) return;
  // Its Cancel is gone: focus goes to the next upload's Cancel, or the one before, or Clear finished.
  const at = uploads.indexOf(upload);
  focusFirst(...uploads.slice(at + 1).map((other) => other.cancel), ...uploads.slice(0, Math.max(at, 0)).reverse().map((other) => other.cancel), byId('uploads-clear', HTMLButtonElement));
}

/** Starts queued uploads while fewer than FILES_AT_ONCE run. */
function pump() {
  while (running < FILES_AT_ONCE) {
    const next = uploads.find((upload) => upload.state === 'queued');
    if (!next) return;
    running++;
    const started = generation;
    run(next).finally(() => {
      if (started !== generation) return;
      running--;
      pump();
      if (!uploadsRunning()) announceFinished();
    });
  }
}

/** @param {Upload} upload */
async function run(upload) {
  const { file, folder, key, controller } = upload;
  const started = generation;
  setState(upload, 'running', `0 B of ${formatBytes(file.size)}`);
  // The bar is silent: the quarters it passes are said too, through the status queue (upload-progress.js).
  const quarterToSay = quarterTracker(file.size, performance.now());
  const onProgress = (/** @type {number} */ loaded) => {
    upload.bar.value = loaded;
    upload.status.textContent = `${formatBytes(loaded)} of ${formatBytes(file.size)}`;
    const percent = quarterToSay(loaded, performance.now());
    if (percent !== undefined && started === generation) announce(`${file.name}: ${percent} % uploaded.`, `progress of ${folder}/${file.name}`);
  };
  try {
    const stored = file.size > LARGE_FILE_BYTES
      ? await uploadLargeFile(file, folder, onProgress, controller.signal, key)
      : await uploadSmallFile(file, folder, onProgress, controller.signal, key);
    if (started !== generation) return;
    upload.bar.value = upload.bar.max;
    setState(upload, 'done', `Uploaded, ${formatBytes(stored.size)}`);
    // Each file that lands is said while others still run (the last is said by "Uploads finished").
    if (uploadsRunning()) announce(`Uploaded ${file.name}: ${byId('uploads-summary', HTMLElement).textContent}.`, 'uploads landed');
    document.dispatchEvent(new CustomEvent('drive:uploaded', { detail: { folder, path: stored.path } }));
  } catch (error) {
    if (started !== generation) return;
    if (controller.signal.aborted) return setState(upload, 'cancelled', 'Cancelled');
    setState(upload, 'failed', `Failed: ${messageOf(error)}`);
    alertError(`Could not upload ${file.name}: ${messageOf(error)}`);
  }
}

function announceFinished() {
  const done = uploads.filter((upload) => upload.state === 'done').length;
  const failed = uploads.filter((upload) => upload.state === 'failed').length;
  announce(`Uploads finished: ${plural(done, 'file')} uploaded${failed > 0 ? `, ${failed} failed` : ''}.`);
}

function summarize() {
  const done = uploads.filter((upload) => upload.state === 'done').length;
  const active = uploads.filter((upload) => upload.state === 'queued' || upload.state === 'running').length;
  byId('uploads-summary', HTMLElement).textContent = active > 0 ? `${done} of ${done + active} done` : `${plural(done, 'file')} uploaded`;
}

/**
 * Uploads a large file in parts straight to S3: open a session, PUT each slice of the file to its presigned
 * URL (a few at a time, each retried), then complete it. Any failure or a cancel aborts the session, which
 * deletes the parts already sent.
 * @param {File} file
 * @param {string} folder
 * @param {(loaded: number) => void} onProgress
 * @param {AbortSignal} signal
 * @param {string | undefined} key the key the upload was queued under, which aborts its session
 * @returns {Promise<import('./api.js').FileEntry>}
 */
async function uploadLargeFile(file, folder, onProgress, signal, key) {
  const session = await startUpload(file, folder, signal);
  // One failed part stops the others, rather than sending bytes to a session about to be aborted.
  const parts = new AbortController();
  const stopParts = () => parts.abort(signal.reason);
  signal.addEventListener('abort', stopParts, { once: true });
  /** @type {Map<number, number>} */
  const sent = new Map();
  try {
    const urlOf = partUrlSource(session, parts.signal);
    const numbers = Array.from({ length: session.part_count ?? session.parts.length }, (_, i) => i + 1);
    // mapLimit rejects only once the parts in flight settle: the failed part aborts them itself, at once.
    const etags = await mapLimit(numbers, PARTS_AT_ONCE, async (number) => {
      const start = (number - 1) * session.part_size;
      const slice = file.slice(start, Math.min(start + session.part_size, file.size));
      try {
        const etag = await putPart(await urlOf(number), slice, (loaded) => {
          sent.set(number, loaded);
          onProgress([...sent.values()].reduce((sum, n) => sum + n, 0));
        }, parts.signal);
        return { number, etag };
      } catch (error) {
        parts.abort(error);
        throw error;
      }
    });
    return await completeUpload(session.upload_id, etags);
  } catch (error) {
    await abortUpload(session.upload_id, key).catch(() => undefined);
    throw error;
  } finally {
    signal.removeEventListener('abort', stopParts);
  }
}

/** Part URLs asked for at once past the start's (the API gives at most 1,000 a page). */
const PART_URLS_PAGE = 1000;

/**
 * Each part's URL: the start's, then a page at a time from the API as the parts come due (in order, a few at
 * once), each forgotten once taken.
 * @param {import('./api.js').UploadSession} session
 * @param {AbortSignal} signal
 * @returns {(number: number) => Promise<string>}
 */
function partUrlSource(session, signal) {
  /** @type {Map<number, string>} */
  const urls = new Map(session.parts.map((part) => [part.number, part.url]));
  /** @type {Map<number, Promise<void>>} */
  const pages = new Map();
  const base = session.parts.length + 1;
  return async (number) => {
    if (!urls.has(number)) {
      const from = base + Math.floor((number - base) / PART_URLS_PAGE) * PART_URLS_PAGE;
      let page = pages.get(from);
      if (!page) {
        page = partUrls(session.upload_id, from, PART_URLS_PAGE, signal).then((answer) => {
          for (const part of answer.parts) urls.set(part.number, part.url);
        });
        page.finally(() => pages.delete(from)).catch(() => undefined);
        pages.set(from, page);
      }
      await page;
    }
    const url = urls.get(number);
    if (url === undefined) throw new ApiError(200, 'unexpected_response', `The API gave no URL for part ${number} of the file.`);
    urls.delete(number);
    return url;
  };
}

/**
 * PUTs one part to its presigned URL and returns the ETag S3 gave it; sends it again after a network
 * failure or a 5xx.
 * @param {string} url
 * @param {Blob} slice
 * @param {(loaded: number) => void} onProgress
 * @param {AbortSignal} signal
 */
async function putPart(url, slice, onProgress, signal) {
  for (let attempt = 1; ; attempt++) {
    /** @type {unknown} */
    let failure;
    try {
      const xhr = await sendWithProgress('PUT', url, slice, { onProgress, signal });
      const etag = xhr.getResponseHeader('ETag');
      if (xhr.status >= 200 && xhr.status < 300 && etag) return etag;
      if (xhr.status >= 200 && xhr.status < 300) throw new ApiError(xhr.status, 's3', 'S3 stored a part but did not show its ETag: the bucket\'s CORS rule must expose ETag (see the README, "Dashboard").');
      failure = new ApiError(xhr.status, 's3', `S3 refused a part of the file (${xhr.status} ${s3ErrorCode(xhr.responseText)}).`);
      if (xhr.status < 500) throw failure;
    } catch (error) {
      if (signal.aborted || !(error instanceof ApiError) || error.status !== 0) throw error;
      failure = new ApiError(0, 'network', 'The connection to S3 failed. If every large upload fails so, the bucket may not allow this page\'s origin (CORS, see the README, "Dashboard").');
    }
    if (attempt >= PART_ATTEMPTS) throw failure;
    onProgress(0);
    await new Promise((resolve) => setTimeout(resolve, attempt * 1000));
  }
}

/**
 * The `<Code>` of an S3 error document, read without an XML parser (the page builds no DOM from strings).
 * @param {string} xml
 */
function s3ErrorCode(xml) {
  return /<Code>([^<]{1,64})<\/Code>/.exec(xml)?.[1] ?? 'no error code';
}

