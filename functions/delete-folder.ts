import { guard } from './wiring/guard';
import { jobs } from './wiring/jobs';
import { nodes } from './wiring/nodes';
import { objects } from './wiring/objects';
import { jobQueue } from './wiring/job-queue';
import { confine } from './core/access';
import { REQUEST_DELETE_BUDGET_MS, acceptDelete, deleteResult } from './core/delete-folder';
import { invalid } from './core/errors';
import { parsePath } from './core/paths';
import { jsonHandler } from './http/api-handler';
import { baseUrlOf, booleanParam, queryParam } from './http/event';
import { Reply } from './http/respond';
import { jobUrl, jobView } from './http/views';
import { setting } from './config';

/** How long a request deletes before it hands the rest to the worker; tests set it to 0 to make every recursive delete a job. */
const budgetMs = setting('deleteBudgetMs') ?? REQUEST_DELETE_BUDGET_MS;

/**
 * DELETE /drive/folders?path=&recursive= → what was deleted; or, for a tree too big to delete within the
 * request's budget, `202 Accepted` with the job that finishes it and a `Location` to read it at.
 */
export const handler = jsonHandler({ permission: 'delete-folder', guard, stores: { nodes, objects, jobs, queue: jobQueue } }, async (event, { caller, drive, stores }) => {
  const raw = queryParam(event, 'path');
  if (raw === undefined || raw === '') throw invalid('path is required: the folder to delete, e.g. ?path=/reports');
  const path = parsePath(raw, 'path', { allowTrailingSlash: true, existing: true });
  confine(caller, path, 'path');
  const outcome = await acceptDelete(stores, drive, path, booleanParam(event, 'recursive'), budgetMs);
  if (outcome.done) return deleteResult(path, outcome.filesDeleted);
  const baseUrl = baseUrlOf(event);
  return new Reply(202, { job: jobView(outcome.job, baseUrl) }, { Location: jobUrl(outcome.job, baseUrl) });
});
