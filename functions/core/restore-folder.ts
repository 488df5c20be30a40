import { randomUUID } from 'node:crypto';
import { type JobKind, MOVE_WAIT_SECONDS, admitJob, handOff, namedJobId, releaseJob, stepLeaseMs } from './background-jobs';
import { cleanUp } from './clean-up';
import { DriveError, conflict } from './errors';
import { FolderBeingMoved, beingDeleted, beingMoved, makeFolders, onlyEmptyMarks, recheckFolders } from './folders';
import { checkAbove } from './move';
import { ancestorsOf, parentOf } from './paths';
import { type DriveNode, type FileNode, type FileRecords, type FolderNode, type Job, type JobQueue, type JobStore, MAX_FILES_PER_TRASH, type NodeStore, type TrashMember, type TrashRow, type TrashStore } from './ports';
import { type RestoreDeps, checkRestorable, noSuchItem, restoreFile } from './restore';
import { nowOf, stampOf, startedBy } from './trash';
import { type StepOutcome, outOfTimeIn } from './tree-walk';

// A trashed folder's restore (issue 28; protocol/README.md, "Trash"; docs/trash-design.md, "Restore"): a job
// shaped like a folder copy. The row is claimed `restoring` by the job (noted first), the destination folder
// made, then the row's members are put back a page at a time in path order (parents first): folders made with
// their ids, files by `FileRecords.restoreMembers` (record in, member out, each parent standing unmarked, the
// row still the job's, one write). A file whose path is taken since the delete stays a member; the end removes
// the row (nothing left) or releases it with what is left.

/** Members read at a time by a restore step. */
const RESTORE_PAGE = 200;
/** Members counted at a time at a restore's end. */
const COUNT_PAGE = 1000;
/** Times a page's folders are made again after finding a file where one of them goes (that subtree stays in the trash). */
const BLOCKED_ATTEMPTS = 3;

export type RestoreJobDeps = { nodes: NodeStore; records: FileRecords; trash?: TrashStore; jobs: JobStore; trashPolicy?: RestoreDeps['trashPolicy'] };
type RequestDeps = RestoreDeps & { jobs: JobStore; queue: JobQueue };

/** What a restore request gets: the File or Folder restored, or the job that restores a big folder (`202`). */
export type RestoreOutcome = { done: true; node: FileNode | FolderNode } | { done: false; job: Job };

/**
 * `POST /drive/trash/restore`: a file as `restoreFile` restores it; a folder, with everything trashed with it,
 * as a job that works for at most `budgetMs` in the request (then `202`, and the worker goes on), as a
 * recursive delete does. The destination (the row's path, or `to`): nothing there, the folder is made with its
 * own id; a folder there, only with `overwrite` (restored into); a file there, only with `overwrite` (trashed,
 * `replaced`); otherwise `409`. Missing parents are made, as a writer makes them.
 */
export async function acceptRestore(
  deps: RequestDeps,
  drive: string,
  id: string,
  /**
   * `attempt`: what names this attempt at the operation across its retries (the handler's: the caller's
   * idempotency scope and `Idempotency-Key`), so that a retry after a failure that came after the claim finds
   * the job its first try noted (`attemptJobId`) and answers for it instead of `409`/`404`.
   */
  options: { to?: string; overwrite?: boolean; visible?: (row: TrashRow) => boolean; attempt?: string },
  budgetMs: number,
): Promise<RestoreOutcome> {
  const { nodes } = deps;
  const trash = deps.trash;
  const now = nowOf(deps.trashPolicy);
  const stored = await trash.get(drive, id);
  // A retry of an attempt whose job is noted: answered for that job (202 running, 200 restored), or resumed.
  // Only a folder's restore has a job (a file's costs no read more); a row gone may be one its job emptied.
  const named = options.attempt !== undefined && stored?.type !== 'file';
  let jobId = named ? attemptJobId(drive, id, options) : randomUUID();
  let earlier = named ? await deps.jobs.get(drive, jobId) : undefined;
  if (earlier && (earlier.kind !== 'restore' || earlier.trashId !== id)) earlier = undefined;
  if (earlier?.status === 'done') {
    if (earlier.ended === 'restored') {
      const node = await nodes.get(drive, earlier.to!);
      if (node?.kind === 'folder' && node.id === earlier.toId) return { done: true, node };
    }
    // Stopped (or what it restored is gone since): this try is a new attempt, under a new id.
    jobId = randomUUID();
    earlier = undefined;
  }
  if (earlier && stored && (!options.visible || options.visible(stored)) && stored.restoring === jobId) return resumeRestore(deps, earlier, stored, options, budgetMs);
  if (earlier && !stored) {
    // Its row gone and its folder standing: the first try's job put everything back and died before its end.
    const node = await nodes.get(drive, earlier.to!);
    if (node?.kind === 'folder' && node.id === earlier.toId) return { done: true, node };
  }
  // Noted by a first try that died before its claim (its step ends it, finding the row not its own): a new attempt.
  if (earlier) jobId = randomUUID();
  const row = checkRestorable(stored, id, now, options.visible);
  if (row.type === 'file') return { done: true, node: await restoreFile(deps, drive, id, options, row) };
  const to = options.to ?? row.path;

  const read = await nodes.getMany(drive, [to, ...ancestorsOf(to)]);
  checkAbove(read, to);
  const there = read.get(to);
  if (there?.kind === 'folder') {
    if (there.deleting) throw beingDeleted(to);
    if (there.moving) throw beingMoved(to);
    if (options.overwrite !== true) throw conflict(`${to} is taken; pass "overwrite": true to restore into the folder there`, [to]);
  }
  if (there?.kind === 'file' && options.overwrite !== true) throw conflict(`${to} is taken; pass "overwrite": true to replace the file there`, [to]);

  const at = new Date().toISOString();
  // Restored into the folder that stands there, or made with the trashed folder's id (a restore of what a
  // partial restore left makes a new one: that id is in the tree already).
  const into = there?.kind === 'folder' ? { id: there.id, createdAt: there.createdAt } : { id: row.folderId ?? randomUUID(), createdAt: row.folderCreatedAt ?? now.toISOString() };
  // The id first: its place among the drive's running jobs is reserved under it, before any write.
  await admitJob(deps.jobs, { id: jobId, drive });
  const job: Job = { id: jobId, drive, kind: 'restore', path: row.path, folderId: into.id, to, toId: into.id, toCreatedAt: into.createdAt, trashId: row.id, status: 'running', files: 0, createdAt: at, ...startedBy(deps.trashPolicy), updatedAt: at };
  // Noted before the claim: a request that dies after it leaves a job that the sweep sends on, which ends the claim.
  await deps.jobs.create(job);
  const giveUp = async () => {
    await cleanUp(async () => {
      await trash.release(drive, row.id, job.id);
      await deps.jobs.finish(job.id, 0, 'stopped');
    });
    await releaseJob(deps.jobs, job);
  };
  const claimed = await trash.claim(drive, row.id, 'restore', job.id, now, 0);
  if (!claimed) {
    await giveUp();
    // Claimed by another restore or a purge meanwhile, or gone: read again, it answers 404 or 409.
    checkRestorable(await trash.get(drive, id), id, nowOf(deps.trashPolicy), options.visible);
    throw conflict(`trash item ${id} (${row.path}) is being restored`, [row.path]);
  }
  return makeAndRestore(deps, job, row, there, into, budgetMs, giveUp);
}

/**
 * The request's part after its claim: a file at the destination trashed (`overwrite`), the destination made
 * (or the folder there restored into), then the job's first step for at most `budgetMs`: `200` if that ends
 * it, `202` with the job if not, `409` if it stopped. `giveUp` releases the claim and ends the job.
 */
async function makeAndRestore(
  deps: RequestDeps,
  job: Job,
  row: TrashRow,
  there: DriveNode | undefined,
  into: { id: string; createdAt: string },
  budgetMs: number,
  giveUp: () => Promise<void>,
): Promise<RestoreOutcome> {
  const { nodes } = deps;
  const { drive } = job;
  const to = job.to!;
  const now = nowOf(deps.trashPolicy);
  let made: FolderNode;
  try {
    if (there?.kind === 'file') {
      const stamp = deps.trashPolicy ? stampOf(deps.trashPolicy, 'replaced') : { reason: 'replaced' as const, deletedAt: now.toISOString(), purgeAt: row.purgeAt };
      const outcome = await deps.records.trashMany(drive, [there], { rows: stamp });
      if (!('trashed' in outcome)) throw changedWhileRestored(to);
    }
    const folders = await makeFolders(nodes, drive, [to], new Date().toISOString(), () => conflict(`the folders above ${to} were deleted while the restore made them; try again`, [to]), {
      jobs: deps.jobs,
      made: (path) => (path === to ? into : undefined),
    });
    made = folders.get(to)!;
    // Another request made a folder there between the read and the make: this restore answered for nothing yet.
    if (made.id !== into.id) throw changedWhileRestored(to);
  } catch (error) {
    await giveUp();
    throw error;
  }

  const outcome = await restoreStep({ ...deps, trash: deps.trash }, job, budgetMs, false);
  if (outcome === 'done') {
    await deps.jobs.finish(job.id, 0, 'restored');
    await releaseJob(deps.jobs, job);
    return { done: true, node: made };
  }
  if (outcome === 'stopped') {
    await deps.jobs.finish(job.id, 0, 'stopped');
    await releaseJob(deps.jobs, job);
    throw conflict(`the restore stopped: ${to} was deleted or moved by another request meanwhile; what was not restored is still in the trash`, [to]);
  }
  await handOff(deps, job, outcome === 'waiting' ? { delaySeconds: MOVE_WAIT_SECONDS } : {});
  return { done: false, job: (await deps.jobs.get(drive, job.id)) ?? job };
}

/**
 * A retry of a restore whose first try claimed the row for its job `job` and then failed (a `5xx`, a request
 * that died): the job is taken as a worker takes it (its step lease), so that no step of it runs beside this
 * one. Held by a step already (the sweep sent it on): `202` with it. Else the first try's work goes on as its
 * request would have: the destination made if it is not yet (the request's to make, never a step's), then a
 * step, answered as the first try would have answered.
 */
async function resumeRestore(deps: RequestDeps, earlier: Job, row: TrashRow, options: { overwrite?: boolean }, budgetMs: number): Promise<RestoreOutcome> {
  const { drive } = earlier;
  const held = await deps.jobs.claim(drive, earlier.id, stepLeaseMs(budgetMs));
  if (held === 'busy') return { done: false, job: (await deps.jobs.get(drive, earlier.id)) ?? earlier };
  if (!held) throw noSuchItem(row.id);
  if (held.status === 'done') {
    const node = held.ended === 'restored' ? await deps.nodes.get(drive, held.to!) : undefined;
    if (node?.kind === 'folder' && node.id === held.toId) return { done: true, node };
    throw conflict(`trash item ${row.id} (${row.path}) is being restored`, [row.path]);
  }
  const job = held;
  const to = job.to!;
  const into = { id: job.toId!, createdAt: job.toCreatedAt! };
  const giveUp = async () => {
    await cleanUp(async () => {
      await deps.trash.release(drive, row.id, job.id);
      await deps.jobs.finish(job.id, 0, 'stopped');
    });
    await releaseJob(deps.jobs, job);
  };
  const read = await deps.nodes.getMany(drive, [to, ...ancestorsOf(to)]);
  const there = read.get(to);
  if (there?.kind === 'folder' && there.id === into.id) {
    // Made by the first try: the job goes on in the worker (its step lease given back first).
    await deps.jobs.release(job.id);
    await handOff(deps, job);
    return { done: false, job: (await deps.jobs.get(drive, job.id)) ?? job };
  }
  try {
    checkAbove(read, to);
    if (there?.kind === 'folder') {
      if (there.deleting) throw beingDeleted(to);
      if (there.moving) throw beingMoved(to);
      if (options.overwrite !== true) throw conflict(`${to} is taken; pass "overwrite": true to restore into the folder there`, [to]);
    }
    if (there?.kind === 'file' && options.overwrite !== true) throw conflict(`${to} is taken; pass "overwrite": true to replace the file there`, [to]);
    // The job names the folder it restores into: another request's folder there since is a change.
    if (there?.kind === 'folder') throw changedWhileRestored(to);
  } catch (error) {
    await giveUp();
    throw error;
  }
  try {
    return await makeAndRestore(deps, job, row, there, into, budgetMs, giveUp);
  } finally {
    await cleanUp(() => deps.jobs.release(job.id));
  }
}

/**
 * The id of the job of the attempt `options.attempt` at restoring the item `id` to `options.to` (with
 * `overwrite` or not): the same for every retry of that attempt, another for any other request (a UUID, from
 * SHA-256 of them all).
 */
export function attemptJobId(drive: string, id: string, options: { to?: string; overwrite?: boolean; attempt?: string }): string {
  return namedJobId(['restore', drive, id, options.to ?? null, options.overwrite === true, options.attempt ?? null]);
}

const changedWhileRestored = (to: string) => conflict(`${to} changed while the restore was being made; try again`, [to]);

/**
 * One step of the restore job `job`, for at most `budgetMs`: pages of the row's members from the job's cursor,
 * each restored (`restorePage`) and the cursor noted after it, so that a step that dies is followed by one that
 * goes on from there (restored members are gone from the row; a step that runs a page again finds its folders
 * standing and its files' members gone). `stopped` when the destination folder is gone or taken by a delete, or
 * a delete took a folder of the page; `waiting` when a move holds one. `stopped` ends the restore as `done`
 * does: the row goes if nothing is left in it, else it is released with what is left (restorable again). A job
 * step restores a page before it looks at the time (`mustProgress`); a request may hand off at once, as a
 * recursive delete's does (tests give it no budget to make every folder restore a job).
 */
export async function restoreStep(deps: RestoreJobDeps, job: Job, budgetMs: number, mustProgress = true): Promise<StepOutcome> {
  const trash = deps.trash!;
  const outOfTime = outOfTimeIn(budgetMs);
  const row = await trash.get(job.drive, job.trashId!);
  // Gone, or no longer this job's: an earlier step ended the restore and died before the job's end.
  if (!row || row.restoring !== job.id) return 'done';
  let after = job.cursor;
  // Whether this restore has put anything back yet (a page noted, a file counted, or one of this step's).
  let progressed = job.cursor !== undefined || job.files > 0;
  for (let first = true; ; first = false) {
    if (first && !mustProgress && outOfTime()) return 'out of time';
    const destination = await deps.nodes.get(job.drive, job.to!);
    // Its destination gone before anything was restored (its request may have died after the claim, before it
    // made the folder): the row is released as it was, whole, never dropped, and is restorable again.
    if ((destination?.kind !== 'folder' || destination.id !== job.toId) && !progressed) return releaseWhole(deps, job, row);
    if (destination?.kind !== 'folder' || destination.id !== job.toId) return endRestore(deps, job, row, 'stopped');
    // An `empty` mark is brief (an empty-folder delete looking for children): waited out, as a move is.
    if (destination.moving || destination.deleting === 'empty') return 'waiting';
    if (destination.deleting) return endRestore(deps, job, row, 'stopped');
    const page = await trash.members(job.drive, row.id, RESTORE_PAGE, after);
    if (page.members.length === 0) return endRestore(deps, job, row, 'done');
    const { restored, stop, touched } = await restorePage(deps, job, row, page.members);
    if (touched) progressed = true;
    if (stop) {
      if (restored > 0) await deps.jobs.advanced(job.id, restored);
      return stop === 'stopped' ? endRestore(deps, job, row, 'stopped') : 'waiting';
    }
    after = page.members.at(-1)!.relative;
    await deps.jobs.advanced(job.id, restored, after);
    if (page.last === undefined) return endRestore(deps, job, row, 'done');
    if (outOfTime()) return 'out of time';
  }
}

/** Folder restores as the worker runs them. */
export const restoreJob: JobKind<RestoreJobDeps> = { step: restoreStep, ended: (outcome) => (outcome === 'done' ? 'restored' : 'stopped') };

/** Whether `path` is `top` or below it. */
const within = (path: string, top: string) => path === top || path.startsWith(`${top}/`);

/**
 * Restores one page of members: their folders (and the folders of their files) made as a writer makes them,
 * each trashed folder with its id and creation time, then their members removed (the folders stand: a later
 * restore of what is left makes missing ones anew); then their files, `MAX_FILES_PER_TRASH` a write. A path
 * where a file stands now keeps the member there and below it in the trash, as does a file's path taken.
 */
async function restorePage(deps: RestoreJobDeps, job: Job, row: TrashRow, members: readonly TrashMember[]): Promise<{ restored: number; stop?: 'stopped' | 'waiting'; touched?: true }> {
  const { nodes, records } = deps;
  const trash = deps.trash!;
  const to = job.to!;
  const mapped = (member: TrashMember) => `${to}/${member.relative}`;
  const blocked: string[] = [];
  let folders: Map<string, FolderNode> | undefined;
  let folderMembers: TrashMember[] = [];
  let fileMembers: TrashMember[] = [];
  for (let attempt = 1; folders === undefined; attempt++) {
    const live = members.filter((member) => !blocked.some((path) => within(member.file ? parentOf(mapped(member)) : mapped(member), path)));
    folderMembers = live.filter((member) => member.folder !== undefined);
    fileMembers = live.filter((member) => member.file !== undefined);
    const ids = new Map(folderMembers.map((member) => [mapped(member), member.folder!]));
    const wanted = [...new Set([to, ...folderMembers.map(mapped), ...fileMembers.map((member) => parentOf(mapped(member)))])];
    const gone = conflict(`${to} was deleted or moved while the restore made its folders`, [to]);
    try {
      // The destination is the request's to make (acceptRestore): a step never makes it again. Found gone (a
      // delete or a move took it since the step read it), the restore stops; nothing is made below it.
      folders = await makeFolders(nodes, job.drive, wanted, new Date().toISOString(), () => conflict(`the folders in ${to} were deleted while the restore made them`, [to]), {
        jobs: deps.jobs,
        made: (path) => ids.get(path),
        standing: { path: to, id: job.toId!, gone: () => gone },
      });
    } catch (error) {
      if (error === gone) return { restored: 0, stop: 'stopped' };
      if (error instanceof FolderBeingMoved) return { restored: 0, stop: 'waiting' };
      if (await onlyEmptyMarks(nodes, job.drive, wanted, to)) return { restored: 0, stop: 'waiting' };
      if (!(error instanceof DriveError && error.code === 'conflict') || attempt === BLOCKED_ATTEMPTS) return stopOn(error);
      // A file where a folder of the page goes: that subtree stays in the trash. No file: a delete took one.
      const read = await nodes.getMany(job.drive, wanted.flatMap((path) => [path, ...ancestorsOf(path)]).filter((path, i, all) => all.indexOf(path) === i && within(path, to) && path !== to));
      const files = [...read.values()].filter((node) => node.kind === 'file').map((node) => node.path);
      if (files.length === 0) return stopOn(error);
      blocked.push(...files);
    }
  }
  await trash.removeMembers(job.drive, row.id, folderMembers.map((member) => member.relative));
  // From here the page has put folders back (their members gone): what follows it counts as restored.
  const touched = true as const;

  let restored = 0;
  for (let start = 0; start < fileMembers.length; start += MAX_FILES_PER_TRASH) {
    let batch = fileMembers.slice(start, start + MAX_FILES_PER_TRASH).map((member) => ({ member, to: mapped(member) }));
    while (batch.length > 0) {
      const parents = [...new Set(batch.map((file) => parentOf(file.to)))].map((path) => folders.get(path)!);
      const outcome = await records.restoreMembers(job.drive, row, batch, { parents, job: job.id, now: nowOf(deps.trashPolicy) });
      if (outcome.restored) {
        restored += outcome.restored.length;
        break;
      }
      if ('changed' in outcome) {
        if (outcome.changed === 'item') return { restored, stop: 'stopped', touched };
        const { moving } = await recheckFolders(nodes, job.drive, parents.map((folder) => folder.path));
        // A move, or only `empty` marks (brief: cleared once children are found), is waited out.
        const waits = moving.length > 0 || (await onlyEmptyMarks(nodes, job.drive, parents.map((folder) => folder.path), to));
        return { restored, stop: waits ? 'waiting' : 'stopped', touched };
      }
      // Taken since the delete (or restored by an earlier step): those stay; the rest are written without them.
      const taken = new Set(outcome.taken);
      batch = batch.filter((_, i) => !taken.has(i));
    }
  }
  return { restored, touched };
}

/** A page's folders refused for good (a delete took one, or they keep being taken): the restore stops. */
function stopOn(error: unknown): { restored: number; stop: 'stopped' } {
  if (error instanceof DriveError && error.code === 'conflict') return { restored: 0, stop: 'stopped' };
  throw error;
}

/**
 * Ends a restore that put nothing back: the row released as it stands (its counts, and its folder's id, kept),
 * restorable again. An empty folder's row in particular: `endRestore` would remove it, having nothing left in
 * it, though its folder was never made (a request that died after its claim, before it made the folder).
 */
async function releaseWhole(deps: RestoreJobDeps, job: Job, row: TrashRow): Promise<StepOutcome> {
  await deps.trash!.release(job.drive, row.id, job.id);
  return 'stopped';
}

/**
 * Ends the restore: what is left in the row counted; the row (and its due entry) removed when no file is left
 * (and, done, no folder either: a folder left then is one a file stands in the way of), else released with
 * what is left, restorable again until its `purgeAt`.
 */
async function endRestore(deps: RestoreJobDeps, job: Job, row: TrashRow, outcome: 'done' | 'stopped'): Promise<StepOutcome> {
  const trash = deps.trash!;
  let files = 0;
  let bytes = 0;
  const folders: string[] = [];
  let after: string | undefined;
  do {
    const page = await trash.members(job.drive, row.id, COUNT_PAGE, after);
    for (const member of page.members) {
      if (member.file) {
        files++;
        bytes += member.file.size;
      } else folders.push(member.relative);
    }
    after = page.last;
  } while (after !== undefined);
  if (files === 0 && (outcome === 'done' || folders.length === 0)) {
    if (folders.length > 0) await trash.removeMembers(job.drive, row.id, folders);
    await trash.remove(job.drive, row.id, job.id);
  } else {
    await trash.release(job.drive, row.id, job.id, { files, bytes });
  }
  return outcome;
}
