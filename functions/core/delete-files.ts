import { mapLimit } from './concurrency';
import { conflict, invalid } from './errors';
import { JOURNAL_SWEEP_AFTER_MS, closeJournal } from './journal';
import { ancestorsOf } from './paths';
import type { DriveNode, FileNode, NodeStore, ObjectStore, UploadJournal } from './ports';
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
 * file, or below a folder a delete has taken, is not found. Then, as the protocol in ports.ts orders a delete
 * of bytes: the files' object keys are noted in the journal, each record is removed conditionally on the id
 * read (a file replaced meanwhile is read again and deleted in its turn), and the bytes of the records removed
 * are deleted. A crash anywhere leaves either a record with its bytes or bytes the journal names for the
 * sweep, never a record without bytes.
 */
export async function deleteFiles(deps: { nodes: NodeStore; objects: ObjectStore; journal: UploadJournal }, drive: string, paths: readonly string[]): Promise<DeletedFiles> {
  const { nodes } = deps;
  const found = await visibleNodes(nodes, drive, paths);
  const folder = paths.find((path) => found.get(path)?.kind === 'folder');
  if (folder !== undefined) throw conflict(`${folder} is a folder; folders are deleted through the folders route (with recursive=true for everything in them)`);

  const files = paths.map((path) => found.get(path)).filter((node): node is FileNode => node?.kind === 'file');
  const entries = files.length > 0 ? await deps.journal.open(drive, files, new Date(Date.now() + JOURNAL_SWEEP_AFTER_MS)) : [];
  const gone = new Set<string>();
  const removedKeys: string[] = [];
  await mapLimit(files, DELETE_CONCURRENCY, async (first) => {
    let file: FileNode | undefined = first;
    for (let attempt = 1; file; attempt++) {
      if (await nodes.revert(drive, file.path, file.id)) {
        gone.add(file.path);
        removedKeys.push(file.objectKey);
        return;
      }
      if (attempt === ATTEMPTS) throw conflict(`${file.path} changed ${ATTEMPTS} times while it was being deleted; try again`);
      // Replaced (its bytes are the replacer's to free) or removed since: read what stands there now.
      const now: DriveNode | undefined = await nodes.get(drive, file.path);
      if (!now) {
        // Removed: by this delete, whose reply was lost and retried, or by another delete. Either way no
        // record can come back pointing to its bytes (an undo puts one back only over its own), so they go.
        gone.add(file.path);
        removedKeys.push(file.objectKey);
        return;
      }
      if (now.kind === 'folder') return;
      if (now && now.id !== file.id) await deps.journal.open(drive, [now], new Date(Date.now() + JOURNAL_SWEEP_AFTER_MS)).then((ids) => entries.push(...ids));
      file = now;
    }
  });
  // Only the bytes of records this request removed: a record it did not remove still points to its own.
  if (removedKeys.length > 0) await deps.objects.deleteMany(removedKeys);
  await closeJournal(deps.journal, entries);
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
  const visible = new Map<string, DriveNode>();
  for (const path of paths) {
    const node = read.get(path);
    if (node && reachableIn(read, path)) visible.set(path, node);
  }
  return visible;
}
