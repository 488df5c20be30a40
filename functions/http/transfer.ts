import type { APIGatewayProxyEvent } from 'aws-lambda';
import { type Caller, confine } from '../core/access';
import { badRequest } from '../core/errors';
import { parsePath } from '../core/paths';
import type { FileNode, FolderNode, Job } from '../core/ports';
import { baseUrlOf, bodyOf } from './event';
import { jsonObject } from './json-body';
import { Reply } from './respond';
import { fileEntryView, folderEntryView, jobUrl, jobView } from './views';
import type { Wire } from '../openapi/schemas';

/**
 * The body of a move or a copy, `{"from", "to", "overwrite"?}`: both paths canonical and within the
 * caller's folder (`403` naming the one outside), `overwrite` a boolean if given.
 */
export function transferRequest(event: APIGatewayProxyEvent, caller: Caller, example: string): { from: string; to: string; overwrite: boolean } {
  const body = jsonObject<Wire<'TransferRequest'>>(bodyOf(event), ['from', 'to', 'overwrite'], example);
  const field = (name: 'from' | 'to') => {
    const value = body[name];
    if (value === undefined || value === null) throw badRequest(`${name} is required in the body, like ${example}`);
    if (typeof value !== 'string') throw badRequest(`${name} must be a string`);
    // The source may be a name stored before today's rules; the destination is a name being made.
    return parsePath(value, name, { allowTrailingSlash: true, existing: name === 'from' });
  };
  const from = field('from');
  const to = field('to');
  if (body.overwrite !== undefined && typeof body.overwrite !== 'boolean') throw badRequest('overwrite must be true or false');
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
