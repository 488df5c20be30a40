import { guard } from './wiring/guard';
import { trashPolicy } from './wiring/trash';
import { idempotency } from './wiring/idempotency';
import { jobs } from './wiring/jobs';
import { journal } from './wiring/journal';
import { records } from './wiring/records';
import { nodes } from './wiring/nodes';
import { objects } from './wiring/objects';
import { jobQueue } from './wiring/job-queue';
import { conflictFor } from './core/access';
import { REQUEST_DELETE_BUDGET_MS } from './core/delete-folder';
import { acceptMove } from './core/move';
import { jsonHandler } from './http/api-handler';
import { transferAnswer, transferRequest } from './http/transfer';
import { setting } from './config';

/** How long a request moves a folder before it hands the rest to the worker; tests set it to 0 to make every folder move a job. */
const budgetMs = setting('moveBudgetMs') ?? REQUEST_DELETE_BUDGET_MS;

const EXAMPLE = '{"from": "/inbox/report.pdf", "to": "/archive/2026/report.pdf"}';

/**
 * POST /drive/move with `{"from", "to", "overwrite"?}` → the File or Folder entry at its new path; or, for a
 * folder too big to move within the request's budget, `202 Accepted` with the job that finishes it.
 */
export const handler = jsonHandler({ permission: 'files', guard, idempotency, stores: { nodes, records, objects, journal, jobs, queue: jobQueue } }, async (event, { caller, drive, stores }) => {
  const { from, to, overwrite, ifMatch } = transferRequest(event, caller, EXAMPLE);
  try {
    return transferAnswer(event, await acceptMove({ ...stores, trashPolicy: trashPolicy(caller) }, drive, from, to, { overwrite, ifMatch }, budgetMs));
  } catch (error) {
    throw conflictFor(caller, error);
  }
});
