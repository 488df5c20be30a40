import { lstat, mkdir, rmdir, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { etagForm, fileContentEtag, partsOf } from '../content-etag';
import type { Drive, UploadItem, UploadProgress } from '../drive';
import { DriveError, isAbortError } from '../errors';
import { mapLimit } from '../pool';
import { type FilterRule, PathFilter } from './filter';
import { type LocalEntry, type LocalIndex, readLocalIndex } from './local-index';
import { type Direction, type Plan, type RemotePage, type Transfer, planSync } from './plan';

/** One side of a sync: a local folder, or a drive folder. A string is `drive:/path` for the drive, else local. */
export type SyncEndpoint = string | { local: string } | { drive: string };

export interface SyncOptions {
  /** Remove what is on the destination but not the source (files, and folders not on the source). */
  delete?: boolean;
  /** With `delete`, refuse the whole run, changing nothing, when it would delete more entries. Default 1000; -1 no limit. */
  maxDelete?: number;
  /** Plan and report, change nothing. */
  dryRun?: boolean;
  /** Same size is same file (no content hash): faster, weaker. */
  sizeOnly?: boolean;
  /** `--exclude` / `--include` rules in order (see `PathFilter`). */
  filters?: readonly FilterRule[];
  /** Downloads (and local hashing) in flight at once. Default 4. Uploads use the drive's own `concurrency`. */
  concurrency?: number;
  /**
   * Send per-file conditions with uploads (default true): `if_none_match: "*"` for a new file, `if_match: "<etag>"`
   * for a changed one, so that a file replaced on the destination since the plan was made is not overwritten blindly.
   */
  useConditions?: boolean;
  signal?: AbortSignal;
  /** The plan, once made, awaited before anything changes (with `dryRun`, instead of changing). */
  onPlan?: (plan: Plan) => void | Promise<void>;
  /** One change, as it happens (or, with `dryRun`, as it would). */
  onChange?: (change: SyncChange) => void;
  /** Bytes and files moved so far. */
  onProgress?: (progress: UploadProgress) => void;
}

/** One change a sync made, failed to make, or (`dryRun`) would make; `path` is the destination's. */
export interface SyncChange {
  action: 'upload' | 'download' | 'delete' | 'mkdir' | 'rmdir' | 'skip';
  /** The destination path: a drive path going up, a local path going down. */
  path: string;
  /** The path relative to the synced folders. */
  relative: string;
  /** The source path (for uploads and downloads). */
  source?: string;
  reason?: 'new' | 'changed';
  size?: number;
  ok: boolean;
  dryRun?: boolean;
  error?: { code: string; message: string; status: number };
}

/** What a sync did. `failed` lists each failure once. */
export interface SyncReport {
  direction: Direction;
  source: string;
  destination: string;
  dryRun: boolean;
  /** Files sent (`up`) or fetched (`down`), and their bytes (with `dryRun`: that would be). */
  transferred: { files: number; bytes: number };
  deleted: number;
  foldersCreated: number;
  unchanged: number;
  failed: SyncChange[];
  /** True when the signal aborted the run: what finished is counted, the rest was not done. */
  interrupted: boolean;
  seconds: number;
}

/** A plan the sync refuses to carry out (too many deletions, a key that may not delete): nothing was changed. */
export class SyncRefusedError extends Error {
  constructor(
    message: string,
    readonly plan?: Plan,
  ) {
    super(message);
    this.name = 'SyncRefusedError';
  }
}

/** A sync that cannot start as asked (no such source, a file where a folder should be): nothing was changed. */
export class SyncUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SyncUsageError';
  }
}

const DEFAULT_MAX_DELETE = 1000;
/** Roles that may delete files and folders (docs/keys-and-roles.md). */
const DELETING_ROLES = new Set(['admin', 'read-write']);

/** The two sides, resolved: which is the drive's, which the local folder's. */
export function endpointsOf(src: SyncEndpoint, dst: SyncEndpoint): { direction: Direction; local: string; remote: string } {
  const a = endpointOf(src);
  const b = endpointOf(dst);
  if ('drive' in a && 'drive' in b) throw new SyncUsageError('both sides are drive folders: one side of a sync must be a local folder');
  if ('local' in a && 'local' in b) throw new SyncUsageError('both sides are local folders: one side of a sync must be a drive folder (drive:/path)');
  const remote = 'drive' in a ? a.drive : (b as { drive: string }).drive;
  if (!remote.startsWith('/')) throw new SyncUsageError(`a drive folder must start with "/" (got "${remote}")`);
  const canonical = remote.replace(/(.)\/+$/, '$1').normalize('NFC');
  return { direction: 'drive' in a ? 'down' : 'up', local: 'local' in a ? a.local : (b as { local: string }).local, remote: canonical };
}

function endpointOf(endpoint: SyncEndpoint): { local: string } | { drive: string } {
  if (typeof endpoint !== 'string') return endpoint;
  return endpoint.startsWith('drive:') ? { drive: endpoint.slice('drive:'.length) } : { local: endpoint };
}

/**
 * `drive sync`: makes `dst` equal `src`, one a local folder and the other a drive folder.
 *
 * 1. Checks the sides (the source exists, the destination is a folder or absent) and, with `delete` going up,
 *    that the key's role may delete (`GET /drive/whoami`): refused before anything is done.
 * 2. Plans: reads the local folder into an index, then the drive folder one recursive listing page at a time,
 *    comparing each file by content (or size, `sizeOnly`). `maxDelete` is checked on the whole plan: more
 *    deletions refuse the run with nothing changed.
 * 3. Carries it out (unless `dryRun`): transfers first (uploads batched by `Drive.uploadMany`, downloads into
 *    temporary files renamed when whole), then deletions, then folders; one failed file fails alone. A local
 *    file that changes while it is read is read again once, then fails. Run again after an interruption, the
 *    files that made it compare equal, so only the files in flight are sent again; a file whose condition
 *    fails because the drive came to hold its content after the plan (a killed run's request stored late)
 *    counts as unchanged.
 */
export async function sync(drive: Drive, src: SyncEndpoint, dst: SyncEndpoint, options: SyncOptions = {}): Promise<SyncReport> {
  const started = Date.now();
  const { direction, local, remote } = endpointsOf(src, dst);
  const filter = new PathFilter(options.filters ?? []);
  const maxDelete = options.maxDelete ?? DEFAULT_MAX_DELETE;
  if (!Number.isInteger(maxDelete) || maxDelete < -1) throw new SyncUsageError(`max-delete must be a whole number, -1 for no limit (got ${maxDelete})`);
  const signal = options.signal;

  await checkSides(drive, direction, local, remote, signal);
  // Deleting in the drive needs a role that may (going down, the deletions are local files).
  if (options.delete && direction === 'up') {
    const { role } = await drive.whoami({ signal });
    if (!DELETING_ROLES.has(role)) throw new SyncRefusedError(`--delete needs a key that may delete, and this key's role is ${role}: nothing was changed`);
  }

  const index = await localIndexOf(direction, local, filter);
  const plan = await planSync(index, remotePages(drive, remote, signal), {
    direction,
    delete: options.delete === true,
    sizeOnly: options.sizeOnly === true,
    filter,
    etagOf: (entry, form, parts) => stableEtag(entry, form, parts),
    hashConcurrency: options.concurrency,
    signal,
  });
  for (const issue of index.issues) plan.failed.push({ relative: issue.relative, code: 'local_file_error', reason: `${issue.path}: ${issue.reason}` });
  await options.onPlan?.(plan);
  const deletions = plan.deletes.length + plan.rmdirs.length;
  if (options.delete && maxDelete !== -1 && deletions > maxDelete) {
    throw new SyncRefusedError(`the plan deletes ${deletions} entries, more than --max-delete ${maxDelete}: nothing was changed (raise --max-delete, or -1 for no limit)`, plan);
  }

  const report: SyncReport = {
    direction,
    source: direction === 'up' ? local : `drive:${remote}`,
    destination: direction === 'up' ? `drive:${remote}` : local,
    dryRun: options.dryRun === true,
    transferred: { files: 0, bytes: 0 },
    deleted: 0,
    foldersCreated: 0,
    unchanged: plan.unchanged,
    failed: [],
    interrupted: false,
    seconds: 0,
  };
  const destinationOf = (relative: string) => (direction === 'up' ? joinDrive(remote, relative) : join(local, ...relative.split('/')));
  const sourceOf = (relative: string) => (direction === 'up' ? join(local, ...relative.split('/')) : joinDrive(remote, relative));
  const emit = (change: SyncChange) => {
    if (!change.ok) report.failed.push(change);
    options.onChange?.(change);
  };
  for (const failure of plan.failed) {
    emit({ action: 'skip', path: destinationOf(failure.relative), relative: failure.relative, source: sourceOf(failure.relative), ok: false, error: { code: failure.code, message: failure.reason, status: 0 } });
  }

  if (options.dryRun) {
    report.transferred = { files: plan.transfers.length, bytes: plan.transfers.reduce((n, t) => n + t.size, 0) };
    report.deleted = deletions;
    report.foldersCreated = plan.mkdirs.length;
    const action = direction === 'up' ? 'upload' : 'download';
    for (const t of plan.transfers) emit({ action, path: destinationOf(t.relative), relative: t.relative, source: sourceOf(t.relative), reason: t.reason, size: t.size, ok: true, dryRun: true });
    for (const d of plan.deletes) emit({ action: 'delete', path: destinationOf(d.relative), relative: d.relative, size: d.size, ok: true, dryRun: true });
    for (const f of plan.mkdirs) emit({ action: 'mkdir', path: destinationOf(f), relative: f, ok: true, dryRun: true });
    for (const f of plan.rmdirs) emit({ action: 'rmdir', path: destinationOf(f), relative: f, ok: true, dryRun: true });
    report.seconds = (Date.now() - started) / 1000;
    return report;
  }

  const context: Context = { drive, options, plan, report, local, remote, emit, destinationOf, sourceOf };
  try {
    if (direction === 'down') await mkdir(local, { recursive: true }); // even an empty drive folder makes one
    if (direction === 'up') await upload(context);
    else await download(context);
    await deleteExtra(context);
    await makeFolders(context);
  } catch (error) {
    if (!isAbortError(error)) throw error;
    report.interrupted = true;
  }
  report.seconds = (Date.now() - started) / 1000;
  return report;
}

interface Context {
  drive: Drive;
  options: SyncOptions;
  plan: Plan;
  report: SyncReport;
  local: string;
  remote: string;
  emit: (change: SyncChange) => void;
  destinationOf: (relative: string) => string;
  sourceOf: (relative: string) => string;
}

/** The source must be there; the destination must be a folder, or nothing yet. */
async function checkSides(drive: Drive, direction: Direction, local: string, remote: string, signal?: AbortSignal): Promise<void> {
  const localInfo = await stat(local).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' && direction === 'down') return undefined;
    throw new SyncUsageError(`${local}: ${error.code === 'ENOENT' ? 'no such folder' : `cannot be read (${error.code ?? error.message})`}`);
  });
  if (localInfo && !localInfo.isDirectory()) throw new SyncUsageError(`${local} is a file, not a folder: ${direction === 'up' ? 'sync a folder' : 'the destination must be a folder'}`);
  const remoteIsFolder = await isDriveFolder(drive, remote, signal);
  if (remoteIsFolder === 'file') throw new SyncUsageError(`drive:${remote} is a file, not a folder: ${direction === 'down' ? 'sync a folder' : 'the destination must be a folder'}`);
  if (remoteIsFolder === 'absent' && direction === 'down') throw new SyncUsageError(`drive:${remote}: no such folder in the drive`);
}

/** Whether the drive has a folder, a file, or nothing at `path` (one listing page of one entry; a `HEAD` if none). */
async function isDriveFolder(drive: Drive, path: string, signal?: AbortSignal): Promise<'folder' | 'file' | 'absent'> {
  if (path === '/') return 'folder';
  try {
    for await (const _page of drive.listPages(path, { limit: 1, signal })) return 'folder';
    return 'folder';
  } catch (error) {
    if (!(error instanceof DriveError && error.code === 'not_found')) throw error;
  }
  try {
    await drive.stat(path, { signal });
    return 'file';
  } catch (error) {
    if (error instanceof DriveError && error.code === 'not_found') return 'absent';
    throw error;
  }
}

async function localIndexOf(direction: Direction, local: string, filter: PathFilter): Promise<LocalIndex> {
  try {
    return await readLocalIndex(local, filter);
  } catch (error) {
    if (direction === 'down' && (error as NodeJS.ErrnoException).code === 'ENOENT') return { files: new Map(), folders: new Set(), issues: [] };
    throw error;
  }
}

/** The drive folder's recursive listing, a page at a time, relative to it; nothing when it does not exist yet. */
async function* remotePages(drive: Drive, remote: string, signal?: AbortSignal): AsyncGenerator<RemotePage> {
  const cut = remote === '/' ? 1 : remote.length + 1;
  try {
    for await (const page of drive.listPages(remote, { recursive: true, etags: true, signal })) {
      yield {
        files: page.files.map((file) => ({ relative: file.path.slice(cut), size: file.size, etag: file.etag })),
        folders: page.folders.map((folder) => folder.path.slice(cut)),
      };
    }
  } catch (error) {
    if (error instanceof DriveError && error.code === 'not_found') return;
    throw error;
  }
}

/**
 * The local file's content ETag, read between two looks at its size and mtime: if they differ, the file
 * changed while it was read, and it is read once more; a second change fails it.
 */
export async function stableEtag(entry: LocalEntry, form: 'single' | 'multipart', parts: number | undefined, hash = fileContentEtag): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    const before = await stat(entry.path);
    const etag = await hash(entry.path, before.size, form, parts);
    const after = await stat(entry.path);
    if (after.size === before.size && after.mtimeMs === before.mtimeMs && before.size === entry.size) return etag;
    if (attempt === 2) throw new DriveError('local_file_error', `${entry.path} changed while it was read (size or modification time moved), twice`, 0);
    entry.size = after.size;
    entry.mtimeMs = after.mtimeMs;
  }
}

async function upload(c: Context): Promise<void> {
  const useConditions = c.options.useConditions ?? true;
  // The client sends `ifNoneMatch` / `ifMatch` in the file's metadata, and splits a batch on a 412 so that the
  // file whose condition failed fails alone.
  const itemOf = (t: Transfer): UploadItem =>
    ({
      file: t.local!.path,
      path: joinDrive(c.remote, t.relative),
      // A drive file with no content hash (an old record) has nothing to match: it goes without a condition.
      ...(!useConditions ? {} : t.reason === 'new' ? { ifNoneMatch: '*' } : etagForm(t.remote?.etag) !== 'none' ? { ifMatch: t.remote!.etag } : {}),
    });
  let pending = c.plan.transfers;
  // A file that changed while it was sent (its size, or its mtime, moved) is sent once more, then fails.
  for (let round = 1; pending.length > 0; round++) {
    const byPath = new Map(pending.map((t) => [joinDrive(c.remote, t.relative), t]));
    const again: Transfer[] = [];
    const refused: { t: Transfer; path: string; error: unknown }[] = [];
    if (round > 1) for (const t of pending) t.size = (await stat(t.local!.path).catch(() => ({ size: t.size }))).size;
    await c.drive.uploadMany(pending.map(itemOf), {
      signal: c.options.signal,
      onProgress: c.options.onProgress,
      onFile: (outcome) => {
        const t = byPath.get(outcome.item.path)!;
        if (!outcome.ok && round === 1 && outcome.error.code === 'local_file_error' && /changed/.test(outcome.error.message)) {
          again.push(t);
          return;
        }
        if (!outcome.ok && outcome.error.code === 'precondition_failed') {
          refused.push({ t, path: outcome.item.path, error: outcome.error });
          return;
        }
        if (outcome.ok) {
          c.report.transferred.files++;
          c.report.transferred.bytes += outcome.file.size;
        }
        emitUpload(c, t, outcome.item.path, outcome.ok ? { size: outcome.file.size } : { error: outcome.error });
      },
    });
    // A file whose condition failed because the drive now holds what it was to receive (a killed run's request
    // that landed after this run's plan was made) is already synced: unchanged, not failed.
    for (const { t, path, error } of refused) {
      if (await holdsLocalContent(c, t, path)) {
        c.report.unchanged++;
        continue;
      }
      emitUpload(c, t, path, { error });
    }
    pending = again;
  }
}

function emitUpload(c: Context, t: Transfer, path: string, outcome: { size: number } | { error: unknown }): void {
  const ok = 'size' in outcome;
  c.emit({
    action: 'upload',
    path,
    relative: t.relative,
    source: t.local!.path,
    reason: t.reason,
    size: ok ? outcome.size : t.size,
    ok,
    ...(ok ? {} : { error: errorOf(outcome.error, c.options.useConditions ?? true) }),
  });
}

/** Whether the drive file at `path` has the content of `t`'s local file now (its ETag, computed locally). */
async function holdsLocalContent(c: Context, t: Transfer, path: string): Promise<boolean> {
  try {
    const head = await c.drive.stat(path, { signal: c.options.signal });
    const form = etagForm(head.etag);
    if (form === 'none' || head.size !== t.local!.size) return false;
    return (await stableEtag(t.local!, form, partsOf(head.etag))) === head.etag;
  } catch (error) {
    if (isAbortError(error)) throw error;
    return false;
  }
}

async function download(c: Context): Promise<void> {
  const progress: UploadProgress = { filesTotal: c.plan.transfers.length, filesDone: 0, filesFailed: 0, bytesTotal: c.plan.transfers.reduce((n, t) => n + t.size, 0), bytesDone: 0 };
  await mapLimit(
    c.plan.transfers,
    c.options.concurrency ?? 4,
    async (t) => {
      const to = c.destinationOf(t.relative);
      const from = joinDrive(c.remote, t.relative);
      let sofar = 0;
      try {
        await mkdir(dirname(to), { recursive: true });
        const got = await c.drive.downloadToFile(from, to, {
          signal: c.options.signal,
          onProgress: (done) => {
            progress.bytesDone += done - sofar;
            sofar = done;
            c.options.onProgress?.(progress);
          },
        });
        progress.filesDone++;
        c.report.transferred.files++;
        c.report.transferred.bytes += got.size;
        c.emit({ action: 'download', path: to, relative: t.relative, source: from, reason: t.reason, size: got.size, ok: true });
      } catch (error) {
        if (isAbortError(error)) throw error;
        progress.filesFailed++;
        progress.bytesTotal -= t.size - sofar;
        c.emit({ action: 'download', path: to, relative: t.relative, source: from, reason: t.reason, size: t.size, ok: false, error: errorOf(error, false) });
      }
      c.options.onProgress?.(progress);
    },
    c.options.signal,
  );
}

/** Deletions come after the transfers, so that a run cut short has lost nothing it had not replaced. */
async function deleteExtra(c: Context): Promise<void> {
  const { plan, report } = c;
  if (plan.direction === 'up') {
    for (let i = 0; i < plan.deletes.length; i += 1000) {
      const batch = plan.deletes.slice(i, i + 1000);
      const paths = batch.map((d) => joinDrive(c.remote, d.relative));
      try {
        const done = await c.drive.deleteFiles(paths, { signal: c.options.signal });
        const gone = new Set([...done.deleted, ...done.already_gone, ...done.not_found]);
        batch.forEach((d, j) => {
          if (gone.has(paths[j])) report.deleted++;
          c.emit({ action: 'delete', path: paths[j], relative: d.relative, size: d.size, ok: gone.has(paths[j]), ...(gone.has(paths[j]) ? {} : { error: { code: 'unexpected_response', message: 'not deleted', status: 0 } }) });
        });
      } catch (error) {
        if (isAbortError(error)) throw error;
        for (const [j, d] of batch.entries()) c.emit({ action: 'delete', path: paths[j], relative: d.relative, size: d.size, ok: false, error: errorOf(error, false) });
      }
    }
    for (const folder of plan.rmdirs) {
      const path = joinDrive(c.remote, folder);
      try {
        await c.drive.deleteFolder(path, { signal: c.options.signal });
        report.deleted++;
        c.emit({ action: 'rmdir', path, relative: folder, ok: true });
      } catch (error) {
        if (isAbortError(error)) throw error;
        c.emit({ action: 'rmdir', path, relative: folder, ok: false, error: errorOf(error, false) });
      }
    }
    return;
  }
  for (const d of plan.deletes) {
    const path = c.destinationOf(d.relative);
    try {
      await unlink(path);
      report.deleted++;
      c.emit({ action: 'delete', path, relative: d.relative, size: d.size, ok: true });
    } catch (error) {
      c.emit({ action: 'delete', path, relative: d.relative, size: d.size, ok: false, error: errorOf(error, false) });
    }
  }
  for (const folder of plan.rmdirs) {
    const path = c.destinationOf(folder);
    try {
      await rmdir(path);
      report.deleted++;
      c.emit({ action: 'rmdir', path, relative: folder, ok: true });
    } catch (error) {
      c.emit({ action: 'rmdir', path, relative: folder, ok: false, error: errorOf(error, false) });
    }
  }
}

async function makeFolders(c: Context): Promise<void> {
  for (const folder of c.plan.mkdirs) {
    const path = c.destinationOf(folder);
    try {
      if (c.plan.direction === 'up') await c.drive.createFolder(path, { signal: c.options.signal });
      else if (!(await lstat(path).catch(() => undefined))) await mkdir(path, { recursive: true });
      c.report.foldersCreated++;
      c.emit({ action: 'mkdir', path, relative: folder, ok: true });
    } catch (error) {
      if (isAbortError(error)) throw error;
      c.emit({ action: 'mkdir', path, relative: folder, ok: false, error: errorOf(error, false) });
    }
  }
}

function errorOf(error: unknown, conditions: boolean): { code: string; message: string; status: number } {
  if (error instanceof DriveError) {
    const message = conditions && error.status === 412 ? `${error.message} (the file changed on the destination since the plan was made; run the sync again)` : error.message;
    return { code: error.code, message, status: error.status };
  }
  const errno = error as NodeJS.ErrnoException;
  return { code: errno?.code ? 'local_file_error' : 'error', message: errno?.code ? `${errno.path ?? ''}: ${errno.code}` : String((error as Error)?.message ?? error), status: 0 };
}

/** `remote` joined with a relative path (`/` root: `/a/b`). */
function joinDrive(remote: string, relative: string): string {
  return `${remote === '/' ? '' : remote}/${relative}`;
}
