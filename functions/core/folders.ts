import { randomUUID } from 'node:crypto';
import { cleanUp } from './clean-up';
import { settleLimit } from './concurrency';
import { DriveError, conflict } from './errors';
import { ROOT, ancestorsOf, parentOf } from './paths';
import type { DriveNode, FolderNode, Job, JobStore, NodeStore } from './ports';
import type { JobKind } from './background-jobs';
import { byDepth, depthOf } from './tree';
import { type FolderState, folderState } from './protocol/states';

// Folders created at once, one depth at a time.
const CREATE_CONCURRENCY = 8;

/** The 409 for a folder a delete has taken: it is gone for readers, so the message says no more than that. */
export const beingDeleted = (path: string) => conflict(`folder ${path} is being deleted; it takes no new files or folders`, [path]);

/**
 * The 409 for a folder a move has taken, at either end of the move: a wait, not a refusal for good (a large
 * upload keeps its parts and session for another try once the move is done).
 */
export class FolderBeingMoved extends DriveError {
  constructor(readonly path: string) {
    super('conflict', `folder ${path} is being moved; it takes no new files or folders until the move is done`, {}, undefined, [path]);
  }
}
export const beingMoved = (path: string) => new FolderBeingMoved(path);

/**
 * Makes each of `paths` a folder, with its missing parents, like `mkdir -p`, and returns the folders by
 * path (`paths` and every ancestor). Reads them all at once (and `alsoRead`); creates the missing ones top-down, a depth at a
 * time, so an interruption leaves only folders whose parents exist. Throws `conflict` if a file holds one
 * of them or a delete has taken one, having removed what it created that nobody used.
 */
export async function ensureFolders(
  nodes: NodeStore,
  drive: string,
  paths: readonly string[],
  now: string,
  /** Other paths to read in the same batch: what stands there is returned in `read`. */
  alsoRead: readonly string[] = [],
  /**
   * `jobs`: where a failure that removes what it made notes its `empty` jobs (`deleteIfEmpty`).
   * `beforeCreate`: waited for before the first folder is made, only if one is missing (an upload of one
   * file: its put, in flight during the read; a folder is made only once its bytes are stored, and a put
   * that failed makes none).
   * `made`: the id and creation time a missing folder is made with (a restore's: the folder it was), else new.
   * `standing`: a folder that must stand, with its id, and is never made (a restore job's destination, which
   * only its request makes): it missing (or another folder there) throws `standing.gone()`, nothing made.
   */
  options: { jobs?: JobStore; beforeCreate?: () => Promise<void>; made?: MadeAs; standing?: Standing } = {},
): Promise<{ folders: Map<string, FolderNode>; created: FolderNode[]; read: Map<string, DriveNode> }> {
  const wanted = [...new Set(paths.flatMap((path) => (path === ROOT ? [] : [...ancestorsOf(path), path])))].filter((path) => path !== ROOT);
  const found = await nodes.getMany(drive, [...wanted, ...alsoRead]);
  const { standing } = options;
  if (standing) {
    const there = found.get(standing.path) ?? (await nodes.get(drive, standing.path));
    if (there?.kind !== 'folder' || there.id !== standing.id) throw standing.gone();
  }
  const folders = new Map<string, FolderNode>();
  const missing: string[] = [];
  for (const path of wanted) {
    const node = found.get(path);
    if (node) folders.set(path, usable(node, paths));
    else missing.push(path);
  }
  // Missing at or above the folder that must stand: it went after the read above; nothing is made.
  if (standing && missing.some((path) => isAtOrAbove(path, standing.path))) throw standing.gone();

  const created: FolderNode[] = [];
  try {
    if (missing.length > 0 && options.beforeCreate) await options.beforeCreate();
    for (const level of byDepth(missing, (path) => path, 'shallowest first')) {
      // Every create of a depth settles before a failure is thrown, so `created` names all that were made.
      const results = await settleLimit(level, CREATE_CONCURRENCY, async (path) => {
        const folder: FolderNode = { kind: 'folder', id: randomUUID(), path, createdAt: now, ...options.made?.(path) };
        const held = await nodes.createFolder(drive, folder);
        if (held?.id === folder.id) created.push(folder);
        folders.set(path, usable(held ?? { kind: 'file', path }, paths));
      });
      const failure = results.find((result) => result.status === 'rejected');
      if (failure) throw failure.reason;
    }
  } catch (error) {
    await removeUnused({ nodes, jobs: options.jobs }, drive, created);
    throw error;
  }
  return { folders, created, read: found };
}

/** A folder a caller needs standing and never makes (`ensureFolders`' `standing`), and the error if it is gone. */
export type Standing = { path: string; id: string; gone: () => Error };

/** Whether `path` is `other` or a folder above it. */
const isAtOrAbove = (path: string, other: string) => path === other || other.startsWith(path === ROOT ? ROOT : `${path}/`);

/** The id and creation time the folder at a path is made with, if not new ones (a restore keeps its folders'). */
export type MadeAs = (path: string) => { id: string; createdAt: string } | undefined;

/** Times folders are made again that a delete removed while they were made, before the request gives up. */
const MAKE_ATTEMPTS = 3;

/**
 * Makes `paths` folders as a writer does (protocol/README.md, "Writers", steps 2, 3 and 5): `ensureFolders`,
 * then the folders above them read again. A delete or a move that took one of those meanwhile refuses them
 * (what was made and nobody used goes); one a delete removed meanwhile is made again, up to three times, then
 * `gone()` is thrown. So a delete racing them never leaves a folder without its parent.
 */
export async function makeFolders(
  nodes: NodeStore,
  drive: string,
  paths: readonly string[],
  now: string,
  gone: () => Error,
  /**
   * `keep`: a path of `paths` the caller answers for (a mkdir's): found there, made by another request, the
   * folder is noted `kept` once the read above passed, so that that request, failing, leaves it
   * (`removeUnused`). `jobs`: where a failure that removes what it made notes its `empty` jobs. `made`: as
   * `ensureFolders`'.
   */
  options: { keep?: string; jobs?: JobStore; made?: MadeAs; standing?: Standing } = {},
): Promise<Map<string, FolderNode>> {
  const { keep, jobs, made, standing } = options;
  for (let attempt = 1; ; attempt++) {
    const { folders, created } = await ensureFolders(nodes, drive, paths, now, [], { jobs, made, standing });
    const { missing, deleting, moving } = await recheckFolders(nodes, drive, paths.map(parentOf));
    if (deleting.length > 0 || moving.length > 0) {
      await removeUnused({ nodes, jobs }, drive, created);
      throw deleting.length > 0 ? beingDeleted(deleting[0]) : beingMoved(moving[0]);
    }
    // The folder that must stand went meanwhile: what was made below it goes, and it is not made again.
    if (standing && missing.some((path) => isAtOrAbove(path, standing.path))) {
      await removeUnused({ nodes, jobs }, drive, created);
      throw standing.gone();
    }
    if (missing.length === 0 && (keep === undefined || (await noteKept({ nodes, jobs }, drive, folders, created, keep)))) return folders;
    if (attempt === MAKE_ATTEMPTS) throw gone();
  }
}

/**
 * Notes `kept` the folder at `path` that the read found made by another request (protocol/README.md,
 * "Writers", the mkdir), after the read above passed and only while it is the folder read (`keepFolder`, by
 * its id): a note never lands on a folder made after that read, which a delete that marked a folder above
 * meanwhile may not have seen (gap 10). False if that folder is gone: its maker let go of it, or a delete
 * took it, and the caller goes round again (reads, makes it itself, reads above). One made by this request,
 * or noted already, needs no note. A folder a delete or a move has taken since refuses the mkdir, as at the read.
 */
async function noteKept(deps: EmptyDeps, drive: string, folders: Map<string, FolderNode>, created: readonly FolderNode[], path: string): Promise<boolean> {
  const found = folders.get(path);
  if (!found || found.kept || created.some((folder) => folder.path === path)) return true;
  const noted = await deps.nodes.keepFolder(drive, found);
  if (!noted) return false;
  try {
    folders.set(path, usable(noted, [path]));
  } catch (error) {
    await removeUnused(deps, drive, created);
    throw error;
  }
  return true;
}

/**
 * The protocol's look after a write (protocol/README.md, "Writers", step 5): reads again the folders `paths` and their ancestors, which
 * something was just stored below. Tells which are missing now (a delete removed them meanwhile), which
 * a delete has marked (`deleting`, either kind: a writer withdraws from both), which of those a recursive
 * delete has (`recursive`: only that one removes what is below, so only it may take what a writer replaced;
 * an `empty` mark is cleared again once the folder is found to have children), and which a move has.
 */
export async function recheckFolders(nodes: NodeStore, drive: string, paths: readonly string[]): Promise<{ missing: string[]; deleting: string[]; recursive: string[]; moving: string[] }> {
  const wanted = [...new Set(paths.flatMap((path) => [...ancestorsOf(path), path]))].filter((path) => path !== ROOT);
  // Only the root, which always stands: nothing to read.
  const now = wanted.length > 0 ? await nodes.getMany(drive, wanted) : new Map<string, DriveNode>();
  return {
    missing: wanted.filter((path) => now.get(path)?.kind !== 'folder'),
    deleting: wanted.filter((path) => stateAt(now, path) === 'deleting'),
    recursive: wanted.filter((path) => {
      const node = now.get(path);
      return node?.kind === 'folder' && node.deleting === 'recursive';
    }),
    moving: wanted.filter((path) => stateAt(now, path) === 'moving'),
  };
}

/**
 * Whether the folders `paths` (and those above them) are held only by `empty` marks at or below `top` (an
 * empty-folder delete looking for children, or a writer letting go of a folder it made): brief, cleared once
 * children are found, so a job waits and tries again instead of stopping. False when none is so marked, or a
 * recursive delete's mark, or any mark above `top`, is among them.
 */
export async function onlyEmptyMarks(nodes: NodeStore, drive: string, paths: readonly string[], top: string): Promise<boolean> {
  const { deleting, recursive } = await recheckFolders(nodes, drive, paths);
  return deleting.length > 0 && recursive.length === 0 && deleting.every((path) => path === top || path.startsWith(`${top}/`));
}

/** The state of the folder at `path` among `nodes` (README.md in protocol/), or undefined if no folder is there. */
function stateAt(nodes: ReadonlyMap<string, DriveNode>, path: string): FolderState['state'] | undefined {
  const node = nodes.get(path);
  return node?.kind === 'folder' ? folderState(node).state : undefined;
}

/** `node` as a folder to store into, or the conflict it is: a file, or a folder a delete has taken. */
function usable(node: DriveNode | { kind: 'file'; path: string }, asked: readonly string[]): FolderNode {
  if (node.kind === 'file') {
    throw conflict(asked.includes(node.path) ? `${node.path} is a file, so it cannot be a folder` : `${node.path} is a file, so nothing can be stored below it`, [node.path]);
  }
  if (node.deleting) throw beingDeleted(node.path);
  if (node.moving) throw beingMoved(node.path);
  return node;
}

/**
 * Removes folders a failed request created, deepest first, as an empty-folder delete removes a folder
 * (`deleteIfEmpty`, protocol/README.md, "Writers", step 6): each only while it is ours, unmarked and not
 * `kept` (a folder a delete or a move has taken since is theirs to finish, one a mkdir answered for stays),
 * marked `empty` before its children are looked for, so that a writer storing into it meanwhile either is
 * seen or sees the mark after its write and withdraws. The first folder found with children stops it: the
 * folders above hold that one. Failure paths only.
 */
export async function removeUnused(deps: EmptyDeps, drive: string, created: readonly FolderNode[]): Promise<void> {
  await cleanUp(async () => {
    for (const folder of [...created].sort((a, b) => depthOf(b.path) - depthOf(a.path))) {
      const { outcome } = await deleteIfEmpty(deps, drive, folder, { unmarked: true });
      if (outcome === 'has children') break;
    }
  });
}

/** What `deleteIfEmpty` uses: without `jobs` (fsck's repair, which is run again), no job is noted. */
export type EmptyDeps = { nodes: NodeStore; jobs?: JobStore };

/**
 * Removes `folder` if it has no children (protocol/README.md, "An empty-folder delete"): notes a job (kind
 * `empty`) **before** the mark, so that a request dying after it leaves the job to finish it; marks the folder
 * `empty`; looks for children; removes it (none) or clears the mark (some); ends the job. Answers how it went,
 * and the folder as the mark found it (`refused`: not there, or held by a move or a recursive delete, or, with
 * `unmarked`, by anything).
 */
export async function deleteIfEmpty(
  deps: EmptyDeps,
  drive: string,
  folder: FolderNode,
  only: { unmarked?: true } = {},
): Promise<{ outcome: 'removed' | 'has children' | 'refused' | 'gone'; marked?: FolderNode }> {
  const { nodes, jobs } = deps;
  const now = new Date().toISOString();
  const job: Job = { id: randomUUID(), drive, kind: 'empty', path: folder.path, folderId: folder.id, status: 'running', files: 0, createdAt: now, updatedAt: now };
  if (jobs) await jobs.create(job);
  // A job left running by a failed end is finished by its step, which finds the folder no longer marked.
  const end = () => cleanUp(async () => jobs && (await jobs.finish(job.id, 0)));
  const marked = await nodes.markDeleting(drive, folder, 'empty', only.unmarked ? { unmarked: true } : undefined);
  if (marked?.deleting !== 'empty') {
    await end();
    return { outcome: 'refused', marked };
  }
  // Marked before looking: a writer that stores into it now reads the mark after its write and withdraws.
  const outcome = await finishEmpty(nodes, drive, marked);
  await end();
  return { outcome, marked };
}

/** The end of an empty-folder delete of the folder `marked` (marked `empty`): removed, or its mark cleared. */
async function finishEmpty(nodes: NodeStore, drive: string, marked: FolderNode): Promise<'removed' | 'has children' | 'gone'> {
  if (await nodes.hasChildren(drive, marked.path)) {
    await nodes.unmarkDeleting(drive, marked);
    return 'has children';
  }
  return (await nodes.removeFolder(drive, marked)) ? 'removed' : 'gone';
}

/**
 * The step of an `empty` job whose request died after its mark (`advanceJob` runs it once the sweep sends
 * the job on): the folder still marked `empty` with the job's id goes if it has no children, else its mark
 * is cleared, as the request would have. A folder not so marked was finished (or never marked): done.
 */
export const emptyJob: JobKind<{ nodes: NodeStore }> = {
  step: async (deps, job) => {
    const found = await deps.nodes.get(job.drive, job.path);
    if (found?.kind === 'folder' && found.id === job.folderId && found.deleting === 'empty') await finishEmpty(deps.nodes, job.drive, found);
    return 'done';
  },
  ended: () => undefined,
};
