import { guard } from './wiring/guard';
import { idempotency } from './wiring/idempotency';
import { largeUploadLimits, largeUploads } from './wiring/large-uploads';
import { badRequest } from './core/errors';
import { confine, mayReplace } from './core/access';
import { sessionOwner, startUpload } from './core/large-upload';
import { conditionOf, targetPath } from './core/upload';
import { jsonHandler } from './http/api-handler';
import { partUrlsView } from './http/views';
import { bodyOf } from './http/event';
import { type Messages, jsonInput } from './http/request-input';
import { StartUploadRequest } from './openapi/request-schemas';

const EXAMPLE = '{"path": "/backups/db.tar", "size": 2147483648}';
const MESSAGES: Messages = {
  size: {
    required: () => 'size is required: the file\'s length in bytes',
    type: () => 'size must be a number of bytes',
    value: ({ value }) => `size must be a whole number of bytes, at least 1 (got ${String(value)}); empty files go through POST /drive/upload`,
  },
  content_type: { value: ({ value }) => `content_type must be a media type like "application/zip" (got ${JSON.stringify((value as string).slice(0, 80))})` },
};

/**
 * POST /drive/uploads with `{ path | folder+name | name, size, content_type?, if_match? | if_none_match? }` →
 * a multipart upload session: presigned URLs for its first parts (the rest from GET
 * /drive/uploads/{id}/parts), to PUT the bytes straight to S3, then `complete`. A condition is read as
 * `POST /drive/upload` reads a file's (`conditionOf`), checked now and kept for the completion.
 */
export const handler = jsonHandler({ permission: 'upload', guard, idempotency, stores: { largeUploads } }, async (event, { caller, drive, stores }) => {
  const body = jsonInput(bodyOf(event), StartUploadRequest, EXAMPLE, MESSAGES);
  const target = { path: body.path ?? undefined, folder: body.folder ?? undefined, name: body.name ?? undefined };
  const unnamed = () => {
    throw badRequest(target.folder === undefined ? `give path (or folder with name) for the file, like ${EXAMPLE}` : 'folder needs name: the file name to store under it');
  };
  const path = targetPath(target, unnamed, (field) => field);
  confine(caller, path, 'path');
  const condition = conditionOf({ ifMatch: body.if_match ?? undefined, ifNoneMatch: body.if_none_match ?? undefined }, mayReplace(caller));
  const request = { path, size: body.size, contentType: body.content_type ?? undefined, ...sessionOwner(caller), ...(condition ? { condition } : {}) };
  const { session, parts } = await startUpload(stores.largeUploads, drive, request, largeUploadLimits);
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
