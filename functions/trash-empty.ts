import { guard } from './wiring/guard';
import { idempotency } from './wiring/idempotency';
import { jobs } from './wiring/jobs';
import { objects } from './wiring/objects';
import { trash, trashClock } from './wiring/trash';
import { jobQueue } from './wiring/job-queue';
import { setting } from './config';
import { REQUEST_DELETE_BUDGET_MS } from './core/background-jobs';
import { acceptEmptyTrash } from './core/empty-trash';
import { parsePath } from './core/paths';
import { jsonHandler } from './http/api-handler';
import { baseUrlOf } from './http/event';
import { idempotencyKeyOf, scopeOf } from './http/idempotency';
import { queryInput } from './http/request-input';
import { Reply } from './http/respond';
import { jobUrl, jobView } from './http/views';
import { EmptyTrashQuery } from './openapi/request-schemas';

/** How long the request empties before it hands the rest to the worker: a recursive delete's budget (tests set 0). */
const budgetMs = setting('deleteBudgetMs') ?? REQUEST_DELETE_BUDGET_MS;

const NO_PATH = () => 'path is required: the folder whose trash to empty, e.g. ?path=/reports (or ?path=/ for all of it)';

/**
 * DELETE /drive/trash?path=/folder (admin) → `{purged, path, items, files, bytes}`: every trash item at or
 * below `path` trashed by now purged (an item a restore holds, or another purge, is left); or, too much for
 * the request's budget, `202` with the job (`empty-trash`) that purges the rest, its result those totals.
 */
export const handler = jsonHandler({ permission: 'empty-trash', guard, idempotency, stores: { trash, objects, jobs, queue: jobQueue } }, async (event, { caller, drive, stores }) => {
  const query = queryInput(event, EmptyTrashQuery, { path: { required: NO_PATH, value: NO_PATH } });
  const path = parsePath(query.path, 'path', { allowTrailingSlash: true, existing: true });
  // With an Idempotency-Key, a retry after a 5xx (which frees the key, so the retry runs anew) is the same
  // attempt: it finds the first try's job (202 while it runs, 200 with its totals once done).
  const key = idempotencyKeyOf(event);
  const attempt = key === undefined ? undefined : JSON.stringify([scopeOf(caller), key]);
  const outcome = await acceptEmptyTrash(stores, drive, path, new Date(trashClock()), budgetMs, { attempt });
  if (outcome.done) return { purged: true, path, ...outcome.emptied };
  const baseUrl = baseUrlOf(event);
  return new Reply(202, { job: jobView(outcome.job, baseUrl) }, { Location: jobUrl(outcome.job, baseUrl) });
});
