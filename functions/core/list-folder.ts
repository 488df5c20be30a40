import { notFound } from './errors';
import { ROOT, comparePaths } from './paths';
import type { FileNode, FolderNode, NodeStore } from './ports';
import { walk } from './tree';

export interface FolderListing {
  folder: string;
  files: FileNode[];
  folders: FolderNode[];
}

/**
 * The files and folders in `folder` (at every depth when `recursive`), each list ordered by path bytes.
 * A folder a delete has taken is gone for readers, with everything below it.
 */
export async function listFolder(nodes: NodeStore, drive: string, folder: string, recursive: boolean): Promise<FolderListing> {
  const taken = (node: FolderNode) => node.deleting !== undefined;
  // The folder's own record, read alongside its children: children alone would list a folder being deleted.
  const [self, entries] = await Promise.all([
    folder === ROOT ? undefined : nodes.get(drive, folder),
    recursive ? walk(nodes, drive, folder, taken) : nodes.children(drive, folder).then((children) => children.filter((child) => child.kind === 'file' || !taken(child))),
  ]);
  if (folder !== ROOT && (self?.kind !== 'folder' || taken(self))) throw notFound(self?.kind === 'file' ? `${folder} is a file, not a folder` : `folder ${folder} does not exist`);
  const files: FileNode[] = [];
  const folders: FolderNode[] = [];
  for (const entry of entries) {
    if (entry.kind === 'file') files.push(entry);
    else folders.push(entry);
  }
  files.sort((a, b) => comparePaths(a.path, b.path));
  folders.sort((a, b) => comparePaths(a.path, b.path));
  return { folder, files, folders };
}
