import { guard } from './wiring/guard';
import { records } from './wiring/records';
import { trashPolicy } from './wiring/trash';
import { idempotency } from './wiring/idempotency';
import { jobs } from './wiring/jobs';
import { journal } from './wiring/journal';
import { nodes } from './wiring/nodes';
import { objects } from './wiring/objects';
import { jobQueue } from './wiring/job-queue';
import { conflictFor } from './core/access';
import { acceptCopy } from './core/copy';
import { REQUEST_DELETE_BUDGET_MS } from './core/delete-folder';
import { jsonHandler } from './http/api-handler';
import { transferAnswer, transferRequest } from './http/transfer';
import { setting } from './config';

/** How long a request copies a folder before it hands the rest to the worker; tests set it to 0 to make every folder copy a job. */
const budgetMs = setting('copyBudgetMs') ?? REQUEST_DELETE_BUDGET_MS;

const EXAMPLE = '{"from": "/templates/invoice.docx", "to": "/clients/acme/invoice.docx"}';

/**
 * POST /drive/copy with `{"from", "to", "overwrite"?}` → the File or Folder entry of the copy (new ids, the
 * bytes copied in S3); or, for a folder too big to copy within the request's budget, `202 Accepted` with the
 * job that finishes it.
 */
export const handler = jsonHandler({ permission: 'files', guard, idempotency, stores: { nodes, objects, journal, jobs, records, queue: jobQueue } }, async (event, { caller, drive, stores }) => {
  const { from, to, overwrite, ifMatch } = transferRequest(event, caller, EXAMPLE);
  try {
    return transferAnswer(event, await acceptCopy({ ...stores, trashPolicy: trashPolicy(caller) }, drive, from, to, { overwrite, ifMatch }, budgetMs));
  } catch (error) {
    throw conflictFor(caller, error);
  }
});
