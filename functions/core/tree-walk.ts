import { PARTITION_WRITES_PER_SECOND, PartitionPacer } from './partition-pacer';
import type { DriveNode, FolderNode, NodeStore } from './ports';

/** Children of a folder read at a time: one Query (and, for a delete, one S3 DeleteObjects call, which takes 1,000 keys). */
export const WALK_PAGE = 1000;
/** Pages in a row that do nothing before a walk gives up (files replaced, or paths taken, as fast as it goes). */
const IDLE_PAGES = 5;
/** How often a long walk notes that its job is alive, when it counts no files. */
export const HEARTBEAT_MS = 15_000;

/**
 * How a step of a job ended: the job is `done`; `out of time` (another step goes on); `waiting` when all that
 * is left waits for another request (a move in a deleted tree, a delete in a moved one); `stopped` when the
 * job cannot go on (paths at its destination taken).
 */
export type StepOutcome = 'done' | 'out of time' | 'waiting' | 'stopped';
/** How a walk that never stops ended (a delete's). */
export type Drained = Exclude<StepOutcome, 'stopped'>;

/**
 * When a walk of a job's tree stops, and where it counts the files it handles. A step goes from the top
 * again, re-entering the folders the last step marked, so a step that stopped at `outOfTime` before it
 * removed anything would leave the next step where it found it: a job step (`mustProgress`) removes or moves
 * something first (a page of files, or a folder), so every step advances the job, however short its budget.
 * A request may stop at once: its job goes on.
 */
export interface Progress {
  outOfTime: () => boolean;
  mustProgress?: boolean;
  counted: (files: number) => Promise<void>;
}

/** An `outOfTime` for `Progress`: true from `budgetMs` after now. */
export function outOfTimeIn(budgetMs: number): () => boolean {
  const deadline = Date.now() + budgetMs;
  return () => Date.now() >= deadline;
}

/** A folder the walk has entered, with what its kind of job keeps beside it (a move: the folder's copy). */
export type Entered = { folder: FolderNode };

/** What one page did: files counted, marked subfolders to enter, and whether something in it waits for another request. */
export type PageDone<E extends Entered> = { counted: number; entering: E[]; waiting: boolean };

/** What a walk shares with the work it does on a page. */
export type WalkState = {
  /** Paces writes to the folder the walk is in. */
  pacer: PartitionPacer;
  /** Folders left until what waits in them is done: entered again only by a later step. */
  waits: ReadonlySet<string>;
};

/** What a kind of job does in the folders `walkTree` takes it through; `Stop` is `never` for work that never stops the walk. */
export interface FolderWork<E extends Entered, Stop extends 'stopped' = 'stopped'> {
  /**
   * Acts on a page of `entry`'s children (its files, and its subfolders, marked before they are entered):
   * `gone` when the folder is no longer the job's (nothing in it is touched), `stopped` to end the walk.
   */
  page(entry: E, children: readonly DriveNode[], walk: WalkState): Promise<PageDone<E> | 'gone' | Stop>;
  /** Ends `entry`, whose page came back empty; true when that removed something (it counts as progress). */
  emptied(entry: E, pacer: PartitionPacer): Promise<boolean>;
  /** What the walk ends with when pages in `entry` keep doing nothing: `stopped`, or it throws. */
  idle(entry: E): Stop;
  /** Whether a page that counts nothing still notes, now and then, that the job is alive. */
  heartbeat?: boolean;
}

/**
 * Walks the marked tree below `top` depth first, a page at a time, doing `work` in each folder until
 * `progress.outOfTime`: returns `done` when nothing is left, `out of time` when time ran out first, `waiting`
 * when what is left lies in folders that wait for another request, `stopped` when `work` says so. Nothing but
 * the marks is remembered between pages, so a later call (another step, after a crash) goes on from what is
 * left.
 *
 * A step reads the first page of the deepest folder it has entered: `work` handles its files and marks and
 * returns its subfolders, which are entered; a folder whose page comes back empty is ended (`work.emptied`).
 * Each folder is marked before its children are read: a writer that stores into it later reads the mark
 * after its write and withdraws; one that died before withdrawing left a child that the next page holds.
 * Memory stays at a page plus the folders entered and not yet ended.
 */
export async function walkTree<E extends Entered, Stop extends 'stopped'>(nodes: NodeStore, drive: string, top: E, work: FolderWork<E, Stop>, progress: Progress): Promise<Drained | Stop> {
  const entered: E[] = [top];
  const pacer = new PartitionPacer(PARTITION_WRITES_PER_SECOND);
  const waits = new Set<string>();
  let worked = false;
  let idle = 0;
  let lastNote = Date.now();
  while (entered.length > 0) {
    if (progress.outOfTime() && (worked || !progress.mustProgress)) return 'out of time';
    const entry = entered.at(-1)!;
    const { nodes: children } = await nodes.childrenPage(drive, entry.folder.path, WALK_PAGE);
    if (children.length === 0) {
      if (await work.emptied(entry, pacer)) {
        worked = true;
        idle = 0;
      }
      entered.pop();
      continue;
    }
    const done = await work.page(entry, children, { pacer, waits });
    if (done === 'gone') {
      entered.pop();
      continue;
    }
    if (done === 'stopped') return done;
    // Entered in reverse, so the first in name order is taken next.
    entered.push(...[...done.entering].reverse());
    if (done.counted > 0) worked = true;
    if (done.counted > 0 || (work.heartbeat && Date.now() - lastNote >= HEARTBEAT_MS)) {
      await progress.counted(done.counted);
      lastNote = Date.now();
    }
    if (done.counted > 0 || done.entering.length > 0) {
      idle = 0;
    } else if (done.waiting) {
      // Left, with the folders above it, until what waits in it is done.
      waits.add(entry.folder.id);
      entered.pop();
    } else if (++idle === IDLE_PAGES) {
      return work.idle(entry);
    }
  }
  return waits.size > 0 ? 'waiting' : 'done';
}

/**
 * `top` and every folder below it reached through subfolders that `enter` takes, each listed after the
 * folder it is in (so backwards, every folder comes before all above it). Every page of each is read; the
 * rest of the tree is not.
 */
export async function foldersWithin(nodes: NodeStore, drive: string, top: FolderNode, enter: (child: FolderNode) => boolean): Promise<FolderNode[]> {
  const found: FolderNode[] = [];
  const folders = [top];
  for (let folder = folders.pop(); folder; folder = folders.pop()) {
    found.push(folder);
    let after: string | undefined;
    do {
      const page = await nodes.childrenPage(drive, folder.path, WALK_PAGE, after);
      for (const child of page.nodes) if (child.kind === 'folder' && enter(child)) folders.push(child);
      after = page.last;
    } while (after !== undefined);
  }
  return found;
}
