import { jobs, journal, nodes } from './aws/dynamodb';
import { millisecondsEnv } from './aws/env';
import { objects } from './aws/s3';
import { jobQueue } from './aws/sqs';
import { JOB_STALL_MS } from './core/delete-folder';
import { resumeStalledJobs } from './core/jobs';
import { sweepJournal } from './core/journal';
import { log } from './telemetry/log';

/** How long a running job may go without advancing before the sweep sends it again (tests shorten it). */
const stallMs = millisecondsEnv('DRIVE_JOB_STALL_MS', JOB_STALL_MS);

/**
 * Run on a schedule (EventBridge in AWS, a timer on the local host): deletes the bytes that interrupted
 * uploads stored and never recorded, as their journal entries name them, and sends again the delete jobs
 * whose request or worker died (a crash, a timeout) before handing them on.
 */
export const handler = async (): Promise<{ closed: number; resumed: number }> => {
  const closed = await sweepJournal({ nodes, objects, journal });
  if (closed > 0) log('INFO', 'swept the journal entries of interrupted uploads', { closed });
  const resumed = await resumeStalledJobs({ jobs, queue: jobQueue }, new Date(), stallMs);
  if (resumed > 0) log('INFO', 'sent stalled delete jobs to the worker again', { resumed });
  return { closed, resumed };
};
