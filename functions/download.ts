import { guard } from './wiring/guard';
import { nodes } from './wiring/nodes';
import { objects } from './wiring/objects';
import { confine } from './core/access';
import { openFile } from './core/download';
import { badRequest } from './core/errors';
import { childPath, parseName, parsePath } from './core/paths';
import { streamingHandler } from './http/api-handler';
import { planDownload, representationOf } from './http/conditional';
import { bytesToRead, downloadHeaders, downloadRequestOf } from './http/download-response';
import { queryInput } from './http/request-input';
import { DownloadQuery } from './openapi/request-schemas';

/**
 * GET /drive/download?path= (or ?folder=&name=) → the file's bytes, streamed: all of them, or the one range
 * asked for (206), or none when the client's copy is current (304). HEAD answers the same headers and reads
 * only the record.
 */
export const handler = awslambda.streamifyResponse(
  streamingHandler({ permission: 'download', guard, stores: { nodes, objects } }, async (event, { caller, drive, stores }) => {
    const { path: given, folder, name } = queryInput(event, DownloadQuery);
    const path = targetOf(given, folder, name);
    confine(caller, path, 'path');
    const request = downloadRequestOf(event);
    const { file, plan, body } = await openFile(stores, drive, path, (found) => {
      const chosen = planDownload(request, representationOf(found));
      return { ...chosen, bytes: bytesToRead(request.method, chosen) };
    });
    return { statusCode: plan.status, headers: downloadHeaders(file, plan), body };
  }),
);

/** The file path from the two forms of 4.2: `path` alone, or `folder` with `name`. */
function targetOf(path: string | undefined, folder: string | undefined, name: string | undefined): string {
  if (path !== undefined) {
    if (folder !== undefined || name !== undefined) throw badRequest('give either path, or folder with name, not both');
    return parsePath(path, 'path', { existing: true });
  }
  if (folder !== undefined && name !== undefined) {
    return childPath(parsePath(folder, 'folder', { allowTrailingSlash: true, existing: true }), parseName(name, 'name', { existing: true }), 'folder with name');
  }
  if (name !== undefined) throw badRequest('name must be accompanied by folder (or give path alone)');
  if (folder !== undefined) throw badRequest('folder must be accompanied by name (or give path alone)');
  throw badRequest('give path, or folder with name, to say which file to download');
}
