import { guard } from './wiring/guard';
import { jobs } from './wiring/jobs';
import { withinPrefix } from './core/access';
import { notFound } from './core/errors';
import { jsonHandler } from './http/api-handler';
import { baseUrlOf, jobIdOf } from './http/event';
import { jobView } from './http/views';

/** GET /drive/jobs/{job_id} → where a delete, move, copy, folder restore or emptying of the trash that answered `202` stands; at the end, its result. */
export const handler = jsonHandler({ permission: 'jobs', guard, stores: { jobs } }, async (event, { caller, drive, stores }) => {
  const id = jobIdOf(event);
  const job = await stores.jobs.get(drive, id);
  // A job with either end outside the key's folder is as unknown to it as another drive's: its answer names both.
  if (!job || !withinPrefix(caller, job.path) || (job.to !== undefined && !withinPrefix(caller, job.to))) throw notFound(`no job ${id}`);
  return { job: jobView(job, baseUrlOf(event)) };
});
