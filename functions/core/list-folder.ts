import { notFound } from './errors';
import { ROOT, comparePaths, joinPath, nameOf } from './paths';
import type { DriveNode, FileNode, FolderNode, NodeStore } from './ports';
import { readVisible } from './visibility';

export interface FolderListing {
  folder: string;
  files: FileNode[];
  folders: FolderNode[];
}

/** One page of a listing: its entries and the path the next page starts after; undefined on the last page. */
export interface FolderPage extends FolderListing {
  after?: string;
}

/**
 * The spec's listing as it is read: files first, then folders, each in path byte order. Each comes in runs
 * (a Query's page, or the part of one between two folders a recursive walk enters), not an entry at a time:
 * a step of an async iterator costs a few promises, and a listing of thousands took thousands of steps.
 */
export interface StreamedListing {
  folder: string;
  files: AsyncIterable<FileNode[]>;
  /** Iterate only after `files`: it may hand on the folders that walk met. */
  folders: AsyncIterable<FolderNode[]>;
}

/** Children read by one Query of an unpaged listing. */
const QUERY_PAGE = 1000;

/** Folders an unpaged recursive listing asks for ahead of the walk, per level: parallel enough to hide latency. */
const PREFETCH = 16;

/**
 * Folders an unpaged listing keeps from its walk over the files, so as not to walk again for them (about
 * 300 bytes each); past this many it walks a second time and keeps none: memory stays bounded either way.
 */
export const FOLDERS_HELD = 20_000;

/** Throws 404 unless readers may list `folder`: there, a folder, not taken by a delete, nor any folder above it. */
async function checkListable(nodes: NodeStore, drive: string, folder: string): Promise<void> {
  if (folder === ROOT) return;
  const { node: self, seen } = await readVisible(nodes, drive, folder);
  if (self?.kind !== 'folder' || self.deleting !== undefined || !seen) {
    throw notFound(self?.kind === 'file' ? `${folder} is a file, not a folder` : `folder ${folder} does not exist`);
  }
}

/**
 * The entries below `folder` (its own, or at every depth when `recursive`) whose paths come after `after`, in
 * path byte order, read lazily: one Query at a time of at most `want()` children (plus one, to tell whether
 * more follow), so memory holds a page per folder on the way down, never the folder or the tree; `prefetch`
 * also asks for the first page of that many folders of a page ahead of the walk. A folder a delete has taken
 * is left out with everything below it.
 *
 * Path byte order is a walk that enters each folder where its name followed by `/` sorts among its siblings:
 * `/a` comes before `/a-b`, and `/a/x` after it (`-` sorts below `/`). The folders whose entries are still
 * to come wait on a stack; each is a prefix of the name last read, so it holds at most a name's length.
 */
export async function* entriesBelow(
  nodes: NodeStore,
  drive: string,
  folder: string,
  options: { recursive: boolean; after?: string; want?: () => number; prefetch?: number },
): AsyncGenerator<DriveNode> {
  for await (const run of runsBelow(nodes, drive, folder, options)) yield* run;
}

/** `entriesBelow`'s entries in runs, in the same order: the entries of a page up to the next folder the walk enters. */
export function runsBelow(
  nodes: NodeStore,
  drive: string,
  folder: string,
  options: { recursive: boolean; after?: string; want?: () => number; prefetch?: number },
): AsyncGenerator<DriveNode[]> {
  const walk: Walk = { nodes, drive, recursive: options.recursive, want: options.want ?? (() => QUERY_PAGE), prefetch: options.prefetch ?? 0, held: 0 };
  return walkFolder(walk, folder, options.after);
}

interface Walk {
  nodes: NodeStore;
  drive: string;
  recursive: boolean;
  /** Children the reader may still take: a Query reads no more than these (the next page's first included). */
  want: () => number;
  /** Folders whose first Query may start before the walk enters them (0: each when entered), in the whole walk. */
  prefetch: number;
  /** First pages asked for ahead and not yet entered: they count against `prefetch` until then. */
  held: number;
}

type ChildrenPage = Awaited<ReturnType<NodeStore['childrenPage']>>;

/** A folder whose entries come later: where they start, and its first page if already asked for. */
type Waiting = { folder: string; after?: string; first?: Promise<ChildrenPage> };

async function* walkFolder(walk: Walk, folder: string, after?: string, first?: Promise<ChildrenPage>): AsyncGenerator<DriveNode[]> {
  const { nodes, drive, recursive } = walk;
  const read = (of: string, start?: string) => nodes.childrenPage(drive, of, Math.max(1, walk.want()), start);
  const waiting: Waiting[] = [];
  let start: string | undefined;
  if (after !== undefined) {
    // The names after `after`'s own start after the rest of its path (no name holds `/`)...
    const rest = after.slice(folder === ROOT ? 1 : folder.length + 1);
    start = rest;
    // ...and the folders whose entries follow it though their names come before: `first` if `after` lies in
    // it or is it, and each prefix of `first` followed by a byte below `/`, whose entries sort after `first`.
    if (recursive) {
      const slash = rest.indexOf('/');
      const head = slash < 0 ? rest : rest.slice(0, slash);
      const names: string[] = [];
      for (let i = 1; i < head.length; i++) if (head.charCodeAt(i) < 0x2f) names.push(head.slice(0, i));
      names.push(head);
      const found = await nodes.getMany(drive, names.map((name) => joinPath(folder, name)));
      // Shortest first: the longest, whose entries come first, ends on top.
      for (const name of names) {
        const node = found.get(joinPath(folder, name));
        if (node?.kind === 'folder' && node.deleting === undefined) waiting.push({ folder: node.path, ...(name === head && slash >= 0 ? { after } : {}) });
      }
    }
  }
  const enter = (next: Waiting) => walkFolder(walk, next.folder, next.after, next.first);
  for (;;) {
    const page = await (first ?? read(folder, start));
    if (first) walk.held--;
    first = undefined;
    // The first Query of the next few folders of the page, started ahead (each failure heard when entered).
    // Pages asked for ahead are held until their folders are entered, which siblings whose names are prefixes
    // of each other put off (`a`, `a `, `a  `…): so they count against `prefetch` over the whole walk.
    const ahead = recursive && walk.prefetch > 0 ? page.nodes.filter((node) => node.kind === 'folder' && node.deleting === undefined) : [];
    const early = new Map<string, Promise<ChildrenPage>>();
    let asked = 0;
    const askAhead = () => {
      for (; asked < ahead.length && walk.held < walk.prefetch; asked++) {
        const query = read(ahead[asked].path);
        query.catch(() => undefined);
        early.set(ahead[asked].path, query);
        walk.held++;
      }
    };
    askAhead();
    // The entries read since the last folder entered, handed on together before the walk enters the next.
    let run: DriveNode[] = [];
    for (const node of page.nodes) {
      if (waiting.length > 0) {
        const name = nameOf(node.path);
        while (waiting.length > 0 && comparePaths(`${nameOf(waiting.at(-1)!.folder)}/`, name) < 0) {
          if (run.length > 0) yield run;
          run = [];
          yield* enter(waiting.pop()!);
        }
      }
      if (node.kind === 'folder' && node.deleting !== undefined) continue;
      run.push(node);
      if (recursive && node.kind === 'folder') {
        waiting.push({ folder: node.path, first: early.get(node.path) });
        early.delete(node.path);
        askAhead();
      }
    }
    if (run.length > 0) yield run;
    if (page.last === undefined) break;
    start = page.last;
  }
  while (waiting.length > 0) yield* enter(waiting.pop()!);
}

/**
 * One page of the listing of `folder` (at every depth when `recursive`): at most `limit` entries, the next
 * after the path `after` (the last of the page before), in path byte order, so the pages in turn are the
 * listing's order. A page reads at most its entries plus one, one Query per folder it enters, and on resuming
 * one Query and one batched read per folder above `after`: its cost is the page's, not the folder's or the
 * tree's. Following the pages returns every entry that stays throughout exactly once, whatever comes and goes.
 */
export async function listPage(nodes: NodeStore, drive: string, folder: string, options: { recursive: boolean; limit: number; after?: string }): Promise<FolderPage> {
  const taken: DriveNode[] = [];
  // One entry past the page tells whether another follows, so the last page is never an empty one.
  const want = () => options.limit + 1 - taken.length;
  const read = async () => {
    for await (const node of entriesBelow(nodes, drive, folder, { recursive: options.recursive, after: options.after, want })) {
      taken.push(node);
      if (taken.length > options.limit) break;
    }
  };
  // The check and the first Query at once: a folder that is not there has no children to read.
  await Promise.all([checkListable(nodes, drive, folder), read()]);
  const more = taken.length > options.limit;
  const entries = more ? taken.slice(0, options.limit) : taken;
  return {
    folder,
    files: entries.filter((node): node is FileNode => node.kind === 'file'),
    folders: entries.filter((node): node is FolderNode => node.kind === 'folder'),
    ...(more ? { after: entries.at(-1)!.path } : {}),
  };
}

/**
 * The spec's whole listing of `folder` (at every depth when `recursive`), checked first (404), its first Query
 * made, and the rest read as it is sent (a failure past that point cuts the answer short, as with downloads):
 * the files in one walk, the folders from what that walk kept or, past `foldersHeld`, from a second. Memory
 * holds a Query's page per level and at most `foldersHeld` folders, at any size.
 */
export async function listFolder(nodes: NodeStore, drive: string, folder: string, recursive: boolean, foldersHeld = FOLDERS_HELD): Promise<StreamedListing> {
  // The first Query is made before the answer starts, so that its failure is an error answer, not a cut one;
  // alongside the check, as a page's is (a folder that is not there has no children to read).
  const walk = runsBelow(nodes, drive, folder, { recursive, prefetch: PREFETCH });
  const [checked, first] = await Promise.allSettled([checkListable(nodes, drive, folder), walk.next()]);
  if (checked.status === 'rejected') throw checked.reason;
  if (first.status === 'rejected') throw first.reason;
  const head = first.value;
  async function* runs(): AsyncGenerator<DriveNode[]> {
    if (head.done) return;
    yield head.value;
    yield* walk;
  }
  let held: FolderNode[] | undefined = [];
  let filesRead = false;
  async function* files(): AsyncGenerator<FileNode[]> {
    for await (const run of runs()) {
      const files: FileNode[] = [];
      for (const node of run) {
        if (node.kind === 'file') files.push(node);
        else if (held !== undefined) {
          held.push(node);
          if (held.length > foldersHeld) held = undefined;
        }
      }
      if (files.length > 0) yield files;
    }
    filesRead = true;
  }
  async function* folders(): AsyncGenerator<FolderNode[]> {
    if (filesRead && held !== undefined) {
      if (held.length > 0) yield held;
      return;
    }
    for await (const run of runsBelow(nodes, drive, folder, { recursive, prefetch: PREFETCH })) {
      const folders = run.filter((node): node is FolderNode => node.kind === 'folder');
      if (folders.length > 0) yield folders;
    }
  }
  return { folder, files: files(), folders: folders() };
}
