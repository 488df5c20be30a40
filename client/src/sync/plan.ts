import { etagForm, partsOf } from '../content-etag';
import { mapLimit } from '../pool';
import type { PathFilter } from './filter';
import type { LocalEntry, LocalIndex } from './local-index';

/** `up`: a local folder to a drive folder; `down`: a drive folder to a local folder. */
export type Direction = 'up' | 'down';

/** A drive file of the synced folder, by its path relative to it. */
export interface RemoteFile {
  relative: string;
  size: number;
  /** The content ETag (`include=etag`); absent or not a hash for files stored before the server kept one. */
  etag?: string;
}

/** One page of the drive folder's recursive listing, paths relative to the synced folder. */
export interface RemotePage {
  files: RemoteFile[];
  folders: string[];
}

/** A file to send (`up`) or fetch (`down`): new on the destination, or there with other content. */
export interface Transfer {
  relative: string;
  reason: 'new' | 'changed';
  /** The bytes to move: the local file's size going up, the drive file's going down. */
  size: number;
  local?: LocalEntry;
  remote?: RemoteFile;
}

/** A path of the plan that cannot be synced, and why; the rest of the plan goes ahead. */
export interface PlanFailure {
  relative: string;
  code: string;
  reason: string;
}

/** What a sync will do, and what it found equal. */
export interface Plan {
  direction: Direction;
  transfers: Transfer[];
  /** Files on the destination but not the source (only with `delete`). */
  deletes: { relative: string; size: number }[];
  /** Empty folders of the source missing on the destination. */
  mkdirs: string[];
  /** Folders on the destination but not the source (only with `delete`), deepest first. */
  rmdirs: string[];
  unchanged: number;
  unchangedBytes: number;
  failed: PlanFailure[];
}

export interface PlanOptions {
  direction: Direction;
  delete: boolean;
  /** Same size is same file: no content hash is computed. */
  sizeOnly: boolean;
  filter: PathFilter;
  /**
   * The ETag Drive would give the local file's bytes, stored the `form` way (cut in `parts` parts, for a
   * multipart one); rejects when the file cannot be read or changes while it is read.
   */
  etagOf: (entry: LocalEntry, form: 'single' | 'multipart', parts: number | undefined) => Promise<string>;
  /** Local files hashed at once. Default 4. */
  hashConcurrency?: number;
  signal?: AbortSignal;
}

/**
 * Plans a sync by reading the drive folder one listing page at a time against the local folder's index:
 * memory holds one page, the index, and the plan's changes (an unchanged file costs a counter). Each drive
 * file of the same size as its local twin is compared by content (the local file's ETag computed as Drive
 * would compute it), unless `sizeOnly`; a drive file with no content ETag cannot be proved equal and counts
 * as changed. Excluded paths (`filter`) are left out on both sides.
 */
export async function planSync(local: LocalIndex, remotePages: AsyncIterable<RemotePage>, options: PlanOptions): Promise<Plan> {
  const { direction, filter } = options;
  const plan: Plan = { direction, transfers: [], deletes: [], mkdirs: [], rmdirs: [], unchanged: 0, unchangedBytes: 0, failed: [] };
  // The local entries a drive file matched, held as the index's own objects: a set of the pages' path strings
  // would keep a string (a slice of the page's whole path) per drive file, growing with the pages read.
  const seenFiles = new Set<LocalEntry>();
  const seenFolders = new Set<string>();
  /** Drive folders missing locally: the ones to make (`down`) or to remove (`up` with delete). */
  const remoteOnlyFolders = new Set<string>();
  /** Of those, the ones that hold something (so need no folder of their own going down). */
  const remoteOnlyNonEmpty = new Set<string>();
  const noteParent = (relative: string) => {
    const parent = parentOf(relative);
    if (parent !== '' && !local.folders.has(parent)) remoteOnlyNonEmpty.add(parent);
  };

  for await (const page of remotePages) {
    for (const folder of page.folders) {
      if (filter.excludesFolder(folder)) continue;
      noteParent(folder);
      if (local.folders.has(folder)) seenFolders.add(folder);
      else remoteOnlyFolders.add(folder);
    }
    const compared: { entry: LocalEntry; remote: RemoteFile }[] = [];
    for (const remote of page.files) {
      if (filter.excludesFile(remote.relative)) continue;
      noteParent(remote.relative);
      if (direction === 'down') {
        const bad = localNameProblem(remote.relative);
        if (bad) {
          plan.failed.push({ relative: remote.relative, code: 'invalid_local_name', reason: bad });
          continue;
        }
      }
      const entry = local.files.get(remote.relative);
      if (!entry) {
        if (direction === 'down') plan.transfers.push({ relative: remote.relative, reason: 'new', size: remote.size, remote });
        else if (options.delete) plan.deletes.push({ relative: remote.relative, size: remote.size });
        continue;
      }
      seenFiles.add(entry);
      if (entry.size !== remote.size) plan.transfers.push(transferOf(direction, entry, remote));
      else if (options.sizeOnly) unchanged(plan, entry.size);
      else compared.push({ entry, remote });
    }
    await mapLimit(
      compared,
      options.hashConcurrency ?? 4,
      async ({ entry, remote }) => {
        const form = etagForm(remote.etag);
        if (form === 'none') {
          plan.transfers.push(transferOf(direction, entry, remote));
          return;
        }
        let etag: string;
        try {
          etag = await options.etagOf(entry, form, partsOf(remote.etag!));
        } catch (error) {
          // Going down, the drive's copy replaces whatever the local file holds; going up, it cannot be sent.
          if (direction === 'down') plan.transfers.push(transferOf(direction, entry, remote));
          else plan.failed.push({ relative: entry.relative, code: 'local_file_error', reason: (error as Error).message });
          return;
        }
        if (etag === remote.etag) unchanged(plan, entry.size);
        else plan.transfers.push(transferOf(direction, entry, remote));
      },
      options.signal,
    );
  }

  // The index is read filtered (`readLocalIndex`); filtered here again, the plan holds for any index.
  for (const [relative, entry] of local.files) {
    if (seenFiles.has(entry) || filter.excludesFile(relative)) continue;
    if (direction === 'up') plan.transfers.push({ relative, reason: 'new', size: entry.size, local: entry });
    else if (options.delete) plan.deletes.push({ relative, size: entry.size });
  }

  if (!filter.onlyIncluded) {
    if (direction === 'up') {
      const nonEmpty = new Set<string>();
      for (const relative of local.files.keys()) nonEmpty.add(parentOf(relative));
      for (const folder of local.folders) nonEmpty.add(parentOf(folder));
      for (const folder of local.folders) if (!seenFolders.has(folder) && !nonEmpty.has(folder) && !filter.excludesFolder(folder)) plan.mkdirs.push(folder);
      if (options.delete) plan.rmdirs = deepestFirst(remoteOnlyFolders);
    } else {
      for (const folder of remoteOnlyFolders) if (!remoteOnlyNonEmpty.has(folder)) plan.mkdirs.push(folder);
      if (options.delete) plan.rmdirs = deepestFirst([...local.folders].filter((folder) => !seenFolders.has(folder) && !filter.excludesFolder(folder)));
    }
  }
  plan.transfers.sort(byRelative);
  plan.deletes.sort(byRelative);
  plan.mkdirs.sort();
  plan.failed.sort(byRelative);
  return plan;
}

function transferOf(direction: Direction, entry: LocalEntry, remote: RemoteFile): Transfer {
  return { relative: entry.relative, reason: 'changed', size: direction === 'up' ? entry.size : remote.size, local: entry, remote };
}

function unchanged(plan: Plan, size: number): void {
  plan.unchanged++;
  plan.unchangedBytes += size;
}

/** `a/b/c` → `a/b`; a top-level name → `` (the synced folder itself). */
export function parentOf(relative: string): string {
  const at = relative.lastIndexOf('/');
  return at < 0 ? '' : relative.slice(0, at);
}

function deepestFirst(folders: Iterable<string>): string[] {
  return [...folders].sort((a, b) => b.split('/').length - a.split('/').length || (a < b ? -1 : a > b ? 1 : 0));
}

function byRelative(a: { relative: string }, b: { relative: string }): number {
  return a.relative < b.relative ? -1 : a.relative > b.relative ? 1 : 0;
}

/** Why a drive path cannot be written below a local folder (a `..` would climb out of it), or undefined. */
function localNameProblem(relative: string): string | undefined {
  if (relative.split('/').some((name) => name === '' || name === '.' || name === '..')) return 'a name "", "." or ".." cannot be a local file name';
  if (relative.includes('\0')) return 'a NUL character cannot be in a local file name';
  if (process.platform === 'win32' && /[<>:"\\|?*]/.test(relative)) return 'a character Windows refuses in file names (<>:"\\|?*)';
  return undefined;
}
