import { createWriteStream, openAsBlob } from 'node:fs';
import { rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { BatchSizer, packBatches } from './batch-packing';
import { type Download, type DownloadOptions, directDownloadOf, openDownload } from './download';
import { DriveError, errorFromResponse, isAbortError, jobFailure } from './errors';
import { uploadLarge } from './large-upload';
import { type OidcOptions, OidcKeySource } from './oidc';
import { mapLimit } from './pool';
import type { Clock } from './rate-limit-pacer';
import { DEFAULT_RETRY, type RetryNotice, type RetryOptions, Transport, type TransportStats, discard } from './transport';
import type { CopyJob, DeleteJob, DirectDownload, DriveChange, DriveEntry, DriveFile, DriveFolder, DriveJob, EmptiedTrash, EmptyTrashJob, FileHead, KeyIdentity, FilesDeletion, FolderDeletion, Listing, MoveJob, PurgedItem, RecentChanges, RestoreJob, RestoredEntry, ShareLink, ShareLinkEntry, TrashPage } from './types';
import { type SyncEndpoint, type SyncOptions, type SyncReport, sync as runSync } from './sync/sync';
import { type FormFile, METADATA_FIXED_BYTES, REQUEST_FIXED_BYTES, fileCost, uploadForm } from './upload-form';

const MiB = 1024 * 1024;

export interface DriveOptions {
  /** The API's base URL: `http://127.0.0.1:3000` locally, the stage URL (`…/v1`) in AWS. */
  baseUrl: string;
  /** The API key; or give `oidc` instead. */
  apiKey?: string;
  /**
   * No key, but the job's OIDC identity token: exchanged at `POST /drive/token` for a short-lived key, exchanged
   * again when less than 20 % of the key's life (and at least 60 s) is left, and at once after a `401` (one
   * retry). See docs/federation.md.
   */
  oidc?: OidcOptions;
  /** The fetch to send with (default: the global one); tests pass one that counts. */
  fetch?: typeof fetch;
  /** Upload requests in flight at once: batches, and large files (each with its own parts). Default 4. */
  concurrency?: number;
  /** Part PUTs in flight per large file. Default 4. */
  partConcurrency?: number;
  /** Files larger than this go through the large-upload session in parts. Default 4 MiB. */
  largeFileBytes?: number;
  /** The largest `POST /drive/upload` body. Default 4,500,000 bytes, Drive's limit. */
  maxRequestBytes?: number;
  /** Files per `POST /drive/upload`. Default 1,000, Drive's limit. */
  maxFilesPerRequest?: number;
  /**
   * How long one `POST /drive/upload` should take: requests start at 100 files (or `maxFilesPerRequest` when
   * given) and are sized, by files and bytes, to what the answers seen so far say takes this long (`BatchSizer`). Default 10,000 ms, well inside
   * API Gateway's 29 s. `Infinity` sends the most the limits allow from the start.
   */
  batchTargetMs?: number;
  /**
   * Files larger than this are downloaded straight from S3 by a presigned URL (the download's first request
   * carries `redirect_above`, so it is one request whatever the size), their ETag and size checked. Default 10,000,000 bytes: in AWS the API streams the first 10 MB at full speed and the
   * rest at 2 MB/s. `Infinity` reads every file through the API.
   */
  directDownloadBytes?: number;
  retry?: Partial<RetryOptions>;
  /** Abort an attempt that takes longer (it is retried). Default none: Node's fetch gives up after 300 s of silence. */
  timeoutMs?: number;
  /** The clock that waits and backoffs run on; tests pass a fake one. */
  clock?: Clock;
  /** Told before each retry of a call (attempt, reason, wait): the CLI says it on stderr. */
  onRetry?: (notice: RetryNotice) => void;
}

/** Where an upload's bytes come from: a local file (read when sent, streamed from disk) or bytes in memory. */
export type UploadSource = { file: string } | { data: Blob | Uint8Array | string };

/**
 * One file to upload: its destination `path` in the drive, its bytes, optionally its media type, and
 * optionally a condition: `ifMatch` (an ETag, quotes optional: store it only over the file with that ETag)
 * or `ifNoneMatch: '*'` (only where no file is). A condition that fails fails that file with a
 * `PreconditionFailedError` (412) and stores nothing of it; the other files of its batch are sent again
 * without it. A file large enough to go in parts sends its condition with its session's start (a `412`
 * there, before any part is sent), and the server holds it again by the record's write at completion: a
 * file replaced or made at the path meanwhile fails it there, and nothing of it is stored.
 */
export type UploadItem = UploadSource & { path: string; contentType?: string; ifMatch?: string; ifNoneMatch?: '*' };

/** What became of one file of `uploadMany`. */
export type UploadOutcome = { ok: true; item: UploadItem; file: DriveFile } | { ok: false; item: UploadItem; error: DriveError };

export interface UploadReport {
  uploaded: { item: UploadItem; file: DriveFile }[];
  failed: { item: UploadItem; error: DriveError }[];
}

export interface UploadProgress {
  filesTotal: number;
  filesDone: number;
  filesFailed: number;
  /** Bytes of the files still to send or sent; a failed file's unsent bytes leave the total. */
  bytesTotal: number;
  bytesDone: number;
}

export interface UploadOptions {
  signal?: AbortSignal;
  /** Called whenever a request or a part finishes. */
  onProgress?: (progress: UploadProgress) => void;
  /** Called once per file, as soon as its fate is known. */
  onFile?: (outcome: UploadOutcome) => void;
}

export interface DownloadToFileOptions extends DownloadOptions {
  /** Called with the bytes written so far, as they are written. */
  onProgress?: (bytesDone: number, bytesTotal: number) => void;
}

/** Options of `move` and `copy`. */
export interface TransferOptions<J extends MoveJob | CopyJob> {
  /** Replace a file at `to` (never a folder). Default false: a taken `to` is a `409 conflict`. */
  overwrite?: boolean;
  /** Only if the file at `from` has this ETag (quotes optional); another is a `PreconditionFailedError` (412), nothing moved or copied. Not for a folder (400). */
  ifMatch?: string;
  signal?: AbortSignal;
  /** Called with each read of a big folder's job, the last one `done`. */
  onProgress?: (job: J) => void;
}

/** Options of `restore`. */
export interface RestoreOptions {
  /** Where to restore the item (missing folders above are made). Default: the path it was taken from. */
  to?: string;
  /**
   * Restore over what stands at the destination: a file there goes to the trash in turn, a folder there is
   * restored into. Default false: a taken destination is a `409 conflict`.
   */
  overwrite?: boolean;
  signal?: AbortSignal;
  /** Called with each read of a big folder's restore job, the last one `done`. */
  onProgress?: (job: RestoreJob) => void;
}

/** The defaults of the numeric options; docs/client.md states them, and its smoke test compares. */
export const DEFAULT_OPTIONS = {
  concurrency: 4,
  partConcurrency: 4,
  largeFileBytes: 4 * MiB,
  // Drive's limit: what a buffered Lambda takes after base64, with its headers.
  maxRequestBytes: 4_500_000,
  maxFilesPerRequest: 1000,
  directDownloadBytes: 10_000_000,
  // Well inside API Gateway's 29 s: a request twice as slow as expected still answers.
  batchTargetMs: 10_000,
} as const;

/** API Gateway's 29 s: a request answered 504 took at least this long. */
const GATEWAY_TIMEOUT_MS = 29_000;

// A metadata field holds at most 1 MiB on the server.
const MAX_METADATA_BYTES = 1024 * 1024;
/** Distinct folders one upload request may name, ancestors included: Drive's bound on the folders a request makes. */
const MAX_FOLDERS_PER_REQUEST = 1000;

/** The folders above `path` (`/a/b/c.txt` → `/a`, `/a/b`). */
function foldersOf(path: string): string[] {
  const out: string[] = [];
  for (let i = path.indexOf('/', 1); i > 0; i = path.indexOf('/', i + 1)) out.push(path.slice(0, i));
  return out;
}
// Statuses of a batch that name one bad file (a folder at its path, an invalid name) or a body too large:
// the server stores nothing of such a request, so its halves can be sent on their own.
// A 412 names the files whose condition failed: halving isolates them, and the rest are stored.
const SPLIT_STATUSES = new Set([409, 412, 413, 422]);

/** A file ready to send: the caller's item, its place in the input, its size. */
interface Planned {
  item: UploadItem;
  index: number;
  size: number;
}

/**
 * A client of one drive. Small files are packed into multi-file requests up to the request limit, large
 * ones go in parallel parts straight to S3, every request waits for its rate-limit token, and failures are
 * retried only where a repeat cannot do harm (see `Transport`).
 */
/** How long the first wait before reading a job is; each wait doubles, up to `JOB_POLL_MAX_MS`. */
const JOB_POLL_FIRST_MS = 250;
const JOB_POLL_MAX_MS = 5000;
/** Paths one `DELETE /drive/files` may name. */
const MAX_FILES_PER_DELETE = 1000;

export class Drive {
  private readonly transport: Transport;
  private readonly concurrency: number;
  private readonly partConcurrency: number;
  private readonly largeFileBytes: number;
  private readonly maxRequestBytes: number;
  private readonly maxFilesPerRequest: number;
  private readonly directDownloadBytes: number;
  /** Learns, request by request, how many files and bytes an upload request may carry (shared by every upload of this client). */
  private readonly batchSizer: BatchSizer;

  constructor(options: DriveOptions) {
    if (!options.baseUrl) throw new TypeError('Drive needs a baseUrl');
    if (!options.apiKey && !options.oidc) throw new TypeError('Drive needs an apiKey or oidc');
    if (options.apiKey && options.oidc) throw new TypeError('Drive takes an apiKey or oidc, not both');
    // The key source sends its exchanges through the transport it serves (looked up at the first call).
    const keys = options.apiKey ?? new OidcKeySource(`${options.baseUrl.replace(/\/+$/, '')}/drive/token`, options.oidc!, (call) => this.transport.send(call), options.clock);
    this.transport = new Transport({
      baseUrl: options.baseUrl,
      apiKey: keys,
      fetch: options.fetch ?? globalThis.fetch,
      retry: { ...DEFAULT_RETRY, ...options.retry },
      timeoutMs: options.timeoutMs,
      clock: options.clock,
      onRetry: options.onRetry,
    });
    this.concurrency = positive(options.concurrency ?? DEFAULT_OPTIONS.concurrency, 'concurrency');
    this.partConcurrency = positive(options.partConcurrency ?? DEFAULT_OPTIONS.partConcurrency, 'partConcurrency');
    this.largeFileBytes = options.largeFileBytes ?? DEFAULT_OPTIONS.largeFileBytes;
    this.maxRequestBytes = options.maxRequestBytes ?? DEFAULT_OPTIONS.maxRequestBytes;
    this.maxFilesPerRequest = options.maxFilesPerRequest ?? DEFAULT_OPTIONS.maxFilesPerRequest;
    this.directDownloadBytes = options.directDownloadBytes ?? DEFAULT_OPTIONS.directDownloadBytes;
    const target: number = options.batchTargetMs ?? DEFAULT_OPTIONS.batchTargetMs;
    // A request size the caller chose is where sizing starts; otherwise 100 files, which a loaded host answers well inside 29 s.
    const start = target === Infinity || options.maxFilesPerRequest !== undefined ? this.maxFilesPerRequest : undefined;
    this.batchSizer = new BatchSizer({ maxFiles: this.maxFilesPerRequest, maxBytes: this.maxRequestBytes }, target, start);
  }

  /** Requests sent so far, retries, `429`s and time spent waiting for tokens. */
  get stats(): TransportStats {
    return this.transport.stats;
  }

  /** Uploads one file (see `uploadMany`); rejects with a `DriveError` if it fails. */
  async upload(item: UploadItem, options: UploadOptions = {}): Promise<DriveFile> {
    const report = await this.uploadMany([item], options);
    if (report.failed.length > 0) throw report.failed[0].error;
    return report.uploaded[0].file;
  }

  /**
   * Uploads many files: small ones packed into as few `POST /drive/upload` requests as the size and count
   * limits allow, large ones through the multipart session. One file's failure (a folder at its path, say)
   * fails that file alone: a batch the server refuses for one file is split until the file is found.
   * Resolves with every file's outcome; rejects only when `signal` aborts (after cleaning up).
   */
  async uploadMany(items: readonly UploadItem[], options: UploadOptions = {}): Promise<UploadReport> {
    const report: UploadReport = { uploaded: [], failed: [] };
    const progress: UploadProgress = { filesTotal: items.length, filesDone: 0, filesFailed: 0, bytesTotal: 0, bytesDone: 0 };
    const settle = (outcome: UploadOutcome, size: number, sentBytes = 0) => {
      if (outcome.ok) {
        report.uploaded.push({ item: outcome.item, file: outcome.file });
        progress.filesDone++;
        progress.bytesDone += size - sentBytes;
      } else {
        report.failed.push({ item: outcome.item, error: outcome.error });
        progress.filesFailed++;
        progress.bytesTotal -= size - sentBytes;
      }
      options.onFile?.(outcome);
    };

    const planned: Planned[] = [];
    await mapLimit(
      items.map((item, index) => ({ item, index })),
      32,
      async ({ item, index }) => {
        try {
          planned.push({ item, index, size: await sizeOf(item) });
        } catch (error) {
          settle({ ok: false, item, error: asDriveError(error) }, 0);
        }
      },
      options.signal,
    );
    planned.sort((a, b) => a.index - b.index);
    const unique = this.dropDuplicates(planned, (p, error) => settle({ ok: false, item: p.item, error }, 0));
    progress.bytesTotal = unique.reduce((sum, p) => sum + p.size, 0);

    const large = unique.filter((p) => p.size > this.largeFileBytes);
    const { batches, oversize } = packBatches(
      unique.filter((p) => p.size <= this.largeFileBytes),
      {
        fixedBytes: REQUEST_FIXED_BYTES,
        fixedMetadataBytes: METADATA_FIXED_BYTES,
        cost: (p) => ({ ...fileCost({ path: p.item.path, size: p.size, contentType: p.item.contentType, ifMatch: p.item.ifMatch, ifNoneMatch: p.item.ifNoneMatch }), folders: foldersOf(p.item.path) }),
      },
      { maxBytes: this.maxRequestBytes, maxFiles: this.maxFilesPerRequest, maxMetadataBytes: MAX_METADATA_BYTES, maxFolders: MAX_FOLDERS_PER_REQUEST },
    );
    const tasks: (() => Promise<void>)[] = [
      ...[...large, ...oversize].map((p) => () => this.sendLarge(p, options, progress, settle)),
      ...batches.map((batch) => () => this.sendSized(batch, options, progress, settle)),
    ];
    await mapLimit(tasks, this.concurrency, (task) => task(), options.signal);
    return report;
  }

  /**
   * The folder's entries a page at a time (`limit` each, at most 1,000), following the API's cursors: its own
   * entries in path byte order, or with `recursive` every entry below it, depth first. Memory holds one page,
   * however large the folder. Each page is a `Listing` of the files and folders it holds.
   */
  async *listPages(folder = '/', options: { limit?: number; recursive?: boolean; etags?: boolean; signal?: AbortSignal } = {}): AsyncGenerator<Listing> {
    let cursor: string | undefined;
    do {
      const query = { folder, limit: String(options.limit ?? 1000), cursor, recursive: options.recursive ? 'true' : undefined, include: options.etags ? 'etag' : undefined };
      const url = this.transport.url('/drive/list', query);
      const page = await this.json<Listing & { next_cursor: string | null }>({ method: 'GET', url, bucket: 'list', signal: options.signal }, `GET /drive/list of ${folder}`);
      cursor = page.next_cursor ?? undefined;
      yield { folder: page.folder, files: page.files, folders: page.folders };
    } while (cursor);
  }

  /** Lists a folder (`/` by default); `recursive` lists every depth, `etags` adds each file's content hash. */
  async list(folder = '/', options: { recursive?: boolean; etags?: boolean; signal?: AbortSignal } = {}): Promise<Listing> {
    const url = this.transport.url('/drive/list', { folder, recursive: options.recursive ? 'true' : undefined, include: options.etags ? 'etag' : undefined });
    return this.json<Listing>({ method: 'GET', url, bucket: 'list', signal: options.signal }, `GET /drive/list of ${folder}`);
  }

  /**
   * The changes below `path` as they are made, oldest first, for as long as the caller iterates (or until
   * `signal` aborts): from `cursor` (one `onCursor` gave before, to resume without missing a change) or from
   * now. Long-polls, so a change comes within about 2 seconds. After each page's changes are yielded,
   * `onCursor` gets the cursor after them: kept, it resumes there. An expired cursor throws `cursor_expired`
   * (410): list again and follow from a new cursor.
   */
  async *changes(path = '/', options: { cursor?: string; signal?: AbortSignal; onCursor?: (cursor: string) => void | Promise<void> } = {}): AsyncGenerator<DriveChange> {
    let cursor = options.cursor;
    if (cursor === undefined) {
      const url = this.transport.url('/drive/changes/latest', { path });
      cursor = (await this.json<{ cursor: string }>({ method: 'GET', url, bucket: 'changes', signal: options.signal }, `GET /drive/changes/latest of ${path}`)).cursor;
      await options.onCursor?.(cursor);
    }
    for (;;) {
      const url = this.transport.url('/drive/changes', { cursor, limit: '1000', timeout: '25' });
      const page = await this.json<{ changes: DriveChange[]; next_cursor: string; has_more: boolean }>({ method: 'GET', url, bucket: 'changes', signal: options.signal }, `GET /drive/changes of ${path}`);
      for (const change of page.changes) yield change;
      cursor = page.next_cursor;
      await options.onCursor?.(cursor);
    }
  }

  /**
   * The most recent changes below `path`, newest first, at most `limit` (1 to 100; the server's default 20):
   * one request. `before` (a `next_before` of the page before) reads the page of older ones; a page may hold
   * fewer than `limit`, even none, while `next_before` is not null. `cursor`, given to `changes()`, follows on
   * with every change after the page.
   */
  async recentChanges(path = '/', options: { limit?: number; before?: string; signal?: AbortSignal } = {}): Promise<RecentChanges> {
    const query = options.before === undefined ? { path, limit: options.limit?.toString() } : { before: options.before, limit: options.limit?.toString() };
    const url = this.transport.url('/drive/changes/recent', query);
    return this.json<RecentChanges>({ method: 'GET', url, bucket: 'changes', signal: options.signal }, `GET /drive/changes/recent of ${path}`);
  }

  /** Creates a folder and its missing parents; a folder that exists is returned as it is, so a retry is harmless. */
  async createFolder(path: string, options: { signal?: AbortSignal } = {}): Promise<DriveFolder> {
    return this.json<DriveFolder>(
      { method: 'POST', url: this.transport.url('/drive/folders'), bucket: 'create-folder', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ path }), signal: options.signal },
      `POST /drive/folders of ${path}`,
    );
  }

  /**
   * Deletes the files at `paths` (`DELETE /drive/files`), 1,000 a request, in the order given; a folder at any
   * path of a request fails it (`conflict`) and that request deletes nothing. Retried after a 5xx or a lost
   * answer, like any delete: the paths such a retry finds empty are `already_gone` (deleted by the attempt
   * whose answer was lost, or never there), not `not_found`.
   */
  async deleteFiles(paths: readonly string[], options: { signal?: AbortSignal } = {}): Promise<FilesDeletion> {
    const result: FilesDeletion = { deleted: [], not_found: [], already_gone: [] };
    for (let i = 0; i < paths.length; i += MAX_FILES_PER_DELETE) {
      const batch = paths.slice(i, i + MAX_FILES_PER_DELETE);
      const { response, uncertain } = await this.transport.send({
        method: 'DELETE',
        url: this.transport.url('/drive/files'),
        bucket: 'files',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ paths: batch }),
        signal: options.signal,
      });
      const answer = await this.data<FilesDeletion>(response, `DELETE /drive/files of ${batch.length === 1 ? batch[0] : `${batch.length} paths`}`);
      result.deleted.push(...answer.deleted);
      // After an attempt with no clear answer, a path the retry found empty may be one that attempt deleted.
      (uncertain ? result.already_gone : result.not_found).push(...answer.not_found);
    }
    return result;
  }

  /**
   * Deletes a folder (with `recursive`, everything in it). Retried after a 5xx or a lost answer, since an
   * interrupted recursive delete is finished by the next one; a `404` to such a retry means the folder is
   * gone, which is what was asked, and resolves with `alreadyGone`. A tree too big for one request answers
   * `202` with a job: it is read until done (waits growing from a quarter second to five), with
   * `onProgress` told each time, and its result is the answer. The folder is gone for readers from the `202`.
   */
  async deleteFolder(path: string, options: { recursive?: boolean; signal?: AbortSignal; onProgress?: (job: DeleteJob) => void } = {}): Promise<FolderDeletion> {
    const url = this.transport.url('/drive/folders', { path, recursive: options.recursive ? 'true' : undefined });
    const { response, uncertain } = await this.transport.send({ method: 'DELETE', url, bucket: 'delete-folder', signal: options.signal });
    if (response.status === 404 && uncertain) {
      await discard(response);
      return { deleted: true, path, files_deleted: 0, alreadyGone: true };
    }
    if (response.status !== 202) return this.data<FolderDeletion>(response, `DELETE /drive/folders of ${path}`);
    const { job: first } = await this.data<{ job: DeleteJob }>(response, `DELETE /drive/folders of ${path}`);
    const job = await this.followJob(first, options);
    return job.result ?? { deleted: true, path, files_deleted: job.files_deleted };
  }

  /**
   * Moves the file or folder at `from` to `to` (`POST /drive/move`), keeping its id; missing folders above `to`
   * are made. A file replaces a file at `to` only with `overwrite`; a folder replaces nothing (`409`). Resolves
   * with the entry at its new path. A folder too big to move in one request answers `202` with a job, which is
   * followed as `deleteFolder` follows one (`onProgress` sees each read); a job that stops short (a path at
   * the destination taken meanwhile) rejects with its error, what had moved being at `to` and the rest at
   * `from`. A retry after a lost answer that finds nothing at `from` (`404`) looks for the entry at `to`, and
   * resolves with it if it is there: the attempt whose answer was lost moved it.
   */
  async move(from: string, to: string, options: TransferOptions<MoveJob> = {}): Promise<DriveEntry> {
    return this.transfer('move', from, to, options);
  }

  /**
   * Copies the file or folder at `from` to `to` (`POST /drive/copy`), as `move` moves it but leaving `from` as
   * it is: the copy has new ids. A big folder's `202` job is followed to its end. A retry after a lost answer
   * may answer `409` for the copy its lost attempt made (pass `overwrite` to make a file copy's retry harmless).
   */
  async copy(from: string, to: string, options: TransferOptions<CopyJob> = {}): Promise<DriveEntry> {
    return this.transfer('copy', from, to, options);
  }

  /** The job `id` (`GET /drive/jobs/{id}`), read at this client's base URL: the key goes nowhere else. */
  async job(id: string, signal?: AbortSignal): Promise<{ job: DriveJob }> {
    const route = `/drive/jobs/${encodeURIComponent(id)}`;
    return this.json<{ job: DriveJob }>({ method: 'GET', url: this.transport.url(route), bucket: 'jobs', signal }, `GET ${route}`);
  }

  /**
   * One page of the trash (`GET /drive/trash`): what deletes and replacements removed, newest first, within
   * the key's folder; with `path`, only what was taken from that folder or below it. `limit` items a page (1
   * to 1,000; the server's default 100); `cursor` is the `next_cursor` of the page before. Each page carries
   * the trash's `usage` (items, files, bytes) in that scope.
   */
  async listTrash(path?: string, options: { limit?: number; cursor?: string; signal?: AbortSignal } = {}): Promise<TrashPage> {
    const url = this.transport.url('/drive/trash', { path, limit: options.limit?.toString(), cursor: options.cursor });
    return this.json<TrashPage>({ method: 'GET', url, bucket: 'trash', signal: options.signal }, `GET /drive/trash${path === undefined ? '' : ` of ${path}`}`);
  }

  /** Every page of the trash (see `listTrash`), following the API's cursors: memory holds one page. */
  async *trashPages(path?: string, options: { limit?: number; signal?: AbortSignal } = {}): AsyncGenerator<TrashPage> {
    let cursor: string | undefined;
    do {
      const page = await this.listTrash(path, { limit: options.limit, cursor, signal: options.signal });
      cursor = page.next_cursor ?? undefined;
      yield page;
    } while (cursor);
  }

  /**
   * Restores the trash item `id` (`POST /drive/trash/restore`) where it was taken from, or at `to`: a file with
   * its id, bytes and ETag; a folder whole, with its ids (a file whose path was taken since stays in the
   * trash). Something at the destination is a `409 conflict` unless `overwrite`. A folder too big for one
   * request answers `202` with a job, followed as `deleteFolder` follows one (`onProgress` sees each read); a
   * job that stops short (a delete or move of the destination) rejects with its error, what it did not
   * restore still in the trash. Resolves with the restored File or Folder.
   */
  async restore(id: string, options: RestoreOptions = {}): Promise<RestoredEntry> {
    const what = `POST /drive/trash/restore of ${id}`;
    const body = JSON.stringify({
      id,
      ...(options.to === undefined ? {} : { to: options.to }),
      ...(options.overwrite === undefined ? {} : { overwrite: options.overwrite }),
    });
    const { response } = await this.transport.send({
      method: 'POST',
      url: this.transport.url('/drive/trash/restore'),
      bucket: 'restore',
      headers: { 'Content-Type': 'application/json' },
      body,
      signal: options.signal,
    });
    if (response.status !== 202) return this.data<RestoredEntry>(response, what);
    const { job: first } = await this.data<{ job: RestoreJob }>(response, what);
    const job = await this.followJob(first, options);
    if (job.result) return job.result;
    throw job.error ? jobFailure(job.error) : new DriveError('unexpected_response', `job ${job.id} of ${what} ended with neither a result nor an error`, 200);
  }

  /** Purges the trash item `id` now (`DELETE /drive/trash/{id}`): its bytes and records gone for good. */
  async purge(id: string, options: { signal?: AbortSignal } = {}): Promise<PurgedItem> {
    const route = `/drive/trash/${encodeURIComponent(id)}`;
    return this.json<PurgedItem>({ method: 'DELETE', url: this.transport.url(route), bucket: 'purge', signal: options.signal }, `DELETE ${route}`);
  }

  /**
   * Purges now every trash item taken from `path` or below it (`DELETE /drive/trash?path=`; `/` empties the
   * whole trash; admin keys only). Too much for one request, it answers `202` with a job, followed as
   * `deleteFolder` follows one (`onProgress` sees each read); its result is the answer.
   */
  async purgePath(path: string, options: { signal?: AbortSignal; onProgress?: (job: EmptyTrashJob) => void } = {}): Promise<EmptiedTrash> {
    const what = `DELETE /drive/trash of ${path}`;
    const { response } = await this.transport.send({ method: 'DELETE', url: this.transport.url('/drive/trash', { path }), bucket: 'empty-trash', signal: options.signal });
    if (response.status !== 202) return this.data<EmptiedTrash>(response, what);
    const { job: first } = await this.data<{ job: EmptyTrashJob }>(response, what);
    const job = await this.followJob(first, options);
    if (job.result) return job.result;
    throw new DriveError('unexpected_response', `job ${job.id} of ${what} ended with no result`, 200);
  }

  /** `POST /drive/move` or `/drive/copy`, and the job of a `202` followed to its result. */
  private async transfer<J extends MoveJob | CopyJob>(kind: 'move' | 'copy', from: string, to: string, options: TransferOptions<J>): Promise<DriveEntry> {
    const route = `/drive/${kind}`;
    const what = `POST ${route} of ${from} to ${to}`;
    const body = JSON.stringify({
      from,
      to,
      ...(options.overwrite === undefined ? {} : { overwrite: options.overwrite }),
      ...(options.ifMatch === undefined ? {} : { if_match: options.ifMatch }),
    });
    const { response, uncertain } = await this.transport.send({
      method: 'POST',
      url: this.transport.url(route),
      bucket: 'files',
      headers: { 'Content-Type': 'application/json' },
      body,
      signal: options.signal,
    });
    if (kind === 'move' && response.status === 404 && uncertain) {
      const moved = await this.entryAt(to, options.signal);
      if (moved) {
        await discard(response);
        return moved;
      }
    }
    if (response.status !== 202) return this.data<DriveEntry>(response, what);
    const { job: first } = await this.data<{ job: J }>(response, what);
    const job = await this.followJob(first, options);
    if (job.result) return job.result;
    throw job.error ? jobFailure(job.error) : new DriveError('unexpected_response', `job ${job.id} of ${what} ended with neither a result nor an error`, 200);
  }

  /** The entry at `path`, found in its parent's listing a page at a time, or undefined if nothing is there. */
  private async entryAt(path: string, signal?: AbortSignal): Promise<DriveEntry | undefined> {
    const parent = path.slice(0, path.lastIndexOf('/')) || '/';
    try {
      for await (const page of this.listPages(parent, { signal })) {
        const entry = [...page.files, ...page.folders].find((e) => e.path === path);
        if (entry) return entry;
      }
    } catch (error) {
      if (error instanceof DriveError && error.code === 'not_found') return undefined;
      throw error;
    }
    return undefined;
  }

  /**
   * Reads the job `first` until it is done, waiting from a quarter second, doubling to five, and telling
   * `onProgress` each time; resolves with the job as it ended.
   */
  private async followJob<J extends DriveJob>(first: J, options: { signal?: AbortSignal; onProgress?: (job: J) => void }): Promise<J> {
    let job = first;
    for (let wait = JOB_POLL_FIRST_MS; job.status !== 'done'; wait = Math.min(JOB_POLL_MAX_MS, wait * 2)) {
      options.onProgress?.(job);
      await this.transport.sleep(wait, options.signal);
      const read = (await this.job(job.id, options.signal)).job;
      if (read.type !== first.type) throw new DriveError('unexpected_response', `job ${job.id} was a ${first.type} job and is now read as a ${read.type} job`, 200);
      job = read as J;
    }
    options.onProgress?.(job);
    return job;
  }

  /**
   * Makes a share link to the file at `path` (`POST /drive/links`): its `url` opens the file with no key for
   * `expiresIn` seconds (default a day, at most 30 days), until revoked, or until the file is deleted or
   * replaced. A retry after a lost answer may make a second link; the first, whose URL nobody saw, only expires.
   */
  async createLink(path: string, options: { expiresIn?: number; signal?: AbortSignal } = {}): Promise<ShareLink> {
    const body = JSON.stringify(options.expiresIn === undefined ? { path } : { path, expires_in: options.expiresIn });
    return this.json<ShareLink>(
      { method: 'POST', url: this.transport.url('/drive/links'), bucket: 'links', headers: { 'Content-Type': 'application/json' }, body, signal: options.signal },
      `POST /drive/links of ${path}`,
    );
  }

  /** The drive's live share links, of the file at `path` or every one the key reaches, in path order, following the API's pages. */
  async listLinks(path?: string, options: { signal?: AbortSignal } = {}): Promise<ShareLinkEntry[]> {
    const links: ShareLinkEntry[] = [];
    let cursor: string | undefined;
    do {
      const url = this.transport.url('/drive/links', { path, cursor });
      const page = await this.json<{ links: ShareLinkEntry[]; next_cursor: string | null }>({ method: 'GET', url, bucket: 'links', signal: options.signal }, 'GET /drive/links');
      links.push(...page.links);
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    return links;
  }

  /**
   * Revokes the share link `id` (`DELETE /drive/links/{id}`): its URL answers `404` from then on. A `404` to a
   * retry after a lost answer means the attempt whose answer was lost revoked it, and resolves.
   */
  async revokeLink(id: string, options: { signal?: AbortSignal } = {}): Promise<{ id: string; revoked: true }> {
    const route = `/drive/links/${encodeURIComponent(id)}`;
    const { response, uncertain } = await this.transport.send({ method: 'DELETE', url: this.transport.url(route), bucket: 'links', signal: options.signal });
    if (response.status === 404 && uncertain) {
      await discard(response);
      return { id, revoked: true };
    }
    return this.data<{ id: string; revoked: true }>(response, `DELETE ${route}`);
  }

  /** What the key may do (`GET /drive/whoami`): its role, the folder it is confined to, its drive and id. */
  async whoami(options: { signal?: AbortSignal } = {}): Promise<KeyIdentity> {
    return this.json<KeyIdentity>({ method: 'GET', url: this.transport.url('/drive/whoami'), bucket: 'whoami', signal: options.signal }, 'GET /drive/whoami');
  }

  /**
   * Makes `dst` equal `src`, one a local folder and the other a drive folder (`drive:/path`, `{ drive }` or
   * `{ local }`): see `sync` in ./sync/sync.ts and docs/client.md. Resolves with the report; rejects with a
   * `SyncRefusedError` (nothing changed) when the plan is refused, or a `DriveError` when it cannot start.
   */
  sync(src: SyncEndpoint, dst: SyncEndpoint, options: SyncOptions = {}): Promise<SyncReport> {
    return runSync(this, src, dst, options);
  }

  /** The size, ETag and type of the file at `path` (`HEAD`, no bytes); rejects with `not_found` if there is none. */
  async stat(path: string, options: { signal?: AbortSignal } = {}): Promise<FileHead> {
    const url = this.transport.url('/drive/download', { path });
    const { response } = await this.transport.send({ method: 'HEAD', url, bucket: 'download', signal: options.signal });
    if (!response.ok) throw await errorFromResponse(response, `HEAD /drive/download of ${path}`);
    return {
      size: Number(response.headers.get('content-length')),
      etag: (response.headers.get('etag') ?? '').replace(/^(W\/)?"|"$/g, ''),
      contentType: response.headers.get('content-type') ?? undefined,
      lastModified: response.headers.get('last-modified') ?? undefined,
    };
  }

  /**
   * Opens the file at `path` as a stream of bytes, resumed where it broke off if the connection is lost. A
   * file larger than `directDownloadBytes` comes straight from S3 by a presigned URL, its bytes checked
   * against its ETag.
   */
  download(path: string, options: DownloadOptions = {}): Promise<Download> {
    return openDownload(this.transport, path, { directAbove: this.directDownloadBytes, ...options });
  }

  /**
   * A presigned S3 URL of the file at `path` (`GET /drive/download?redirect=true`), valid until its
   * `expires_at` (300 seconds), to hand to another program: it needs no key, so treat it as a secret.
   */
  directDownload(path: string, options: { signal?: AbortSignal } = {}): Promise<DirectDownload> {
    return directDownloadOf(this.transport, path, options.signal);
  }

  /**
   * Downloads the file at `path` into the local file `to`, through a temporary file beside it that is
   * renamed when every byte is there, so `to` never holds half a file.
   */
  async downloadToFile(path: string, to: string, options: DownloadToFileOptions = {}): Promise<{ size: number; etag: string; direct: boolean }> {
    const download = await this.download(path, options);
    const temporary = join(dirname(to), `.${basename(to)}.drive-${process.pid}-${Date.now()}`);
    let written = 0;
    const count = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        written += chunk.length;
        options.onProgress?.(written, download.size);
        done(null, chunk);
      },
    });
    const file = createWriteStream(temporary);
    try {
      await pipeline(Readable.fromWeb(download.body as NodeReadableStream<Uint8Array>), count, file, { signal: options.signal });
      await rename(temporary, to);
    } catch (error) {
      // The stream opens (creates) its file in the background: a download that fails first may reject here
      // before the file exists, and the open would then leave it behind. The failed pipeline destroyed the
      // stream, which closes once its open is done; the file is deleted after that.
      if (!file.closed) await new Promise<void>((closed) => file.once('close', () => closed()));
      await unlink(temporary).catch(() => undefined);
      throw error;
    }
    return { size: written, etag: download.etag, direct: download.direct };
  }

  /**
   * Sends a packed batch as requests of the size the batch sizer allows now, one after another, each timed to
   * size the next: a batch packed to the hard limits goes whole once requests are seen to be fast enough.
   */
  private async sendSized(batch: Planned[], options: UploadOptions, progress: UploadProgress, settle: (o: UploadOutcome, size: number) => void): Promise<void> {
    let rest = batch;
    while (rest.length > 0) {
      const count = this.batchSizer.fit(rest.map((p) => fileCost({ path: p.item.path, size: p.size, contentType: p.item.contentType }).bytes));
      const head = rest.slice(0, count);
      rest = rest.slice(count);
      const started = this.transport.now();
      const clean = await this.sendBatch(head, options, progress, settle);
      // Only a request answered at its first attempt says how long one takes; a 504 says it took too long.
      const bytes = head.reduce((sum, p) => sum + p.size, 0);
      if (clean === 'clean') this.batchSizer.observe(head.length, bytes, this.transport.now() - started);
      else if (clean === 'timed-out') this.batchSizer.observe(head.length, bytes, GATEWAY_TIMEOUT_MS);
    }
  }

  /**
   * Sends one batch; a refusal that names one file (`SPLIT_STATUSES`) splits it in halves, sent on their own.
   * Says whether its request was answered at the first attempt (`clean`), after a gateway timeout, or otherwise.
   */
  private async sendBatch(batch: Planned[], options: UploadOptions, progress: UploadProgress, settle: (o: UploadOutcome, size: number) => void): Promise<'clean' | 'timed-out' | 'other'> {
    let failure: DriveError;
    const seen = { timedOut: false };
    let outcome: 'clean' | 'timed-out' | 'other' = 'other';
    try {
      const files = await Promise.all(batch.map(formFileOf));
      const { body, contentType } = uploadForm(files);
      const { response, uncertain } = await this.transport.send({
        method: 'POST',
        url: this.transport.url('/drive/upload'),
        bucket: 'upload',
        headers: { 'Content-Type': contentType },
        body,
        signal: options.signal,
        onAttempt: (status) => void (status === 504 && (seen.timedOut = true)),
      });
      if (response.ok) {
        const stored = ((await response.json()) as { data: DriveFile[] }).data;
        if (stored.length === batch.length) {
          batch.forEach((p, i) => settle({ ok: true, item: p.item, file: stored[i] }, p.size));
          options.onProgress?.(progress);
          return seen.timedOut ? 'timed-out' : uncertain ? 'other' : 'clean';
        }
        failure = new DriveError('unexpected_response', `POST /drive/upload answered ${stored.length} files for ${batch.length}`, response.status);
      } else {
        failure = await errorFromResponse(response, 'POST /drive/upload');
      }
      if (seen.timedOut) outcome = 'timed-out';
    } catch (error) {
      if (isAbortError(error)) throw error;
      failure = asDriveError(error);
    }
    if (batch.length > 1 && (SPLIT_STATUSES.has(failure.status) || failure.code === 'local_file_error')) {
      const half = Math.ceil(batch.length / 2);
      await this.sendBatch(batch.slice(0, half), options, progress, settle);
      await this.sendBatch(batch.slice(half), options, progress, settle);
      return outcome;
    }
    for (const p of batch) settle({ ok: false, item: p.item, error: failure }, p.size);
    options.onProgress?.(progress);
    return outcome;
  }

  private async sendLarge(p: Planned, options: UploadOptions, progress: UploadProgress, settle: (o: UploadOutcome, size: number, sent: number) => void): Promise<void> {
    let sent = 0;
    try {
      const { data, ifMatch, ifNoneMatch } = await formFileOf(p);
      const file = await uploadLarge(this.transport, { path: p.item.path, data, contentType: p.item.contentType, ifMatch, ifNoneMatch }, {
        partConcurrency: this.partConcurrency,
        signal: options.signal,
        onPartDone: (bytes) => {
          sent += bytes;
          progress.bytesDone += bytes;
          options.onProgress?.(progress);
        },
      });
      settle({ ok: true, item: p.item, file }, p.size, sent);
    } catch (error) {
      if (isAbortError(error)) throw error;
      settle({ ok: false, item: p.item, error: asDriveError(error) }, p.size, sent);
    }
    options.onProgress?.(progress);
  }

  /** Two items for one destination would make the server refuse their whole batch; the later ones fail here. */
  private dropDuplicates(planned: Planned[], fail: (p: Planned, error: DriveError) => void): Planned[] {
    const seen = new Set<string>();
    return planned.filter((p) => {
      if (seen.has(p.item.path)) {
        fail(p, new DriveError('validation_error', `${p.item.path} is the destination of more than one file`, 0));
        return false;
      }
      seen.add(p.item.path);
      return true;
    });
  }

  private async json<T>(call: Parameters<Transport['send']>[0], what: string): Promise<T> {
    const { response } = await this.transport.send(call);
    return this.data<T>(response, what);
  }

  private async data<T>(response: Response, what: string): Promise<T> {
    if (!response.ok) throw await errorFromResponse(response, what);
    return ((await response.json()) as { data: T }).data;
  }
}

async function sizeOf(item: UploadItem): Promise<number> {
  if ('file' in item) {
    const info = await stat(item.file).catch((error: NodeJS.ErrnoException) => {
      throw new DriveError('local_file_error', `${item.file}: ${error.code ?? error.message}`, 0, { cause: error });
    });
    if (!info.isFile()) throw new DriveError('local_file_error', `${item.file} is not a regular file`, 0);
    return info.size;
  }
  return blobOf(item.data).size;
}

/** The item's bytes as a Blob; a local file must still have the size it had when planned. */
async function formFileOf(p: Planned): Promise<FormFile> {
  const { item } = p;
  let data: Blob;
  if ('file' in item) {
    data = await openAsBlob(item.file).catch((error: NodeJS.ErrnoException) => {
      throw new DriveError('local_file_error', `${item.file}: ${error.code ?? error.message}`, 0, { cause: error });
    });
    if (data.size !== p.size) throw new DriveError('local_file_error', `${item.file} changed size while it was being uploaded`, 0);
  } else {
    data = blobOf(item.data);
  }
  return { path: item.path, size: p.size, data, contentType: item.contentType, ifMatch: item.ifMatch, ifNoneMatch: item.ifNoneMatch };
}

function blobOf(data: Blob | Uint8Array | string): Blob {
  return data instanceof Blob ? data : new Blob([data]);
}

function asDriveError(error: unknown): DriveError {
  if (error instanceof DriveError) return error;
  return new DriveError('unexpected_response', error instanceof Error ? error.message : String(error), 0, { cause: error });
}

function positive(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) throw new TypeError(`${name} must be a positive integer`);
  return value;
}
