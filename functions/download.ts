import { guard, nodes } from './aws/dynamodb';
import { objects } from './aws/s3';
import { openFile } from './core/download';
import { badRequest } from './core/errors';
import { childPath, nameOf, parseName, parsePath } from './core/paths';
import { streamingHandler } from './http/api-handler';
import { attachment } from './http/content-disposition';
import { queryParam } from './http/event';

/** GET /drive/download?path= (or ?folder=&name=) → the file's bytes, streamed. */
export const handler = awslambda.streamifyResponse(
  streamingHandler('download', guard, async (event, caller) => {
    const { file, body } = await openFile({ nodes, objects }, caller.drive, targetOf(queryParam(event, 'path'), queryParam(event, 'folder'), queryParam(event, 'name')));
    const name = nameOf(file.path);
    return {
      statusCode: 200,
      body,
      headers: {
        'Content-Type': file.contentType,
        'Content-Length': String(file.size),
        'Content-Disposition': attachment(name),
        'X-Content-Type-Options': 'nosniff',
        // Bytes of any user, served from the API's origin: if a browser renders them anyway (HTML, SVG),
        // nothing in them may run or load.
        'Content-Security-Policy': "default-src 'none'; sandbox",
        'Cache-Control': 'private, no-cache',
      },
    };
  }),
);

/** The file path from the two forms of 4.2: `path` alone, or `folder` with `name`. */
function targetOf(path: string | undefined, folder: string | undefined, name: string | undefined): string {
  if (path !== undefined) {
    if (folder !== undefined || name !== undefined) throw badRequest('give either path, or folder with name, not both');
    return parsePath(path, 'path');
  }
  if (folder !== undefined && name !== undefined) {
    return childPath(parsePath(folder, 'folder', { allowTrailingSlash: true }), parseName(name, 'name'), 'folder with name');
  }
  if (name !== undefined) throw badRequest('name must be accompanied by folder (or give path alone)');
  if (folder !== undefined) throw badRequest('folder must be accompanied by name (or give path alone)');
  throw badRequest('give path, or folder with name, to say which file to download');
}
