import { guard } from './wiring/guard';
import { largeUploads } from './wiring/large-uploads';
import { mayReplace } from './core/access';
import { badRequest, invalid } from './core/errors';
import { completeUpload, sessionVisibleTo } from './core/large-upload';
import { jsonHandler } from './http/api-handler';
import { baseUrlOf, bodyOf, uploadIdOf } from './http/event';
import { jsonObject } from './http/json-body';
import { fileView } from './http/views';
import type { Wire } from './openapi/schemas';

const EXAMPLE = '{"parts": [{"number": 1, "etag": "\\"5d41402abc4b2a76b9719d911017c592\\""}]}';
// S3's limit of parts per upload.
const MAX_PARTS = 10_000;

/** POST /drive/uploads/{upload_id}/complete with the parts' ETags → the stored File, now listed. */
export const handler = jsonHandler({ permission: 'upload', guard, stores: { largeUploads } }, async (event, { caller, drive, stores }) => {
  const id = uploadIdOf(event);
  const body = jsonObject<Wire<'CompleteUploadRequest'>>(bodyOf(event), ['parts'], EXAMPLE);
  const file = await completeUpload(stores.largeUploads, drive, id, partsOf(body.parts), sessionVisibleTo(caller), { replace: mayReplace(caller) });
  return fileView(file, baseUrlOf(event));
});

function partsOf(value: unknown): { number: number; etag: string }[] {
  if (!Array.isArray(value)) throw badRequest(`parts is required: an array like ${EXAMPLE}`);
  if (value.length === 0) throw invalid('parts must list every uploaded part; it is empty');
  if (value.length > MAX_PARTS) throw invalid(`parts has ${value.length} entries; an upload has at most ${MAX_PARTS}`);
  return value.map((part: unknown, i) => {
    if (typeof part !== 'object' || part === null || Array.isArray(part)) throw badRequest(`parts[${i}] must be an object like {"number": 1, "etag": "…"}`);
    const { number, etag, ...rest } = part as Record<string, unknown>;
    if (Object.keys(rest).length > 0) throw badRequest(`parts[${i}] has unknown fields ${Object.keys(rest).join(', ')}; allowed: number, etag`);
    if (typeof number !== 'number') throw badRequest(`parts[${i}].number must be a number`);
    if (!Number.isSafeInteger(number) || number < 1) throw invalid(`parts[${i}].number must be a whole number from 1 (got ${number})`);
    if (typeof etag !== 'string') throw badRequest(`parts[${i}].etag must be a string: the ETag header its upload returned`);
    if (etag.length === 0 || etag.length > 1024) throw invalid(`parts[${i}].etag must be the ETag its upload returned (1 to 1024 characters)`);
    return { number, etag };
  });
}
