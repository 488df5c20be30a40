import { guard } from './wiring/guard';
import { idempotency } from './wiring/idempotency';
import { largeUploads } from './wiring/large-uploads';
import { trashPolicy } from './wiring/trash';
import { mayReplace } from './core/access';
import { completeUpload, sessionVisibleTo } from './core/large-upload';
import { jsonHandler } from './http/api-handler';
import { baseUrlOf, bodyOf, uploadIdOf } from './http/event';
import { type Messages, jsonInput } from './http/request-input';
import { fileView } from './http/views';
import { CompleteUploadRequest } from './openapi/request-schemas';

const EXAMPLE = '{"parts": [{"number": 1, "etag": "\\"5d41402abc4b2a76b9719d911017c592\\""}]}';
const PART_NUMBER = ({ at }: { at: string }) => `${at} must be a number`;
const PART_ETAG = ({ at }: { at: string }) => `${at} must be a string: the ETag header its upload returned`;
const MESSAGES: Messages = {
  parts: {
    required: () => `parts is required: an array like ${EXAMPLE}`,
    type: () => `parts is required: an array like ${EXAMPLE}`,
    value: ({ keyword, schema, value }) =>
      keyword === 'minItems' ? 'parts must list every uploaded part; it is empty' : `parts has ${(value as unknown[]).length} entries; an upload has at most ${String(schema.maxItems)}`,
  },
  'parts[]': {
    type: ({ at }) => `${at} must be an object like {"number": 1, "etag": "…"}`,
    unknown: ({ at, unknown }) => `${at} has unknown fields ${(unknown ?? []).join(', ')}; allowed: number, etag`,
  },
  'parts[].number': { required: PART_NUMBER, type: PART_NUMBER, value: ({ at, value }) => `${at} must be a whole number from 1 (got ${String(value)})` },
  'parts[].etag': { required: PART_ETAG, type: PART_ETAG, value: ({ at }) => `${at} must be the ETag its upload returned (1 to 1024 characters)` },
};

/** POST /drive/uploads/{upload_id}/complete with the parts' ETags → the stored File, now listed. */
export const handler = jsonHandler({ permission: 'upload', guard, idempotency, stores: { largeUploads } }, async (event, { caller, drive, stores }) => {
  const id = uploadIdOf(event);
  const { parts } = jsonInput(bodyOf(event), CompleteUploadRequest, EXAMPLE, MESSAGES);
  const file = await completeUpload({ ...stores.largeUploads, trashPolicy: trashPolicy(caller) }, drive, id, parts, sessionVisibleTo(caller), { replace: mayReplace(caller) });
  return fileView(file, baseUrlOf(event));
});
