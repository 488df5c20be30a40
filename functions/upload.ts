import { guard } from './wiring/guard';
import { records } from './wiring/records';
import { trashPolicy } from './wiring/trash';
import { idempotency } from './wiring/idempotency';
import { jobs } from './wiring/jobs';
import { journal } from './wiring/journal';
import { liveFolders } from './wiring/live-folders';
import { nodes } from './wiring/nodes';
import { objects } from './wiring/objects';
import { confine, mayReplace } from './core/access';
import { uploadFiles } from './core/upload';
import { jsonHandler } from './http/api-handler';
import { baseUrlOf, bodyOf, headerOf } from './http/event';
import { parseUploadForm } from './http/upload-form';
import { fileView } from './http/views';

/** POST /drive/upload: multipart `files` (+ optional `metadata`) → the stored Files. */
export const handler = jsonHandler({ permission: 'upload', guard, idempotency, stores: { nodes, objects, journal, jobs, records } }, async (event, { caller, drive, stores }) => {
  const form = await parseUploadForm(bodyOf(event), headerOf(event, 'content-type'));
  const files = await uploadFiles({ ...stores, trashPolicy: trashPolicy(caller), liveFolders }, drive, form.parts, form.targets, (path, i) => confine(caller, path, `files[${i}] destination`), {
    replace: mayReplace(caller),
  });
  const baseUrl = baseUrlOf(event);
  return files.map((file) => fileView(file, baseUrl));
});
