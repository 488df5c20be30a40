import type { DriveNode, NodeStore } from './ports';

/** Folders queried at once when walking a tree: parallel enough to hide latency, bounded to spare the table. */
export const WALK_CONCURRENCY = 16;

/** Every node below `root` at any depth, walking folders breadth-first with bounded parallel queries. */
export function walk(nodes: NodeStore, drive: string, root: string): Promise<DriveNode[]> {
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
