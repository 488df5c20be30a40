import { ancestorsOf } from './paths';
import type { DriveNode, NodeStore } from './ports';

/**
 * Whether readers may see what is at `path` as far as the folders above it go: each is there, and none is
 * taken by a recursive delete. A delete marks the folder it was asked for before it answers and the
 * folders below as it reaches them, so a read by path looks at every mark above: one batched read, which
 * `readVisible` makes one with the read of the node itself. A folder above that is missing hides the path too (a record left
 * below a removed folder is fsck's to repair, not a reader's to find).
 */
export async function reachable(nodes: NodeStore, drive: string, path: string): Promise<boolean> {
  const above = ancestorsOf(path);
  if (above.length === 0) return true;
  return reachableIn(await nodes.getMany(drive, above), path);
}

/**
 * The node at `path` (undefined if none) and whether readers may see it (`reachable`), in one read: the node and
 * the folders above it in one batch, or the node alone where no folder is above it. Each item is read as a read
 * of its own would read it (strongly consistent); one batch of them is no more atomic than reads side by side.
 */
export async function readVisible(nodes: NodeStore, drive: string, path: string): Promise<{ node: DriveNode | undefined; seen: boolean }> {
  const above = ancestorsOf(path);
  if (above.length === 0) return { node: await nodes.get(drive, path), seen: true };
  const found = await nodes.getMany(drive, [path, ...above]);
  return { node: found.get(path), seen: reachableIn(found, path) };
}

/** `reachable`, from nodes already read (every folder above `path` among them, if it exists). */
export function reachableIn(found: ReadonlyMap<string, DriveNode>, path: string): boolean {
  return ancestorsOf(path).every((folder) => {
    const node = found.get(folder);
    // An `empty` mark above a path is a delete that will find the folder not empty and give up.
    return node?.kind === 'folder' && node.deleting !== 'recursive';
  });
}
