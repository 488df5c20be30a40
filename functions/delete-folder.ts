import { guard } from './wiring/guard';
import { records } from './wiring/records';
import { trash, trashPolicy } from './wiring/trash';
import { idempotency } from './wiring/idempotency';
import { jobs } from './wiring/jobs';
import { nodes } from './wiring/nodes';
import { objects } from './wiring/objects';
import { jobQueue } from './wiring/job-queue';
import { confine } from './core/access';
import { REQUEST_DELETE_BUDGET_MS, acceptDelete, deleteResult } from './core/delete-folder';
import { parsePath } from './core/paths';
import { jsonHandler } from './http/api-handler';
import { baseUrlOf } from './http/event';
import { queryInput } from './http/request-input';
import { Reply } from './http/respond';
import { jobUrl, jobView } from './http/views';
import { setting } from './config';
import { DeleteFolderQuery } from './openapi/request-schemas';

/** How long a request deletes before it hands the rest to the worker; tests set it to 0 to make every recursive delete a job. */
const budgetMs = setting('deleteBudgetMs') ?? REQUEST_DELETE_BUDGET_MS;

const NO_PATH = () => 'path is required: the folder to delete, e.g. ?path=/reports';

/**
 * DELETE /drive/folders?path=&recursive= → what was deleted; or, for a tree too big to delete within the
 * request's budget, `202 Accepted` with the job that finishes it and a `Location` to read it at.
 */
export const handler = jsonHandler({ permission: 'delete-folder', guard, idempotency, stores: { nodes, objects, jobs, records, trash, queue: jobQueue } }, async (event, { caller, drive, stores }) => {
  const query = queryInput(event, DeleteFolderQuery, { path: { required: NO_PATH, value: NO_PATH } });
  const path = parsePath(query.path, 'path', { allowTrailingSlash: true, existing: true });
  confine(caller, path, 'path');
  const outcome = await acceptDelete({ ...stores, trashPolicy: trashPolicy(caller) }, drive, path, query.recursive === 'true', budgetMs);
  if (outcome.done) return deleteResult(path, outcome.filesDeleted);
  const baseUrl = baseUrlOf(event);
  return new Reply(202, { job: jobView(outcome.job, baseUrl) }, { Location: jobUrl(outcome.job, baseUrl) });
});
