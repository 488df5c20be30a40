import { guard, nodes } from './aws/dynamodb';
import { objects } from './aws/s3';
import { confine } from './core/access';
import { deleteFolder } from './core/delete-folder';
import { invalid } from './core/errors';
import { parsePath } from './core/paths';
import { jsonHandler } from './http/api-handler';
import { booleanParam, queryParam } from './http/event';

/** DELETE /drive/folders?path=&recursive= → what was deleted. */
export const handler = jsonHandler('delete-folder', guard, async (event, caller) => {
  const raw = queryParam(event, 'path');
  if (raw === undefined || raw === '') throw invalid('path is required: the folder to delete, e.g. ?path=/reports');
  const path = parsePath(raw, 'path', { allowTrailingSlash: true });
  confine(caller, path, 'path');
  const filesDeleted = await deleteFolder({ nodes, objects }, caller.drive, path, booleanParam(event, 'recursive'));
  return { deleted: true, path, files_deleted: filesDeleted };
});
