import { guard } from './wiring/guard';
import { idempotency } from './wiring/idempotency';
import { jobs } from './wiring/jobs';
import { nodes } from './wiring/nodes';
import { records } from './wiring/records';
import { trash, trashPolicy } from './wiring/trash';
import { jobQueue } from './wiring/job-queue';
import { setting } from './config';
import { confine, conflictFor, withinPrefix } from './core/access';
import { invalid } from './core/errors';
import { ROOT, parsePath } from './core/paths';
import { REQUEST_DELETE_BUDGET_MS } from './core/background-jobs';
import { acceptRestore } from './core/restore-folder';
import { jsonHandler } from './http/api-handler';
import { baseUrlOf, bodyOf } from './http/event';
import { idempotencyKeyOf, scopeOf } from './http/idempotency';
import { jsonInput } from './http/request-input';
import { Reply } from './http/respond';
import { fileView, folderView, jobUrl, jobView } from './http/views';
import { RestoreRequest } from './openapi/request-schemas';

const EXAMPLE = '{"id": "0193a1b2-…", "to": "/restored/q3.pdf"}';

/** How long a folder restore works in the request before it hands the rest to the worker: a recursive delete's budget (tests set 0). */
const budgetMs = setting('deleteBudgetMs') ?? REQUEST_DELETE_BUDGET_MS;

/**
 * POST /drive/trash/restore {"id", "to"?, "overwrite"?} → the restored File: the trashed file back at the path it
 * was taken from (or `to`), with its id, bytes and ETag; a file there is replaced (and trashed) only with
 * `overwrite`. A trashed folder: the restored Folder, whole but for files whose path was taken since; or, too
 * big for the request's budget, `202` with the job (`restore-folder`) that finishes it. An item outside the
 * key's folder does not exist for it (404).
 */
export const handler = jsonHandler({ permission: 'restore', guard, idempotency, stores: { nodes, records, trash, jobs, queue: jobQueue } }, async (event, { caller, drive, stores }) => {
  const body = jsonInput(bodyOf(event), RestoreRequest, EXAMPLE);
  let to: string | undefined;
  if (body.to !== undefined && body.to !== null) {
    to = parsePath(body.to, 'to');
    if (to === ROOT) throw invalid('to must name a file, not the root');
    confine(caller, to, 'to');
  }
  try {
    // With an Idempotency-Key, a retry after a failure that came after the claim (a 5xx frees the key, so the
    // retry runs anew) is the same attempt: it finds the first try's job (202, or 200 once it restored).
    const key = idempotencyKeyOf(event);
    const attempt = key === undefined ? undefined : JSON.stringify([scopeOf(caller), key]);
    const outcome = await acceptRestore({ ...stores, trashPolicy: trashPolicy(caller) }, drive, body.id, { to, overwrite: body.overwrite === true, visible: (row) => withinPrefix(caller, row.path), attempt }, budgetMs);
    const baseUrl = baseUrlOf(event);
    if (!outcome.done) return new Reply(202, { job: jobView(outcome.job, baseUrl) }, { Location: jobUrl(outcome.job, baseUrl) });
    return outcome.node.kind === 'file' ? fileView(outcome.node, baseUrl) : folderView(outcome.node);
  } catch (error) {
    throw conflictFor(caller, error);
  }
});
