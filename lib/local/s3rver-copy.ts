import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';

/** S3's largest copy source for one CopyObject, and for one UploadPartCopy part. */
export const MAX_COPY_SOURCE_BYTES = 5 * 1024 ** 3;

/** The part of s3rver's filesystem store the copies use. */
export interface CopyingStore {
  getResourcePath(bucket: string, key: string | undefined, resource: string): string;
  getMetadata(bucket: string, key: string): Promise<Record<string, string>>;
  copyObject(srcBucket: string, srcKey: string, destBucket: string, destKey: string, replacementMetadata: unknown): Promise<Record<string, string>>;
  putPart(bucket: string, uploadId: string, partNumber: number, content: NodeJS.ReadableStream): Promise<{ size: number; md5: string }>;
}

/**
 * Makes s3rver's CopyObject answer as S3's does: refused above 5 GiB (`InvalidRequest`, where S3 asks for
 * a multipart copy), and with the copy's own ETag, the MD5 of its bytes. s3rver copies the source's ETag,
 * which for an object assembled from parts is `<md5 of md5s>-<parts>`; S3 computes a new one. The MD5 file is
 * the copy's own: staged with its other files, and put in place with them, when `journalWrites` wraps the store.
 */
export function faithfulCopies(store: CopyingStore, invalidRequest: (message: string) => Error): void {
  const copy = store.copyObject.bind(store);
  store.copyObject = async (srcBucket, srcKey, destBucket, destKey, replacementMetadata) => {
    const source = store.getResourcePath(srcBucket, srcKey, 'object');
    if ((await stat(source)).size > MAX_COPY_SOURCE_BYTES) {
      throw invalidRequest(`The specified copy source is larger than the maximum allowable size for a copy source: ${MAX_COPY_SOURCE_BYTES}`);
    }
    await copy(srcBucket, srcKey, destBucket, destKey, replacementMetadata);
    const target = store.getResourcePath(destBucket, destKey, 'object');
    const md5 = createHash('md5');
    await pipeline(createReadStream(target), md5);
    await writeFile(`${target}.md5`, md5.digest('hex'));
    return store.getMetadata(destBucket, destKey);
  };
}

/** The part of a Koa context this middleware reads and writes. */
interface KoaContext {
  method: string;
  path: string;
  query: Record<string, string | string[] | undefined>;
  headers: Record<string, string | string[] | undefined>;
  status: number;
  type: string;
  body: unknown;
}

const XMLNS = 'http://s3.amazonaws.com/doc/2006-03-01/';

/**
 * UploadPartCopy (`PUT ?partNumber=&uploadId=` with `x-amz-copy-source` and `x-amz-copy-source-range`),
 * which s3rver answers with NotImplemented: the range of the source object is stored as the part, as an
 * UploadPart of those bytes would store it, and answered in S3's `CopyPartResult`. The gateway has checked
 * the bucket, key, copy source and part number (lib/local/emulators.ts).
 */
export function uploadPartCopy(store: CopyingStore, directory: string) {
  return async (ctx: KoaContext, next: () => Promise<void>): Promise<void> => {
    const uploadId = ctx.query.uploadId;
    const partNumber = ctx.query.partNumber;
    const source = ctx.headers['x-amz-copy-source'];
    const match = /^\/([^/]+)\/(.+)$/.exec(ctx.path);
    if (ctx.method !== 'PUT' || typeof uploadId !== 'string' || typeof partNumber !== 'string' || typeof source !== 'string' || !match) return next();
    const fail = (status: number, code: string, message: string) => {
      ctx.status = status;
      ctx.type = 'application/xml';
      ctx.body = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${escapeXml(message)}</Message></Error>`;
    };
    const [, bucket, key] = match;
    const folder = join(directory, bucket, '._S3rver_uploads', uploadId.replace(/[^0-9a-f]/g, ''));
    const storedKey = await readFile(join(folder, 'key'), 'utf8').catch(() => undefined);
    if (storedKey !== decodeURIComponent(key)) return fail(404, 'NoSuchUpload', 'The specified upload does not exist.');
    const [sourceBucket, ...sourceKey] = decodeURIComponent(source.replace(/^\//, '')).split('/');
    const path = store.getResourcePath(sourceBucket, sourceKey.join('/'), 'object');
    const size = await stat(path).then(
      (info) => info.size,
      () => undefined,
    );
    if (size === undefined) return fail(404, 'NoSuchKey', 'The specified key does not exist.');
    const rangeHeader = ctx.headers['x-amz-copy-source-range'];
    const range = typeof rangeHeader === 'string' ? /^bytes=(\d+)-(\d+)$/.exec(rangeHeader) : null;
    if (rangeHeader !== undefined && !range) return fail(400, 'InvalidArgument', 'The x-amz-copy-source-range value must be of the form bytes=first-last');
    const start = range ? Number(range[1]) : 0;
    const end = range ? Number(range[2]) : size - 1;
    if (start > end || end >= size) return fail(400, 'InvalidRequest', `The specified copy range is invalid for the source object size: ${size}`);
    if (end - start + 1 > MAX_COPY_SOURCE_BYTES) return fail(400, 'InvalidRequest', 'The specified copy source is larger than the maximum allowable size for a copy source');
    const { md5 } = await store.putPart(bucket, uploadId, Number(partNumber), createReadStream(path, { start, end }));
    ctx.status = 200;
    ctx.type = 'application/xml';
    ctx.body = `<?xml version="1.0" encoding="UTF-8"?><CopyPartResult xmlns="${XMLNS}"><LastModified>${new Date().toISOString()}</LastModified><ETag>"${md5}"</ETag></CopyPartResult>`;
  };
}

function escapeXml(value: string): string {
  return value.replace(/[<>&'"]/g, (ch) => `&#${ch.charCodeAt(0)};`);
}
