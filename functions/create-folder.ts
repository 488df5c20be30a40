import { guard } from './wiring/guard';
import { jobs } from './wiring/jobs';
import { nodes } from './wiring/nodes';
import { confine } from './core/access';
import { createFolder } from './core/create-folder';
import { badRequest } from './core/errors';
import { parsePath } from './core/paths';
import { jsonHandler } from './http/api-handler';
import { bodyOf } from './http/event';
import { folderView } from './http/views';

/** POST /drive/folders with `{ "path": … }` → the folder, created with its parents if missing. */
export const handler = jsonHandler({ permission: 'create-folder', guard, stores: { nodes, jobs } }, async (event, { caller, drive, stores }) => {
  const path = parsePath(pathField(bodyOf(event)), 'path', { allowTrailingSlash: true });
  confine(caller, path, 'path');
  return folderView(await createFolder(stores.nodes, drive, path, stores.jobs));
});

function pathField(body: Buffer): string {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw badRequest('body must be JSON like {"path": "/reports/2024"}');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest('body must be a JSON object like {"path": "/reports/2024"}');
  const path = (value as Record<string, unknown>).path;
  if (path === undefined || path === null) throw badRequest('path is required in the body');
  if (typeof path !== 'string') throw badRequest('path must be a string');
  return path;
}
