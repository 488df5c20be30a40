import { randomUUID } from 'node:crypto';
import { mapLimit } from './concurrency';
import { DriveError, conflict, invalid, notFound } from './errors';
import { FolderBeingMoved, type Standing, makeFolders, onlyEmptyMarks } from './folders';
import { listPage } from './list-folder';
import { JOURNAL_SWEEP_AFTER_MS, closeJournal } from './journal';
import { checkAbove, checkSourceEtag, folderHasNoEtag } from './move';
import { ROOT, ancestorsOf, comparePaths, parentOf } from './paths';
import type { FileNode, FileRecords, FolderNode, Job, JobQueue, JobStore, NodeStore, ObjectCopier, ObjectStore, UploadJournal } from './ports';
import { type TrashPolicy, startedBy } from './trash';
import { commitFiles } from './upload';
import { reachableIn } from './visibility';
import { type JobKind, MOVE_WAIT_SECONDS, admitJob, handOff, releaseJob } from './background-jobs';
import { type StepOutcome, outOfTimeIn } from './tree-walk';

/** `jobs`: where a failure notes the jobs that remove the folders it made (`removeUnused`). */
export type CopyDeps = { nodes: NodeStore; objects: ObjectStore & ObjectCopier; journal: UploadJournal; jobs?: JobStore; records?: FileRecords; trashPolicy?: TrashPolicy };

/**
 * `POST /drive/copy` of a file: a new file at `to` (a new id, the same bytes copied in S3, server-side),
 * made as an upload is (ports.ts): its object key noted in the journal, the bytes copied, the record
 * written with the folders above it. A file at `to` is replaced only with `overwrite`; a folder never.
 */
export async function copyFile(deps: CopyDeps, drive: string, from: string, to: string, overwrite: boolean, ifMatch?: string): Promise<FileNode> {
  if (to === ROOT) throw invalid('to "/" is the root folder, which always exists; name a path below it');
  if (from === to) throw invalid('from and to are the same path; a copy needs a path of its own');
  const read = await deps.nodes.getMany(drive, [from, to, ...ancestorsOf(from), ...ancestorsOf(to)]);
  const source = read.get(from);
  if (!source || !reachableIn(read, from) || (source.kind === 'folder' && source.deleting)) throw notFound(`no file or folder at ${from}`);
  if (source.kind === 'folder') throw invalid(`${from} is a folder`);
  // The bytes copied are the object this version names, whose ETag never changes (gone, the copy is a 404).
  checkSourceEtag(source, from, ifMatch, 'copied');
  checkAbove(read, to);
  const target = read.get(to);
  if (target?.kind === 'folder') throw conflict(`${to} is a folder; a file cannot replace a folder`, [to]);
  if (target && !overwrite) throw conflict(`${to} is taken; pass "overwrite": true to replace the file there`, [to]);

  const id = randomUUID();
  const copy: FileNode = { ...source, id, path: to, createdAt: new Date().toISOString(), objectKey: `${drive}/${id}` };
  delete copy.pending;
  const [entry] = await deps.journal.open(drive, [copy], new Date(Date.now() + JOURNAL_SWEEP_AFTER_MS), deps.trashPolicy?.by);
  const etag = await deps.objects.copy(source.objectKey, copy.objectKey, source.size);
  if (etag === undefined) {
    await closeJournal(deps.journal, [entry]);
    throw notFound(`no file or folder at ${from}`);
  }
  // The copy's own hash: S3 computes it afresh (a copy in one piece of a file uploaded in parts has a plain MD5).
  const stored: FileNode = { ...copy, etag, pending: entry };
  await commitFiles(deps, drive, [stored], { replace: overwrite, entries: [entry] });
  await closeJournal(deps.journal, [entry]);
  return copy.etag === etag ? copy : { ...copy, etag };
}

/** Entries of the source read at a time by a folder copy: each file is copied in S3 and recorded. */
const COPY_PAGE = 200;
/** Files copied at once, and between notes of how far the copy got. */
const COPY_CONCURRENCY = 8;

type JobDeps = CopyDeps & { jobs: JobStore; queue: JobQueue };

/** What a copy request gets: the new file or folder, or a job that goes on after it (`202`). */
export type CopyOutcome = { done: true; node: FileNode | FolderNode } | { done: false; job: Job };

/**
 * `POST /drive/copy`: a file as `copyFile` copies it; a folder with everything in it, as a job that copies
 * a page of the source at a time in the listing's order (path bytes, at every depth), noting how far it got,
 * for at most `budgetMs` in the request and then in the worker's steps. The source is not locked: what is
 * added to or removed from it while the copy runs is copied if the copy has not passed its path yet. Each
 * file is copied as an upload stores one (journal, bytes, record), never replacing what stands at its new
 * path, so a step that runs again skips what an earlier one copied.
 */
export async function acceptCopy(deps: JobDeps, drive: string, from: string, to: string, options: { overwrite?: boolean; ifMatch?: string }, budgetMs: number): Promise<CopyOutcome> {
  if (from === ROOT) throw invalid('from "/" is the root folder; copy the folders in it one at a time');
  const read = await deps.nodes.getMany(drive, [from, to, ...ancestorsOf(from), ...ancestorsOf(to)]);
  const source = read.get(from);
  if (source?.kind !== 'folder') return { done: true, node: await copyFile(deps, drive, from, to, options.overwrite === true, options.ifMatch) };
  if (!reachableIn(read, from) || source.deleting) throw notFound(`no file or folder at ${from}`);
  if (options.ifMatch !== undefined) throw folderHasNoEtag(from);
  if (to === ROOT) throw invalid('to "/" is the root folder, which always exists; name a path below it');
  if (to === from || to.startsWith(`${from}/`)) throw invalid(`cannot copy folder ${from} into itself (${to})`);
  checkAbove(read, to);
  if (read.has(to)) throw conflict(`${to} is taken; a folder is copied only to a path where nothing stands`, [to]);
  // The id first: its place among the drive's running jobs is reserved under it, before any write.
  const id = randomUUID();
  await admitJob(deps.jobs, { id, drive });

  const now = new Date().toISOString();
  // Made as a writer makes folders, the folders above read again after (a delete may remove them meanwhile).
  // Refused here (a path above taken meanwhile), the job is never written: its place is given back at once.
  const folders = await makeFolders(deps.nodes, drive, [to], now, () => foldersGone(to), { keep: to, jobs: deps.jobs }).catch(async (error: unknown) => {
    await releaseJob(deps.jobs, { id, drive });
    throw error;
  });
  const made = folders.get(to)!;
  const job: Job = { id, drive, kind: 'copy', path: from, folderId: source.id, to, toId: made.id, status: 'running', files: 0, createdAt: now, ...startedBy(deps.trashPolicy), updatedAt: now };
  await deps.jobs.create(job);
  const deadline = Date.now() + budgetMs;
  const outcome = await copyStep(deps, job, Math.max(0, deadline - Date.now()));
  if (outcome === 'done') {
    await deps.jobs.finish(job.id, 0, 'copied');
    await releaseJob(deps.jobs, job);
    return { done: true, node: made };
  }
  if (outcome === 'stopped') {
    await deps.jobs.finish(job.id, 0, 'stopped');
    await releaseJob(deps.jobs, job);
    throw conflict(`the copy stopped: ${from} or ${to} was deleted or taken by another request meanwhile`, [from, to]);
  }
  await handOff(deps, job, outcome === 'waiting' ? { delaySeconds: MOVE_WAIT_SECONDS } : {});
  return { done: false, job: (await deps.jobs.get(drive, job.id)) ?? job };
}

/**
 * One step of the copy job `job`, for at most `budgetMs`: pages of the source from where the job got to,
 * their files copied a few at a time and the cursor noted after each few, so that a step cut short (a slow
 * copy of big files, a timeout) resumes where the last note says. `stopped` when the source or the folder
 * the copy made is gone (deleted, or another request's folder stands there now); `waiting` when a folder
 * move has taken part of the destination (the copy goes on once it is done).
 *
 * A copy does not walk as a delete or a move does (`walkTree`, which resumes from marks and from what is
 * left): it leaves the source as it found it, unmarked and whole, so only a cursor in the listing's order can
 * say where it got to. Like a job step of theirs it does some work before it looks at the time (a run of
 * files), so every step advances. It paces no writes: each record waits on its file's S3 copy, a few at a time.
 */
export async function copyStep(deps: CopyDeps & { jobs: JobStore }, job: Job, budgetMs: number): Promise<StepOutcome> {
  const outOfTime = outOfTimeIn(budgetMs);
  let after = job.cursor;
  const mapped = (path: string) => `${job.to}${path.slice(job.path.length)}`;
  for (;;) {
    const destination = await deps.nodes.get(job.drive, job.to!);
    if (destination?.kind !== 'folder' || destination.id !== job.toId) return 'stopped';
    // An `empty` mark is brief (an empty-folder delete looking for children): waited out, as a move is.
    if (destination.deleting === 'empty') return 'waiting';
    if (destination.deleting) return 'stopped';
    let page;
    try {
      page = await listPage(deps.nodes, job.drive, job.path, { recursive: true, limit: COPY_PAGE, after });
    } catch (error) {
      if (error instanceof DriveError && error.code === 'not_found') return 'stopped';
      throw error;
    }
    try {
      // Empty folders too, as a writer makes them; a file's folders are made by its commit.
      // The destination is the request's to make: a step never makes it again (found gone, the copy stops).
      if (page.folders.length > 0) await makeFolders(deps.nodes, job.drive, page.folders.map((folder) => mapped(folder.path)), new Date().toISOString(), () => foldersGone(job.to!), { jobs: deps.jobs, standing: destinationOf(job) });
    } catch (error) {
      if (error instanceof FolderBeingMoved) return 'waiting';
      if (error instanceof DriveError && error.code === 'conflict') return (await onlyEmptyMarks(deps.nodes, job.drive, page.folders.map((folder) => mapped(folder.path)), job.to!)) ? 'waiting' : 'stopped';
      throw error;
    }
    // Files in path order, a few at a time: the cursor may rest after any of them, as every folder of the
    // page is made already.
    const files = [...page.files].sort((a, b) => comparePaths(a.path, b.path));
    for (let start = 0; start < files.length; start += COPY_CONCURRENCY) {
      const run = files.slice(start, start + COPY_CONCURRENCY);
      const { copied, waitingAt } = await copyFiles(deps, job.drive, run, mapped, destinationOf(job));
      const doneUpTo = waitingAt === undefined ? run.at(-1)!.path : start + waitingAt > 0 ? files[start + waitingAt - 1].path : after;
      if (copied > 0 || doneUpTo !== after) await deps.jobs.advanced(job.id, copied, doneUpTo);
      after = doneUpTo;
      if (waitingAt !== undefined) return 'waiting';
      if (outOfTime() && start + COPY_CONCURRENCY < files.length) return 'out of time';
    }
    const last = page.after ?? [...page.files, ...page.folders].map((node) => node.path).sort(comparePaths).at(-1);
    if (last !== undefined && last !== after) await deps.jobs.advanced(job.id, 0, last);
    if (page.after === undefined) return 'done';
    after = page.after;
    if (outOfTime()) return 'out of time';
  }
}

/** A copy job's destination, which its steps need standing and never make. */
const destinationOf = (job: Job): Standing => ({ path: job.to!, id: job.toId!, gone: () => conflict(`${job.to} was deleted or moved while the copy ran`, [job.to!]) });

/** The 409 of a copy whose folders a delete removed again and again while it made them. */
const foldersGone = (to: string) => conflict(`the folders above ${to} were deleted while the copy made them; try again`, [to]);

/** Folder copies as the worker runs them. */
export const copyJob: JobKind<CopyDeps & { jobs: JobStore }> = { step: copyStep, ended: (outcome) => (outcome === 'done' ? 'copied' : 'stopped') };

/**
 * Copies `files` to their `mapped` paths as an upload stores files (the journal first), each committed on its
 * own and never over what stands there. One already there (copied by an earlier step, or put there by another
 * request) is not copied again. Returns how many were copied, and the index of the first that met a folder a
 * move has taken, if one did (it and those after it wait for the move; those before it are done).
 */
async function copyFiles(deps: CopyDeps, drive: string, files: readonly FileNode[], mapped: (path: string) => string, standing: Standing): Promise<{ copied: number; waitingAt?: number }> {
  const there = await deps.nodes.getMany(drive, files.map((file) => mapped(file.path)));
  const now = new Date().toISOString();
  const copies = files.map((file): FileNode => {
    const id = randomUUID();
    return { kind: 'file', id, path: mapped(file.path), size: file.size, contentType: file.contentType, createdAt: now, objectKey: `${drive}/${id}`, etag: file.etag };
  });
  const wanted = copies.filter((copy) => !there.has(copy.path));
  const entries = wanted.length > 0 ? await deps.journal.open(drive, wanted, new Date(Date.now() + JOURNAL_SWEEP_AFTER_MS), deps.trashPolicy?.by) : [];
  const entryOf = new Map(wanted.map((copy, i) => [copy.path, entries[i]]));
  const outcomes = await mapLimit(copies, COPY_CONCURRENCY, async (copy, i): Promise<'copied' | 'skipped' | 'waiting'> => {
    const entry = entryOf.get(copy.path);
    if (entry === undefined) return 'skipped';
    const etag = await deps.objects.copy(files[i].objectKey, copy.objectKey, files[i].size);
    // Deleted since the page was read: nothing to copy.
    if (etag === undefined) return 'skipped';
    try {
      await commitFiles(deps, drive, [{ ...copy, etag, pending: entry }], { replace: false, standing });
      return 'copied';
    } catch (error) {
      // A move has a folder of it: the commit kept nothing (its bytes deleted), and the file is copied later.
      if (error instanceof FolderBeingMoved) return 'waiting';
      // So with a brief `empty` mark on a folder of it (an empty-folder delete looking for children).
      if (error instanceof DriveError && error.code === 'conflict' && (await onlyEmptyMarks(deps.nodes, drive, [parentOf(copy.path)], standing.path))) return 'waiting';
      // Taken (its commit deleted the bytes it copied) or being deleted: the copy goes on without it.
      if (error instanceof DriveError && error.code === 'conflict') return 'skipped';
      throw error;
    }
  });
  await closeJournal(deps.journal, entries);
  const waitingAt = outcomes.indexOf('waiting');
  return { copied: outcomes.filter((outcome) => outcome === 'copied').length, ...(waitingAt >= 0 ? { waitingAt } : {}) };
}
