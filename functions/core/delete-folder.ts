import { cleanUp } from './clean-up';
import { conflict, invalid, notFound } from './errors';
import { ensureFolder } from './folders';
import { ROOT, parentOf } from './paths';
import { mapLimit } from './concurrency';
import type { DriveNode, NodeStore, ObjectStore } from './ports';
import { WALK_CONCURRENCY, depthOf, walk } from './tree';

/**
 * Deletes the folder at `path`; with `recursive`, everything below it too. Records go deepest first and
 * the folder last, so an interruption leaves no node without its parent; bytes go after their records, so
 * no reader finds a record whose bytes are gone. Returns the number of files deleted.
 */
export async function deleteFolder(
  deps: { nodes: NodeStore; objects: ObjectStore },
  drive: string,
  path: string,
  recursive: boolean,
): Promise<number> {
  const { nodes, objects } = deps;
  if (path === ROOT) throw invalid('path "/" is the root folder, which cannot be deleted');
  const notEmpty = () => conflict(`folder ${path} is not empty; pass recursive=true to delete it and everything in it`);

  // Children prove the folder exists; only an empty result needs the folder's own record.
  const below = recursive ? await walk(nodes, drive, path) : (await nodes.hasChildren(drive, path)) ? undefined : [];
  if (!below) throw notEmpty();

  const gone: string[] = [];
  let files = 0;
  /** Deletes the records of `found` deepest first (and `last` after them), noting the bytes of those that went. */
  const remove = async (found: DriveNode[], last: string[]) => {
    const deepestFirst = [...found].sort((a, b) => depthOf(b.path) - depthOf(a.path)).map((node) => node.path);
    const objectKeyOf = new Map(found.flatMap((node) => (node.kind === 'file' ? [[node.path, node.objectKey] as const] : [])));
    files += objectKeyOf.size;
    await nodes.deleteMany(drive, [...deepestFirst, ...last], (paths) => {
      for (const deleted of paths) {
        const key = objectKeyOf.get(deleted);
        if (key) gone.push(key);
      }
    });
  };
  try {
    if (below.length > 0) {
      await remove(below, [path]);
    } else {
      const removed = await nodes.removeFolder(drive, path);
      if (removed === 'missing' || removed === 'file') throw notFound(removed === 'file' ? `${path} is a file, not a folder` : `folder ${path} does not exist`);
      if (!recursive) {
        // An upload that wrote into the folder after it was seen empty looks for the folder after its write:
        // if it found it, its file is in the partition now. Put the folder back rather than leave the file
        // without it; if a file has taken the path meanwhile, the late files go the way of their folder.
        if (!(await nodes.hasChildren(drive, path))) return 0;
        if (await nodes.createFolder(drive, removed)) throw notEmpty();
      }
    }
    await sweepLateFiles(nodes, drive, [path, ...below.flatMap((node) => (node.kind === 'folder' ? [node.path] : []))], remove);
  } finally {
    // Bytes go once their records are gone, also when a later batch failed: what a retry of the delete
    // will not find again must not stay behind. Bytes a failure here leaves are orphans for fsck.
    await cleanUp(() => objects.deleteMany(gone));
  }
  return files;
}

/** Rounds of looking for files that uploads put into deleted folders before chasing them stops. */
const LATE_ROUNDS = 5;

/**
 * Uploads that raced the walk look for their folder after writing their record: those that still found it
 * have put their file in a partition walked already. One more look at every deleted folder, now that it is
 * gone, finds them (later uploads find the folder gone and recreate it instead). While uploads keep landing,
 * the look repeats; past `LATE_ROUNDS` the files that still arrive keep their folders, which are recreated.
 */
async function sweepLateFiles(nodes: NodeStore, drive: string, deleted: string[], remove: (found: DriveNode[], last: string[]) => Promise<void>): Promise<void> {
  let folders = deleted;
  for (let round = 0; folders.length > 0; round++) {
    const late = (await mapLimit(folders, WALK_CONCURRENCY, (folder) => nodes.children(drive, folder))).flat();
    if (late.length === 0) return;
    if (round === LATE_ROUNDS) {
      const now = new Date().toISOString();
      await mapLimit([...new Set(late.map((node) => parentOf(node.path)))], WALK_CONCURRENCY, (folder) => ensureFolder(nodes, drive, folder, now));
      return;
    }
    const lateBelow = (await mapLimit(late.filter((node) => node.kind === 'folder'), WALK_CONCURRENCY, (folder) => walk(nodes, drive, folder.path))).flat();
    const found = [...late, ...lateBelow];
    await remove(found, []);
    folders = found.flatMap((node) => (node.kind === 'folder' ? [node.path] : []));
  }
}
