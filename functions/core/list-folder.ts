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
  const entries = recursive ? await walk(nodes, drive, folder) : await nodes.children(drive, folder);
  // Children prove the folder exists; only an empty result needs the folder's own record.
  if (entries.length === 0 && folder !== ROOT) {
    const self = await nodes.get(drive, folder);
    if (self?.kind !== 'folder') throw notFound(self ? `${folder} is a file, not a folder` : `folder ${folder} does not exist`);
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
