import { guard, jobs, journal, nodes } from './aws/dynamodb';
import { millisecondsEnv } from './aws/env';
import { objects } from './aws/s3';
import { jobQueue } from './aws/sqs';
import { confine, conflictFor } from './core/access';
import { acceptCopy } from './core/copy';
import { REQUEST_DELETE_BUDGET_MS } from './core/delete-folder';
import { badRequest } from './core/errors';
import { jsonHandler } from './http/api-handler';
import { baseUrlOf, bodyOf } from './http/event';
import { jsonObject } from './http/json-body';
import { Reply } from './http/respond';
import { fileEntryView, folderEntryView, jobUrl, jobView } from './http/views';
import { pathField } from './move';

const EXAMPLE = '{"from": "/templates/invoice.docx", "to": "/clients/acme/invoice.docx"}';

/** How long a request copies a folder before it hands the rest to the worker; tests set it to 0 to make every folder copy a job. */
const budgetMs = millisecondsEnv('DRIVE_COPY_BUDGET_MS', REQUEST_DELETE_BUDGET_MS);

/**
 * POST /drive/copy with `{"from", "to", "overwrite"?}` → the File or Folder entry of the copy (new ids, the
 * bytes copied in S3); or, for a folder too big to copy within the request's budget, `202 Accepted` with the
 * job that finishes it.
 */
export const handler = jsonHandler('files', guard, async (event, caller) => {
  const body = jsonObject(bodyOf(event), ['from', 'to', 'overwrite'], EXAMPLE);
  const from = pathField(body, 'from');
  const to = pathField(body, 'to');
  if (body.overwrite !== undefined && typeof body.overwrite !== 'boolean') throw badRequest('overwrite must be true or false');
  confine(caller, from, 'from');
  confine(caller, to, 'to');
  try {
    const outcome = await acceptCopy({ nodes, objects, journal, jobs, queue: jobQueue }, caller.drive, from, to, { overwrite: body.overwrite === true }, budgetMs);
    if (outcome.done) return outcome.node.kind === 'file' ? fileEntryView(outcome.node) : folderEntryView(outcome.node);
    const baseUrl = baseUrlOf(event);
    return new Reply(202, { job: jobView(outcome.job, baseUrl) }, { Location: jobUrl(outcome.job, baseUrl) });
  } catch (error) {
    throw conflictFor(caller, error);
  }
});
