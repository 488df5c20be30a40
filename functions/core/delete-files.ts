import { mapLimit } from './concurrency';
import { conflict, invalid } from './errors';
import { JOURNAL_SWEEP_AFTER_MS, closeJournal } from './journal';
import { ancestorsOf } from './paths';
import type { DriveNode, FileNode, FileRecords, FolderNode, NodeStore, ObjectStore, UploadJournal } from './ports';
import { beingMoved } from './folders';
import { reachableIn } from './visibility';

/** Paths one request may delete: a bounded request, as an upload's files are. */
export const MAX_FILES_PER_DELETE = 1000;
/** Distinct folders (parents included) one request's paths may lie in: each is read, as an upload's are. */
export const MAX_FOLDERS_PER_DELETE = 1000;

/** Record deletes in flight at once. */
const DELETE_CONCURRENCY = 16;

/** Times a path is read again when the file there changed between the read and the delete (a replacing upload). */
const ATTEMPTS = 3;

export interface DeletedFiles {
  /** The paths whose file is gone, in the order asked. */
  deleted: string[];
  /** The paths that held no file a reader could see, in the order asked. */
  notFound: string[];
}

/**
 * Deletes the files at `paths` of `drive` (distinct, canonical): every path is read first, with every folder
 * above it (at most `MAX_FOLDERS_PER_DELETE` of those, else 422), and a folder at any path fails the whole
 * request (409) before anything is deleted; a path with no
 * file, or below a folder a delete has taken, is not found. Then each record is removed conditionally on the
 * id read, with a journal entry for its bytes in the same write (`FileRecords.remove`; a file replaced
 * meanwhile is read again and deleted in its turn), and the bytes of the records removed are deleted. A
 * crash anywhere leaves either a record with its bytes or bytes the journal names for the sweep, never a
 * record without bytes.
 */
export async function deleteFiles(deps: { nodes: NodeStore; objects: ObjectStore; journal: UploadJournal; records: FileRecords }, drive: string, paths: readonly string[]): Promise<DeletedFiles> {
  const { nodes } = deps;
  const found = await visibleNodes(nodes, drive, paths);
  const folder = paths.find((path) => found.get(path)?.kind === 'folder');
  if (folder !== undefined) throw conflict(`${folder} is a folder; folders are deleted through the folders route (with recursive=true for everything in them)`);

  const files = paths.map((path) => found.get(path)).filter((node): node is FileNode => node?.kind === 'file');
  const gone = new Set<string>();
  const removed: { objectKey: string; entry: string }[] = [];
  await mapLimit(files, DELETE_CONCURRENCY, async (first) => {
    let file: FileNode = first;
    for (let attempt = 1; ; attempt++) {
      // The record goes and the journal notes its bytes in one write (FileRecords in ports.ts).
      const entry = await deps.records.remove(drive, file, new Date(Date.now() + JOURNAL_SWEEP_AFTER_MS));
      if (entry !== undefined) {
        gone.add(file.path);
        removed.push({ objectKey: file.objectKey, entry });
        return;
      }
      if (attempt === ATTEMPTS) throw conflict(`${file.path} changed ${ATTEMPTS} times while it was being deleted; try again`);
      // Replaced (its bytes are the replacer's to free), or removed or moved away by another request (whose
      // bytes are that request's): read what stands there now.
      const now: DriveNode | undefined = await nodes.get(drive, file.path);
      if (!now || now.kind === 'folder') return;
      file = now;
    }
  });
  // Only the bytes of records this request removed: a record it did not remove still points to its own.
  if (removed.length > 0) await deps.objects.deleteMany(removed.map((file) => file.objectKey));
  await closeJournal(deps.journal, removed.map((file) => file.entry));
  return { deleted: paths.filter((path) => gone.has(path)), notFound: paths.filter((path) => !gone.has(path)) };
}

/**
 * The nodes at `paths` that readers may see: read in one batch with every folder above them, so that a path
 * below a folder a recursive delete has taken (or below a missing folder) counts as absent.
 */
async function visibleNodes(nodes: NodeStore, drive: string, paths: readonly string[]): Promise<Map<string, DriveNode>> {
  const above = new Set<string>();
  for (const path of paths) for (const folder of ancestorsOf(path)) above.add(folder);
  if (above.size > MAX_FOLDERS_PER_DELETE) {
    throw invalid(`the paths lie in ${above.size} folders (parents included); one request may reach at most ${MAX_FOLDERS_PER_DELETE}: send the rest in another`);
  }
  const read = await nodes.getMany(drive, [...new Set([...paths, ...above])]);
  // A file in a folder being moved waits for the move, as writers do.
  for (const folder of above) if ((read.get(folder) as FolderNode | undefined)?.moving) throw beingMoved(folder);
  const visible = new Map<string, DriveNode>();
  for (const path of paths) {
    const node = read.get(path);
    if (node && reachableIn(read, path)) visible.set(path, node);
  }
  return visible;
}
