import { randomUUID } from 'node:crypto';
import { mapLimit } from './concurrency';
import { conflict, invalid, notFound } from './errors';
import { ROOT, ancestorsOf } from './paths';
import { type Job, type FileNode, type FileRecords, type FolderNode, type JobQueue, type JobStore, MAX_FILES_PER_TRASH, type NodeStore, type ObjectStore, type TrashRow, type TrashStore } from './ports';
import { type TrashPolicy, relativeTo, stampOf, startedBy, trashOn, trashIdOf } from './trash';
import { WALK_CONCURRENCY } from './tree';
import { type EmptyDeps, beingMoved, deleteIfEmpty } from './folders';
import { reachableIn } from './visibility';
import { type JobKind, MOVE_WAIT_SECONDS, admitJob, handOff, releaseJob } from './background-jobs';
import type { PartitionPacer } from './partition-pacer';
import { type Drained, type Entered, type FolderWork, type Progress, outOfTimeIn, walkTree } from './tree-walk';

/** Record deletes in flight: each is its own conditional write (a batch write cannot be conditional). */
const DELETE_CONCURRENCY = 32;

// The handlers import these from here.
export { JOB_STALL_MS, REQUEST_DELETE_BUDGET_MS, STEP_DELETE_BUDGET_MS } from './background-jobs';

/**
 * `records`, `trash` and `trashPolicy`: with trash on, a recursive delete moves the tree into one folder row of
 * the trash (docs/trash-design.md, "A recursive delete into the trash") instead of deleting it.
 */
type Stores = { nodes: NodeStore; objects: ObjectStore; records?: FileRecords; trash?: TrashStore; trashPolicy?: TrashPolicy };
type JobDeps = Stores & { jobs: JobStore; queue: JobQueue };

/** What a delete request gets: the spec's answer, or a job that goes on after it (`202`). */
export type DeleteOutcome = { done: true; filesDeleted: number } | { done: false; job: Job };

/**
 * Deletes the folder at `path` whole, however long it takes (fsck's repair; the API uses `acceptDelete`).
 * With `recursive`, everything below it goes too, as the protocol in ports.ts says. Returns the files deleted.
 */
export async function deleteFolder(deps: Stores, drive: string, path: string, recursive: boolean): Promise<number> {
  const found = await folderToDelete(deps.nodes, drive, path);
  if (!recursive) return deleteEmpty(deps, drive, found);
  const root = await deps.nodes.markDeleting(drive, found, 'recursive');
  if (!root) throw notFound(`folder ${path} does not exist`);
  if (root.deleting !== 'recursive') throw beingMoved(path);
  let filesDeleted = 0;
  const drained = await drainTree(deps, drive, root, { outOfTime: () => false, counted: async (files) => void (filesDeleted += files) });
  if (drained === 'waiting') throw conflict(`a folder in ${path} is being moved; delete again once that move is done`, [path]);
  return filesDeleted;
}

/**
 * `DELETE /drive/folders`: a folder without `recursive` goes at once (or a `409` if it has children). A
 * recursive delete marks the folder (from then on it is gone for readers and refuses new children), notes a
 * job, and deletes for at most `budgetMs`: the whole tree in that time answers as the spec says; a bigger one
 * hands the job to the worker, through the queue, and the request answers with the job.
 */
export async function acceptDelete(deps: JobDeps, drive: string, path: string, recursive: boolean, budgetMs: number): Promise<DeleteOutcome> {
  const found = await folderToDelete(deps.nodes, drive, path);
  if (!recursive) return { done: true, filesDeleted: await deleteEmpty(deps, drive, found) };
  // The id first: its place among the drive's running jobs is reserved under it, before any write.
  const id = randomUUID();
  await admitJob(deps.jobs, { id, drive });
  // The job is noted before any write, the mark included: a request that dies at any point after it leaves it
  // running, and the sweep sends it to a worker, which marks the folder if the request did not get to.
  const now = new Date().toISOString();
  const job: Job = { id, drive, kind: 'delete', path, folderId: found.id, status: 'running', files: 0, createdAt: now, ...startedBy(deps.trashPolicy), updatedAt: now };
  await deps.jobs.create(job);
  // With trash on, the folder's row is written before the mark (filling), so that every file the walk takes
  // has a row to go into.
  const row = trashOn(deps.trashPolicy) && deps.trash && deps.records ? folderRow(job, found, deps.trashPolicy) : undefined;
  if (row) await deps.trash!.begin(drive, row);
  const root = await deps.nodes.markDeleting(drive, found, 'recursive');
  if (!root || root.deleting !== 'recursive') {
    if (row) await deps.trash!.abandon(drive, row.id);
    await deps.jobs.finish(job.id, 0);
    await releaseJob(deps.jobs, job);
    throw root ? beingMoved(path) : notFound(`folder ${path} does not exist`);
  }
  const outOfTime = outOfTimeIn(budgetMs);
  let filesDeleted = 0;
  // Counted into the job as each page goes, as the worker counts: a request that dies keeps its count.
  const drained = await drainTree(
    deps,
    drive,
    root,
    {
      outOfTime,
      counted: async (files) => {
        filesDeleted += files;
        await deps.jobs.advanced(job.id, files);
      },
    },
    row,
  );
  if (drained === 'done') {
    if (row) await fillRow(deps, drive, row);
    await deps.jobs.finish(job.id, 0);
    await releaseJob(deps.jobs, job);
    return { done: true, filesDeleted };
  }
  await handOff(deps, job, drained === 'waiting' ? { delaySeconds: MOVE_WAIT_SECONDS } : {});
  return { done: false, job: { ...job, files: filesDeleted, updatedAt: new Date().toISOString() } };
}

/**
 * One step of the delete job `job`, for at most `budgetMs` (`advanceJob` in jobs.ts claims it and hands it
 * on): every file and folder it deletes goes by a conditional write, so a step that dies part-way is
 * followed by one that goes on from what is left, and counts each file once.
 */
export async function deleteStep(deps: Stores & { jobs: JobStore }, job: Job, budgetMs: number): Promise<Drained> {
  // With trash on, the row the request wrote for this job (its id is the job's): filling, the walk goes on into it.
  const stored = trashOn(deps.trashPolicy) && deps.trash && deps.records ? await deps.trash.get(job.drive, trashIdOf(job)) : undefined;
  const row = stored?.state === 'filling' ? stored : undefined;
  const found = await deps.nodes.get(job.drive, job.path);
  // The folder the request took, marked now if the request died before it could; gone if another delete of
  // the same folder (fsck's repair) finished it.
  const root = found?.kind === 'folder' && found.id === job.folderId ? (found.deleting === 'recursive' ? found : await deps.nodes.markDeleting(job.drive, found, 'recursive')) : undefined;
  if (!root) {
    // Gone: the walk ended (a step that died before it filled the row fills it now).
    if (row) await fillRow(deps, job.drive, row);
    return 'done';
  }
  // A move took it between the request's note and its mark: the delete goes on once the move is done.
  if (root.deleting !== 'recursive') return 'waiting';
  const drained = await drainTree(
    deps,
    job.drive,
    root,
    {
      outOfTime: outOfTimeIn(budgetMs),
      mustProgress: true,
      counted: (files) => deps.jobs.advanced(job.id, files),
    },
    row,
  );
  if (drained === 'done' && row) await fillRow(deps, job.drive, row);
  return drained;
}

/** The folder row a recursive delete's job fills (its id derived from the job's, so every step finds it). */
function folderRow(job: Job, folder: FolderNode, policy: TrashPolicy): TrashRow {
  const stamp = stampOf(policy, 'deleted');
  return { id: trashIdOf(job), type: 'folder', path: job.path, bytes: 0, files: 0, ...stamp, folderId: folder.id, folderCreatedAt: folder.createdAt, state: 'filling', job: job.id };
}

/** Members counted a page at a time when a folder row is filled. */
const COUNT_PAGE = 1000;

/** Ends a folder row's filling: its files and bytes counted from its members, its purge time from its delete's, its due entry written. */
async function fillRow(deps: Stores, drive: string, row: TrashRow): Promise<void> {
  const trash = deps.trash!;
  let files = 0;
  let bytes = 0;
  let after: string | undefined;
  do {
    const page = await trash.members(drive, row.id, COUNT_PAGE, after);
    for (const member of page.members) {
      if (!member.file) continue;
      files++;
      bytes += member.file.size;
    }
    after = page.last;
  } while (after !== undefined);
  await trash.filled(drive, row.id, { files, bytes, purgeAt: row.purgeAt });
}

/** Recursive deletes as the worker runs them: a delete notes no end of its own. */
export const deleteJob: JobKind<Stores & { jobs: JobStore }> = { step: deleteStep, ended: () => undefined };

/**
 * The folder at `path`, or the spec's `404` (and `422` for the root). A folder below one a recursive delete
 * has taken is gone already (404); the taken folder itself may be deleted again, which finishes that delete.
 */
async function folderToDelete(nodes: NodeStore, drive: string, path: string): Promise<FolderNode> {
  if (path === ROOT) throw invalid('path "/" is the root folder, which cannot be deleted');
  const [found, above] = await Promise.all([nodes.get(drive, path), nodes.getMany(drive, ancestorsOf(path))]);
  const seen = reachableIn(above, path);
  if (found?.kind === 'file' && seen) throw notFound(`${path} is a file, not a folder`);
  if (found?.kind !== 'folder' || !seen) throw notFound(`folder ${path} does not exist`);
  // Inside a folder being moved: its turn comes when the move is done (the folder itself refuses its mark).
  const moving = ancestorsOf(path).find((folder) => (above.get(folder) as FolderNode | undefined)?.moving);
  if (moving) throw beingMoved(moving);
  return found;
}

/**
 * Deletes `folder` if it has no children (`deleteIfEmpty`: a job noted, the folder marked `empty`, its children
 * looked for, then removed or unmarked); a `409` if it has, with the folder left as it was.
 */
async function deleteEmpty(deps: EmptyDeps, drive: string, folder: FolderNode): Promise<number> {
  const inProgress = () => conflict(`folder ${folder.path} is being deleted with everything in it; pass recursive=true to finish that delete`, [folder.path]);
  if (folder.deleting === 'recursive') throw inProgress();
  const { outcome, marked } = await deleteIfEmpty(deps, drive, folder);
  if (outcome === 'refused') {
    if (!marked) throw notFound(`folder ${folder.path} does not exist`);
    if (marked.deleting === 'recursive') throw inProgress();
    throw beingMoved(folder.path);
  }
  if (outcome === 'has children') throw conflict(`folder ${folder.path} is not empty; pass recursive=true to delete it and everything in it`, [folder.path]);
  if (outcome === 'gone') throw notFound(`folder ${folder.path} does not exist`);
  return 0;
}

/**
 * Deletes everything below the marked folder `root`, and `root`, as `walkTree` walks it: in each folder its
 * files go (bytes, then records), its subfolders are marked and entered, and a folder whose page comes back
 * empty is removed. Returns `waiting` when what is left lies in a folder a move has taken (the delete goes on
 * once the move is done).
 */
async function drainTree(deps: Stores, drive: string, root: FolderNode, progress: Progress, row?: TrashRow): Promise<Drained> {
  const work: FolderWork<Entered, never> = {
    heartbeat: true,
    emptied: async ({ folder }, pacer) => {
      // Gone already (another step took it) or removed now: either way it is done.
      await pacer.take();
      await deps.nodes.removeFolder(drive, folder);
      return true;
    },
    page: async ({ folder }, page, { pacer, waits }) => {
      // The folder read again after its page: if it is no longer the one this delete marked (another step
      // finished it, and a writer has made the path anew), nothing of the page is this delete's to touch.
      const still = await deps.nodes.get(drive, folder.path);
      if (still?.kind !== 'folder' || still.id !== folder.id || still.deleting !== 'recursive') return 'gone';
      const files = page.filter((node): node is FileNode => node.kind === 'file');
      const deleted = files.length === 0 ? 0 : row ? await trashFiles(deps, drive, files, row, pacer) : await deleteFiles(deps, drive, files, pacer);
      const subfolders = page.filter((node): node is FolderNode => node.kind === 'folder');
      const marked = await mapLimit(subfolders, WALK_CONCURRENCY, async (sub) => {
        // With trash on, a member for the subfolder before its mark (idempotent): a restore makes it again with its id.
        if (row) await deps.trash!.putMember(drive, row.id, { relative: relativeTo(row, sub.path), folder: { id: sub.id, createdAt: sub.createdAt } });
        if (sub.deleting === 'recursive') return sub;
        await pacer.take();
        return deps.nodes.markDeleting(drive, sub, 'recursive');
      });
      // A subfolder a move has taken comes back unmarked: the delete leaves it, and its folder, for later.
      // So does a folder that holds one (it waits too, and its folder after it).
      const entering = marked.filter((sub): sub is FolderNode => sub?.deleting === 'recursive' && !waits.has(sub.id));
      const waiting = marked.some((sub) => sub !== undefined && (sub.deleting !== 'recursive' || waits.has(sub.id)));
      return { counted: deleted, entering: entering.map((sub) => ({ folder: sub })), waiting };
    },
    idle: ({ folder }) => {
      throw conflict(`files keep replacing each other in ${folder.path} while it is deleted; repeat the delete to finish it`, [folder.path]);
    },
  };
  return walkTree(deps.nodes, drive, { folder: root }, work, progress);
}

/**
 * Deletes the bytes of `files` (one folder's), then each record where it still has the id seen: an
 * interruption between the two leaves records without bytes in a marked folder (hidden, and finished by the
 * next step), never bytes without a record. A record replaced meanwhile is left for the next page to read
 * again. Returns how many records it deleted.
 */
async function deleteFiles(deps: Stores, drive: string, files: readonly FileNode[], pacer: PartitionPacer): Promise<number> {
  await deps.objects.deleteMany(files.map((file) => file.objectKey));
  const gone = await mapLimit(files, DELETE_CONCURRENCY, async (file) => {
    await pacer.take();
    return deps.nodes.removeIfSame(drive, file.path, file.id);
  });
  return gone.filter(Boolean).length;
}

/**
 * Moves the records of `files` (one folder's) into the folder row `row`, `MAX_FILES_PER_TRASH` a transaction
 * (`FileRecords.trashMany`: each record out, its member in, all or nothing): nothing is deleted. A batch with a
 * record changed since the read (a withdrawing writer's undo) writes nothing; its other files are tried again
 * without it, and the changed path is read on the next page. Returns how many records it moved.
 */
async function trashFiles(deps: Stores, drive: string, files: readonly FileNode[], row: TrashRow, pacer: PartitionPacer): Promise<number> {
  let moved = 0;
  for (let i = 0; i < files.length; i += MAX_FILES_PER_TRASH) {
    let batch = files.slice(i, i + MAX_FILES_PER_TRASH);
    while (batch.length > 0) {
      await pacer.take();
      const outcome = await deps.records!.trashMany(drive, batch, { folder: row });
      if ('trashed' in outcome) {
        moved += batch.length;
        break;
      }
      const changed = new Set(outcome.changed.map((file) => file.id));
      // Every file failed (the row is no longer filling): nothing of this page is this delete's any more.
      if (changed.size === batch.length) break;
      batch = batch.filter((file) => !changed.has(file.id));
    }
  }
  return moved;
}

/** The spec's answer for a finished delete. */
export function deleteResult(path: string, filesDeleted: number): { deleted: true; path: string; files_deleted: number } {
  return { deleted: true, path, files_deleted: filesDeleted };
}
