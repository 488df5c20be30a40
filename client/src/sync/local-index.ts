import { lstat, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { PathFilter } from './filter';

/** A local file of a synced folder: where it is, and the size and mtime it had when the folder was read. */
export interface LocalEntry {
  /** Its path relative to the synced folder, `/` between names, in NFC as Drive stores names. */
  relative: string;
  /** Its path on this machine. */
  path: string;
  size: number;
  mtimeMs: number;
}

/** Something below the synced folder that cannot be synced, and why (a link loop, a file that cannot be read). */
export interface LocalIssue {
  relative: string;
  path: string;
  reason: string;
}

/** The synced folder's files and folders (not filtered out), by relative path, and what could not be read. */
export interface LocalIndex {
  files: Map<string, LocalEntry>;
  /** Every folder below the root (not the root itself), relative. */
  folders: Set<string>;
  issues: LocalIssue[];
}

/** A download in progress is written beside its file as `.<name>.drive-<pid>-<time>` (see `Drive.downloadToFile`). */
const PARTIAL_DOWNLOAD = /^\..+\.drive-[0-9]+-[0-9]+$/;

/**
 * Reads the folder `root` into an index: memory for one entry per file (its relative path, size and mtime),
 * which is the bound a sync states. Symbolic links are followed, to files and to folders, but a link back to
 * a folder the walk is already inside (a loop) is reported, not entered. A folder or entry that cannot be read
 * is reported and the rest is read. Excluded folders are not entered.
 */
export async function readLocalIndex(root: string, filter: PathFilter): Promise<LocalIndex> {
  const index: LocalIndex = { files: new Map(), folders: new Set(), issues: [] };
  const rootInfo = await stat(root);
  await walk(root, '', [`${rootInfo.dev}:${rootInfo.ino}`], filter, index);
  return index;
}

async function walk(dir: string, relativeDir: string, ancestors: string[], filter: PathFilter, index: LocalIndex): Promise<void> {
  let names: string[];
  try {
    names = (await readdir(dir)).sort();
  } catch (error) {
    index.issues.push({ relative: relativeDir, path: dir, reason: `cannot read the folder (${codeOf(error)})` });
    return;
  }
  for (const name of names) {
    if (PARTIAL_DOWNLOAD.test(name)) continue;
    const path = join(dir, name);
    const relative = (relativeDir === '' ? name : `${relativeDir}/${name}`).normalize('NFC');
    let info;
    try {
      info = await stat(path);
    } catch (error) {
      const link = await lstat(path).catch(() => undefined);
      const reason = link?.isSymbolicLink() ? (codeOf(error) === 'ELOOP' ? 'a symbolic link loop' : `a symbolic link to nothing (${codeOf(error)})`) : `cannot be read (${codeOf(error)})`;
      if (!filter.excludesFile(relative)) index.issues.push({ relative, path, reason });
      continue;
    }
    if (info.isDirectory()) {
      if (filter.excludesFolder(relative)) continue;
      const id = `${info.dev}:${info.ino}`;
      if (ancestors.includes(id)) {
        index.issues.push({ relative, path, reason: 'a symbolic link loop (a link to a folder it is in): not followed' });
        continue;
      }
      index.folders.add(relative);
      await walk(path, relative, [...ancestors, id], filter, index);
    } else if (info.isFile()) {
      if (!filter.excludesFile(relative)) index.files.set(relative, { relative, path, size: info.size, mtimeMs: info.mtimeMs });
    } else if (!filter.excludesFile(relative)) {
      index.issues.push({ relative, path, reason: 'not a regular file or folder (a socket, a pipe or a device)' });
    }
  }
}

function codeOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code ?? (error instanceof Error ? error.message : String(error));
}
