import { conflict, invalid } from './errors';
import { beingDeleted, beingMoved, ensureFolders, recheckFolders, removeUnused } from './folders';
import { ROOT, parentOf } from './paths';
import type { FolderNode, NodeStore } from './ports';

/** Times a mkdir makes folders again that a delete removed while it ran, before it answers 409. */
const ATTEMPTS = 3;

/**
 * Creates `path` and any missing parents, like `mkdir -p`; an existing folder is returned as it is. After
 * its writes it reads the folders above again (protocol/README.md, "Writers"), so a delete racing it never leaves
 * a folder without its parent.
 */
export async function createFolder(nodes: NodeStore, drive: string, path: string): Promise<FolderNode> {
  if (path === ROOT) throw invalid('path must name a folder below the root; "/" always exists');
  const now = new Date().toISOString();
  for (let attempt = 1; ; attempt++) {
    const { folders, created } = await ensureFolders(nodes, drive, [path], now);
    const { missing, deleting, moving } = await recheckFolders(nodes, drive, [parentOf(path)]);
    if (deleting.length > 0 || moving.length > 0) {
      await removeUnused(nodes, drive, created);
      throw deleting.length > 0 ? beingDeleted(deleting[0]) : beingMoved(moving[0]);
    }
    if (missing.length === 0) return folders.get(path)!;
    if (attempt === ATTEMPTS) throw conflict(`the folders above ${path} were deleted while it was being created; try again`, [path]);
  }
}
