import type { APIGatewayProxyEvent } from 'aws-lambda';
import { type Caller, confine } from '../core/access';
import { parsePath } from '../core/paths';
import type { FileNode, FolderNode, Job } from '../core/ports';
import { baseUrlOf, bodyOf } from './event';
import { jsonInput } from './request-input';
import { Reply } from './respond';
import { fileEntryView, folderEntryView, jobUrl, jobView } from './views';
import { TransferRequest } from '../openapi/request-schemas';

/**
 * The body of a move or a copy, `{"from", "to", "overwrite"?}`: both paths canonical and within the
 * caller's folder (`403` naming the one outside), `overwrite` a boolean if given.
 */
export function transferRequest(event: APIGatewayProxyEvent, caller: Caller, example: string): { from: string; to: string; overwrite: boolean } {
  const required = { required: ({ at }: { at: string }) => `${at} is required in the body, like ${example}` };
  const body = jsonInput(bodyOf(event), TransferRequest, example, { from: required, to: required });
  // The source may be a name stored before today's rules; the destination is a name being made.
  const from = parsePath(body.from, 'from', { allowTrailingSlash: true, existing: true });
  const to = parsePath(body.to, 'to', { allowTrailingSlash: true });
  confine(caller, from, 'from');
  confine(caller, to, 'to');
  return { from, to, overwrite: body.overwrite === true };
}

/** The answer to a move or a copy: the entry at the new path, or `202` with the job that goes on. */
export function transferAnswer(event: APIGatewayProxyEvent, outcome: { done: true; node: FileNode | FolderNode } | { done: false; job: Job }) {
  if (outcome.done) return outcome.node.kind === 'file' ? fileEntryView(outcome.node) : folderEntryView(outcome.node);
  const baseUrl = baseUrlOf(event);
  return new Reply(202, { job: jobView(outcome.job, baseUrl) }, { Location: jobUrl(outcome.job, baseUrl) });
}
