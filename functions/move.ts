import { guard, jobs, journal, nodes, records } from './aws/dynamodb';
import { millisecondsEnv } from './aws/env';
import { objects } from './aws/s3';
import { jobQueue } from './aws/sqs';
import { confine, conflictFor } from './core/access';
import { REQUEST_DELETE_BUDGET_MS } from './core/delete-folder';
import { badRequest } from './core/errors';
import { acceptMove } from './core/move';
import { parsePath } from './core/paths';
import { jsonHandler } from './http/api-handler';
import { baseUrlOf, bodyOf } from './http/event';
import { jsonObject } from './http/json-body';
import { Reply } from './http/respond';
import { fileEntryView, folderEntryView, jobUrl, jobView } from './http/views';

/** How long a request moves a folder before it hands the rest to the worker; tests set it to 0 to make every folder move a job. */
const budgetMs = millisecondsEnv('DRIVE_MOVE_BUDGET_MS', REQUEST_DELETE_BUDGET_MS);

const EXAMPLE = '{"from": "/inbox/report.pdf", "to": "/archive/2026/report.pdf"}';

/**
 * POST /drive/move with `{"from", "to", "overwrite"?}` → the File or Folder entry at its new path; or, for a
 * folder too big to move within the request's budget, `202 Accepted` with the job that finishes it.
 */
export const handler = jsonHandler('files', guard, async (event, caller) => {
  const body = jsonObject(bodyOf(event), ['from', 'to', 'overwrite'], EXAMPLE);
  const from = pathField(body, 'from');
  const to = pathField(body, 'to');
  if (body.overwrite !== undefined && typeof body.overwrite !== 'boolean') throw badRequest('overwrite must be true or false');
  confine(caller, from, 'from');
  confine(caller, to, 'to');
  try {
    const outcome = await acceptMove({ nodes, records, objects, journal, jobs, queue: jobQueue }, caller.drive, from, to, { overwrite: body.overwrite === true }, budgetMs);
    if (outcome.done) return outcome.node.kind === 'file' ? fileEntryView(outcome.node) : folderEntryView(outcome.node);
    const baseUrl = baseUrlOf(event);
    return new Reply(202, { job: jobView(outcome.job, baseUrl) }, { Location: jobUrl(outcome.job, baseUrl) });
  } catch (error) {
    throw conflictFor(caller, error);
  }
});

/** A path field of the body: required, a string, canonical. */
export function pathField(body: Record<string, unknown>, field: string): string {
  const value = body[field];
  if (value === undefined || value === null) throw badRequest(`${field} is required in the body, with from and to both paths`);
  if (typeof value !== 'string') throw badRequest(`${field} must be a string`);
  return parsePath(value, field, { allowTrailingSlash: true });
}
