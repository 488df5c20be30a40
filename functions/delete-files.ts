import { guard } from './wiring/guard';
import { journal } from './wiring/journal';
import { records } from './wiring/records';
import { nodes } from './wiring/nodes';
import { objects } from './wiring/objects';
import { confine, conflictFor } from './core/access';
import { MAX_FILES_PER_DELETE, deleteFiles } from './core/delete-files';
import { badRequest, invalid } from './core/errors';
import { parsePath } from './core/paths';
import { jsonHandler } from './http/api-handler';
import { bodyOf } from './http/event';
import { jsonObject } from './http/json-body';
import type { Wire } from './openapi/schemas';

const EXAMPLE = '{"paths": ["/reports/old.pdf", "/tmp/scratch.txt"]}';

/**
 * DELETE /drive/files?path=/a.txt&path=/b.txt (or a JSON body `{"paths": [...]}`, for lists longer than a URL
 * holds) → `{deleted, not_found}`: each file's record and bytes are gone. Up to 1,000 paths; a folder at any
 * of them is 409 and deletes nothing.
 */
export const handler = jsonHandler({ permission: 'files', guard, stores: { nodes, objects, journal, records } }, async (event, { caller, drive, stores }) => {
  const paths = pathsOf(event.multiValueQueryStringParameters, bodyOf(event));
  paths.forEach((path, i) => confine(caller, path, `path[${i}]`));
  try {
    const { deleted, notFound } = await deleteFiles(stores, drive, paths);
    return { deleted, not_found: notFound };
  } catch (error) {
    throw conflictFor(caller, error);
  }
});

/** The paths to delete, from the query's `path` (repeatable) or the body's `paths`, not both; each canonical, each once. */
function pathsOf(query: Record<string, string[] | undefined> | null, body: Buffer): string[] {
  const fromQuery = query && Object.hasOwn(query, 'path') ? (query.path ?? []) : [];
  let raw: unknown[] = fromQuery;
  if (body.length > 0) {
    if (fromQuery.length > 0) throw badRequest('give the paths in the query (path=…) or in the body ({"paths": […]}), not both');
    const value = jsonObject<Wire<'DeleteFilesRequest'>>(body, ['paths'], EXAMPLE).paths;
    if (!Array.isArray(value)) throw badRequest(`paths must be an array of paths, like ${EXAMPLE}`);
    raw = value;
  }
  if (raw.length === 0) throw invalid('path is required: the file to delete, e.g. ?path=/reports/old.pdf (repeat it for more)');
  if (raw.length > MAX_FILES_PER_DELETE) throw invalid(`at most ${MAX_FILES_PER_DELETE} paths a request (got ${raw.length})`);
  const paths = raw.map((value, i) => {
    if (typeof value !== 'string') throw badRequest(`paths[${i}] must be a string`);
    if (value === '' || value === '/') throw invalid(`path[${i}] must name a file, not ${value === '' ? 'nothing' : 'the root'}`);
    return parsePath(value, `path[${i}]`, { existing: true });
  });
  return [...new Set(paths)];
}
