import { guard, jobs } from './aws/dynamodb';
import { withinPrefix } from './core/access';
import { notFound } from './core/errors';
import { jsonHandler } from './http/api-handler';
import { baseUrlOf, jobIdOf } from './http/event';
import { jobView } from './http/views';

/** GET /drive/jobs/{job_id} → where a delete that answered `202` stands; at the end, its result. */
export const handler = jsonHandler('jobs', guard, async (event, caller) => {
  const id = jobIdOf(event);
  const job = await jobs.get(caller.drive, id);
  // A job outside the key's folder is as unknown to it as another drive's.
  if (!job || !withinPrefix(caller, job.path)) throw notFound(`no job ${id}`);
  return { job: jobView(job, baseUrlOf(event)) };
});
