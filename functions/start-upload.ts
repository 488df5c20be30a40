import { guard } from './wiring/guard';
import { largeUploadLimits, largeUploads } from './wiring/large-uploads';
import { badRequest, invalid } from './core/errors';
import { confine } from './core/access';
import { startUpload } from './core/large-upload';
import { targetPath } from './core/upload';
import { jsonHandler } from './http/api-handler';
import { partUrlsView } from './http/views';
import { bodyOf } from './http/event';
import { jsonObject, optionalString } from './http/json-body';
import type { Wire } from './openapi/schemas';

const EXAMPLE = '{"path": "/backups/db.tar", "size": 2147483648}';
// A media type (RFC 9110 §8.3.1): type/subtype and parameters of tokens or quoted printable ASCII; nothing
// that cannot stand in a header.
const TOKEN = "[A-Za-z0-9!#$%&'*+.^_`|~-]+";
const MEDIA_TYPE = new RegExp(`^${TOKEN}/${TOKEN}([ \\t]*;[ \\t]*${TOKEN}=(${TOKEN}|"[\\x20\\x21\\x23-\\x5b\\x5d-\\x7e]*"))*$`);

/**
 * POST /drive/uploads with `{ path | folder+name | name, size, content_type? }` → a multipart upload
 * session: presigned URLs for its first parts (the rest from GET /drive/uploads/{id}/parts), to PUT the
 * bytes straight to S3, then `complete`.
 */
export const handler = jsonHandler({ permission: 'upload', guard, stores: { largeUploads } }, async (event, { caller, drive, stores }) => {
  const body = jsonObject<Wire<'StartUploadRequest'>>(bodyOf(event), ['path', 'folder', 'name', 'size', 'content_type'], EXAMPLE);
  const target = { path: optionalString(body, 'path'), folder: optionalString(body, 'folder'), name: optionalString(body, 'name') };
  const unnamed = () => {
    throw badRequest(target.folder === undefined ? `give path (or folder with name) for the file, like ${EXAMPLE}` : 'folder needs name: the file name to store under it');
  };
  const path = targetPath(target, unnamed, (field) => field);
  confine(caller, path, 'path');
  const { session, parts } = await startUpload(stores.largeUploads, drive, { path, size: sizeOf(body.size), contentType: contentTypeOf(body), createdBy: caller.keyId }, largeUploadLimits);
  return {
    upload_id: session.id,
    path: session.path,
    size: session.size,
    part_size: session.partSize,
    part_count: session.partCount,
    ...partUrlsView(parts),
    expires_at: session.expiresAt,
  };
});

function sizeOf(value: unknown): number {
  if (value === undefined || value === null) throw badRequest('size is required: the file\'s length in bytes');
  if (typeof value !== 'number') throw badRequest('size must be a number of bytes');
  if (!Number.isSafeInteger(value) || value < 1) throw invalid(`size must be a whole number of bytes, at least 1 (got ${value}); empty files go through POST /drive/upload`);
  return value;
}

function contentTypeOf(body: Record<string, unknown>): string | undefined {
  const value = optionalString(body, 'content_type');
  if (value !== undefined && (value.length > 255 || !MEDIA_TYPE.test(value))) {
    throw invalid(`content_type must be a media type like "application/zip" (got ${JSON.stringify(value.slice(0, 80))})`);
  }
  return value;
}
