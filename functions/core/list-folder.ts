import { notFound } from './errors';
import { ROOT, comparePaths, nameOf } from './paths';
import type { DriveNode, FileNode, FolderNode, NodeStore } from './ports';
import { walk } from './tree';
import { reachable } from './visibility';

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
  const [self, page, seen] = await Promise.all([folder === ROOT ? undefined : nodes.get(drive, folder), nodes.childrenPage(drive, folder, limit, after), reachable(nodes, drive, folder)]);
  if (folder !== ROOT && (self?.kind !== 'folder' || self.deleting !== undefined || !seen)) {
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

/**
 * One page of everything below `root`, depth first: each folder's entries in name byte order, a folder's own
 * entries right after it, at most `limit` of them, resuming after the path `after` (the last entry of the page
 * before). A page reads at most its entries, one Query per folder it enters and one per folder above `after`;
 * following the pages returns every entry that stays exactly once. The last page may be empty. Folders a
 * delete has taken are left out, with everything below them.
 */
export async function listTreePage(nodes: NodeStore, drive: string, root: string, limit: number, after?: string): Promise<FolderPage> {
  const [self, seen] = await Promise.all([root === ROOT ? undefined : nodes.get(drive, root), reachable(nodes, drive, root)]);
  if (root !== ROOT && (self?.kind !== 'folder' || self.deleting !== undefined || !seen)) {
    throw notFound(self?.kind === 'file' ? `${root} is a file, not a folder` : `folder ${root} does not exist`);
  }
  // The walk's stack: each folder entered, the children read and not yet taken, and where its next Query starts.
  type Frame = { folder: string; pending: DriveNode[]; start?: string; exhausted: boolean };
  const frames: Frame[] = [{ folder: root, pending: [], exhausted: false }];
  if (after !== undefined) {
    // Resume: each folder from the root down to `after`'s goes on after the child on the way to `after`.
    const below = after.slice(root === ROOT ? 1 : root.length + 1).split('/');
    let folder = root;
    for (const name of below) {
      frames.at(-1)!.start = name;
      folder = folder === ROOT ? `/${name}` : `${folder}/${name}`;
      if (folder !== after) frames.push({ folder, pending: [], exhausted: false });
    }
    const last = await nodes.get(drive, after);
    if (last?.kind === 'folder' && last.deleting === undefined) frames.push({ folder: after, pending: [], exhausted: false });
  }
  const taken: DriveNode[] = [];
  while (taken.length < limit && frames.length > 0) {
    const top = frames.at(-1)!;
    if (top.pending.length === 0 && !top.exhausted) {
      const page = await nodes.childrenPage(drive, top.folder, limit - taken.length, top.start);
      top.pending = page.nodes;
      top.exhausted = page.last === undefined;
    }
    const node = top.pending.shift();
    if (!node) {
      frames.pop();
      continue;
    }
    top.start = nameOf(node.path);
    if (node.kind === 'folder' && node.deleting !== undefined) continue;
    taken.push(node);
    if (node.kind === 'folder') frames.push({ folder: node.path, pending: [], exhausted: false });
  }
  const files = taken.filter((node): node is FileNode => node.kind === 'file').sort((a, b) => comparePaths(a.path, b.path));
  const folders = taken.filter((node): node is FolderNode => node.kind === 'folder').sort((a, b) => comparePaths(a.path, b.path));
  return { folder: root, files, folders, ...(frames.length > 0 && taken.length > 0 ? { after: taken.at(-1)!.path } : {}) };
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
  const [self, seen, entries] = await Promise.all([
    folder === ROOT ? undefined : nodes.get(drive, folder),
    reachable(nodes, drive, folder),
    recursive ? walk(nodes, drive, folder, taken) : nodes.children(drive, folder).then((children) => children.filter((child) => child.kind === 'file' || !taken(child))),
  ]);
  if (folder !== ROOT && (self?.kind !== 'folder' || taken(self) || !seen)) throw notFound(self?.kind === 'file' ? `${folder} is a file, not a folder` : `folder ${folder} does not exist`);
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
