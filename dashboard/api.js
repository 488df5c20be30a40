// @ts-check
/**
 * The Drive API as the dashboard calls it. Every call sends the session's key in the Authorization header
 * (never in a URL), to addresses relative to the page, so the same files work at `/` locally and under a
 * stage path (`/v1/`) in AWS.
 */
import { readKey, sessionSignal } from './session.js';

/**
 * The API's answers, typed from its OpenAPI document (the types `npm run openapi` generates from it; only
 * types, nothing of them is loaded by the page).
 * @typedef {import('../client/src/generated/drive-api').components['schemas']} Wire
 * @typedef {Wire['FileEntry']} FileEntry
 * @typedef {Wire['FolderEntry']} FolderEntry
 * @typedef {Wire['Listing']} Listing
 * @typedef {Wire['Role']} Role
 * @typedef {Wire['ApiKey']} ApiKey
 * @typedef {Wire['UploadSession']} UploadSession
 * @typedef {Wire['TrustRole']} TrustRole
 * @typedef {Wire['Change']} Change
 * @typedef {Wire['RecentChanges']} RecentChanges
 * @typedef {Wire['ChangesPage']} ChangesPage
 * @typedef {Wire['TrashItem']} TrashItem
 * @typedef {Wire['TrashPage']} TrashPage
 */

/**
 * Trust rules (issue 25), typed in trust-rules.js, which the unit tests load without the DOM.
 * @typedef {import('./trust-rules.js').TrustRule} TrustRule
 * @typedef {import('./trust-rules.js').NewTrustRule} NewTrustRule
 */

/** An answer of the API other than a success, with the API's own code and message (or a network failure, status 0). */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} code
   * @param {string} message
   */
  constructor(status, code, message) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

/**
 * What the page may want to show about calls in flight: `ratelimited` (detail: `{ seconds, message }`) while a
 * call waits out a 429, and `unauthorized` when the session's key stops working (revoked).
 */
export const apiEvents = new EventTarget();

/** How often one call waits out a 429 before it gives up and shows the error. */
const RATE_LIMIT_RETRIES = 3;

/**
 * The absolute URL of `path` on this API, with `query` encoded.
 * @param {string} path relative, like `drive/list`
 * @param {Record<string, string>} [query]
 */
export function apiUrl(path, query = {}) {
  const url = new URL(path, document.baseURI);
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  return url.href;
}

/**
 * @typedef {object} RequestOptions
 * @property {string} [method]
 * @property {Record<string, string>} [query]
 * @property {unknown} [json] a body to send as JSON
 * @property {string} [key] the key to send instead of the session's (sign-in checks a key before keeping it)
 * @property {AbortSignal} [signal]
 */

/**
 * Calls the API and returns its response if it succeeded; otherwise throws an ApiError carrying the API's
 * message. A 429 is waited out (`Retry-After` seconds, announced through `apiEvents`) and tried again.
 * @param {string} path
 * @param {RequestOptions} [options]
 * @returns {Promise<Response>}
 */
export async function request(path, options = {}) {
  const key = options.key ?? readKey();
  // A call with the session's key ends with the session (signing out); one given its own key (checking a key,
  // or aborting an upload a session left) does not.
  const signal = options.key === undefined ? AbortSignal.any([sessionSignal(), ...(options.signal ? [options.signal] : [])]) : options.signal;
  for (let attempt = 0; ; attempt++) {
    /** @type {Record<string, string>} */
    const headers = { Authorization: `Bearer ${key ?? ''}` };
    if (options.json !== undefined) headers['Content-Type'] = 'application/json';
    let response;
    try {
      response = await fetch(apiUrl(path, options.query), {
        method: options.method ?? 'GET',
        headers,
        body: options.json === undefined ? undefined : JSON.stringify(options.json),
        signal,
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new ApiError(0, 'network', 'Drive could not be reached. Check your connection and try again.');
    }
    if (response.ok) return response;
    const error = errorOf(response.status, await response.text());
    if (response.status === 429 && attempt < RATE_LIMIT_RETRIES) {
      await waitOut(retryAfterSeconds(response.headers.get('Retry-After')), error.message, signal);
      continue;
    }
    if (response.status === 401 && options.key === undefined) apiEvents.dispatchEvent(new CustomEvent('unauthorized', { detail: { message: error.message } }));
    throw error;
  }
}

/**
 * The `data` of a JSON answer, as the route documents it.
 * @template T
 * @param {string} path
 * @param {RequestOptions} [options]
 * @returns {Promise<T>}
 */
async function data(path, options) {
  const body = /** @type {{ data: T }} */ (await (await request(path, options)).json());
  return body.data;
}

/**
 * The API's error, from its JSON body `{ error: { code, message } }`; a body of another shape (a proxy's page)
 * still gives a message that says what happened.
 * @param {number} status
 * @param {string} text
 */
export function errorOf(status, text) {
  try {
    const body = JSON.parse(text);
    if (typeof body?.error?.message === 'string') return new ApiError(status, String(body.error.code), body.error.message);
  } catch {
    // not JSON: fall through
  }
  return new ApiError(status, `http_${status}`, `Drive answered ${status} without saying why. Try again in a moment.`);
}

/**
 * Whole seconds to wait from a `Retry-After` header (seconds or an HTTP date), at least 1.
 * @param {string | null} header
 */
export function retryAfterSeconds(header) {
  if (header === null) return 1;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(1, Math.ceil(seconds));
  const date = Date.parse(header);
  return Number.isNaN(date) ? 1 : Math.max(1, Math.ceil((date - Date.now()) / 1000));
}

/**
 * Announces a rate limit and sleeps it out.
 * @param {number} seconds
 * @param {string} message the API's message, which states the delay
 * @param {AbortSignal} [signal]
 */
export async function waitOut(seconds, message, signal) {
  apiEvents.dispatchEvent(new CustomEvent('ratelimited', { detail: { seconds, message } }));
  await new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, seconds * 1000);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}

/**
 * One page of `folder` (at most `limit` entries; with `recursive`, of everything below it, depth first),
 * starting at `cursor`; `next_cursor` is null on the last page.
 * @param {string} folder
 * @param {{ limit: number, cursor?: string | null, recursive?: boolean, signal?: AbortSignal }} options
 * @returns {Promise<Listing & { next_cursor: string | null }>}
 */
export function listPage(folder, options) {
  const query = { folder, limit: String(options.limit), ...(options.cursor ? { cursor: options.cursor } : {}), ...(options.recursive ? { recursive: 'true' } : {}) };
  return data('drive/list', { query, signal: options.signal });
}

/**
 * A page of `folder`'s recent activity (its changes and those below it, newest first, at most `limit`), or with
 * `before` (a `next_before`) the page of older ones.
 * @param {string} folder
 * @param {{ limit: number, before?: string | null, signal?: AbortSignal }} options
 * @returns {Promise<RecentChanges>}
 */
export function recentChanges(folder, options) {
  /** @type {Record<string, string>} */
  const query = options.before ? { before: options.before, limit: String(options.limit) } : { path: folder, limit: String(options.limit) };
  return data('drive/changes/recent', { query, signal: options.signal });
}

/**
 * The changes after a feed `cursor`, oldest first; with none yet, waits up to `timeout` seconds for one (a
 * long poll), else answers none and the same position.
 * @param {string} cursor
 * @param {number} timeout
 * @param {AbortSignal} [signal]
 * @returns {Promise<ChangesPage>}
 */
export function changesAfter(cursor, timeout, signal) {
  return data('drive/changes', { query: { cursor, limit: '100', timeout: String(timeout) }, signal });
}

/**
 * Whether a file is at `path` (a HEAD of its download: no bytes).
 * @param {string} path
 */
export async function fileExists(path) {
  try {
    await request('drive/download', { method: 'HEAD', query: { path } });
    return true;
  } catch (failure) {
    if (failure instanceof ApiError && failure.status === 404) return false;
    throw failure;
  }
}

/**
 * Creates `path` and its missing parents.
 * @param {string} path
 * @returns {Promise<{ id: string, path: string, created_at: string }>}
 */
export function createFolder(path) {
  return data('drive/folders', { method: 'POST', json: { path } });
}

/** @typedef {Wire['DeleteJob']} DeleteJob */
/** @typedef {Wire['DeletedFolder']} Deletion */
/**
 * A job of the API (a big delete, move or copy): `status` is `done` at its end; a move or copy that stopped
 * short is done with an `error` (and a null `result`).
 * @typedef {Wire['Job']} Job
 */

/**
 * Deletes `path` and everything in it: the deletion, or for a tree too big for one request (`202`) the job
 * that goes on deleting it (the folder is already gone for readers); `waitForJob` follows it to its end.
 * @param {string} path
 * @returns {Promise<{ done: Deletion } | { job: DeleteJob }>}
 */
export async function deleteFolder(path) {
  const response = await request('drive/folders', { method: 'DELETE', query: { path, recursive: 'true' } });
  const body = await response.json();
  return response.status === 202 ? { job: body.data.job } : { done: body.data };
}

/**
 * Reads `job` until it is done, waiting a quarter second at first and up to five seconds between reads,
 * telling `onProgress` each time; resolves with the finished job, or rejects with the error of a failed one.
 * @template {Job} J
 * @param {J} job
 * @param {(job: J) => void} onProgress
 * @param {AbortSignal} [signal] the session's when it started: a job is not followed past a sign-out
 * @returns {Promise<J>}
 */
export async function followJob(job, onProgress, signal = sessionSignal()) {
  for (let wait = 250; job.status !== 'done'; wait = Math.min(5000, wait * 2)) {
    onProgress(job);
    await sleep(wait, signal);
    /** @type {{ job: J }} */
    const read = await data(`drive/jobs/${encodeURIComponent(job.id)}`, { signal });
    job = read.job;
  }
  // A move or copy that stopped short is done too, with its error: what moved stays moved, and the user is told.
  if ('error' in job && job.error) throw new ApiError(200, job.error.code, job.error.message);
  return job;
}

/**
 * Resolves after `ms`, or rejects when `signal` aborts first.
 * @param {number} ms
 * @param {AbortSignal} signal
 * @returns {Promise<void>}
 */
function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const stop = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', stop);
      resolve();
    }, ms);
    signal.addEventListener('abort', stop, { once: true });
  });
}

/**
 * Follows a recursive delete's job to its end (see `followJob`); resolves with its result.
 * @param {DeleteJob} job
 * @param {(job: DeleteJob) => void} onProgress
 * @param {AbortSignal} [signal]
 * @returns {Promise<Deletion>}
 */
export async function waitForJob(job, onProgress, signal) {
  const done = await followJob(job, onProgress, signal);
  return done.result ?? { deleted: true, path: done.path, files_deleted: done.files_deleted };
}

/**
 * Deletes the file at `path` (`DELETE drive/files`): `deleted` holds it, or `not_found` if it was already
 * gone; a folder there is a 409.
 * @param {string} path
 * @returns {Promise<{ deleted: string[], not_found: string[] }>}
 */
export function deleteFile(path) {
  return data('drive/files', { method: 'DELETE', query: { path } });
}

/**
 * Moves or copies the file or folder at `from` to `to` (`POST drive/move`, `POST drive/copy`): the entry at
 * its new path, or for a folder too big for one request (`202`) the job that goes on with it. A taken
 * destination is a 409 unless `overwrite` (files only).
 * @param {'move' | 'copy'} kind
 * @param {{ from: string, to: string, overwrite?: boolean }} transfer
 * @returns {Promise<{ entry: FileEntry | FolderEntry } | { job: Job }>}
 */
export async function moveOrCopy(kind, transfer) {
  const response = await request(`drive/${kind}`, { method: 'POST', json: { from: transfer.from, to: transfer.to, overwrite: transfer.overwrite ?? false } });
  const body = await response.json();
  return response.status === 202 ? { job: body.data.job } : { entry: body.data };
}

/** @typedef {{ id: string, path: string, expires_at: string, created_at: string | null, url: string | null }} ShareLink */

/**
 * Makes a share link to the file at `path`, valid for `expiresIn` seconds: its `url` opens the file without a key.
 * @param {string} path
 * @param {number} expiresIn
 * @returns {Promise<ShareLink & { url: string }>}
 */
export function createLink(path, expiresIn) {
  return data('drive/links', { method: 'POST', json: { path, expires_in: expiresIn } });
}

/**
 * The live share links to the file at `path`.
 * @param {string} path
 * @param {AbortSignal} [signal]
 */
export async function listLinks(path, signal) {
  return linksOf(await data('drive/links', { query: { path }, signal }));
}

/**
 * The links in the `data` of `GET drive/links`. The route is newer than this page: its field names are read
 * here alone, so that a change to them is a change to this function.
 * @param {unknown} listed
 * @returns {ShareLink[]}
 */
export function linksOf(listed) {
  const body = /** @type {{ links?: unknown, items?: unknown } | unknown[] | null} */ (listed);
  const list = Array.isArray(body) ? body : (body?.links ?? body?.items ?? []);
  if (!Array.isArray(list)) return [];
  return list.map((/** @type {Record<string, unknown>} */ link) => ({
    id: String(link.id),
    path: String(link.path),
    expires_at: String(link.expires_at ?? link.expiresAt ?? ''),
    created_at: typeof link.created_at === 'string' ? link.created_at : null,
    url: typeof link.url === 'string' ? link.url : null,
  }));
}

/**
 * Revokes a share link: its URL answers 404 from then on.
 * @param {string} id
 * @returns {Promise<{ id: string, revoked: boolean }>}
 */
export function revokeLink(id) {
  return data(`drive/links/${encodeURIComponent(id)}`, { method: 'DELETE' });
}

/** @typedef {{ role: Role, prefix: string | null }} Access what a key may do; `prefix` null when the API did not say */

/**
 * What `key` may do, from the API. `GET drive/whoami` (`{role, prefix}`) is asked first; from an API
 * without that route (a stack deployed before it: `404`) the role is read from what the API refuses, with requests that change nothing: only an
 * admin may list keys, only a writer reaches `DELETE drive/files` (which, with no path, is a 400 for it and
 * deletes nothing), and only a reader reaches `GET drive/download` (with no path, a 400 too). A 403 is the
 * role's refusal: the guard checks the role before anything in the request. An unknown key is a 401.
 * @param {string} key
 * @returns {Promise<Access>}
 */
export async function accessOf(key) {
  try {
    /** @type {{ role?: unknown, prefix?: unknown }} */
    const me = await data('drive/whoami', { key });
    if (isRole(me.role)) return { role: me.role, prefix: typeof me.prefix === 'string' ? me.prefix : null };
  } catch (failure) {
    if (!(failure instanceof ApiError) || failure.status === 401 || failure.status === 0) throw failure;
    // No such route (404): probe.
  }
  if (await allowed('drive/keys', { key })) return { role: 'admin', prefix: null };
  const [writes, reads] = await Promise.all([allowed('drive/files', { key, method: 'DELETE' }), allowed('drive/download', { key })]);
  return { role: writes ? 'read-write' : reads ? 'read-only' : 'upload-only', prefix: null };
}

/**
 * Whether the key's role may call the route: false for a 403, true for any other answer of the route
 * (a 400 for a request that names nothing); throws for a 401, a network failure or a server error.
 * @param {string} path
 * @param {RequestOptions} options
 */
async function allowed(path, options) {
  try {
    await request(path, options);
    return true;
  } catch (failure) {
    if (failure instanceof ApiError && failure.status === 403) return false;
    if (failure instanceof ApiError && failure.status >= 400 && failure.status < 500 && failure.status !== 401 && failure.status !== 429) return true;
    throw failure;
  }
}

/**
 * @param {unknown} value
 * @returns {value is Role}
 */
export function isRole(value) {
  return value === 'admin' || value === 'read-write' || value === 'read-only' || value === 'upload-only';
}

/**
 * The drive's keys, revoked ones included; with `key`, checks that key instead of the session's.
 * @param {{ key?: string, signal?: AbortSignal }} [options]
 * @returns {Promise<ApiKey[]>}
 */
export async function listKeys(options = {}) {
  /** @type {{ keys: ApiKey[] }} */
  const listed = await data('drive/keys', options);
  return listed.keys;
}

/**
 * @param {{ name: string, role: Role, prefix?: string }} key
 * @returns {Promise<{ key: ApiKey, secret: string }>}
 */
export function createKey(key) {
  return data('drive/keys', { method: 'POST', json: key });
}

/**
 * @param {string} id
 * @returns {Promise<{ key: ApiKey }>}
 */
export function revokeKey(id) {
  return data(`drive/keys/${encodeURIComponent(id)}`, { method: 'DELETE' });
}

/**
 * A page of the trash, newest first, within the key's folder; `path` narrows it to what was taken from that
 * folder or below it. Its `usage` sums what the trash holds in that scope.
 * @param {{ path?: string, cursor?: string, limit?: number, signal?: AbortSignal }} [options]
 * @returns {Promise<TrashPage>}
 */
export function listTrash(options = {}) {
  /** @type {Record<string, string>} */
  const query = {};
  if (options.path) query.path = options.path;
  if (options.cursor) query.cursor = options.cursor;
  if (options.limit) query.limit = String(options.limit);
  return data('drive/trash', { query, signal: options.signal });
}

/**
 * Restores a trash item to where it was taken from, or `to`: the File or Folder when done within the request,
 * else (a big folder, `202`) the job restoring it; `followJob` follows that to its end.
 * @param {{ id: string, to?: string, overwrite?: boolean }} restore
 * @returns {Promise<{ done: { path: string } } | { job: Job }>}
 */
export async function restoreFromTrash(restore) {
  const response = await request('drive/trash/restore', { method: 'POST', json: restore });
  const body = await response.json();
  return response.status === 202 ? { job: body.data.job } : { done: body.data };
}

/**
 * Purges a trash item now: its bytes are gone for good.
 * @param {string} id
 * @returns {Promise<{ purged: true, id: string, files: number, bytes: number }>}
 */
export function purgeTrashItem(id) {
  return data(`drive/trash/${encodeURIComponent(id)}`, { method: 'DELETE' });
}

/**
 * The drive's trust rules, revoked ones included, oldest first (the order the exchange tries them in).
 * @param {{ signal?: AbortSignal }} [options]
 * @returns {Promise<TrustRule[]>}
 */
export async function listTrust(options = {}) {
  /** @type {{ trust: TrustRule[] }} */
  const listed = await data('drive/trust', options);
  return listed.trust;
}

/**
 * Adds a trust rule: tokens it admits exchange for keys of its role and folder.
 * @param {NewTrustRule} rule
 * @returns {Promise<TrustRule>}
 */
export async function addTrust(rule) {
  /** @type {{ trust: TrustRule }} */
  const made = await data('drive/trust', { method: 'POST', json: rule });
  return made.trust;
}

/**
 * Revokes a trust rule and every key minted under it.
 * @param {string} id
 * @returns {Promise<TrustRule>}
 */
export async function revokeTrust(id) {
  /** @type {{ trust: TrustRule }} */
  const revoked = await data(`drive/trust/${encodeURIComponent(id)}`, { method: 'DELETE' });
  return revoked.trust;
}

/**
 * Opens a large upload into `folder`: presigned URLs for its parts.
 * @param {File} file
 * @param {string} folder
 * @param {AbortSignal} [signal]
 * @returns {Promise<UploadSession>}
 */
export function startUpload(file, folder, signal) {
  // The API accepts a plain media type; browsers sometimes report others (or none), which S3 need not know.
  const contentType = /^[\w.+-]+\/[\w.+-]+$/.test(file.type) ? { content_type: file.type } : {};
  return data('drive/uploads', { method: 'POST', json: { folder, name: file.name, size: file.size, ...contentType }, signal });
}

/**
 * URLs for at most `limit` parts of a large upload from part `from` on: the pages after the start's.
 * @param {string} uploadId
 * @param {number} from
 * @param {number} limit
 * @param {AbortSignal} [signal]
 * @returns {Promise<{ parts: { number: number, url: string }[], next_part: number | null }>}
 */
export function partUrls(uploadId, from, limit, signal) {
  return data(`drive/uploads/${encodeURIComponent(uploadId)}/parts`, { query: { from: String(from), limit: String(limit) }, signal });
}

/**
 * @param {string} uploadId
 * @param {{ number: number, etag: string }[]} parts
 * @returns {Promise<FileEntry>}
 */
export function completeUpload(uploadId, parts) {
  return data(`drive/uploads/${encodeURIComponent(uploadId)}/complete`, { method: 'POST', json: { parts } });
}

/**
 * @param {string} uploadId
 * @param {string} [key] the key the upload started with: a session signed out still aborts what it left
 */
export async function abortUpload(uploadId, key) {
  await request(`drive/uploads/${encodeURIComponent(uploadId)}`, { method: 'DELETE', key });
}

/**
 * Downloads the file at `path` into memory, reporting bytes as they arrive (`total` from Content-Length).
 * @param {string} path
 * @param {(loaded: number, total: number | undefined) => void} onProgress
 * @param {AbortSignal} [signal]
 * @returns {Promise<Blob>}
 */
export async function downloadFile(path, onProgress, signal) {
  const response = await request('drive/download', { query: { path }, signal });
  const length = Number(response.headers.get('Content-Length'));
  const total = Number.isFinite(length) && length > 0 ? length : undefined;
  const type = response.headers.get('Content-Type') ?? 'application/octet-stream';
  if (!response.body) return new Blob([await response.arrayBuffer()], { type });
  /** @type {BlobPart[]} */
  const chunks = [];
  let loaded = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    // A fetch body's chunks are never shared memory, which is all the cast says.
    chunks.push(/** @type {Uint8Array<ArrayBuffer>} */ (value));
    loaded += value.byteLength;
    onProgress(loaded, total);
  }
  return new Blob(chunks, { type });
}

/**
 * Sends `body` with XMLHttpRequest, the one browser API that reports upload progress, and resolves with the
 * finished request whatever its status; rejects on a network failure or when `signal` aborts.
 * @param {string} method
 * @param {string} url
 * @param {XMLHttpRequestBodyInit} body
 * @param {{ headers?: Record<string, string>, onProgress?: (loaded: number) => void, signal?: AbortSignal }} [options]
 * @returns {Promise<XMLHttpRequest>}
 */
export function sendWithProgress(method, url, body, options = {}) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, url);
    for (const [name, value] of Object.entries(options.headers ?? {})) xhr.setRequestHeader(name, value);
    xhr.upload.addEventListener('progress', (event) => options.onProgress?.(event.loaded));
    xhr.addEventListener('load', () => resolve(xhr));
    xhr.addEventListener('error', () => reject(new ApiError(0, 'network', 'The connection failed while sending the file.')));
    xhr.addEventListener('abort', () => reject(options.signal?.reason ?? new DOMException('Cancelled', 'AbortError')));
    if (options.signal?.aborted) return reject(options.signal.reason);
    options.signal?.addEventListener('abort', () => xhr.abort(), { once: true });
    xhr.send(body);
  });
}

/**
 * Uploads a small file (at most a few MB: one API request carries 4.5 MB) into `folder` with
 * `POST drive/upload`, reporting bytes sent.
 * @param {File} file
 * @param {string} folder
 * @param {(loaded: number) => void} onProgress
 * @param {AbortSignal} [signal]
 * @param {string | undefined} [key] the key the upload was queued under
 * @returns {Promise<FileEntry>}
 */
export async function uploadSmallFile(file, folder, onProgress, signal, key = readKey()) {
  for (let attempt = 0; ; attempt++) {
    const form = new FormData();
    form.append('metadata', JSON.stringify([{ folder }]));
    form.append('files', file, file.name);
    const xhr = await sendWithProgress('POST', apiUrl('drive/upload'), form, {
      headers: { Authorization: `Bearer ${key ?? ''}` },
      onProgress: (loaded) => onProgress(Math.min(loaded, file.size)),
      signal,
    });
    if (xhr.status === 200) return JSON.parse(xhr.responseText).data[0];
    const error = errorOf(xhr.status, xhr.responseText);
    if (xhr.status === 429 && attempt < RATE_LIMIT_RETRIES) {
      onProgress(0);
      await waitOut(retryAfterSeconds(xhr.getResponseHeader('Retry-After')), error.message, signal);
      continue;
    }
    if (xhr.status === 401) apiEvents.dispatchEvent(new CustomEvent('unauthorized', { detail: { message: error.message } }));
    throw error;
  }
}
