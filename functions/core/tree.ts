/** Folders read or marked at once in a tree: parallel enough to hide latency, bounded to spare the table. */
export const WALK_CONCURRENCY = 16;

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
