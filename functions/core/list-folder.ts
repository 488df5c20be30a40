import { notFound } from './errors';
import { ROOT, comparePaths } from './paths';
import type { FileNode, FolderNode, NodeStore } from './ports';
import { walk } from './tree';

export interface FolderListing {
  folder: string;
  files: FileNode[];
  folders: FolderNode[];
}

/** The files and folders in `folder` (at every depth when `recursive`), each list ordered by path bytes. */
export async function listFolder(nodes: NodeStore, drive: string, folder: string, recursive: boolean): Promise<FolderListing> {
  const [self, entries] = await Promise.all([
    folder === ROOT ? undefined : nodes.get(drive, folder),
    recursive ? walk(nodes, drive, folder) : nodes.children(drive, folder),
  ]);
  if (folder !== ROOT && self?.kind !== 'folder') {
    throw notFound(self ? `${folder} is a file, not a folder` : `folder ${folder} does not exist`);
  }
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
