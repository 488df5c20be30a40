import { guard } from './wiring/guard';
import { largeUploads } from './wiring/large-uploads';
import { abortUpload, sessionVisibleTo } from './core/large-upload';
import { jsonHandler } from './http/api-handler';
import { uploadIdOf } from './http/event';

/** DELETE /drive/uploads/{upload_id} → the session ends and its parts are deleted. */
export const handler = jsonHandler({ permission: 'upload', guard, stores: { largeUploads } }, async (event, { caller, drive, stores }) => {
  const id = uploadIdOf(event);
  await abortUpload(stores.largeUploads, drive, id, sessionVisibleTo(caller));
  return { upload_id: id, aborted: true };
});
