import type { DriveNode, FolderNode, NodeStore } from './ports';

/** Folders queried at once when walking a tree: parallel enough to hide latency, bounded to spare the table. */
export const WALK_CONCURRENCY = 16;

/**
 * Every node below `root` at any depth, walking folders breadth-first with bounded parallel queries; a
 * folder `skip` names is left out with everything below it.
 */
export function walk(nodes: NodeStore, drive: string, root: string, skip: (folder: FolderNode) => boolean = () => false): Promise<DriveNode[]> {
  const found: DriveNode[] = [];
  const queue = [root];
  let active = 0;
  let failed = false;
  return new Promise((resolve, reject) => {
    const pump = () => {
      if (failed) return;
      if (queue.length === 0 && active === 0) return resolve(found);
      while (active < WALK_CONCURRENCY && queue.length > 0) {
        const folder = queue.shift()!;
        active++;
        nodes.children(drive, folder).then(
          (children) => {
            active--;
            for (const child of children) {
              if (child.kind === 'folder' && skip(child)) continue;
              found.push(child);
              if (child.kind === 'folder') queue.push(child.path);
            }
            pump();
          },
          (error: unknown) => {
            failed = true;
            reject(error);
          },
        );
      }
    };
    pump();
  });
}

/** Depth of a canonical path: `/a` is 1, `/a/b` is 2. */
export function depthOf(path: string): number {
  let depth = 0;
  for (const ch of path) if (ch === '/') depth++;
  return depth;
}

/** `items` grouped by the depth of their path, in `order`. */
export function byDepth<T>(items: readonly T[], pathOf: (item: T) => string, order: 'deepest first' | 'shallowest first'): T[][] {
  const levels = new Map<number, T[]>();
  for (const item of items) {
    const depth = depthOf(pathOf(item));
    const level = levels.get(depth);
    if (level) level.push(item);
    else levels.set(depth, [item]);
  }
  const depths = [...levels.keys()].sort((a, b) => (order === 'deepest first' ? b - a : a - b));
  return depths.map((depth) => levels.get(depth)!);
}
