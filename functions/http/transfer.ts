import type { APIGatewayProxyEvent } from 'aws-lambda';
import { type Caller, confine } from '../core/access';
import { parsePath } from '../core/paths';
import { etagOf } from '../core/upload';
import type { FileNode, FolderNode, Job } from '../core/ports';
import { baseUrlOf, bodyOf } from './event';
import { jsonInput } from './request-input';
import { Reply } from './respond';
import { fileEntryView, folderEntryView, jobUrl, jobView } from './views';
import { TransferRequest } from '../openapi/request-schemas';

/**
 * The body of a move or a copy, `{"from", "to", "overwrite"?, "if_match"?}`: both paths canonical and within
 * the caller's folder (`403` naming the one outside), `overwrite` a boolean if given, `if_match` an ETag
 * (quotes optional; `422` otherwise) the file at `from` must have.
 */
export function transferRequest(event: APIGatewayProxyEvent, caller: Caller, example: string): { from: string; to: string; overwrite: boolean; ifMatch?: string } {
  const required = { required: ({ at }: { at: string }) => `${at} is required in the body, like ${example}` };
  const body = jsonInput(bodyOf(event), TransferRequest, example, { from: required, to: required });
  // The source may be a name stored before today's rules; the destination is a name being made.
  const from = parsePath(body.from, 'from', { allowTrailingSlash: true, existing: true });
  const to = parsePath(body.to, 'to', { allowTrailingSlash: true });
  confine(caller, from, 'from');
  confine(caller, to, 'to');
  const ifMatch = body.if_match == null ? undefined : etagOf(body.if_match, 'if_match');
  return { from, to, overwrite: body.overwrite === true, ...(ifMatch === undefined ? {} : { ifMatch }) };
}

/** The answer to a move or a copy: the entry at the new path, or `202` with the job that goes on. */
export function transferAnswer(event: APIGatewayProxyEvent, outcome: { done: true; node: FileNode | FolderNode } | { done: false; job: Job }) {
  if (outcome.done) return outcome.node.kind === 'file' ? fileEntryView(outcome.node) : folderEntryView(outcome.node);
  const baseUrl = baseUrlOf(event);
  return new Reply(202, { job: jobView(outcome.job, baseUrl) }, { Location: jobUrl(outcome.job, baseUrl) });
}
