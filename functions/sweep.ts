import { jobs } from './wiring/jobs';
import { records } from './wiring/records';
import { journal } from './wiring/journal';
import { nodes } from './wiring/nodes';
import { objects } from './wiring/objects';
import { jobQueue } from './wiring/job-queue';
import { JOB_STALL_MS } from './core/delete-folder';
import { resumeStalledJobs } from './core/jobs';
import { sweepJournal } from './core/journal';
import { sweepTrash } from './core/purge';
import { trash, trashClock, trashPolicy } from './wiring/trash';
import { log } from './telemetry/log';
import { setting } from './config';

/** How long a running job may go without advancing before the sweep sends it again (tests shorten it). */
const stallMs = setting('jobStallMs') ?? JOB_STALL_MS;

/**
 * Run on a schedule (EventBridge in AWS, a timer on the local host): deletes the bytes that interrupted
 * uploads stored and never recorded, as their journal entries name them, and sends again the delete jobs
 * whose request or worker died (a crash, a timeout) before handing them on; purges the trash items past their
 * purge time.
 */
export const handler = async (): Promise<{ closed: number; resumed: number; purged: number }> => {
  const closed = await sweepJournal({ nodes, objects, journal, trash, records, trashPolicy: trashPolicy() });
  if (closed > 0) log('INFO', 'swept the journal entries of interrupted uploads', { closed });
  const resumed = await resumeStalledJobs({ jobs, queue: jobQueue }, new Date(), stallMs);
  if (resumed > 0) log('INFO', 'sent stalled delete jobs to the worker again', { resumed });
  // The trash's rows past their purge time: bytes, then items, in bounded steps (the rest at the next run).
  const { purged } = await sweepTrash({ trash, objects }, new Date(trashClock()));
  if (purged > 0) log('INFO', 'purged trash items past their purge time', { purged });
  return { closed, resumed, purged };
};
