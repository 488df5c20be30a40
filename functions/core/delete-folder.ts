import { mapLimit, settleLimit } from './concurrency';
import { conflict, invalid, notFound } from './errors';
import { ROOT } from './paths';
import type { FileNode, FolderNode, NodeStore, ObjectStore } from './ports';
import { WALK_CONCURRENCY, byDepth } from './tree';

/** Files whose bytes go in one call to the object store (S3's DeleteObjects takes 1,000 keys). */
const FILE_BATCH = 1000;
/** Record deletes in flight: each is its own conditional write (a batch write cannot be conditional). */
const DELETE_CONCURRENCY = 32;
/** Looks for files that writers left in folders being deleted before the delete gives up with a 409. */
const LATE_ROUNDS = 5;

/**
 * Deletes the folder at `path`; with `recursive`, everything below it too, as the protocol in ports.ts
 * says: the folders are marked first (gone for readers, closed to writers), then each file's bytes go before
 * its record, then the folders deepest first. An interrupted delete leaves marked folders that the same
 * delete again finishes, and never bytes without a record. Returns the number of files deleted.
 */
export async function deleteFolder(deps: { nodes: NodeStore; objects: ObjectStore }, drive: string, path: string, recursive: boolean): Promise<number> {
  if (path === ROOT) throw invalid('path "/" is the root folder, which cannot be deleted');
  const found = await deps.nodes.get(drive, path);
  if (found?.kind === 'file') throw notFound(`${path} is a file, not a folder`);
  if (!found) throw notFound(`folder ${path} does not exist`);
  if (!recursive) return deleteEmpty(deps.nodes, drive, found);
  const root = await deps.nodes.markDeleting(drive, found, 'recursive');
  if (!root) throw notFound(`folder ${path} does not exist`);
  return deleteTree(deps, drive, root);
}

/** Deletes `folder` if it has no children; a `409` if it has, with the folder left as it was. */
async function deleteEmpty(nodes: NodeStore, drive: string, folder: FolderNode): Promise<number> {
  const inProgress = () => conflict(`folder ${folder.path} is being deleted with everything in it; pass recursive=true to finish that delete`);
  if (folder.deleting === 'recursive') throw inProgress();
  const marked = await nodes.markDeleting(drive, folder, 'empty');
  if (!marked) throw notFound(`folder ${folder.path} does not exist`);
  if (marked.deleting === 'recursive') throw inProgress();
  // Marked before looking: a writer that stores into it now reads the mark after its write and withdraws.
  if (await nodes.hasChildren(drive, folder.path)) {
    await nodes.unmarkDeleting(drive, marked);
    throw conflict(`folder ${folder.path} is not empty; pass recursive=true to delete it and everything in it`);
  }
  if (!(await nodes.removeFolder(drive, marked))) throw notFound(`folder ${folder.path} does not exist`);
  return 0;
}

/**
 * Deletes everything below the marked folder `root`, and `root`. A round walks the tree, deletes the files,
 * then the folders deepest first; a folder found with children at the last look (a writer that stored into
 * it and died before it could withdraw) sends the delete round again.
 */
async function deleteTree(deps: { nodes: NodeStore; objects: ObjectStore }, drive: string, root: FolderNode): Promise<number> {
  let deleted = 0;
  for (let round = 0; round < LATE_ROUNDS; round++) {
    const { files, folders } = await markedWalk(deps.nodes, drive, root);
    deleted += await deleteFiles(deps, drive, files);
    if (await deleteFolders(deps.nodes, drive, [root, ...folders])) return deleted;
  }
  throw conflict(`files keep arriving in ${root.path} while it is deleted; repeat the delete to finish it`);
}

/**
 * Every file and folder below the marked folder `root`. Each folder is marked before its children are read:
 * a writer that stores into it later reads the mark after its write and withdraws what it wrote.
 */
async function markedWalk(nodes: NodeStore, drive: string, root: FolderNode): Promise<{ files: FileNode[]; folders: FolderNode[] }> {
  const files: FileNode[] = [];
  const folders: FolderNode[] = [];
  let level = [root];
  while (level.length > 0) {
    const children = (await mapLimit(level, WALK_CONCURRENCY, (folder) => nodes.children(drive, folder.path))).flat();
    for (const child of children) if (child.kind === 'file') files.push(child);
    const marked = await mapLimit(
      children.filter((child): child is FolderNode => child.kind === 'folder'),
      WALK_CONCURRENCY,
      (folder) => nodes.markDeleting(drive, folder, 'recursive'),
    );
    level = marked.filter((folder): folder is FolderNode => folder !== undefined);
    folders.push(...level);
  }
  return { files, folders };
}

/**
 * Deletes the bytes of `files`, then each record where it still has the id seen: an interruption between
 * the two leaves records without bytes in marked folders (hidden, and finished by the next delete), never
 * bytes without a record. A record replaced meanwhile is a late file: its bytes and record go too. Returns
 * how many records it deleted.
 */
async function deleteFiles(deps: { nodes: NodeStore; objects: ObjectStore }, drive: string, files: readonly FileNode[]): Promise<number> {
  let deleted = 0;
  for (let start = 0; start < files.length; start += FILE_BATCH) {
    let batch = files.slice(start, start + FILE_BATCH);
    for (let round = 0; batch.length > 0; round++) {
      if (round === LATE_ROUNDS) throw conflict(`files keep replacing each other in a folder being deleted; repeat the delete to finish it`);
      await deps.objects.deleteMany(batch.map((file) => file.objectKey));
      const gone = await mapLimit(batch, DELETE_CONCURRENCY, (file) => deps.nodes.revert(drive, file.path, file.id));
      deleted += gone.filter(Boolean).length;
      const changed = batch.filter((_, i) => !gone[i]).map((file) => file.path);
      const now = await deps.nodes.getMany(drive, changed);
      batch = [...now.values()].filter((node): node is FileNode => node.kind === 'file');
    }
  }
  return deleted;
}

/**
 * Deletes `folders` (all marked) deepest first, a depth at a time, each once it has no children. Returns
 * false, leaving the shallower ones, if one still has children.
 */
async function deleteFolders(nodes: NodeStore, drive: string, folders: readonly FolderNode[]): Promise<boolean> {
  for (const level of byDepth(folders, (folder) => folder.path, 'deepest first')) {
    const results = await settleLimit(level, DELETE_CONCURRENCY, async (folder) => {
      if (await nodes.hasChildren(drive, folder.path)) return false;
      await nodes.removeFolder(drive, folder);
      return true;
    });
    const failure = results.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
    if (results.some((result) => result.status === 'fulfilled' && !result.value)) return false;
  }
  return true;
}
