import { createHash } from 'node:crypto';
import { cleanUp } from './clean-up';
import { DriveError } from './errors';
import type { Job, JobQueue, JobStore } from './ports';
import type { StepOutcome } from './tree-walk';

/**
 * The most jobs a drive has running (in their request, or handed to the worker and not yet done) before a new
 * recursive delete, folder move, folder copy, folder restore or emptying of the trash is refused with `429`: a
 * request costs one rate-limit token however big its folder, so the work a drive can set going is capped here
 * instead. Each job runs one step at a time.
 */
export const MAX_BACKGROUND_JOBS = 4;
/** What a refused job is told to wait: about a worker step's first stretch. */
const BACKGROUND_RETRY_SECONDS = 30;
/**
 * How long a place reserved for a job that is not written yet is kept by the healing: longer than any request
 * lives (API Gateway ends one at 29 s), so only a request that died between its reservation and its job's
 * first write loses its place, never one still on its way to that write.
 */
export const RESERVATION_GRACE_MS = 60_000;

/**
 * How long a delete, move or copy request works before it hands the rest to the worker: a third of API
 * Gateway's 29 s, so that a slow store or a cold start still answers well inside it.
 */
export const REQUEST_DELETE_BUDGET_MS = 10_000;
/** How long one step of the worker works (its function may run 5 minutes): then it sends the job on. */
export const STEP_DELETE_BUDGET_MS = 4 * 60_000;
/** A running job that has not advanced for this long lost its worker (a crash, a timeout): the sweep sends it again. */
export const JOB_STALL_MS = 2 * 60_000;
/** How long a job whose tree waits for another request (a move in a deleted tree, a delete in a moved one) waits before it looks again. */
export const MOVE_WAIT_SECONDS = 30;

/**
 * How long a step with `budgetMs` holds its job: past its budget (the last page may run over) and, for the
 * worker's 4 minutes, its function's 5-minute timeout, so that only a dead step's claim lapses. A message
 * delivered twice, or sent again by the sweep, finds the job claimed and comes back when the claim would have
 * lapsed, so one step at a time writes to the tree, and a step that died is followed within a lease.
 */
export function stepLeaseMs(budgetMs: number): number {
  return Math.ceil(budgetMs * 1.25) + 5000;
}

/** What a kind of job (a recursive delete, a folder move, a folder copy) gives the worker's `advanceJob`. */
export interface JobKind<Deps> {
  /** Advances `job` for at most `budgetMs`: every write conditional, so a step run twice is safe. */
  step(deps: Deps, job: Job, budgetMs: number): Promise<StepOutcome>;
  /** How a job that is done ended, as the job notes it. */
  ended(outcome: 'done' | 'stopped'): Job['ended'];
}

/**
 * Reserves a place for `job` (its id chosen, nothing of it written yet) among its drive's `max` running jobs,
 * or refuses it (`429`, `Retry-After`); called before the request's first write. The place is taken by one
 * conditional write, so requests that arrive together cannot all pass the cap. When the list is full, its jobs
 * are read once and those that ended (a step or request that died between its end and its release) or were
 * never written (a request that died before; only past `RESERVATION_GRACE_MS`) are taken off, and the place
 * is asked for once more.
 */
export async function admitJob(jobs: JobStore, job: Pick<Job, 'id' | 'drive'>, max = MAX_BACKGROUND_JOBS, now = new Date()): Promise<void> {
  if (await jobs.reserveBackground(job, max)) return;
  for (const listed of await jobs.inBackground(job.drive)) {
    const found = await jobs.get(job.drive, listed.id);
    if (found?.status === 'running') continue;
    if (!found && listed.reservedAt !== undefined && now.getTime() - Date.parse(listed.reservedAt) < RESERVATION_GRACE_MS) continue;
    await jobs.fromBackground({ id: listed.id, drive: job.drive });
  }
  if (await jobs.reserveBackground(job, max)) return;
  // Not how many: a key confined to a folder learns nothing of the jobs other keys set going.
  throw new DriveError(
    'rate_limited',
    `this drive has as many folder deletes, moves or copies running in the background as it may; retry in ${BACKGROUND_RETRY_SECONDS} seconds`,
    { 'Retry-After': String(BACKGROUND_RETRY_SECONDS) },
  );
}

/**
 * Gives back the place of `job`, which ended within its request, so that finished jobs do not fill the list.
 * A failure only leaves a done job listed, which the next full `admitJob` takes off.
 */
export async function releaseJob(jobs: JobStore, job: Pick<Job, 'id' | 'drive'>): Promise<void> {
  await cleanUp(() => jobs.fromBackground(job));
}

/**
 * Hands `job` to the worker: noted among its drive's background jobs (idempotent: its request reserved the
 * place, and the sweep's sends of a job whose request died note it again), then queued.
 */
export async function handOff(deps: { jobs: JobStore; queue: JobQueue }, job: Job, options: { delaySeconds?: number } = {}): Promise<void> {
  await deps.jobs.toBackground(job);
  await deps.queue.send(job, options);
}

/**
 * A job id named by `parts` (what one attempt at an operation is, across its retries): the same for the same
 * parts, another for any other; a UUID (version 8, RFC 9562's custom kind; variant 10) of their SHA-256.
 */
export function namedJobId(parts: readonly unknown[]): string {
  const hex = createHash('sha256').update(JSON.stringify(parts)).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${((parseInt(hex.slice(16, 17), 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
