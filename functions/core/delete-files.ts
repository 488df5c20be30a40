import { conflict, invalid } from './errors';
import { JOURNAL_SWEEP_AFTER_MS, closeJournal } from './journal';
import { ancestorsOf } from './paths';
import type { DriveNode, FileNode, FileRecords, FolderNode, NodeStore, ObjectStore, UploadJournal } from './ports';
import { beingMoved } from './folders';
import { reachableIn } from './visibility';
import { type TrashPolicy, stampOf, trashOn } from './trash';

/** Paths one request may delete: a bounded request, as an upload's files are. */
export const MAX_FILES_PER_DELETE = 1000;
/** Distinct folders (parents included) one request's paths may lie in: each is read, as an upload's are. */
export const MAX_FOLDERS_PER_DELETE = 1000;

/**
 * Records one transaction removes. A transaction takes up to `MAX_FILES_PER_REMOVE`; fewer keep each one short
 * where transactions are serialized (the local host's emulator runs one at a time, and other requests wait
 * behind it), while 1,000 files still take 40 transactions rather than 1,000.
 */
export const FILES_PER_TRANSACTION = 25;

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
 * file, or below a folder a delete has taken, is not found. Then the records go, `FILES_PER_TRANSACTION` at a
 * time and one transaction after another (so that the request's writes are few, and other requests get
 * between them): each record is removed conditionally on the id read, with a journal entry for the bytes in
 * the same write (`FileRecords.removeMany`; a file replaced meanwhile is read again and deleted in a later
 * write), and the bytes of the records removed are deleted. A crash anywhere leaves either a record with its
 * bytes or bytes the journal names for the sweep, never a record without bytes. With trash on (`deps.trashPolicy`),
 * each record goes into the trash instead, as a row of its own, in the same one write
 * (`FileRecords.trashMany`): nothing is deleted, and nothing follows the writes.
 */
export async function deleteFiles(
  deps: { nodes: NodeStore; objects: ObjectStore; journal: UploadJournal; records: FileRecords; trashPolicy?: TrashPolicy },
  drive: string,
  paths: readonly string[],
): Promise<DeletedFiles> {
  const { nodes } = deps;
  const found = await visibleNodes(nodes, drive, paths);
  const folder = paths.find((path) => found.get(path)?.kind === 'folder');
  if (folder !== undefined) throw conflict(`${folder} is a folder; folders are deleted through the folders route (with recursive=true for everything in them)`, [folder]);

  const gone = new Set<string>();
  const removed: { objectKey: string; entry: string }[] = [];
  /** Files still to remove, as last read; and how often each path was read again. */
  let pending = paths.map((path) => found.get(path)).filter((node): node is FileNode => node?.kind === 'file');
  const reads = new Map<string, number>();
  while (pending.length > 0) {
    const batch = pending.slice(0, FILES_PER_TRANSACTION);
    pending = pending.slice(batch.length);
    // The records go and the journal notes their bytes in one write (FileRecords in ports.ts); or, with
    // trash on, they become trash rows in that write.
    const outcome = trashOn(deps.trashPolicy)
      ? await deps.records.trashMany(drive, batch, { rows: stampOf(deps.trashPolicy, 'deleted') })
      : await deps.records.removeMany(drive, batch, new Date(Date.now() + JOURNAL_SWEEP_AFTER_MS));
    if ('trashed' in outcome) {
      for (const file of batch) gone.add(file.path);
      continue;
    }
    if ('entry' in outcome) {
      for (const file of batch) {
        gone.add(file.path);
        removed.push({ objectKey: file.objectKey, entry: outcome.entry });
      }
      continue;
    }
    // Nothing of the batch went. A changed record was replaced (its bytes are the replacer's to free), or
    // removed or moved away by another request (whose bytes are that request's): what stands there now is
    // read, and tried again with the rest of the batch.
    const changed = new Set(outcome.changed.map((file) => file.path));
    for (const path of changed) {
      const count = (reads.get(path) ?? 0) + 1;
      if (count === ATTEMPTS) throw conflict(`${path} changed ${ATTEMPTS} times while it was being deleted; try again`, [path]);
      reads.set(path, count);
    }
    const now = await nodes.getMany(drive, [...changed]);
    const again = batch.flatMap((file): FileNode[] => {
      if (!changed.has(file.path)) return [file];
      const there: DriveNode | undefined = now.get(file.path);
      return there?.kind === 'file' ? [there] : [];
    });
    pending = [...again, ...pending];
  }
  // Only the bytes of records this request removed: a record it did not remove still points to its own.
  if (removed.length > 0) await deps.objects.deleteMany(removed.map((file) => file.objectKey));
  await closeJournal(deps.journal, [...new Set(removed.map((file) => file.entry))]);
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
