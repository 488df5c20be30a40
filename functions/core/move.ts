import { cleanUp } from './clean-up';
import { mapLimit } from './concurrency';
import { badRequest, conflict, invalid, notFound, preconditionFailed } from './errors';
import { beingDeleted, beingMoved, ensureFolders, recheckFolders, removeUnused } from './folders';
import { JOURNAL_SWEEP_AFTER_MS, closeJournal } from './journal';
import { type TrashPolicy, stampOf, startedBy, trashOn } from './trash';
import { ROOT, ancestorsOf, joinPath, nameOf, parentOf } from './paths';
import type { DriveNode, FileNode, FileRecords, FolderNode, Job, JobQueue, JobStore, NodeStore, ObjectStore, UploadJournal } from './ports';
import { reachableIn } from './visibility';
import { randomUUID } from 'node:crypto';
import { type JobKind, MOVE_WAIT_SECONDS, admitJob, handOff, releaseJob } from './background-jobs';
import { type Drained, type FolderWork, type Progress, foldersWithin, outOfTimeIn, walkTree } from './tree-walk';

/** Times a file move reads again and retries when what it read changed before its write. */
const ATTEMPTS = 3;
/** File moves in flight at once in a folder move: each is its own transaction. */
const MOVE_CONCURRENCY = 16;

/** `jobs`: where a failure notes the jobs that remove the folders it made (`removeUnused`). */
export type MoveDeps = { nodes: NodeStore; records: FileRecords; objects: ObjectStore; journal: UploadJournal; jobs?: JobStore; trashPolicy?: TrashPolicy };
type JobDeps = MoveDeps & { jobs: JobStore; queue: JobQueue };

/** What a move request gets: the node at its new path, or a job that goes on after it (`202`). */
export type MoveOutcome = { done: true; node: FileNode | FolderNode } | { done: false; job: Job };

/**
 * `POST /drive/move`: the file or folder at `from` goes to `to`, keeping its id (and a file its bytes: object
 * keys are ids, so no byte is copied). Missing folders above `to` are made. A file may replace a file with
 * `overwrite`; nothing replaces a folder, and a folder replaces nothing.
 *
 * A file moves in one transaction (`FileRecords.move`). A folder moves file by file, each in its own: the
 * move marks the folder, makes the destination folder (marked too), and moves what is inside a page at a
 * time, making each subfolder at the destination before its files, and removing each source folder once it
 * is empty. At every moment each file is at its old path or its new one, never both, never neither;
 * readers see the two trees fill and empty. Writers and deletes are refused at both marked folders until
 * the move is done (a delete of a folder above waits for it). A tree too big for `budgetMs` answers with
 * the job, which the worker finishes.
 */
export async function acceptMove(deps: JobDeps, drive: string, from: string, to: string, options: { overwrite?: boolean; ifMatch?: string }, budgetMs: number): Promise<MoveOutcome> {
  if (from === ROOT) throw invalid('from "/" is the root folder, which cannot be moved');
  if (to === ROOT) throw invalid('to "/" is the root folder, which always exists; name a path below it');
  const read = await deps.nodes.getMany(drive, [from, to, ...ancestorsOf(from), ...ancestorsOf(to)]);
  const source = read.get(from);
  if (!source || !reachableIn(read, from) || (source.kind === 'folder' && source.deleting)) throw notFound(`no file or folder at ${from}`);
  if (source.kind === 'file') return { done: true, node: await moveFile(deps, drive, from, to, options.overwrite === true, options.ifMatch) };
  if (options.ifMatch !== undefined) throw folderHasNoEtag(from);
  return moveFolder(deps, drive, source, to, read, budgetMs);
}

/** `if_match` on a folder: a folder has no ETag, so no version of it to name (a 400, before anything is done). */
export function folderHasNoEtag(from: string): Error {
  return badRequest(`if_match names a file's ETag, and ${from} is a folder, which has none; send no if_match to move or copy a folder`);
}

/**
 * Refuses the file `source` read at `from` unless it has the ETag `ifMatch` (when given): a 412 naming `from`.
 * The read is the version the request acts on (a move is conditional on its id, a copy copies its bytes),
 * and a file's ETag never changes under one id, so the check holds at the write.
 */
export function checkSourceEtag(source: FileNode, from: string, ifMatch: string | undefined, verb: 'moved' | 'copied'): void {
  if (ifMatch !== undefined && source.etag !== ifMatch) {
    throw preconditionFailed(`the condition failed for ${from} (if_match "${ifMatch}": the file there has another ETag); nothing was ${verb}`, [from]);
  }
}

/**
 * Refuses `to` when something above it stands in the way: a file, or a folder a delete or a move has taken.
 * `read` holds every folder above `to` that exists.
 */
export function checkAbove(read: ReadonlyMap<string, DriveNode>, to: string): void {
  for (const folder of ancestorsOf(to)) {
    const node = read.get(folder);
    if (node?.kind === 'file') throw conflict(`${folder} is a file, so nothing can be stored below it`, [folder]);
    if (node?.deleting) throw beingDeleted(folder);
    if (node?.moving) throw beingMoved(folder);
  }
}

/** Moves the file at `from` to `to`, read again and retried if what stands at either end changes first. */
async function moveFile(deps: MoveDeps, drive: string, from: string, to: string, overwrite: boolean, ifMatch?: string): Promise<FileNode> {
  const { nodes } = deps;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const read = await nodes.getMany(drive, [from, to, ...ancestorsOf(from), ...ancestorsOf(to)]);
    const source = read.get(from);
    if (source?.kind !== 'file' || !reachableIn(read, from)) throw notFound(`no file or folder at ${from}`);
    // Each attempt checks the version it read: the transaction below is conditional on that version's id.
    checkSourceEtag(source, from, ifMatch, 'moved');
    if (from === to) return source;
    for (const folder of ancestorsOf(from)) if ((read.get(folder) as FolderNode | undefined)?.moving) throw beingMoved(folder);
    checkAbove(read, to);
    const target = read.get(to);
    if (target?.kind === 'folder') throw conflict(`${to} is a folder; a file cannot replace a folder`, [to]);
    if (target && !overwrite) throw conflict(`${to} is taken; pass "overwrite": true to replace the file there`, [to]);

    const { folders, created } = await ensureFolders(nodes, drive, [parentOf(to)], source.createdAt, [], { jobs: deps.jobs });
    const sourceParent = read.get(parentOf(from));
    const outcome = await deps.records.move(drive, source, to, {
      sourceParent: sourceParent?.kind === 'folder' ? sourceParent : undefined,
      destinationParent: folders.get(parentOf(to)),
      replacing: target,
      sweepAfter: new Date(Date.now() + JOURNAL_SWEEP_AFTER_MS),
      // With trash on, the replaced file becomes a trash row in the move's own write: nothing follows it.
      ...(target && trashOn(deps.trashPolicy) ? { trash: stampOf(deps.trashPolicy, 'replaced') } : {}),
    });
    if (outcome.moved) {
      // The replaced file's record is gone, and the journal names its bytes until they are.
      if (target && outcome.journal) {
        await cleanUp(() => deps.objects.deleteMany([target.objectKey]), () => ({ keys: [target.objectKey] }));
        await closeJournal(deps.journal, [outcome.journal]);
      }
      const { pending: _, ...moved } = { ...source, path: to };
      return moved;
    }
    await removeUnused(deps, drive, created);
    if (outcome.changed === 'pending') throw conflict(`${from} is still being stored by the upload that wrote it; try again in a minute`, [from]);
  }
  throw conflict(`${from} or ${to} changed ${ATTEMPTS} times while the move was being made; try again`, [from, to]);
}

/** Starts the move of `source` to `to` (see `acceptMove`): checks, notes the job, marks both ends, and moves for `budgetMs`. */
async function moveFolder(deps: JobDeps, drive: string, source: FolderNode, to: string, read: ReadonlyMap<string, DriveNode>, budgetMs: number): Promise<MoveOutcome> {
  const from = source.path;
  if (to.startsWith(`${from}/`)) throw invalid(`cannot move folder ${from} into itself (${to})`);
  if (to === from) return { done: true, node: source };
  if (source.moving) throw beingMoved(from);
  for (const folder of ancestorsOf(from)) if (read.get(folder)?.kind === 'folder' && (read.get(folder) as FolderNode).moving) throw beingMoved(folder);
  checkAbove(read, to);
  if (read.has(to)) throw conflict(`${to} is taken; a folder replaces nothing, so move it to a path where nothing stands`, [to]);
  // The id first: its place among the drive's running jobs is reserved under it, before any write.
  const id = randomUUID();
  await admitJob(deps.jobs, { id, drive });

  const now = new Date().toISOString();
  // Refused here (a path above taken meanwhile), the job is never written: its place is given back at once.
  const { created } = await ensureFolders(deps.nodes, drive, [parentOf(to)], now, [], { jobs: deps.jobs }).catch(async (error: unknown) => {
    await releaseJob(deps.jobs, { id, drive });
    throw error;
  });
  // Noted before any mark: a request that dies after this leaves a running job, which the sweep sends on.
  const job: Job = { id, drive, kind: 'move', path: from, to, folderId: source.id, status: 'running', files: 0, createdAt: now, ...startedBy(deps.trashPolicy), updatedAt: now };
  await deps.jobs.create(job);
  const refuse = async (error: Error): Promise<never> => {
    // Each on its own, so that a failure of one leaves no mark behind: the source's unmarked first.
    await cleanUp(() => deps.nodes.unmarkMoving(drive, source, job.id));
    // Only while this job's mark is on it: another move of the same folder to the same path makes its
    // destination with the same id, and it is that move's.
    await cleanUp(() => deps.nodes.removeIfSame(drive, to, source.id, { movingJob: job.id }));
    await removeUnused(deps, drive, created);
    await deps.jobs.finish(job.id, 0, 'stopped');
    await releaseJob(deps.jobs, job);
    throw error;
  };
  const marked = await deps.nodes.markMoving(drive, source, job.id);
  if (!marked) return refuse(conflict(`${from} changed while the move began (deleted, moved, or being deleted); try again`, [from]));
  const destination = await deps.nodes.createFolder(drive, { kind: 'folder', id: source.id, path: to, createdAt: source.createdAt, moving: job.id, movedFrom: from });
  if (destination?.id !== source.id || destination.moving !== job.id) return refuse(conflict(`${to} is taken; a folder replaces nothing, so move it to a path where nothing stands`, [to]));
  // Marked, then read (the protocol in ports.ts): a delete or move that took a folder above either end
  // meanwhile is seen here, or sees these marks.
  const above = await recheckFolders(deps.nodes, drive, [parentOf(from), parentOf(to)]);
  if (above.deleting.length > 0) return refuse(beingDeleted(above.deleting[0]));
  if (above.moving.length > 0) return refuse(beingMoved(above.moving[0]));
  if (above.missing.length > 0) return refuse(conflict(`the folders above ${to} were deleted while the move began; try again`, [to]));
  // Past that read: a step of a job whose request died before this note reads above both ends itself.
  await deps.jobs.advanced(job.id, 0, MOVE_READ_ABOVE);

  const outOfTime = outOfTimeIn(budgetMs);
  let moved = 0;
  const outcome = await drainMove(deps, job, marked, destination, {
    outOfTime,
    counted: async (files) => {
      moved += files;
      await deps.jobs.advanced(job.id, files);
    },
  });
  if (outcome === 'done') {
    await finishMove(deps, job, marked, destination);
    await releaseJob(deps.jobs, job);
    return { done: true, node: { ...destination, moving: undefined } };
  }
  if (outcome === 'stopped') return stopMove(deps, job, marked, destination);
  await handOff(deps, job, outcome === 'waiting' ? { delaySeconds: MOVE_WAIT_SECONDS } : {});
  return { done: false, job: { ...job, files: moved, updatedAt: new Date().toISOString() } };
}

/**
 * One step of the move job `job`, for at most `budgetMs` (`advanceJob` claims it and hands it on). It marks
 * and makes what the request did not get to (a request that died after noting the job), then moves what is
 * left at the source.
 */
export async function moveStep(deps: MoveDeps & { jobs: JobStore }, job: Job, budgetMs: number): Promise<Drained | 'stopped'> {
  const { nodes } = deps;
  const read = await nodes.getMany(job.drive, [job.path, job.to!]);
  const found = read.get(job.path);
  const atSource = found?.kind === 'folder' && found.id === job.folderId ? found : undefined;
  let destination = read.get(job.to!);
  if (!atSource) {
    // The source is gone: the last step removed it (and may have died before it unmarked the destination, or
    // before a stop had cleared the marks below it).
    if (destination?.kind === 'folder' && destination.moving === job.id) await unmarkTree(nodes, job, destination);
    return 'done';
  }
  const source = atSource.moving === job.id ? atSource : await nodes.markMoving(job.drive, atSource, job.id);
  if (!source) {
    // Taken by a delete or another move since this job's mark left it: only a refusal (its request unmarked
    // the source, then died before removing the destination) or a stop clears that mark, and a stop clears
    // the destination's first. So a destination still under this job's mark is the refused request's, and
    // nothing was moved into it: it goes (or, were anything in it, is unmarked).
    if (destination?.kind === 'folder' && destination.id === job.folderId && destination.moving === job.id) {
      if (await nodes.hasChildren(job.drive, destination.path)) await unmarkTree(nodes, job, destination, 'stopped');
      else await nodes.removeIfSame(job.drive, destination.path, job.folderId, { movingJob: job.id });
    }
    return 'stopped';
  }
  const stop = async (): Promise<'stopped'> => {
    // An earlier step may have marked folders below the source: they go with its mark.
    await unmarkTree(nodes, job, source);
    return 'stopped';
  };
  if (!destination) {
    // The request died before it made the destination: made now as the request makes it, only below folders
    // that stand, and read again after (a delete above may have removed them meanwhile).
    const above = await nodes.getMany(job.drive, ancestorsOf(job.to!));
    if (ancestorsOf(job.to!).some((folder) => above.get(folder)?.kind !== 'folder' || (above.get(folder) as FolderNode).deleting || (above.get(folder) as FolderNode).moving)) return stop();
    destination = await nodes.createFolder(job.drive, { kind: 'folder', id: job.folderId, path: job.to!, createdAt: source.createdAt, moving: job.id, movedFrom: job.path });
    if (destination?.kind === 'folder' && destination.id === job.folderId) {
      const again = await recheckFolders(nodes, job.drive, [parentOf(job.to!)]);
      if (again.missing.length + again.deleting.length + again.moving.length > 0) {
        await nodes.removeIfSame(job.drive, job.to!, job.folderId, { movingJob: job.id });
        return stop();
      }
    }
  }
  if (destination?.kind !== 'folder' || destination.id !== job.folderId || destination.moving !== job.id) return stop();
  if (job.cursor !== MOVE_READ_ABOVE) {
    // The request made the destination and died before its read of the folders above both ends (or before
    // noting it passed): read now, as the request does. A delete or another move that took a folder above
    // meanwhile would otherwise wait for this move while it waits for them (two moves, each into the
    // other's source). Refused, the move stops as the request would have: nothing was moved yet, so the
    // destination goes (unmarked, were anything in it), then the source's mark.
    const above = await recheckFolders(nodes, job.drive, [parentOf(job.path), parentOf(job.to!)]);
    if (above.missing.length + above.deleting.length + above.moving.length > 0) {
      if (await nodes.hasChildren(job.drive, destination.path)) await unmarkTree(nodes, job, destination, 'stopped');
      else await nodes.removeIfSame(job.drive, destination.path, job.folderId, { movingJob: job.id });
      return stop();
    }
    await deps.jobs.advanced(job.id, 0, MOVE_READ_ABOVE);
  }
  const outcome = await drainMove(deps, job, source, destination, { outOfTime: outOfTimeIn(budgetMs), mustProgress: true, counted: (files) => deps.jobs.advanced(job.id, files) });
  if (outcome === 'done') await finishMove(deps, job, source, destination);
  if (outcome === 'stopped') await clearMarks(deps.nodes, job, source, destination);
  return outcome;
}

/** What a move notes in its job's `cursor` once the folders above both ends were read after its marks. */
export const MOVE_READ_ABOVE = 'read-above';

/** Folder moves as the worker runs them. */
export const moveJob: JobKind<MoveDeps & { jobs: JobStore }> = { step: moveStep, ended: (outcome) => (outcome === 'done' ? 'moved' : 'stopped') };

/** The end of a move: the emptied source folder goes, then the destination's mark. */
async function finishMove(deps: { nodes: NodeStore; jobs: JobStore }, job: Job, source: FolderNode, destination: FolderNode): Promise<void> {
  await deps.nodes.removeIfSame(job.drive, source.path, source.id);
  await deps.nodes.unmarkMoving(job.drive, destination, job.id);
  await deps.jobs.finish(job.id, 0, 'moved');
}

async function stopMove(deps: { nodes: NodeStore; jobs: JobStore }, job: Job, source: FolderNode, destination: FolderNode): Promise<never> {
  await clearMarks(deps.nodes, job, source, destination);
  await deps.jobs.finish(job.id, 0, 'stopped');
  // Only a request stops a move here (a worker's step clears the marks itself): its place is given back.
  await releaseJob(deps.jobs, job);
  throw conflict(`the move stopped: a path in ${job.to} was taken by another request meanwhile; what had moved is there, the rest is still in ${job.path}`, [job.path, ...(job.to === undefined ? [] : [job.to])]);
}

/**
 * Clears every mark of the stopped move `job`, so no folder stays refusing writers: the destination's first,
 * then the source's. A step that dies in between leaves the source marked and the destination not: the next
 * step then stops at once (`moveStep`), clearing the source.
 */
async function clearMarks(nodes: NodeStore, job: Job, source: FolderNode, destination: FolderNode): Promise<void> {
  await unmarkTree(nodes, job, destination, 'stopped');
  await unmarkTree(nodes, job, source);
}

/**
 * Clears `job`'s mark from `top` and from every folder below it that holds one. A move marks a folder only
 * below one it has marked, so the marks are all found by descending into marked folders; the rest of the tree
 * is not read. The deepest go first and `top` last: a step that dies midway leaves marks only where the next
 * walk from `top` finds them again.
 */
async function unmarkTree(nodes: NodeStore, job: Job, top: FolderNode, ended?: 'stopped'): Promise<void> {
  const found = await foldersWithin(nodes, job.drive, top, (child) => child.moving === job.id);
  for (const folder of found.reverse()) await nodes.unmarkMoving(job.drive, folder, job.id, ended);
}

/** A folder of the source a move has entered, with its copy at the destination. */
type MovingFolder = { folder: FolderNode; destination: FolderNode };

/**
 * Moves everything below the marked folder `top` into `destination`, as `walkTree` walks it: in each folder
 * its files move, its subfolders are marked, made at the destination and entered, and a folder emptied goes.
 * Nothing but what is left at the source is remembered between pages: a later step goes on from there.
 * Returns `done` when the source holds nothing more, `waiting` when what is left waits for another request
 * (a delete of a folder inside it, a file its upload has not closed), `stopped` when paths at the destination
 * stay taken.
 */
async function drainMove(deps: MoveDeps, job: Job, top: FolderNode, destination: FolderNode, progress: Progress): Promise<Drained | 'stopped'> {
  const { nodes } = deps;
  const first: MovingFolder = { folder: top, destination };
  const work: FolderWork<MovingFolder> = {
    emptied: async (entry) => {
      // Emptied: its copy at the destination is unmarked, then it goes (the top last, by `finishMove`, once
      // everything is across). A step that dies in between finds it empty again and does both again.
      if (entry === first) return false;
      await nodes.unmarkMoving(job.drive, entry.destination, job.id);
      await nodes.removeIfSame(job.drive, entry.folder.path, entry.folder.id);
      return true;
    },
    page: async ({ folder: source, destination: into }, page, { pacer, waits }) => {
      const files = page.filter((node): node is FileNode => node.kind === 'file');
      const outcomes = await mapLimit(files, MOVE_CONCURRENCY, async (file) => {
        await pacer.take();
        return deps.records.move(job.drive, file, joinPath(into.path, nameOf(file.path)), { sourceParent: source, destinationParent: into, sweepAfter: new Date(), job: job.id });
      });
      const moved = outcomes.filter((outcome) => outcome.moved).length;
      const blocked = outcomes.some((outcome) => !outcome.moved && (outcome.changed === 'pending' || outcome.changed === 'folders'));
      const entering: MovingFolder[] = [];
      let held = blocked;
      for (const sub of page.filter((node): node is FolderNode => node.kind === 'folder')) {
        // A folder a delete (or another move) took inside the source: the move waits for it to be done.
        if (sub.deleting || (sub.moving && sub.moving !== job.id) || waits.has(sub.id)) {
          held = true;
          continue;
        }
        // Marked before its children are read, as the top is: a file moved in by another request either is
        // seen by the page, or is refused (the mark fails its transaction's check); a writer reads the mark after
        // its write and withdraws. Its copy at the destination is made marked too, until it is full.
        await pacer.take();
        const marked = sub.moving === job.id ? sub : await nodes.markMoving(job.drive, sub, job.id);
        if (!marked) {
          held = true;
          continue;
        }
        let made = await nodes.createFolder(job.drive, { kind: 'folder', id: sub.id, path: joinPath(into.path, nameOf(sub.path)), createdAt: sub.createdAt, moving: job.id, movedFrom: sub.path });
        // A copy an earlier step made and a stop it did not finish unmarked: marked again before it is entered,
        // so that every mark of the job stays below another (`unmarkTree` finds them that way).
        if (made?.id === sub.id && made.moving !== job.id) made = await nodes.markMoving(job.drive, made, job.id);
        // Taken: the move stops, and its caller clears every mark it made (`clearMarks`).
        if (made?.id !== sub.id) return 'stopped';
        entering.push({ folder: marked, destination: made });
      }
      return { counted: moved, entering, waiting: held };
    },
    // Pages that move nothing: paths in the destination taken by others.
    idle: () => 'stopped',
  };
  return walkTree(nodes, job.drive, first, work, progress);
}
