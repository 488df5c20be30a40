import { cleanUp } from './clean-up';
import { conflict, invalid, notFound } from './errors';
import { ROOT } from './paths';
import type { DriveNode, NodeStore, ObjectStore } from './ports';
import { depthOf, walk } from './tree';

/**
 * Deletes the folder at `path`; with `recursive`, everything below it too. Records go deepest first, so
 * an interruption never leaves a node without its parent; bytes go after their records, so no reader
 * finds a record whose bytes are gone. Returns the number of files deleted.
 */
export async function deleteFolder(
  deps: { nodes: NodeStore; objects: ObjectStore },
  drive: string,
  path: string,
  recursive: boolean,
): Promise<number> {
  const { nodes, objects } = deps;
  if (path === ROOT) throw invalid('path "/" is the root folder, which cannot be deleted');
  const folder = await nodes.get(drive, path);
  if (folder?.kind !== 'folder') throw notFound(folder ? `${path} is a file, not a folder` : `folder ${path} does not exist`);

  if (!recursive) {
    if (await nodes.hasChildren(drive, path)) {
      throw conflict(`folder ${path} is not empty; pass recursive=true to delete it and everything in it`);
    }
    await nodes.deleteMany(drive, [path]);
    return 0;
  }

  const below = await walk(nodes, drive, path);
  for (const level of byDepthDeepestFirst(below)) {
    await nodes.deleteMany(drive, level.map((node) => node.path));
  }
  await nodes.deleteMany(drive, [path]);
  const objectKeys = below.flatMap((node) => (node.kind === 'file' ? [node.objectKey] : []));
  // The records are gone, so the deletion has happened; bytes left by a failure here are orphans for fsck.
  await cleanUp(() => objects.deleteMany(objectKeys));
  return objectKeys.length;
}

function byDepthDeepestFirst(nodes: DriveNode[]): DriveNode[][] {
  const levels = new Map<number, DriveNode[]>();
  for (const node of nodes) {
    const depth = depthOf(node.path);
    const level = levels.get(depth);
    if (level) level.push(node);
    else levels.set(depth, [node]);
  }
  return [...levels.entries()].sort(([a], [b]) => b - a).map(([, level]) => level);
}
