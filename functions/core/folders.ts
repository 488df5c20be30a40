import { randomUUID } from 'node:crypto';
import { cleanUp } from './clean-up';
import { conflict } from './errors';
import { ROOT, parentOf } from './paths';
import type { FolderNode, NodeStore } from './ports';

/**
 * Makes `path` a folder, with its missing parents, like `mkdir -p`, and returns it. Works upwards from
 * `path` and stops at the first folder that exists, since every folder's parents exist. With `readFirst`,
 * a folder that exists costs one strongly consistent read, which any number of writers can share; without
 * it, one conditional write. Throws `conflict`, having removed what it created and nobody used, if a
 * file holds `path` or one of its parents.
 */
export async function ensureFolder(nodes: NodeStore, drive: string, path: string, now: string, options: { readFirst?: boolean } = {}): Promise<FolderNode> {
  if (options.readFirst) {
    const existing = await nodes.get(drive, path);
    if (existing?.kind === 'folder') return existing;
    if (existing) throw conflict(`${path} is a file, so nothing can be stored below it`);
  }
  const created: FolderNode[] = [];
  let target: FolderNode | undefined;
  try {
    for (let current = path; current !== ROOT; current = parentOf(current)) {
      const folder: FolderNode = { kind: 'folder', id: randomUUID(), path: current, createdAt: now };
      const held = await nodes.createFolder(drive, folder);
      if (!held) {
        throw conflict(current === path ? `${path} is a file, so it cannot be a folder` : `${current} is a file, so nothing can be stored below it`);
      }
      target ??= held;
      if (held.id !== folder.id) break;
      created.push(folder);
    }
  } catch (error) {
    // Deepest first, and only where ours still stands. Another upload may have read one of ours as its
    // parent and stored a file in it meanwhile: that folder goes back, with every folder above it.
    await cleanUp(async () => {
      for (const folder of created) {
        if (!(await nodes.revert(drive, folder.path, folder.id))) continue;
        if (await nodes.hasChildren(drive, folder.path)) {
          await nodes.createFolder(drive, folder);
          break;
        }
      }
    });
    throw error;
  }
  return target!;
}
