import { guard } from './wiring/guard';
import { idempotency } from './wiring/idempotency';
import { jobs } from './wiring/jobs';
import { nodes } from './wiring/nodes';
import { confine } from './core/access';
import { createFolder } from './core/create-folder';
import { parsePath } from './core/paths';
import { jsonHandler } from './http/api-handler';
import { bodyOf } from './http/event';
import { jsonInput } from './http/request-input';
import { folderView } from './http/views';
import { CreateFolderRequest } from './openapi/request-schemas';

/** POST /drive/folders with `{ "path": … }` → the folder, created with its parents if missing. */
export const handler = jsonHandler({ permission: 'create-folder', guard, idempotency, stores: { nodes, jobs } }, async (event, { caller, drive, stores }) => {
  const body = jsonInput(bodyOf(event), CreateFolderRequest, '{"path": "/reports/2024"}');
  const path = parsePath(body.path, 'path', { allowTrailingSlash: true });
  confine(caller, path, 'path');
  return folderView(await createFolder(stores.nodes, drive, path, stores.jobs));
});
