import { conflict, invalid } from './errors';
import { makeFolders } from './folders';
import { ROOT } from './paths';
import type { FolderNode, JobStore, NodeStore } from './ports';

/**
 * Creates `path` and any missing parents, like `mkdir -p`; an existing folder is returned as it is. After
 * its writes it reads the folders above again (protocol/README.md, "Writers"), so a delete racing it never leaves
 * a folder without its parent.
 */
export async function createFolder(
  nodes: NodeStore,
  drive: string,
  path: string,
  /** Where a failure notes the jobs that remove the folders it made (see `removeUnused`). */
  jobs?: JobStore,
): Promise<FolderNode> {
  if (path === ROOT) throw invalid('path must name a folder below the root; "/" always exists');
  // Kept: a request that made the folder and then fails leaves it, as this one answers that it is there.
  const gone = () => conflict(`the folders above ${path} were deleted while it was being created; try again`, [path]);
  const folders = await makeFolders(nodes, drive, [path], new Date().toISOString(), gone, { keep: path, jobs });
  return folders.get(path)!;
}
