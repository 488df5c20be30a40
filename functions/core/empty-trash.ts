import { randomUUID } from 'node:crypto';
import { type JobKind, admitJob, handOff, namedJobId } from './background-jobs';
import type { Job, JobQueue, JobStore, ObjectStore, TrashRow, TrashStore } from './ports';
import { type PurgeDeps, purgeContents } from './purge';
import { PURGE_LEASE_MS, type TrashPolicy, nowOf, trashIdBound } from './trash';
import { HEARTBEAT_MS, type StepOutcome, outOfTimeIn } from './tree-walk';

// Emptying the trash of a subtree (issue 28; docs/trash-design.md, "Purge, the sweep and fsck"): the rows at or
// below a path, trashed by the request's time, each purged as `purgeItem` purges one (claimed, bytes, members,
// then the row). The request works for its budget and answers the totals; what is left becomes an
// `empty-trash` job that the worker runs in bounded steps, as a recursive delete is. Rows are read newest
// first from a cursor (the request's time, then the last row passed), so rows trashed after the request are
// never its to purge, and each step reads on from where the last one noted it stood.

/** Rows read at a time: one Query. */
const ROWS_PER_PAGE = 1000;

/** What an emptying freed: trash items, the files they held, and their bytes. */
export interface Emptied {
  items: number;
  files: number;
  bytes: number;
}

export type EmptyTrashDeps = PurgeDeps & { jobs: JobStore; queue: JobQueue };
/** What a step of the job uses (the worker's deps: its trash store is there whenever the trash is). */
type EmptyStepDeps = { trash?: TrashStore; objects: ObjectStore; jobs: JobStore; trashPolicy?: TrashPolicy };

/** What a request to empty gets: the totals when it emptied all within its budget, else the job that goes on (`202`). */
export type EmptyOutcome = { done: true; emptied: Emptied } | { done: false; job: Job };

/** Where a run of the emptying stands: whose claims it makes, the last row it passed, what it freed. */
interface EmptyRun {
  drive: string;
  path: string;
  /** The owner of the run's claims: the job's id (the request claims under the id its job would have). */
  by: string;
  /** The last row passed, newest first: the next page starts after it. */
  cursor: string;
  emptied: Emptied;
  /**
   * The job's: notes a row's totals and the cursor at that row before the row itself goes, so that a step
   * that dies after the note finishes that row uncounted (`finishNoted`) and one that dies before counts it
   * when it purges it again: the job's totals are exact across crashes.
   */
  note?: (purged: Emptied, cursor: string) => Promise<void>;
  /** The cursor as the job last noted it. */
  noted?: string;
  /** The job's: told after each page of a folder row's members, to note now and then that the job is alive. */
  paged?: () => Promise<void>;
}

/**
 * `DELETE /drive/trash?path=`: purges every trash row of `drive` at or below `path` trashed by `now`, for at
 * most `budgetMs`; rows a restore or another purge holds are left. Done within the budget: the totals (no job
 * is written). Else a job `empty-trash` takes its place among the drive's background jobs (or `429` if they
 * are full: what this request purged stays purged, and a retry goes on with the rest) and goes on from the
 * last row passed, its totals so far noted; a row the request was part-way through is claimed under the job's
 * id, which the job takes on. A request that dies leaves its claimed row to the sweep, past the claim's lease.
 */
export async function acceptEmptyTrash(
  deps: EmptyTrashDeps,
  drive: string,
  path: string,
  now: Date,
  budgetMs: number,
  /**
   * `attempt`: what names this attempt across its retries (the handler's: the caller's idempotency scope and
   * `Idempotency-Key`). Its job is named after it, so that a retry after a `5xx` that came after the job was
   * written answers for that job (`202` running, `200` with its totals once done) instead of starting a second
   * one, and one after a `5xx` before it takes over the first try's claims at once (the same owner).
   */
  options: { attempt?: string } = {},
): Promise<EmptyOutcome> {
  const id = options.attempt === undefined ? randomUUID() : namedJobId(['empty-trash', drive, path, options.attempt]);
  if (options.attempt !== undefined) {
    const earlier = await deps.jobs.get(drive, id);
    if (earlier?.kind === 'empty-trash') {
      if (earlier.status === 'done') return { done: true, emptied: { items: earlier.items ?? 0, files: earlier.files, bytes: earlier.bytes ?? 0 } };
      // Running: the worker has it (or, if the first try died between writing it and queueing it, the sweep
      // sends it on once it has not advanced for JOB_STALL_MS).
      return { done: false, job: earlier };
    }
  }
  const run: EmptyRun = { drive, path, by: id, cursor: trashIdBound(now), emptied: { items: 0, files: 0, bytes: 0 } };
  const outcome = await emptySome(deps, run, outOfTimeIn(budgetMs), false, now);
  if (outcome === 'done') return { done: true, emptied: run.emptied };
  await admitJob(deps.jobs, { id: run.by, drive });
  const at = new Date().toISOString();
  const job: Job = {
    id: run.by,
    drive,
    kind: 'empty-trash',
    path,
    folderId: '',
    cursor: run.cursor,
    status: 'running',
    files: run.emptied.files,
    items: run.emptied.items,
    bytes: run.emptied.bytes,
    createdAt: at,
    updatedAt: at,
  };
  await deps.jobs.create(job);
  await handOff(deps, job);
  return { done: false, job: (await deps.jobs.get(drive, job.id)) ?? job };
}

/**
 * One step of the empty-trash job `job`, for at most `budgetMs` (a row or a page of a big folder's members
 * first, whatever the budget): the row noted last finished if a step died before it went, then rows from the
 * job's cursor. Each purged row's totals and the cursor are noted before the row is removed; rows passed
 * without a purge (outside the path, or held) are noted with the step's end. `done` when no row is left.
 */
export async function emptyTrashStep(deps: EmptyStepDeps, job: Job, budgetMs: number): Promise<StepOutcome> {
  const purging: PurgeDeps = { trash: deps.trash!, objects: deps.objects, trashPolicy: deps.trashPolicy };
  const outOfTime = outOfTimeIn(budgetMs);
  const run: EmptyRun = {
    drive: job.drive,
    path: job.path,
    by: job.id,
    cursor: job.cursor!,
    emptied: { items: 0, files: 0, bytes: 0 },
    note: (purged, cursor) => deps.jobs.advanced(job.id, purged.files, cursor, { items: purged.items, bytes: purged.bytes }),
    noted: job.cursor,
    paged: heartbeat(deps.jobs, job.id),
  };
  const outcome = (await finishNoted(purging, job, outOfTime, run.paged!)) ? await emptySome(purging, run, outOfTime, true, nowOf(deps.trashPolicy)) : 'out of time';
  // Rows passed since the last note (none purged): noted, so that the next step reads on after them.
  if (run.cursor !== run.noted) await deps.jobs.advanced(job.id, 0, run.cursor);
  return outcome;
}

/**
 * The row at the job's cursor, if it still stands claimed by the job: its totals were noted and the step
 * died before it went. Finished without counting it again; false if the time ran out part-way.
 */
async function finishNoted(deps: PurgeDeps, job: Job, outOfTime: () => boolean, paged: () => Promise<void>): Promise<boolean> {
  const row = await deps.trash.get(job.drive, job.cursor!);
  if (row?.purging !== job.id) return true;
  if (!(await purgeContents(deps, job.drive, row, outOfTime, paged))) return false;
  await deps.trash.remove(job.drive, row.id, job.id);
  return true;
}

/**
 * Purges rows of `run.path` from `run.cursor` on, newest first, until none is left (`done`) or `outOfTime`
 * (`out of time`; a step, `mustProgress`, purges something first). A row held by a restore or another purge is
 * passed (left in the trash). A row whose members outlast the time is left claimed by `run.by`, before the
 * cursor, so the next run claims it again and goes on with it.
 */
async function emptySome(deps: PurgeDeps, run: EmptyRun, outOfTime: () => boolean, mustProgress: boolean, now: Date): Promise<'done' | 'out of time'> {
  const inside = (p: string) => run.path === '/' || p === run.path || p.startsWith(`${run.path}/`);
  let worked = false;
  for (;;) {
    const page = await deps.trash.list(run.drive, ROWS_PER_PAGE, run.cursor);
    for (const row of page.rows) {
      if (!inside(row.path)) {
        run.cursor = row.id;
        continue;
      }
      if (outOfTime() && (worked || !mustProgress)) return 'out of time';
      const claimed = await deps.trash.claim(run.drive, row.id, 'purge', run.by, now, PURGE_LEASE_MS);
      if (!claimed) {
        run.cursor = row.id;
        continue;
      }
      worked = true;
      if (!(await purgeContents(deps, run.drive, claimed, outOfTime, run.paged))) return 'out of time';
      const purged = purgedOf(claimed);
      if (run.note) {
        await run.note(purged, row.id);
        run.noted = row.id;
      }
      await deps.trash.remove(run.drive, row.id, run.by);
      run.emptied.items += purged.items;
      run.emptied.files += purged.files;
      run.emptied.bytes += purged.bytes;
      run.cursor = row.id;
    }
    if (page.last === undefined) return 'done';
    // A page passed moved the cursor: progress, even if none of it was in the path.
    if (outOfTime()) return 'out of time';
  }
}

/**
 * Notes that the job `id` is alive once `HEARTBEAT_MS` passed since the last time: a folder row of a million
 * members takes a step's whole budget, and a job that does not advance for `JOB_STALL_MS` is sent again.
 */
function heartbeat(jobs: JobStore, id: string): () => Promise<void> {
  let last = Date.now();
  return async () => {
    if (Date.now() - last < HEARTBEAT_MS) return;
    await jobs.advanced(id, 0);
    last = Date.now();
  };
}

function purgedOf(row: TrashRow): Emptied {
  return { items: 1, files: row.files, bytes: row.bytes };
}

/** Empty-trash jobs as the worker runs them: they never stop short (held rows are left, as the request leaves them). */
export const emptyTrashJob: JobKind<EmptyStepDeps> = { step: emptyTrashStep, ended: () => undefined };
