import { Readable } from 'node:stream';
import { guard } from './wiring/guard';
import { nodes } from './wiring/nodes';
import { objects } from './wiring/objects';
import { objectUrls } from './wiring/object-urls';
import { confine } from './core/access';
import { DIRECT_URL_SECONDS, openFile } from './core/download';
import { badRequest } from './core/errors';
import { childPath, parseName, parsePath } from './core/paths';
import type { FileNode } from './core/ports';
import { streamingHandler } from './http/api-handler';
import { headerOf } from './http/event';
import { planDownload, representationOf } from './http/conditional';
import { bytesToRead, directDownloadAnswer, downloadHeaders, downloadRequestOf, readUrlHeaders } from './http/download-response';
import { queryInput } from './http/request-input';
import { DownloadQuery } from './openapi/request-schemas';

/**
 * GET /drive/download?path= (or ?folder=&name=) → the file's bytes, streamed: all of them, or the one range
 * asked for (206), or none when the client's copy is current (304). HEAD answers the same headers and reads
 * only the record. With `redirect=true`, a `307` to a presigned S3 URL of the bytes instead (or the same 304),
 * given only after the key, its folder and its rate limit have admitted the request; with `redirect_above=N`,
 * that `307` for a file of more than N bytes and the plain answer for any other, decided on the record the
 * request reads anyway: one request and one token whichever it is.
 */
export const handler = awslambda.streamifyResponse(
  streamingHandler({ permission: 'download', guard, stores: { nodes, objects, urls: objectUrls } }, async (event, { caller, drive, stores }) => {
    const { path: given, folder, name, redirect, redirect_above: redirectAbove } = queryInput(event, DownloadQuery);
    // Two answers to one question (may this be a redirect?) could disagree, so neither is chosen over the other.
    if (redirect !== undefined && redirectAbove !== undefined) throw badRequest('give redirect or redirect_above, not both');
    const path = targetOf(given, folder, name);
    confine(caller, path, 'path');
    // If-Match is the API download's: 412 for another version, with or without redirect (a share link ignores it).
    const request = { ...downloadRequestOf(event), ifMatch: headerOf(event, 'if-match') };
    const direct = (file: FileNode) => redirect === 'true' || (redirectAbove !== undefined && file.size > redirectAbove);
    const { file, plan, body } = await openFile(stores, drive, path, (found) => {
      // Redirected, Range and If-Range are the URL's to answer; If-None-Match and If-Modified-Since may still say 304 here.
      if (direct(found)) return { ...planDownload({ ...request, method: 'HEAD' }, representationOf(found)), bytes: 'none' as const, direct: true };
      const chosen = planDownload(request, representationOf(found));
      return { ...chosen, bytes: bytesToRead(request.method, chosen), direct: false };
    });
    if (plan.direct && plan.status !== 304) {
      const expiresAt = new Date(Date.now() + DIRECT_URL_SECONDS * 1000);
      const url = await stores.urls.readUrl(file.objectKey, readUrlHeaders(file), DIRECT_URL_SECONDS);
      const answer = directDownloadAnswer(file, url, expiresAt, request.method);
      return { statusCode: answer.statusCode, headers: answer.headers, body: answer.body === undefined ? undefined : Readable.from([answer.body]) };
    }
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
