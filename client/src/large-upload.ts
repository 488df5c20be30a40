import { backoffDelay } from './backoff';
import { multipartEtag, partEtagDigest, partRanges } from './content-etag';
import { DriveError, errorFromResponse } from './errors';
import { mapLimit } from './pool';
import { type Transport, discard } from './transport';
import type { DriveFile, DriveFileEntry, Listing, UploadSession } from './types';

/**
 * A file for the large-upload flow: its destination, its bytes, its media type, and optionally a condition
 * (`ifMatch`: an ETag, quotes optional; or `ifNoneMatch: '*'`), which the session takes at its start (a `412`
 * there, before any part is sent) and the server holds again when it writes the record (a `412` at
 * completion, the session then ended by the server).
 */
export interface LargeFile {
  path: string;
  data: Blob;
  contentType?: string;
  ifMatch?: string;
  ifNoneMatch?: '*';
}

export interface LargeUploadOptions {
  /** Part PUTs in flight at once. */
  partConcurrency: number;
  signal?: AbortSignal;
  /** Called with each part's size once S3 has it. */
  onPartDone?: (bytes: number) => void;
}

// The server holds a `complete` or `abort` claim for a minute; one that is still running is waited for a while longer.
const BUSY_WAIT_MS = 90_000;
// How long aborting a failed session may take, even after the caller's signal has fired.
const ABORT_TIMEOUT_MS = 10_000;

/**
 * Uploads a file through the large-upload session: start it, PUT every part straight to its presigned
 * S3 URL (several at once, each retried on its own by the transport; URLs past the start's are asked for a
 * page at a time), then complete it. When anything
 * fails, or the signal aborts, the session is aborted so that S3 drops the parts.
 */
export async function uploadLarge(transport: Transport, file: LargeFile, options: LargeUploadOptions): Promise<DriveFile> {
  const session = await startSession(transport, file, options.signal);
  try {
    const urls = new PartUrls(transport, session, options.signal);
    const parts = await mapLimit(
      partRanges(file.data.size, session.part_size),
      options.partConcurrency,
      async (range) => {
        const etag = await putPart(transport, session, range.number, await urls.take(range.number), file.data.slice(range.start, range.end), options.signal);
        options.onPartDone?.(range.end - range.start);
        return { number: range.number, etag };
      },
      options.signal,
    );
    return await completeSession(transport, session, parts, options.signal);
  } catch (error) {
    await abortSession(transport, session.upload_id);
    throw error;
  }
}

/**
 * `POST /drive/uploads`. Safe to retry: a repeat after a lost answer opens a second session, and the
 * first, never used, ends at its expiry (its parts with it).
 */
async function startSession(transport: Transport, file: LargeFile, signal?: AbortSignal): Promise<UploadSession> {
  const body = JSON.stringify({
    path: file.path,
    size: file.data.size,
    ...(file.contentType ? { content_type: file.contentType } : {}),
    ...(file.ifMatch !== undefined ? { if_match: file.ifMatch } : {}),
    ...(file.ifNoneMatch !== undefined ? { if_none_match: file.ifNoneMatch } : {}),
  });
  const { response } = await transport.send({
    method: 'POST',
    url: transport.url('/drive/uploads'),
    bucket: 'upload',
    headers: { 'Content-Type': 'application/json' },
    body,
    signal,
  });
  if (!response.ok) throw await errorFromResponse(response, 'POST /drive/uploads');
  const session = ((await response.json()) as { data: UploadSession }).data;
  const expected = partRanges(file.data.size, session.part_size).length;
  // The first URLs, in order from part 1; all of them unless the server says where the next page starts.
  const count = session.part_count ?? session.parts.length;
  const paged = typeof session.next_part === 'number';
  if (count !== expected || (!paged && session.parts.length !== expected) || (paged && session.next_part !== session.parts.length + 1) || session.parts.some((part, i) => part.number !== i + 1)) {
    await abortSession(transport, session.upload_id);
    throw new DriveError('unexpected_response', `the upload session has ${count} parts; a file of ${file.data.size} bytes in parts of ${session.part_size} needs ${expected}`, response.status);
  }
  return session;
}

/** Part URLs asked for at once, past the start's: the server gives at most 1,000 a page. */
const PART_URLS_PAGE = 1000;

/**
 * Each part's URL: from the start's answer, then from `GET /drive/uploads/{id}/parts` a page at a time as the
 * parts come due (they are taken in order, a few at once), so a 10,000-part upload holds a page of URLs, not all.
 */
class PartUrls {
  private readonly urls = new Map<number, string>();
  private readonly pages = new Map<number, Promise<void>>();
  private readonly base: number;

  constructor(
    private readonly transport: Transport,
    private readonly session: UploadSession,
    private readonly signal?: AbortSignal,
  ) {
    for (const part of session.parts) this.urls.set(part.number, part.url);
    this.base = session.parts.length + 1;
  }

  /** The URL of part `number`, forgotten once taken. */
  async take(number: number): Promise<string> {
    if (!this.urls.has(number)) await this.page(this.base + Math.floor((number - this.base) / PART_URLS_PAGE) * PART_URLS_PAGE);
    const url = this.urls.get(number);
    if (url === undefined) throw new DriveError('unexpected_response', `the server gave no URL for part ${number} of ${this.session.path}`, 200);
    this.urls.delete(number);
    return url;
  }

  private page(from: number): Promise<void> {
    let pending = this.pages.get(from);
    if (!pending) {
      pending = this.fetch(from).finally(() => this.pages.delete(from));
      this.pages.set(from, pending);
    }
    return pending;
  }

  private async fetch(from: number): Promise<void> {
    const route = `/drive/uploads/${encodeURIComponent(this.session.upload_id)}/parts`;
    const url = this.transport.url(route, { from: String(from), limit: String(PART_URLS_PAGE) });
    const { response } = await this.transport.send({ method: 'GET', url, bucket: 'upload', signal: this.signal });
    if (!response.ok) throw await errorFromResponse(response, `GET ${route}`);
    const page = ((await response.json()) as { data: Pick<UploadSession, 'parts'> }).data;
    for (const part of page.parts) this.urls.set(part.number, part.url);
  }
}

/** PUTs one part to S3 (no API key: the URL is signed) and returns its ETag. Safe to retry: a part sent again replaces itself. */
async function putPart(transport: Transport, session: UploadSession, number: number, url: string, bytes: Blob, signal?: AbortSignal): Promise<string> {
  const { response } = await transport.send({ method: 'PUT', url, body: bytes, signal });
  if (!response.ok) throw await errorFromResponse(response, `PUT of part ${number} of ${session.path}`);
  await discard(response);
  const etag = response.headers.get('etag');
  if (!etag) throw new DriveError('unexpected_response', `storage gave part ${number} of ${session.path} no ETag (is ETag exposed to this origin?)`, response.status);
  return etag;
}

/**
 * `POST /drive/uploads/{id}/complete`, with the server's retry rules: a `409` whose reason is
 * `upload_busy` (an earlier attempt of ours still running) is waited on; a `404` after an attempt that
 * got no clear answer means that attempt may have stored the file and ended the session, so the listing
 * is asked whether the file is there with this size and these parts' content ETag.
 */
async function completeSession(transport: Transport, session: UploadSession, parts: { number: number; etag: string }[], signal?: AbortSignal): Promise<DriveFile> {
  const route = `/drive/uploads/${encodeURIComponent(session.upload_id)}/complete`;
  const body = JSON.stringify({ parts });
  const started = transport.now();
  let uncertain = false;
  for (let wait = 0; ; wait++) {
    const result = await transport.send({ method: 'POST', url: transport.url(route), bucket: 'upload', headers: { 'Content-Type': 'application/json' }, body, signal });
    uncertain ||= result.uncertain;
    const { response } = result;
    if (response.ok) return ((await response.json()) as { data: DriveFile }).data;
    const error = await errorFromResponse(response, `POST ${route}`);
    if (error.status === 409 && error.reason === 'upload_busy' && transport.now() - started < BUSY_WAIT_MS) {
      uncertain = true;
      await transport.sleep(backoffDelay(wait, { baseDelayMs: 1000, maxDelayMs: 5000 }) + 500, signal);
      continue;
    }
    if (error.status === 404 && uncertain) {
      const stored = await storedFile(transport, session.path, session.size, signal);
      if (stored?.etag === multipartEtag(parts.map((part) => partEtagDigest(part.etag)))) {
        const { etag: _etag, ...file } = stored;
      return { ...file, url: downloadUrl(transport, stored.path) };
      }
    }
    throw error;
  }
}

/** The URL the API gives a stored file: its download route, with the path's slashes left readable as the server writes them. */
function downloadUrl(transport: Transport, path: string): string {
  return `${transport.url('/drive/download')}?path=${encodeURIComponent(path).replace(/%2F/g, '/')}`;
}

/**
 * The listing entry of the file at `path`, if it is there with `size` bytes: the folder's pages, in path
 * byte order, until the page that holds the path or passes it, so memory holds one page whatever the folder.
 */
async function storedFile(transport: Transport, path: string, size: number, signal?: AbortSignal): Promise<DriveFileEntry | undefined> {
  const folder = path.slice(0, path.lastIndexOf('/')) || '/';
  const after = (a: string | undefined, b: string) => a !== undefined && Buffer.compare(Buffer.from(a), Buffer.from(b)) > 0;
  let cursor: string | undefined;
  do {
    const url = transport.url('/drive/list', { folder, include: 'etag', limit: '1000', cursor });
    const { response } = await transport.send({ method: 'GET', url, bucket: 'list', signal });
    if (!response.ok) {
      await discard(response);
      return undefined;
    }
    const page = ((await response.json()) as { data: Listing & { next_cursor?: string | null } }).data;
    const found = page.files.find((file) => file.path === path);
    if (found) return found.size === size ? found : undefined;
    // Every later page holds paths after this page's (each list in path order): past the target, it is not there.
    if (after(page.files.at(-1)?.path, path) || after(page.folders.at(-1)?.path, path)) return undefined;
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return undefined;
}

/**
 * `DELETE /drive/uploads/{id}`, best effort and bounded in time: it runs after a failure or an abort, and
 * a session it cannot end expires on its own.
 */
async function abortSession(transport: Transport, uploadId: string): Promise<void> {
  try {
    const { response } = await transport.send({
      method: 'DELETE',
      url: transport.url(`/drive/uploads/${encodeURIComponent(uploadId)}`),
      bucket: 'upload',
      signal: AbortSignal.timeout(ABORT_TIMEOUT_MS),
    });
    await discard(response);
  } catch {
    // The session ends at its expiry instead.
  }
}
