import { DriveError } from './errors';
import type { Job, JobQueue, JobStore } from './ports';

/**
 * The most jobs a drive has in the background (handed to the worker, not yet done) before a new recursive
 * delete, folder move or folder copy is refused with `429`: a request costs one rate-limit token however big
 * its folder, so the work a drive can set going is capped here instead. Each job runs one step at a time.
 */
export const MAX_BACKGROUND_JOBS = 4;
/** What a refused job is told to wait: about a worker step's first stretch. */
const BACKGROUND_RETRY_SECONDS = 30;

/**
 * Refuses (`429`, `Retry-After`) a new job of `drive` while it has `max` jobs in the background; called before
 * the request's first write. The list is read in one GetItem; only when it is full are its jobs read, and
 * those that ended (a step that died between its end and its note) are taken off. A burst of requests read
 * the list at once, so the cap may be passed by those in flight; each still took its rate-limit token.
 */
export async function admitJob(jobs: JobStore, drive: string, max = MAX_BACKGROUND_JOBS): Promise<void> {
  const ids = await jobs.inBackground(drive);
  if (ids.length < max) return;
  let running = 0;
  for (const id of ids) {
    const job = await jobs.get(drive, id);
    if (job?.status === 'running') running++;
    else await jobs.fromBackground({ id, drive });
  }
  if (running < max) return;
  throw new DriveError(
    'rate_limited',
    `this drive has ${running} folder deletes, moves or copies running in the background, the most it may; retry in ${BACKGROUND_RETRY_SECONDS} seconds`,
    { 'Retry-After': String(BACKGROUND_RETRY_SECONDS) },
  );
}

/** Hands `job` to the worker: noted among its drive's background jobs (which `admitJob` caps), then queued. */
export async function handOff(deps: { jobs: JobStore; queue: JobQueue }, job: Job, options: { delaySeconds?: number } = {}): Promise<void> {
  await deps.jobs.toBackground(job);
  await deps.queue.send(job, options);
}

