import { guard, nodes } from './aws/dynamodb';
import { confine } from './core/access';
import { listFolder } from './core/list-folder';
import { ROOT, parsePath } from './core/paths';
import { jsonHandler } from './http/api-handler';
import { invalid } from './core/errors';
import { booleanParam, queryParam } from './http/event';
import { fileEntryView, folderEntryView } from './http/views';

/**
 * GET /drive/list?folder=&recursive= → the folder's files and folders. `include=etag` (an extension) adds
 * each file's content hash, so a client can tell which of its files are already stored.
 */
export const handler = jsonHandler('list', guard, async (event, caller) => {
  const folder = parsePath(queryParam(event, 'folder') ?? ROOT, 'folder', { allowTrailingSlash: true });
  confine(caller, folder, 'folder');
  const etag = includesEtag(queryParam(event, 'include'));
  const listing = await listFolder(nodes, caller.drive, folder, booleanParam(event, 'recursive'));
  return { folder: listing.folder, files: listing.files.map((file) => fileEntryView(file, { etag })), folders: listing.folders.map(folderEntryView) };
});

function includesEtag(include: string | undefined): boolean {
  if (include === undefined) return false;
  if (include === 'etag') return true;
  throw invalid(`include must be "etag" (got ${JSON.stringify(include.slice(0, 40))})`);
}
