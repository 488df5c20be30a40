import { guard, nodes } from './aws/dynamodb';
import { listFolder } from './core/list-folder';
import { ROOT, parsePath } from './core/paths';
import { jsonHandler } from './http/api-handler';
import { booleanParam, queryParam } from './http/event';
import { fileEntryView, folderEntryView } from './http/views';

/** GET /drive/list?folder=&recursive= → the folder's files and folders. */
export const handler = jsonHandler('list', guard, async (event, caller) => {
  const folder = parsePath(queryParam(event, 'folder') ?? ROOT, 'folder', { allowTrailingSlash: true });
  const listing = await listFolder(nodes, caller.drive, folder, booleanParam(event, 'recursive'));
  return { folder: listing.folder, files: listing.files.map(fileEntryView), folders: listing.folders.map(folderEntryView) };
});
