import { notFound } from './errors';
import { ROOT, comparePaths } from './paths';
import type { FileNode, FolderNode, NodeStore } from './ports';
import { walk } from './tree';

/** One page of a folder's listing: its entries and where the next page starts, if one may follow. */
export interface FolderPage extends FolderListing {
  /** The name the next page starts after; undefined on the last page. */
  after?: string;
}

/**
 * One page of the direct children of `folder`: at most `limit` entries whose names come after `after`, in
 * name byte order (which is path byte order within a folder). Paging by the last name read returns every
 * entry that stays in the folder exactly once, whatever is added or deleted meanwhile. A folder a delete
 * has taken is left out (a page may then hold fewer than `limit`).
 */
export async function listFolderPage(nodes: NodeStore, drive: string, folder: string, limit: number, after?: string): Promise<FolderPage> {
  const [self, page] = await Promise.all([folder === ROOT ? undefined : nodes.get(drive, folder), nodes.childrenPage(drive, folder, limit, after)]);
  if (folder !== ROOT && (self?.kind !== 'folder' || self.deleting !== undefined)) {
    throw notFound(self?.kind === 'file' ? `${folder} is a file, not a folder` : `folder ${folder} does not exist`);
  }
  const files: FileNode[] = [];
  const folders: FolderNode[] = [];
  for (const node of page.nodes) {
    if (node.kind === 'file') files.push(node);
    else if (node.deleting === undefined) folders.push(node);
  }
  return { folder, files, folders, ...(page.last !== undefined ? { after: page.last } : {}) };
}

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
