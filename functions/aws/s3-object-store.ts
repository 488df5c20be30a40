import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  NoSuchKey,
  PutObjectCommand,
  type S3Client,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { cleanUp } from '../core/clean-up';
import { multipartEtag, partSizeFor } from '../core/multipart-rules';
import type { Readable } from 'node:stream';
import { mapLimit } from '../core/concurrency';
import type { ByteRange, ObjectCopier, ObjectStore } from '../core/ports';
import { BATCH_ATTEMPTS, backoff, chunk } from './batches';

// S3's limit of keys per DeleteObjects call.
const DELETE_BATCH = 1000;
const DELETE_CONCURRENCY = 4;
/** The largest object one CopyObject copies (S3's limit); a larger one is copied a part at a time. */
export const MAX_SINGLE_COPY_BYTES = 5 * 1024 ** 3;
/** Parts copied at once. */
const COPY_CONCURRENCY = 8;

/** File bytes in one S3 bucket. */
export class S3ObjectStore implements ObjectStore, ObjectCopier {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    /** Objects above this are copied in parts: S3's 5 GiB, lowered only by tests of the parts path. */
    private readonly singleCopyMaxBytes = MAX_SINGLE_COPY_BYTES,
  ) {}

  async copy(from: string, to: string, size: number): Promise<string | undefined> {
    // Each segment encoded, the slashes kept: the form S3 documents, and the one s3rver reads.
    const CopySource = `${this.bucket}/${from.split('/').map(encodeURIComponent).join('/')}`;
    try {
      if (size <= this.singleCopyMaxBytes) {
        const out = await this.client.send(new CopyObjectCommand({ Bucket: this.bucket, Key: to, CopySource }));
        return unquote(out.CopyObjectResult?.ETag ?? '');
      }
      return await this.copyInParts(CopySource, to, size);
    } catch (error) {
      if (error instanceof NoSuchKey || (error as { name?: string }).name === 'NoSuchKey') return undefined;
      throw error;
    }
  }

  /**
   * A multipart copy (UploadPartCopy), in parts of the size a large upload of `size` bytes has, so that the
   * copy's `-N` ETag tells clients its part size as an uploaded file's does.
   */
  private async copyInParts(CopySource: string, to: string, size: number): Promise<string> {
    const { UploadId } = await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: to }));
    const partSize = partSizeFor(size);
    const numbers = Array.from({ length: Math.ceil(size / partSize) }, (_, i) => i + 1);
    try {
      const etags = await mapLimit(numbers, COPY_CONCURRENCY, async (PartNumber) => {
        const start = (PartNumber - 1) * partSize;
        const end = Math.min(size, start + partSize) - 1;
        const out = await this.client.send(new UploadPartCopyCommand({ Bucket: this.bucket, Key: to, UploadId, PartNumber, CopySource, CopySourceRange: `bytes=${start}-${end}` }));
        return out.CopyPartResult?.ETag ?? '';
      });
      await this.client.send(
        new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: to, UploadId, MultipartUpload: { Parts: numbers.map((PartNumber, i) => ({ PartNumber, ETag: etags[i] })) } }),
      );
      // S3's ETag of an assembled object, computed as a large upload's completion computes it.
      return multipartEtag(etags.map((etag) => ({ etag })));
    } catch (error) {
      await cleanUp(() => this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: to, UploadId })), () => ({ keys: [to], uploadId: UploadId }));
      throw error;
    }
  }

  async put(key: string, body: Buffer, contentType: string, md5?: string): Promise<void> {
    // The whole body is in memory (API Gateway buffers uploads), so a single PutObject with a known length
    // beats a multipart upload: one round trip, no buffering of parts. With the body's MD5 (the etag Drive
    // records), S3 checks the bytes against it (Content-MD5) and the signature need not hash them again
    // (`signWithContentMd5`).
    const ContentMD5 = md5 === undefined ? undefined : Buffer.from(md5, 'hex').toString('base64');
    await this.client.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentLength: body.length, ContentType: contentType, ContentMD5 }),
    );
  }

  async open(key: string, range?: ByteRange): Promise<{ body: Readable; size: number } | undefined> {
    try {
      // S3 serves the range itself (one range per GetObject), so a part of a large file is never read whole.
      const Range = range ? `bytes=${range.start}-${range.end}` : undefined;
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key, Range }));
      return { body: out.Body as Readable, size: out.ContentLength ?? 0 };
    } catch (error) {
      if (error instanceof NoSuchKey) return undefined;
      throw error;
    }
  }

  async deleteMany(keys: readonly string[]): Promise<void> {
    await mapLimit(chunk([...new Set(keys)], DELETE_BATCH), DELETE_CONCURRENCY, async (batch) => {
      let pending = batch;
      for (let attempt = 0; pending.length > 0; attempt++) {
        if (attempt === BATCH_ATTEMPTS) throw new Error(`DeleteObjects failed for ${pending.length} keys after ${attempt} attempts`);
        if (attempt > 0) await backoff(attempt);
        const out = await this.client.send(
          new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: pending.map((Key) => ({ Key })), Quiet: true } }),
        );
        const failed = new Set((out.Errors ?? []).map((e) => e.Key));
        pending = pending.filter((key) => failed.has(key));
      }
    });
  }
}

/**
 * Has `client` sign a PutObject that carries `Content-MD5` with `UNSIGNED-PAYLOAD` instead of the SHA-256 of
 * its body. S3 refuses a body whose MD5 is not the one sent (`BadDigest`), so the bytes are checked on arrival
 * as the signed hash would check them, and the SDK does not hash a body of up to 6 MB a second time (SHA-256 on
 * top of the MD5 Drive computes for the etag: about 0.6 ms of CPU a MiB). AWS's endpoints are HTTPS, where S3
 * takes an unsigned payload. Every other request is signed as before. Added once, before the first call
 * (`cacheMiddleware` resolves a command's stack on its first use).
 */
export function signWithContentMd5<C extends S3Client>(client: C): C {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const headers = (args.request as { headers?: Record<string, string> } | undefined)?.headers;
      if (context.commandName === 'PutObjectCommand' && headers && Object.keys(headers).some((name) => name.toLowerCase() === 'content-md5')) {
        headers['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD';
      }
      return next(args);
    },
    { step: 'build', name: 'driveSignWithContentMd5', override: true },
  );
  return client;
}

function unquote(etag: string): string {
  return etag.replace(/"/g, '');
}
