import { invalid } from './errors';
import { ensureFolder } from './folders';
import { ROOT } from './paths';
import type { FolderNode, NodeStore } from './ports';

/** Creates `path` and any missing parents, like `mkdir -p`; an existing folder is returned as it is. */
export async function createFolder(nodes: NodeStore, drive: string, path: string): Promise<FolderNode> {
  if (path === ROOT) throw invalid('path must name a folder below the root; "/" always exists');
  return ensureFolder(nodes, drive, path, new Date().toISOString());
}
