import { JOB_STALL_MS, MOVE_WAIT_SECONDS, handOff, stepLeaseMs } from './background-jobs';
import { cleanUp } from './clean-up';
import { JOB_KINDS, type JobStepDeps } from './job-kinds';
import type { Job, JobQueue, JobStore } from './ports';
import { policyOfJob } from './trash';
import type { StepOutcome } from './tree-walk';

type JobDeps = JobStepDeps & { queue: JobQueue };

/**
 * The worker's step: claims the job `id` and advances it for at most `budgetMs` (a recursive delete, a
 * folder move or a folder copy), then sends it to the queue again if it is not done (after a while, if what is left waits for
 * another request). A step that dies part-way is sent again by the queue (or, failing that, the sweep), and
 * the next step goes on from what is left: every write a step makes is conditional, so a step run twice is
 * safe, and counts each file once.
 */
export async function advanceJob(deps: JobDeps, id: string, drive: string, budgetMs: number): Promise<Job | undefined> {
  const leaseMs = stepLeaseMs(budgetMs);
  const job = await deps.jobs.claim(drive, id, leaseMs);
  if (job === 'busy') {
    // Another step holds it (and sends it on), or held it and died: this message comes back once that claim lapses.
    await deps.queue.send({ id, drive }, { delaySeconds: Math.ceil(leaseMs / 1000) });
    return deps.jobs.get(drive, id);
  }
  if (!job || job.status === 'done') return job;
  const kind = JOB_KINDS[job.kind];
  let outcome: StepOutcome;
  try {
    outcome = await kind.step({ ...deps, trashPolicy: policyOfJob(deps.trashPolicy, job) }, job, budgetMs);
  } catch (error) {
    // The claim goes at once, so that the queue's next delivery or the sweep can go on.
    await cleanUp(() => deps.jobs.release(job.id));
    throw error;
  }
  if (outcome === 'done' || outcome === 'stopped') {
    await deps.jobs.finish(job.id, 0, kind.ended(outcome));
    await deps.jobs.fromBackground(job);
  } else {
    // Released before it is sent, so that the step the message starts may claim it.
    await deps.jobs.release(job.id);
    await deps.queue.send(job, outcome === 'waiting' ? { delaySeconds: MOVE_WAIT_SECONDS } : {});
    // Noted as advancing, so that the sweep does not also send a job that waits on purpose.
    if (outcome === 'waiting') await deps.jobs.advanced(job.id, 0);
  }
  return deps.jobs.get(drive, id);
}

/** Run by the sweep: sends again every job no step has advanced for `JOB_STALL_MS`. Returns how many. */
export async function resumeStalledJobs(deps: { jobs: JobStore; queue: JobQueue }, now = new Date(), stallMs = JOB_STALL_MS): Promise<number> {
  const stalled = await deps.jobs.stalled(new Date(now.getTime() - stallMs));
  // Handed off as a request hands a job on: one whose request died first is listed among the background ones now.
  for (const job of stalled) await handOff(deps, job);
  return stalled.length;
}
