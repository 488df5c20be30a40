import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The part of a Koa context this middleware reads and writes. */
interface KoaContext {
  method: string;
  path: string;
  query: Record<string, string | string[] | undefined>;
  status: number;
  type: string;
  body: unknown;
}

const XMLNS = 'http://s3.amazonaws.com/doc/2006-03-01/';

/**
 * s3rver stores multipart uploads but answers two of S3's multipart calls with 405: ListParts (`GET
 * ?uploadId=`) and AbortMultipartUpload (`DELETE ?uploadId=`). This Koa middleware answers them in S3's
 * wire format from s3rver's own upload folders (`<bucket>/._S3rver_uploads/<id>/`: the key, each part
 * as `<n>` with its MD5 in `<n>.md5`), so the local host runs the same SDK calls as AWS. Every part comes
 * in one page (S3 pages at 1,000; the adapter reads either).
 */
export function multipartGaps(directory: string) {
  return async (ctx: KoaContext, next: () => Promise<void>): Promise<void> => {
    const uploadId = ctx.query.uploadId;
    const match = /^\/([^/]+)\/(.+)$/.exec(ctx.path);
    if (typeof uploadId !== 'string' || !match || (ctx.method !== 'GET' && ctx.method !== 'DELETE')) return next();
    const [, bucket, key] = match;
    const folder = join(directory, bucket, '._S3rver_uploads', uploadId.replace(/[^0-9a-f]/g, ''));
    const storedKey = await readFile(join(folder, 'key'), 'utf8').catch(() => undefined);
    if (storedKey !== decodeURIComponent(key)) {
      ctx.status = 404;
      ctx.type = 'application/xml';
      ctx.body = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message><UploadId>${escapeXml(uploadId)}</UploadId></Error>`;
      return;
    }
    if (ctx.method === 'DELETE') {
      await rm(folder, { recursive: true, force: true });
      ctx.status = 204;
      ctx.body = null;
      return;
    }
    const numbers = (await readdir(folder)).filter((name) => /^\d+$/.test(name)).map(Number).sort((a, b) => a - b);
    const parts = await Promise.all(
      numbers.map(async (n) => {
        const [md5, info] = await Promise.all([readFile(join(folder, `${n}.md5`), 'utf8'), stat(join(folder, String(n)))]);
        return `<Part><PartNumber>${n}</PartNumber><LastModified>${info.mtime.toISOString()}</LastModified><ETag>"${md5.trim()}"</ETag><Size>${info.size}</Size></Part>`;
      }),
    );
    ctx.status = 200;
    ctx.type = 'application/xml';
    ctx.body =
      `<?xml version="1.0" encoding="UTF-8"?><ListPartsResult xmlns="${XMLNS}"><Bucket>${escapeXml(bucket)}</Bucket><Key>${escapeXml(storedKey)}</Key>` +
      `<UploadId>${escapeXml(uploadId)}</UploadId><PartNumberMarker>0</PartNumberMarker><NextPartNumberMarker>${numbers.at(-1) ?? 0}</NextPartNumberMarker>` +
      `<MaxParts>1000</MaxParts><IsTruncated>false</IsTruncated>${parts.join('')}</ListPartsResult>`;
  };
}

function escapeXml(value: string): string {
  return value.replace(/[<>&'"]/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** The part of s3rver's store that assembles a multipart upload. */
interface MultipartAssembler {
  putObjectMultipart(bucket: string, uploadId: string, parts: { number: number; etag: string }[]): Promise<unknown>;
}

/**
 * Makes s3rver refuse, as S3 does (`InvalidPart`), to assemble a part whose ETag is not the one it holds:
 * s3rver assembles whatever part files are there, so a part uploaded again after its ETag was read would
 * slip in unnoticed.
 */
export function checkPartEtags(store: MultipartAssembler, directory: string, invalidPart: (message: string) => Error): void {
  const assemble = store.putObjectMultipart.bind(store);
  store.putObjectMultipart = async (bucket, uploadId, parts) => {
    const folder = join(directory, bucket, '._S3rver_uploads', uploadId.replace(/[^0-9a-f]/g, ''));
    for (const part of parts) {
      const held = await readFile(join(folder, `${part.number}.md5`), 'utf8').catch(() => undefined);
      if (held?.trim() !== part.etag.replace(/"/g, '')) {
        throw invalidPart('One or more of the specified parts could not be found. The part may not have been uploaded, or the specified entity tag may not match the part\'s entity tag.');
      }
    }
    return assemble(bucket, uploadId, parts);
  };
}

/** The part of s3rver's store that assembles a multipart upload, names an object's files and writes its metadata. */
export interface MultipartEtagStore extends MultipartAssembler {
  getResourcePath(bucket: string, key: string | undefined, resource: string): string;
  putMetadata(bucket: string, key: string, metadata: Record<string, unknown>, md5?: string): Promise<void>;
}

/**
 * Gives an object assembled from parts S3's ETag, `<MD5 of the parts' MD5s>-<parts>`, where s3rver keeps the
 * MD5 of the whole: reads (`ETag`, `If-Match`) and listings then answer what S3 answers, and what Drive's
 * record of a large upload holds. The ETag is the MD5 file the assembly's own write puts down (staged with
 * the object's other files when `journalWrites` wraps the store), so the object never shows another.
 * Wraps whatever `putObjectMultipart` is there (`checkPartEtags` first).
 */
export function multipartObjectEtags(store: MultipartEtagStore, directory: string): void {
  const assembling = new AsyncLocalStorage<{ bucket: string; key: string; etag: string }>();
  const putMetadata = store.putMetadata.bind(store);
  store.putMetadata = async (bucket, key, metadata, md5) => {
    const assembled = assembling.getStore();
    if (md5 === undefined || assembled?.bucket !== bucket || assembled.key !== key) return putMetadata(bucket, key, metadata, md5);
    // Where, and when, s3rver writes the MD5 of the whole: before the metadata.
    await writeFile(store.getResourcePath(bucket, key, 'object.md5'), assembled.etag);
    return putMetadata(bucket, key, metadata);
  };
  const assemble = store.putObjectMultipart.bind(store);
  store.putObjectMultipart = async (bucket, uploadId, parts) => {
    const folder = join(directory, bucket, '._S3rver_uploads', uploadId.replace(/[^0-9a-f]/g, ''));
    const key = await readFile(join(folder, 'key'), 'utf8').catch(() => undefined);
    if (key === undefined) return assemble(bucket, uploadId, parts);
    const digests = await Promise.all(parts.map((part) => readFile(join(folder, `${part.number}.md5`), 'utf8').catch(() => '')));
    const etag = `${createHash('md5').update(Buffer.concat(digests.map((md5) => Buffer.from(md5.trim(), 'hex')))).digest('hex')}-${parts.length}`;
    const result = (await assembling.run({ bucket, key, etag }, () => assemble(bucket, uploadId, parts))) as { md5: string; size: number };
    return { ...result, md5: etag };
  };
}
