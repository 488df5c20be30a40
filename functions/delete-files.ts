import type { APIGatewayProxyEvent } from 'aws-lambda';
import { guard } from './wiring/guard';
import { trashPolicy } from './wiring/trash';
import { idempotency } from './wiring/idempotency';
import { journal } from './wiring/journal';
import { records } from './wiring/records';
import { nodes } from './wiring/nodes';
import { objects } from './wiring/objects';
import { confine, conflictFor } from './core/access';
import { deleteFiles } from './core/delete-files';
import { badRequest, invalid } from './core/errors';
import { parsePath } from './core/paths';
import { jsonHandler } from './http/api-handler';
import { bodyOf, queryValues } from './http/event';
import { type Messages, type Problem, jsonInput, queryInput } from './http/request-input';
import { DeleteFilesQuery, DeleteFilesRequest } from './openapi/request-schemas';

const EXAMPLE = '{"paths": ["/reports/old.pdf", "/tmp/scratch.txt"]}';

/**
 * DELETE /drive/files?path=/a.txt&path=/b.txt (or a JSON body `{"paths": [...]}`, for lists longer than a URL
 * holds) → `{deleted, not_found}`: each file's record and bytes are gone. Up to 1,000 paths; a folder at any
 * of them is 409 and deletes nothing.
 */
export const handler = jsonHandler({ permission: 'files', guard, idempotency, stores: { nodes, objects, journal, records } }, async (event, { caller, drive, stores }) => {
  const paths = pathsOf(event, bodyOf(event));
  paths.forEach((path, i) => confine(caller, path, `path[${i}]`));
  try {
    const { deleted, notFound } = await deleteFiles({ ...stores, trashPolicy: trashPolicy(caller) }, drive, paths);
    return { deleted, not_found: notFound };
  } catch (error) {
    throw conflictFor(caller, error);
  }
});

const NO_PATH = 'path is required: the file to delete, e.g. ?path=/reports/old.pdf (repeat it for more)';
const TOO_MANY = ({ schema, value }: Problem) => `at most ${String(schema.maxItems)} paths a request (got ${(value as unknown[]).length})`;
const BODY_MESSAGES: Messages = {
  paths: {
    required: () => `paths must be an array of paths, like ${EXAMPLE}`,
    type: () => `paths must be an array of paths, like ${EXAMPLE}`,
    value: (problem) => (problem.keyword === 'minItems' ? NO_PATH : TOO_MANY(problem)),
  },
};

/** The paths to delete, from the query's `path` (repeatable) or the body's `paths`, not both; each canonical, each once. */
function pathsOf(event: APIGatewayProxyEvent, body: Buffer): string[] {
  let raw: string[];
  if (body.length > 0) {
    if ((queryValues(event, 'path') ?? []).length > 0) throw badRequest('give the paths in the query (path=…) or in the body ({"paths": […]}), not both');
    raw = jsonInput(body, DeleteFilesRequest, EXAMPLE, BODY_MESSAGES).paths;
  } else {
    raw = queryInput(event, DeleteFilesQuery, { path: { value: TOO_MANY } }).path ?? [];
  }
  if (raw.length === 0) throw invalid(NO_PATH);
  const paths = raw.map((value, i) => {
    if (value === '' || value === '/') throw invalid(`path[${i}] must name a file, not ${value === '' ? 'nothing' : 'the root'}`);
    return parsePath(value, `path[${i}]`, { existing: true });
  });
  return [...new Set(paths)];
}
